#![doc = include_str!("../README.md")]

mod cmap;
mod content;
mod crypt;
mod doc;
mod encoding;
mod filter;
mod font;
mod generated;
mod layout;
mod object;
mod scan;
mod truetype;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod feature_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod testdata_tests;
#[cfg(test)]
mod testutil;

use inlet_core::extract::{
    ExtractError, Extractor, ExtractorInfo, Probe, TextSink, keep, keep_names,
};

/// Bytes at the start of a file searched for the `%PDF-` header.
pub const HEADER_WINDOW: usize = 1024;

/// Glyphs recorded on one page beyond the room left in the sink (the rest of a page that
/// would overflow the output cap is not interpreted).
const PAGE_GLYPH_SLACK: usize = 10_000;

/// Sniffer: a `%PDF-` header within the first [`HEADER_WINDOW`] bytes.
pub fn sniff(probe: &Probe<'_>) -> u8 {
    let head = &probe.bytes[..probe.bytes.len().min(HEADER_WINDOW)];
    if memchr::memmem::find(head, b"%PDF-").is_some() {
        95
    } else {
        0
    }
}

/// The PDF extractor (text layer only, no OCR).
#[derive(Debug, Default, Clone, Copy)]
pub struct PdfExtractor;

impl Extractor for PdfExtractor {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        extract(input, sink)
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "pdf",
        version: 1,
        media_type: "application/pdf",
        sniff,
        make: || Box::new(PdfExtractor),
    }
}

/// A PDF date (`D:YYYYMMDDHHmmSSOHH'mm'`, every part after the year optional) as RFC 3339; a
/// date that does not read so is kept as written.
fn pdf_date(raw: Option<String>) -> String {
    let Some(raw) = raw else {
        return String::new();
    };
    let s = raw.trim().trim_start_matches("D:");
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    if digits.len() < 4 {
        return raw;
    }
    let part = |from: usize, len: usize, default: &str| -> String {
        digits
            .get(from..from + len)
            .map_or_else(|| default.to_string(), str::to_string)
    };
    let rest = &s[digits.len()..];
    let zone = match rest.chars().next() {
        Some(sign @ ('+' | '-')) => {
            let z: String = rest[1..].chars().filter(char::is_ascii_digit).collect();
            let hh = z.get(0..2).unwrap_or("00");
            let mm = z.get(2..4).unwrap_or("00");
            format!("{sign}{hh}:{mm}")
        }
        _ => "Z".to_string(),
    };
    format!(
        "{}-{}-{}T{}:{}:{}{zone}",
        part(0, 4, "0000"),
        part(4, 2, "01"),
        part(6, 2, "01"),
        part(8, 2, "00"),
        part(10, 2, "00"),
        part(12, 2, "00"),
    )
}

/// The image file of a page that is one scanned image (no text, an image over most of it):
/// `None` for a page that is not one, `Some(None)` for a scan not read (too large, or a layout
/// [`scan::image_file`] does not write).
fn scanned_page(
    doc: &doc::Document<'_>,
    page: &object::Dict,
    image: Option<(object::Stream, f32)>,
) -> Option<Option<Vec<u8>>> {
    let (stream, area) = image?;
    let page_area = scan::page_area(doc, page)?;
    if area < scan::MIN_COVER * page_area {
        return None;
    }
    if scan::too_large(doc, &stream) {
        // Not decoded: the text is reported truncated instead.
        return Some(None);
    }
    Some(scan::image_file(doc, &stream))
}

/// Extracts the text layer of `input` into `sink`, decompressing at most the sink's
/// [`TextSink::max_decompressed_bytes`] in total. Pages are written one at a time; a damaged file
/// yields what was readable and then [`ExtractError::Malformed`].
pub fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let doc = doc::Document::open(input, sink.max_decompressed_bytes())?;
    let pages = doc.pages();
    if let Some(m) = sink.metadata_mut() {
        keep(&mut m.title, &doc.info(b"Title").unwrap_or_default());
        keep_names(&mut m.authors, doc.info(b"Author").as_deref());
        keep(&mut m.created, &pdf_date(doc.info(b"CreationDate")));
        keep(&mut m.modified, &pdf_date(doc.info(b"ModDate")));
        m.pages = u32::try_from(pages.len()).ok();
    }
    let mut interp = content::Interpreter::new(&doc);
    let mut scanned = 0;
    for page in &pages {
        sink.check_deadline()?;
        interp.max_glyphs = sink.remaining().saturating_add(PAGE_GLYPH_SLACK);
        interp.run_page(page, sink)?;
        let text = layout::page_text(&interp.page);
        if !text.trim().is_empty() {
            sink.push(&text)?;
            sink.line_break()?;
        } else if scanned < scan::MAX_OCR_PAGES
            && let Some(scan) = scanned_page(&doc, page, interp.largest_image.take())
        {
            let Some(file) = scan else {
                // A scan too large for OCR (or of a layout not read): the text is not whole.
                sink.left_out();
                continue;
            };
            scanned += 1;
            match sink.extract_nested("", &file) {
                // OCR ran out of time: the pages read so far are kept, the text reported cut.
                Err(ExtractError::TimedOut) => return Err(sink.cut()),
                other => other?,
            }
        }
    }
    // Bookmarks, as Tika appends them: titles that often say what the pages do not.
    for title in doc.outline_titles() {
        sink.push(&title)?;
        sink.line_break()?;
    }
    if doc.budget.is_damaged() {
        return Err(ExtractError::Malformed(
            "damaged PDF: some objects or streams could not be read".to_owned(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod date_tests {
    use super::pdf_date;

    #[test]
    fn pdf_dates_become_rfc_3339() {
        let d = |s: &str| pdf_date(Some(s.to_string()));
        assert_eq!(d("D:20150923080001-04'00'"), "2015-09-23T08:00:01-04:00");
        assert_eq!(d("D:20250130094913+01'00"), "2025-01-30T09:49:13+01:00");
        assert_eq!(d("D:20230516172840Z"), "2023-05-16T17:28:40Z");
        assert_eq!(d("D:2019"), "2019-01-01T00:00:00Z");
        assert_eq!(d("yesterday"), "yesterday");
        assert_eq!(pdf_date(None), "");
    }
}
