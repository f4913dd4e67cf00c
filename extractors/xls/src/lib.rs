#![doc = include_str!("../README.md")]

mod biff;

#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod hostile_tests;

use std::{
    collections::HashMap,
    io::{Cursor, Write},
    mem::size_of,
};

use calamine::{Data, Reader as _, SheetType, Xls, XlsError, XlsOptions};
use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use inlet_extract_support::{
    cells::{CellFormat, write_data},
    ole::{Summary, blip_pictures, read_stream, write_embedded, write_pictures},
};

use inlet_extract_support::ole::OLE2_MAGIC;

/// The workbook stream of BIFF8 (Excel 97–2003) files, and of BIFF5 (Excel 5/95) files.
const STREAMS: [&str; 2] = ["Workbook", "Book"];

/// Names of the root storages Excel keeps embedded objects in.
const EMBEDDED_PREFIX: &str = "MBD";

/// Detection score for an OLE2 file with a workbook stream.
const SCORE: u8 = 95;

/// Cells written between two looks at the clock.
const DEADLINE_EVERY_CELLS: u32 = 1024;

/// Extracts the cell text of a BIFF5/BIFF8 workbook.
struct XlsExtractor;

impl Extractor for XlsExtractor {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        extract(input, sink)
    }
}

/// Reads the workbook stream of `file`, at most `budget` bytes of it, after reporting the
/// summary properties (title, author, dates) when the sink takes metadata; they are charged to
/// `budget`.
fn workbook_stream(
    file: &mut cfb::CompoundFile<Cursor<&[u8]>>,
    budget: &mut u64,
    sink: &mut TextSink,
) -> Result<Vec<u8>, ExtractError> {
    if let Some(m) = sink.metadata_mut() {
        Summary::read(file, budget).fill(m);
    }
    let name = STREAMS
        .into_iter()
        .find(|name| file.is_stream(name))
        .ok_or_else(|| ExtractError::Malformed("no workbook stream".into()))?;
    let mut room = *budget;
    read_stream(file, name, &mut room)
}

/// A compound file holding only `stream` as its workbook: what `calamine` opens, so that its own
/// compound-file reader never sees the uploaded container.
fn repackaged(stream: &[u8]) -> Result<Vec<u8>, ExtractError> {
    let repack = || -> std::io::Result<Vec<u8>> {
        // Version 3 (512-byte sectors): `calamine` refuses a version 4 file without a mini stream.
        let mut file =
            cfb::CompoundFile::create_with_version(cfb::Version::V3, Cursor::new(Vec::new()))?;
        file.create_stream(STREAMS[0])?.write_all(stream)?;
        file.flush()?;
        Ok(file.into_inner().into_inner())
    };
    repack().map_err(|e| ExtractError::Malformed(format!("repackaging the workbook: {e}")))
}

/// Extracts under the sink's decompression budget, which also bounds the memory `calamine`
/// spends on its cell grids.
fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut budget = sink.max_decompressed_bytes();
    let mut file = cfb::CompoundFile::open(Cursor::new(input)).map_err(ExtractError::malformed)?;
    let stream = workbook_stream(&mut file, &mut budget, sink)?;
    let book = biff::vet(&stream)?;
    drop(stream);
    // `calamine` keeps a dense grid of every sheet (and one of its formulas), and hands out a
    // copy of the one asked for.
    let grids = book
        .grid_cells
        .saturating_mul((size_of::<Data>() + size_of::<String>()) as u64)
        .saturating_add(book.largest_grid.saturating_mul(size_of::<Data>() as u64));
    if grids > budget.saturating_sub(book.stream.len() as u64) {
        return Err(ExtractError::LimitExceeded(
            "worksheet cell grids too large".into(),
        ));
    }
    sink.check_deadline()?;
    let mut options = XlsOptions::default();
    // BIFF8 text is UTF-16 (or its compressed Latin-1 form) whatever the CodePage record says;
    // `calamine` would decode compressed strings in that code page. BIFF5 text is in the code
    // page, Windows-1252 when the record names one we cannot decode.
    if book.biff8 {
        options.force_codepage = Some(1200);
    } else if book.unknown_codepage {
        options.force_codepage = Some(1252);
    }
    let mut xls = Xls::new_with_options(Cursor::new(repackaged(&book.stream)?), options)
        .map_err(calamine_error)?;
    sink.check_deadline()?;
    // The sheet count, as xlsx reports it: worksheets (not chart, macro or module sheets).
    if let Some(m) = sink.metadata_mut() {
        let sheets = xls
            .sheets_metadata()
            .iter()
            .filter(|s| s.typ == SheetType::WorkSheet)
            .count();
        m.pages = u32::try_from(sheets).ok();
    }
    let mut formats: HashMap<u16, CellFormat> = HashMap::new();
    let mut cells = 0u32;
    for (sheet, name) in xls.sheet_names().into_iter().enumerate() {
        sink.line_break()?;
        sink.push(&name)?;
        sink.line_break()?;
        let range = match xls.worksheet_range(&name) {
            Ok(r) => r,
            Err(XlsError::WorksheetNotFound(_)) => {
                // A chart sheet: its chart's text.
                write_drawn(book.sheet_text.get(sheet), sink)?;
                continue;
            }
            Err(e) => return Err(calamine_error(e)),
        };
        // The printed page's header before the cells, its footer after them.
        let page = book.sheet_text.get(sheet);
        if let Some(header) = page.map(|p| &p.header).filter(|h| !h.is_empty()) {
            sink.push(header)?;
            sink.line_break()?;
        }
        let (top, left) = range.start().unwrap_or((0, 0));
        let mut row = None;
        let mut col = 0;
        for (r, c, value) in range.used_cells() {
            cells = cells.wrapping_add(1);
            if cells.is_multiple_of(DEADLINE_EVERY_CELLS) {
                sink.check_deadline()?;
            }
            match row {
                Some(prev) if prev == r && c > col => sink.push("\t")?,
                Some(prev) if prev == r => {}
                Some(_) => sink.push("\n")?,
                None => {}
            }
            row = Some(r);
            col = c;
            let (sheet_row, sheet_col) = (top + r as u32, left + c as u32);
            let format = match value {
                Data::Float(_) | Data::Int(_) | Data::DateTime(_) => book
                    .format_code(sheet, sheet_row, sheet_col)
                    .map(|(id, code)| {
                        &*formats.entry(id).or_insert_with(|| CellFormat::parse(code))
                    }),
                _ => None,
            };
            write_data(value, format, sink)?;
        }
        sink.line_break()?;
        write_drawn(page, sink)?;
        if let Some(footer) = page.map(|p| &p.footer).filter(|f| !f.is_empty()) {
            sink.push(footer)?;
            sink.line_break()?;
        }
    }
    let mut budget = budget.saturating_sub(book.stream.len() as u64);
    // Embedded documents after the sheets, as Tika writes them, then the words in pictures.
    write_embedded(&mut file, "", EMBEDDED_PREFIX, &mut budget, sink)?;
    let pictures = blip_pictures(&book.drawing_group, sink);
    write_pictures(pictures, sink)
}

/// A sheet's comments, text boxes and charts' text, each on its own lines.
fn write_drawn(text: Option<&biff::SheetText>, sink: &mut TextSink) -> Result<(), ExtractError> {
    for drawn in text.map_or(&[][..], |t| &t.drawn) {
        sink.push(drawn)?;
        sink.line_break()?;
    }
    Ok(())
}

fn calamine_error(e: XlsError) -> ExtractError {
    match e {
        XlsError::Password => ExtractError::Unsupported("encrypted Excel workbook".into()),
        other => ExtractError::malformed(other),
    }
}

/// An OLE2 compound file with a top-level `Workbook` (BIFF8) or `Book` (BIFF5) stream.
fn sniff(probe: &Probe<'_>) -> u8 {
    let workbook = probe
        .entries
        .iter()
        .any(|e| STREAMS.iter().any(|s| e.eq_ignore_ascii_case(s)));
    if probe.bytes.starts_with(OLE2_MAGIC) && workbook {
        SCORE
    } else {
        0
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "xls",
        version: 1,
        media_type: "application/vnd.ms-excel",
        sniff,
        make: || Box::new(XlsExtractor),
    }
}
