//! The records of a BIFF5/BIFF8 workbook stream, checked before `calamine` parses them.
//!
//! `calamine` 0.38 reads some record fields without checking their length (a short BOF, `Lbl`,
//! `ExternSheet`, `MergeCells` or formula token stream panics), sizes allocations from record
//! fields (`Dimensions`, and a dense grid spanning the outermost cells of a sheet), and fails the
//! whole workbook on one odd value. [`vet`] walks the stream first, as `calamine` will, and
//! gives it a copy in which every record it would mis-handle is *neutralized*: its type is
//! changed to one `calamine` ignores, its length and place kept, so the offsets that point into
//! the stream stay right. Records whose content we never show (defined names, external sheet
//! references, merged areas, dimensions) are always neutralized, and formulas keep their cached
//! value but lose their token stream. The walk also gives what `calamine` does not expose: the
//! number format of each numeric cell, and whether the workbook is encrypted (`FILEPASS`).
//!
//! These checks mirror `calamine` 0.38's `xls.rs`; revisit them when upgrading it.

use std::collections::{BTreeMap, HashMap, HashSet};

use inlet_core::extract::ExtractError;

/// A record type `calamine` does not read: neutralized records get it.
const NEUTRAL: u16 = 0x0000;

const BOF: u16 = 0x0809;
const EOF: u16 = 0x000A;
const CONTINUE: u16 = 0x003C;
const FILEPASS: u16 = 0x002F;
const CODEPAGE: u16 = 0x0042;
const DATEMODE: u16 = 0x0022;
const FORMAT: u16 = 0x041E;
const XF: u16 = 0x00E0;
const BOUNDSHEET: u16 = 0x0085;
const LBL: u16 = 0x0018;
const EXTERNSHEET: u16 = 0x0017;
const SST: u16 = 0x00FC;
const DIMENSIONS: u16 = 0x0200;
const MERGECELLS: u16 = 0x00E5;
const NUMBER: u16 = 0x0203;
const LABEL: u16 = 0x0204;
const RSTRING: u16 = 0x00D6;
const BOOLERR: u16 = 0x0205;
const STRING: u16 = 0x0207;
const RK: u16 = 0x027E;
const LABELSST: u16 = 0x00FD;
const MULRK: u16 = 0x00BD;
const FORMULA: u16 = 0x0006;
const HEADER: u16 = 0x0014;
const FOOTER: u16 = 0x0015;
const TXO: u16 = 0x01B6;
const SERIESTEXT: u16 = 0x100D;
const SIINDEX: u16 = 0x1065;
const MSODRAWINGGROUP: u16 = 0x00EB;
/// A `BOF` record's `dt` value for a chart (sheet or substream).
const BOF_CHART: u16 = 0x0020;

/// Error codes `calamine` knows (`BErr`, MS-XLS 2.5.10).
const ERROR_CODES: [u8; 8] = [0x00, 0x07, 0x0F, 0x17, 0x1D, 0x24, 0x2A, 0x2B];

/// One record: where its header starts, its type (after neutralizing) and its data length.
#[derive(Clone, Copy)]
struct Rec {
    at: usize,
    typ: u16,
    len: usize,
}

impl Rec {
    fn data<'a>(&self, stream: &'a [u8]) -> &'a [u8] {
        &stream[self.at + 4..self.at + 4 + self.len]
    }
}

/// What [`vet`] learnt about a workbook stream.
pub(crate) struct Workbook {
    /// The stream for `calamine`: complete records only, the dangerous ones neutralized.
    pub stream: Vec<u8>,
    /// Whether the workbook is BIFF8 (Excel 97 and later) rather than BIFF5.
    pub biff8: bool,
    /// Whether the `CodePage` record names a code page `calamine` cannot decode.
    pub unknown_codepage: bool,
    /// Number format id (`ifmt`) of each cell format (XF), by XF index.
    xf_formats: Vec<Option<u16>>,
    /// Format codes written in the workbook (`FORMAT` records), by format id.
    formats: HashMap<u16, String>,
    /// For each sheet `calamine` will list, in order: the XF index of each numeric cell.
    cell_xfs: Vec<HashMap<(u32, u32), u16>>,
    /// Cells of the dense grids `calamine` will allocate for the sheets, in total and for the
    /// largest sheet.
    pub grid_cells: u64,
    /// Cells of the largest sheet's grid.
    pub largest_grid: u64,
    /// For each sheet `calamine` will list, in order: the text of its page header and footer,
    /// comments, text boxes and charts (`calamine` reads none of them).
    pub sheet_text: Vec<SheetText>,
    /// The workbook's drawing group (`MsoDrawingGroup` records and their `Continue` records):
    /// an OfficeArt container whose picture store holds the pictures drawn on the sheets.
    pub drawing_group: Vec<u8>,
}

/// A sheet's text outside its cells.
#[derive(Default)]
pub(crate) struct SheetText {
    /// The printed page header and footer, as text: their field codes (page number, date,
    /// sheet name, fonts) dropped, their left, centre and right sections apart.
    pub header: String,
    pub footer: String,
    /// The text of each comment and text box drawn on the sheet (`TxO` records) and of its
    /// charts (`SeriesText` records), in the sheet's order; a comment's text begins with its
    /// author's name, as Excel writes it.
    pub drawn: Vec<String>,
}

impl Workbook {
    /// The number format code of the cell at (`row`, `col`) of sheet `sheet`, if it is numeric
    /// and has one.
    pub fn format_code(&self, sheet: usize, row: u32, col: u32) -> Option<(u16, &str)> {
        let xf = *self.cell_xfs.get(sheet)?.get(&(row, col))?;
        let ifmt = (*self.xf_formats.get(usize::from(xf))?)?;
        let code = match self.formats.get(&ifmt) {
            Some(code) => code.as_str(),
            None => inlet_extract_support::cells::builtin_format_code(ifmt)?,
        };
        Some((ifmt, code))
    }
}

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(data.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

/// Splits the stream into records, stopping before an incomplete one (`calamine` would fail the
/// whole workbook on it).
fn records(stream: &[u8]) -> Vec<Rec> {
    let mut out = Vec::new();
    let mut at = 0;
    while let (Some(typ), Some(len)) = (u16_at(stream, at), u16_at(stream, at + 2)) {
        let len = usize::from(len);
        if at + 4 + len > stream.len() {
            break;
        }
        out.push(Rec { at, typ, len });
        at += 4 + len;
    }
    out
}

/// Checks `stream` (a `Workbook` or `Book` stream) as described in the module docs.
/// `Unsupported` for an encrypted workbook; `Malformed` when its sheets overlap so that reading
/// them would take time quadratic in its size.
pub(crate) fn vet(stream: &[u8]) -> Result<Workbook, ExtractError> {
    let mut recs = records(stream);
    let end = recs.last().map_or(0, |r| r.at + 4 + r.len);
    let globals_end = recs.iter().position(|r| r.typ == EOF).unwrap_or(recs.len());
    let mut book = Workbook {
        stream: stream[..end].to_vec(),
        biff8: true,
        unknown_codepage: false,
        xf_formats: Vec::new(),
        formats: HashMap::new(),
        cell_xfs: Vec::new(),
        grid_cells: 0,
        largest_grid: 0,
        sheet_text: Vec::new(),
        drawing_group: Vec::new(),
    };
    let mut encoding = None;

    // The globals: encryption, the BIFF version, code page, formats. `calamine` takes the BIFF
    // version of the latest BOF it has seen; so do we.
    let mut biff8_at = vec![true; globals_end];
    for (i, r) in recs[..globals_end].iter().enumerate() {
        let data = r.data(stream);
        match r.typ {
            FILEPASS => return Err(ExtractError::Unsupported("encrypted Excel workbook".into())),
            BOF => {
                if let Some(version) = u16_at(data, 0) {
                    let dt = u16_at(data, 2).unwrap_or(0);
                    book.biff8 = match version {
                        0x0200 | 0x0002 | 0x0007 | 0x0300 | 0x0400 | 0x0500 => false,
                        0 => dt != 0x1000,
                        _ => true,
                    };
                }
            }
            CODEPAGE => {
                encoding = u16_at(data, 0).and_then(codepage::to_encoding);
                book.unknown_codepage = encoding.is_none();
            }
            XF => book.xf_formats.push(u16_at(data, 2)),
            MSODRAWINGGROUP => {
                book.drawing_group.extend_from_slice(data);
                for part in continues(&recs, i, stream, end) {
                    book.drawing_group.extend_from_slice(part);
                }
            }
            FORMAT => {
                if let Some((ifmt, code)) = format_record(data, book.biff8) {
                    book.formats.insert(ifmt, code);
                }
            }
            _ => {}
        }
        biff8_at[i] = book.biff8;
    }

    // Records `calamine` would mis-handle, wherever they are.
    for i in 0..recs.len() {
        let r = recs[i];
        let data = r.data(stream);
        let biff8 = biff8_at.get(i).copied().unwrap_or(book.biff8);
        let safe = match r.typ {
            LBL | EXTERNSHEET | DIMENSIONS | MERGECELLS => false,
            BOF | CODEPAGE | DATEMODE => data.len() >= 2,
            XF => data.len() >= 4,
            BOUNDSHEET => boundsheet_ok(data, biff8),
            SST => sst_ok(data, &continues(&recs, i, stream, end)),
            BOOLERR => match data.get(6..8) {
                Some([_, 0]) => true,
                Some([code, 1]) => ERROR_CODES.contains(code),
                _ => false,
            },
            MULRK => mulrk_columns(data).is_some(),
            FORMULA => formula_ok(data),
            _ => true,
        };
        // Short cell records make `calamine` fail the whole workbook with an error rather than
        // panic; neutralizing them keeps the rest of the workbook readable. Strings need their
        // length (and, in BIFF8, flags) field.
        let string_header = if biff8 { 3 } else { 2 };
        let long_enough = match r.typ {
            NUMBER => data.len() >= 14,
            LABEL | RSTRING => data.len() >= 6 + string_header,
            STRING => data.len() >= string_header,
            RK | LABELSST => data.len() >= 10,
            _ => true,
        };
        if !(safe && long_enough) {
            neutralize(&mut book.stream, &mut recs[i]);
        }
        if r.typ == FORMULA && safe {
            // Keep the cached value, drop the token stream: `cce` = 0.
            book.stream[r.at + 4 + 20..r.at + 4 + 22].fill(0);
        }
    }

    // The sheets: each BOUNDSHEET must point at a record boundary no other sheet uses.
    let boundaries: HashMap<usize, usize> =
        recs.iter().enumerate().map(|(i, r)| (r.at, i)).collect();
    let mut starts = HashSet::new();
    let mut sheets = Vec::new();
    for rec in recs.iter_mut().take(globals_end) {
        if rec.typ != BOUNDSHEET {
            continue;
        }
        let pos = u32_at(rec.data(stream), 0).and_then(|p| usize::try_from(p).ok());
        match pos.and_then(|p| boundaries.get(&p)) {
            Some(&start) if starts.insert(start) => sheets.push(start),
            _ => neutralize(&mut book.stream, rec),
        }
    }

    // What `calamine` will collect per sheet: cells until the sheet's EOF, skipping nested
    // substreams (charts). Sheets without an EOF run on into the next ones; `calamine` would
    // walk them again and again, so a stream read many times over is refused.
    let mut walked = 0usize;
    let limit = recs.len().saturating_mul(2).saturating_add(64);
    for start in sheets {
        let walk = sheet_cells(&recs[start..], stream);
        walked = walked.saturating_add(walk.steps);
        if walked > limit {
            return Err(ExtractError::Malformed(
                "workbook sheets overlap (no end-of-sheet records)".into(),
            ));
        }
        book.grid_cells = book.grid_cells.saturating_add(walk.grid);
        book.largest_grid = book.largest_grid.max(walk.grid);
        book.cell_xfs.push(walk.xfs);
        let mut text = SheetText::default();
        for r in walk.page {
            let Some(raw) = header_footer_string(r.data(stream), book.biff8, encoding) else {
                continue;
            };
            let part = if r.typ == HEADER {
                &mut text.header
            } else {
                &mut text.footer
            };
            for section in page_sections(&raw) {
                if !part.is_empty() {
                    part.push('\t');
                }
                part.push_str(&section);
            }
        }
        for drawn in walk.drawn {
            let drawn = match drawn {
                Drawn::Record(i) => {
                    let at = start + i;
                    let data = recs[at].data(stream);
                    if recs[at].typ == TXO {
                        let conts = continues(&recs, at, stream, end);
                        txo_text(data, &conts, book.biff8, encoding)
                    } else {
                        series_text(data, book.biff8, encoding)
                    }
                }
                Drawn::Cache(indices) => {
                    let cache = indices.iter().map(|&i| recs[start + i]);
                    chart_cache_text(cache, stream, book.biff8, encoding)
                }
            };
            text.drawn.extend(drawn);
        }
        book.sheet_text.push(text);
    }
    Ok(book)
}

/// The string of a `Header` or `Footer` record: none when it is empty (no header). BIFF8
/// holds an `XLUnicodeString` (UTF-16, or its compressed Latin-1 form); BIFF5 a byte count and
/// bytes in the workbook's code page (Windows-1252 when it names none we know).
fn header_footer_string(
    data: &[u8],
    biff8: bool,
    encoding: Option<&'static encoding_rs::Encoding>,
) -> Option<String> {
    if biff8 {
        unicode_string(data)
    } else {
        let cch = usize::from(*data.first()?);
        let bytes = data.get(1..)?;
        Some(code_page_text(&bytes[..cch.min(bytes.len())], encoding))
    }
}

/// The text of a header or footer's sections (`&L`, `&C`, `&R`), without its codes: `&&` is
/// an ampersand; fields (`&P` page, `&N` pages, `&D` date, `&T` time, `&A` sheet, `&F` file,
/// `&Z` path, `&G` picture) and formatting (`&"font,style"`, `&12` size, `&B`, `&I`, `&U`,
/// `&E`, `&S`, `&X`, `&Y`, `&K` and its colour) print nothing we have. Sections left without a
/// letter or digit (`&P/&N` leaves a slash) are dropped.
fn page_sections(raw: &str) -> Vec<String> {
    let mut sections = Vec::new();
    let mut current = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '&' {
            current.push(c);
            continue;
        }
        match chars.next() {
            Some('&') => current.push('&'),
            Some('L' | 'C' | 'R' | 'l' | 'c' | 'r') => sections.push(std::mem::take(&mut current)),
            Some('"') => {
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                }
            }
            Some(d) if d.is_ascii_digit() => while chars.next_if(char::is_ascii_digit).is_some() {},
            Some('K' | 'k') => {
                // A colour: six hex digits, or a theme colour (`01+000`).
                for _ in 0..6 {
                    if chars
                        .next_if(|c| c.is_ascii_hexdigit() || matches!(c, '+' | '-'))
                        .is_none()
                    {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    sections.push(current);
    sections
        .into_iter()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| s.chars().any(char::is_alphanumeric))
        .collect()
}

fn neutralize(stream: &mut [u8], rec: &mut Rec) {
    stream[rec.at..rec.at + 2].copy_from_slice(&NEUTRAL.to_le_bytes());
    rec.typ = NEUTRAL;
}

/// A BIFF8 `XLUnicodeString` at the start of `data`: a character count, a flags byte, then
/// UTF-16 units or, compressed, Latin-1 bytes (cut short with the record).
fn unicode_string(data: &[u8]) -> Option<String> {
    let cch = usize::from(u16_at(data, 0)?);
    Some(biff8_chars(*data.get(2)?, data.get(3..)?, cch).0)
}

/// Up to `cch` characters of a BIFF8 string's character data: UTF-16 units when `flags` has
/// its high-byte bit, else compressed Latin-1 bytes; and how many characters were there.
fn biff8_chars(flags: u8, chars: &[u8], cch: usize) -> (String, usize) {
    if flags & 1 != 0 {
        let units: Vec<u16> = chars
            .chunks_exact(2)
            .take(cch)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        (String::from_utf16_lossy(&units), units.len())
    } else {
        let take = cch.min(chars.len());
        (chars[..take].iter().map(|&b| char::from(b)).collect(), take)
    }
}

/// BIFF5 text: bytes in the workbook's code page (Windows-1252 when it names none we know).
fn code_page_text(bytes: &[u8], encoding: Option<&'static encoding_rs::Encoding>) -> String {
    let encoding = encoding.unwrap_or(encoding_rs::WINDOWS_1252);
    encoding.decode_without_bom_handling(bytes).0.into_owned()
}

/// `text` trimmed, none when nothing is left.
fn non_empty(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The text of a `TxO` record (a comment's or a text box's), none when it holds none:
/// `cchText` characters in the `Continue` records after it, before its formatting runs. In
/// BIFF8 each `Continue` opens with a flags byte, then UTF-16 units or, compressed, Latin-1
/// bytes; in BIFF5 the text is bytes in the workbook's code page. Cut short with its records.
fn txo_text(
    data: &[u8],
    conts: &[&[u8]],
    biff8: bool,
    encoding: Option<&'static encoding_rs::Encoding>,
) -> Option<String> {
    let mut left = usize::from(u16_at(data, 10)?);
    let mut text = String::new();
    let mut bytes = Vec::new();
    for cont in conts {
        if left == 0 {
            break;
        }
        if biff8 {
            let Some((&flags, chars)) = cont.split_first() else {
                continue;
            };
            let (part, read) = biff8_chars(flags, chars, left);
            text.push_str(&part);
            left -= read;
        } else {
            let take = left.min(cont.len());
            bytes.extend_from_slice(&cont[..take]);
            left -= take;
        }
    }
    if !biff8 {
        text = code_page_text(&bytes, encoding);
    }
    non_empty(&text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// The string of a chart's `SeriesText` record (a series' name, the chart's or an axis's
/// title, a data label), none when empty: after two reserved bytes, a BIFF8
/// `ShortXLUnicodeString` (a one-byte character count, a flags byte, the characters) or, in
/// BIFF5, a count and bytes in the workbook's code page.
fn series_text(
    data: &[u8],
    biff8: bool,
    encoding: Option<&'static encoding_rs::Encoding>,
) -> Option<String> {
    let cch = usize::from(*data.get(2)?);
    let text = if biff8 {
        biff8_chars(*data.get(3)?, data.get(4..)?, cch).0
    } else {
        let bytes = data.get(3..)?;
        code_page_text(&bytes[..cch.min(bytes.len())], encoding)
    };
    non_empty(&text)
}

/// A chart's cached data (the values and category labels it draws, which Excel keeps in the
/// chart so that it can be drawn without its source cells): the `Number` and `Label` records
/// after each `SIIndex` record, one line per data point with a tab between series. Numbers in
/// the general format; none when the cache holds nothing.
fn chart_cache_text(
    recs: impl Iterator<Item = Rec>,
    stream: &[u8],
    biff8: bool,
    encoding: Option<&'static encoding_rs::Encoding>,
) -> Option<String> {
    let mut blocks: Vec<BTreeMap<(u16, u16), String>> = Vec::new();
    for rec in recs {
        let data = rec.data(stream);
        if rec.typ == SIINDEX || blocks.is_empty() {
            blocks.push(BTreeMap::new());
        }
        let (Some(row), Some(col), Some(block)) =
            (u16_at(data, 0), u16_at(data, 2), blocks.last_mut())
        else {
            continue;
        };
        let value = match rec.typ {
            NUMBER => data
                .get(6..14)
                .and_then(|b| b.try_into().ok())
                .map(|b| inlet_extract_support::cells::number(f64::from_le_bytes(b))),
            LABEL if biff8 => data.get(6..).and_then(unicode_string),
            LABEL => {
                let cch = usize::from(u16_at(data, 6).unwrap_or(0));
                data.get(8..)
                    .map(|b| code_page_text(&b[..cch.min(b.len())], encoding))
            }
            _ => None,
        };
        if let Some(value) = value.as_deref().and_then(non_empty) {
            block.insert((row, col), value);
        }
    }
    let mut text = String::new();
    for block in blocks {
        let mut last_row = None;
        for ((row, _), value) in block {
            match last_row {
                Some(r) if r == row => text.push('\t'),
                Some(_) => text.push('\n'),
                None if !text.is_empty() => text.push('\n'),
                None => {}
            }
            last_row = Some(row);
            text.push_str(&value);
        }
    }
    non_empty(&text)
}

/// The format id and code of a `FORMAT` record.
fn format_record(data: &[u8], biff8: bool) -> Option<(u16, String)> {
    let ifmt = u16_at(data, 0)?;
    let code = if biff8 {
        unicode_string(data.get(2..)?)?
    } else {
        let cch = usize::from(*data.get(2)?);
        // Format codes are ASCII but for currency symbols, which we read as Latin-1.
        data.get(3..)?
            .iter()
            .take(cch)
            .map(|&b| char::from(b))
            .collect()
    };
    Some((ifmt, code))
}

/// `BoundSheet8` as `calamine` parses it: position, a known visibility and sheet type, and a
/// name of at least one character field.
fn boundsheet_ok(data: &[u8], biff8: bool) -> bool {
    data.len() >= if biff8 { 8 } else { 7 }
        && data[4] & 0x3F <= 2
        && matches!(data[5], 0x00 | 0x01 | 0x02 | 0x06)
}

/// The first and last column of a `MulRk` record whose length matches them.
fn mulrk_columns(data: &[u8]) -> Option<(u16, u16)> {
    if data.len() < 6 {
        return None;
    }
    let first = u16_at(data, 2)?;
    let last = u16_at(data, data.len() - 2)?;
    let count = usize::from(last.checked_sub(first)?) + 1;
    (data.len() == 6 + 6 * count).then_some((first, last))
}

/// A `Formula` record `calamine` reads without panicking or failing: room for the cached value,
/// the flags and the token stream's length, and a cached value of a known kind.
fn formula_ok(data: &[u8]) -> bool {
    if data.len() < 22 {
        return false;
    }
    match data[6..14] {
        [kind, _, code, _, _, _, 0xFF, 0xFF] => match kind {
            0x00 | 0x01 | 0x03 => true,
            0x02 => ERROR_CODES.contains(&code),
            _ => false,
        },
        _ => true,
    }
}

/// The data of the `Continue` records `calamine` attaches to record `i` of a stream of `end`
/// bytes (it gathers one only while more than its header is left).
fn continues<'a>(recs: &[Rec], i: usize, stream: &'a [u8], end: usize) -> Vec<&'a [u8]> {
    recs[i + 1..]
        .iter()
        .take_while(|r| r.typ == CONTINUE && end - r.at > 4)
        .map(|r| r.data(stream))
        .collect()
}

/// Whether `calamine` reads this shared string table (with its `Continue` records) without
/// panicking or failing: a step-by-step replay of its `parse_sst`, `read_rich_extended_string`
/// and `read_dbcs`.
fn sst_ok<'a>(data: &'a [u8], conts: &[&'a [u8]]) -> bool {
    let Some(mut cur) = data.get(8..) else {
        return false;
    };
    let mut next = conts.iter();
    let mut advance = |cur: &mut &'a [u8]| match next.next() {
        Some(c) => {
            *cur = c;
            true
        }
        None => false,
    };
    loop {
        if cur.is_empty() && !advance(&mut cur) {
            return true;
        }
        if cur.is_empty() {
            continue;
        }
        if cur.len() < 3 {
            return false;
        }
        let mut len = usize::from(u16::from_le_bytes([cur[0], cur[1]]));
        let flags = cur[2];
        cur = &cur[3..];
        let mut runs = 0usize;
        let mut ext = 0usize;
        if flags & 0x8 != 0 {
            let Some(n) = u16_at(cur, 0) else {
                return false;
            };
            runs = usize::from(n) * 4;
            cur = &cur[2..];
        }
        if flags & 0x4 != 0 {
            let Some(n) = u32_at(cur, 0) else {
                return false;
            };
            // `calamine` reads it as an i32 cast to usize.
            ext = n as i32 as usize;
            cur = &cur[4..];
        }
        let mut wide = flags & 1 != 0;
        while len > 0 {
            let took = if wide {
                (cur.len() / 2).min(len)
            } else {
                cur.len().min(len)
            };
            cur = &cur[if wide { 2 * took } else { took }..];
            len -= took;
            if len > 0 {
                if !advance(&mut cur) || cur.is_empty() {
                    return false;
                }
                wide = cur[0] & 1 != 0;
                cur = &cur[1..];
            }
        }
        for mut skip in [runs, ext] {
            while skip > 0 {
                if cur.is_empty() && !advance(&mut cur) {
                    return false;
                }
                let n = skip.min(cur.len());
                cur = &cur[n..];
                skip -= n;
            }
        }
    }
}

/// What [`sheet_cells`] finds in a sheet.
struct SheetWalk {
    /// The XF index of each numeric cell.
    xfs: HashMap<(u32, u32), u16>,
    /// The cells of the dense grid spanning every cell.
    grid: u64,
    /// The records stepped over.
    steps: usize,
    /// The sheet's own `Header` and `Footer` records (not a chart's within it).
    page: Vec<Rec>,
    /// The sheet's `TxO` records, its charts' `SeriesText` records and their data caches.
    drawn: Vec<Drawn>,
}

/// Text drawn on a sheet, by where its records are (counted from the sheet's first record).
enum Drawn {
    /// A `TxO` or `SeriesText` record.
    Record(usize),
    /// A chart's data cache: its `SIIndex`, `Number` and `Label` records ([`chart_cache_text`]).
    Cache(Vec<usize>),
}

/// Replays `calamine`'s walk of one sheet from its first record ([`SheetWalk`]).
fn sheet_cells(recs: &[Rec], stream: &[u8]) -> SheetWalk {
    let mut page = Vec::new();
    let mut drawn = Vec::new();
    let mut xfs = HashMap::new();
    let mut bounds: Option<(u32, u32, u32, u32)> = None;
    let mut cell = |row: u32, col: u32| {
        bounds = Some(match bounds {
            None => (row, row, col, col),
            Some((r0, r1, c0, c1)) => (r0.min(row), r1.max(row), c0.min(col), c1.max(col)),
        });
    };
    let mut seen_bof = false;
    let mut depth = 0usize;
    let mut formula_at = (0, 0);
    let mut steps = 0;
    // A chart sheet, and the cache records of the chart being walked.
    let mut chart_sheet = false;
    let mut cache = Vec::new();
    let end_chart = |cache: &mut Vec<usize>, drawn: &mut Vec<Drawn>| {
        if cache.iter().any(|&i: &usize| recs[i].typ != SIINDEX) {
            drawn.push(Drawn::Cache(std::mem::take(cache)));
        }
        cache.clear();
    };
    for (i, r) in recs.iter().enumerate() {
        steps += 1;
        // `calamine` attaches `Continue` records to the one before (but yields one at the start).
        if i > 0 && r.typ == CONTINUE {
            continue;
        }
        if depth > 0 {
            match r.typ {
                BOF => depth += 1,
                EOF => {
                    depth -= 1;
                    if depth == 0 {
                        end_chart(&mut cache, &mut drawn);
                    }
                }
                SERIESTEXT => drawn.push(Drawn::Record(i)),
                SIINDEX | NUMBER | LABEL => cache.push(i),
                _ => {}
            }
            continue;
        }
        let data = r.data(stream);
        let at = |data: &[u8]| {
            (
                u32::from(u16_at(data, 0).unwrap_or(0)),
                u32::from(u16_at(data, 2).unwrap_or(0)),
            )
        };
        match r.typ {
            BOF if seen_bof => depth += 1,
            BOF => {
                seen_bof = true;
                chart_sheet = u16_at(data, 2) == Some(BOF_CHART);
            }
            EOF => break,
            SIINDEX if chart_sheet => cache.push(i),
            NUMBER | RK | FORMULA => {
                let (row, col) = at(data);
                cell(row, col);
                if chart_sheet && r.typ == NUMBER {
                    cache.push(i);
                }
                if let Some(xf) = u16_at(data, 4) {
                    xfs.insert((row, col), xf);
                }
                if r.typ == FORMULA {
                    formula_at = (row, col);
                }
            }
            LABEL | RSTRING | BOOLERR | LABELSST => {
                let (row, col) = at(data);
                cell(row, col);
                if chart_sheet && r.typ == LABEL {
                    cache.push(i);
                }
            }
            STRING => cell(formula_at.0, formula_at.1),
            HEADER | FOOTER => page.push(*r),
            TXO | SERIESTEXT => drawn.push(Drawn::Record(i)),
            MULRK => {
                if let Some((first, last)) = mulrk_columns(data) {
                    let row = at(data).0;
                    for (k, col) in (first..=last).enumerate() {
                        cell(row, u32::from(col));
                        if let Some(xf) = u16_at(data, 4 + 6 * k) {
                            xfs.insert((row, u32::from(col)), xf);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    end_chart(&mut cache, &mut drawn);
    let grid = bounds.map_or(0, |(r0, r1, c0, c1)| {
        u64::from(r1 - r0 + 1) * u64::from(c1 - c0 + 1)
    });
    SheetWalk {
        xfs,
        grid,
        steps,
        page,
        drawn,
    }
}

#[cfg(test)]
#[path = "biff_tests.rs"]
mod tests;
