//! Excel workbooks (`xlsx`), read with `calamine`: every sheet in workbook order, its name on a
//! line, then one line per row with cells separated by tabs. Values are written by
//! `inlet_extract_support::cells`, shared with the `xls` extractor: numbers in their cell's number
//! format when it is a common one (decimals, thousands separators, percentages, currency,
//! parentheses for negatives), else without a trailing `.0`; dates as ISO 8601 (`2023-06-30`,
//! with the time when there is one), a zero in a time-of-day format as midnight (`00:00:00`),
//! durations as `[h]:mm:ss`, booleans as `TRUE`/`FALSE`, errors as Excel shows them (`#DIV/0!`).
//! The number format code of a cell comes from its style (`xl/styles.xml`, built-in ids resolved
//! by `calamine`).
//!
//! `calamine` inflates the parts it reads without a limit of ours, but through the same `zip`
//! crate, which fails any read past an entry's declared uncompressed size. So the declared sizes
//! of the XML parts are added up first and a package declaring more than the budget is refused
//! before anything is inflated. Cells are then streamed, so the output cap stops the work early.

use std::{collections::HashMap, io::Cursor};

use calamine::{DataRef, Reader as _, Xlsx, XlsxError};
use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use inlet_extract_support::{
    cells::{CellFormat, write_data_ref},
    package::{Damage, Package, write_package_files},
};

use crate::{ooxml, pptx};

/// The workbook part.
const WORKBOOK: &str = "xl/workbook.xml";

/// Cells read between two looks at the clock.
const DEADLINE_EVERY_CELLS: u32 = 1024;

/// Extracts the cell text of a workbook.
struct XlsxExtractor;

impl Extractor for XlsxExtractor {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        extract(input, sink)
    }
}

/// Extracts under the sink's decompression budget.
fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let budget = sink.decompressed_room();
    let mut pkg = Package::open(input, budget)?;
    if let Some(m) = sink.metadata_mut() {
        inlet_extract_support::properties::read(&mut pkg, "docProps/core.xml", m);
        inlet_extract_support::properties::read(&mut pkg, "docProps/app.xml", m);
    }
    vet(&pkg, budget)?;
    let mut book: Xlsx<_> = Xlsx::new(Cursor::new(input)).map_err(calamine_error)?;
    let mut cells = 0u32;
    let cell_sheets: Vec<String> = book
        .sheets_metadata()
        .iter()
        .filter(|s| s.typ == calamine::SheetType::WorkSheet)
        .map(|s| s.name.clone())
        .collect();
    if let Some(m) = sink.metadata_mut() {
        m.pages = u32::try_from(cell_sheets.len()).ok();
    }
    for name in cell_sheets {
        let mut reader = match book.worksheet_cells_reader(&name) {
            Ok(r) => r,
            // A sheet listed in the workbook but missing from the package, and chart, dialog
            // and macro sheets (no cells): skipped, the other sheets still read.
            Err(XlsxError::WorksheetNotFound(_) | XlsxError::NotAWorksheet(_)) => continue,
            Err(e) => return Err(calamine_error(e)),
        };
        sink.line_break()?;
        sink.push(&name)?;
        sink.line_break()?;
        let mut row = None;
        let mut col = 0;
        let mut formats: HashMap<usize, CellFormat> = HashMap::new();
        while let Some((cell, style)) = reader.next_cell_with_style_id().map_err(calamine_error)? {
            cells = cells.wrapping_add(1);
            if cells.is_multiple_of(DEADLINE_EVERY_CELLS) {
                sink.check_deadline()?;
            }
            let value = cell.get_value();
            if matches!(value, DataRef::Empty) {
                continue;
            }
            let (r, c) = cell.get_position();
            match row {
                Some(prev) if prev == r && c > col => sink.push("\t")?,
                Some(prev) if prev == r => {}
                Some(_) => sink.push("\n")?,
                None => {}
            }
            row = Some(r);
            col = c;
            let formatted = matches!(
                value,
                DataRef::Float(_) | DataRef::Int(_) | DataRef::DateTime(_)
            );
            let format = formatted.then(|| {
                &*formats.entry(style).or_insert_with(|| {
                    reader
                        .styles()
                        .get(style)
                        .and_then(|s| s.number_format.as_ref())
                        .map(|f| CellFormat::parse(&f.format_code))
                        .unwrap_or_default()
                })
            });
            write_data_ref(value, format, sink)?;
        }
        sink.line_break()?;
    }
    drawings(&mut pkg, sink)?;
    write_package_files(&mut pkg, Some("xl/embeddings/"), "xl/media/", sink)
}

/// Text boxes and shapes drawn over the sheets (`xl/drawings/drawingN.xml`), after the cells.
fn drawings(pkg: &mut Package<'_>, sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut names: Vec<String> = pkg
        .names()
        .into_iter()
        .filter(|n| n.starts_with("xl/drawings/") && n.ends_with(".xml") && !n.contains("/_rels/"))
        .collect();
    names.sort();
    let mut damage = Damage::default();
    for name in names {
        damage.note(pptx::text_part(pkg, &name, sink))?;
    }
    damage.finish()
}

/// Refuses packages whose XML parts declare more than the budget in total.
fn vet(pkg: &Package<'_>, budget: u64) -> Result<(), ExtractError> {
    let mut total = 0u64;
    for name in pkg.names() {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".xml") || lower.ends_with(".rels") {
            total = total.saturating_add(pkg.declared_size(&name)?);
        }
    }
    if total > budget {
        return Err(ExtractError::LimitExceeded(
            "decompressed size budget exceeded".to_owned(),
        ));
    }
    Ok(())
}

fn calamine_error(e: XlsxError) -> ExtractError {
    match e {
        XlsxError::Password => ExtractError::Unsupported("password-protected workbook".into()),
        other => ExtractError::malformed(other),
    }
}

fn sniff(probe: &Probe<'_>) -> u8 {
    ooxml::score(probe, WORKBOOK)
}

inventory::submit! {
    ExtractorInfo {
        id: "xlsx",
        version: 1,
        media_type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        sniff,
        make: || Box::new(XlsxExtractor),
    }
}
