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
mod testutil;

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};

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
        sniff,
        make: || Box::new(PdfExtractor),
    }
}

/// Extracts the text layer of `input` into `sink`, decompressing at most the sink's
/// [`TextSink::max_decompressed_bytes`] in total. Pages are written one at a time; a damaged file
/// yields what was readable and then [`ExtractError::Malformed`].
pub fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let doc = doc::Document::open(input, sink.max_decompressed_bytes())?;
    let pages = doc.pages();
    let mut interp = content::Interpreter::new(&doc);
    for page in &pages {
        sink.check_deadline()?;
        interp.max_glyphs = sink.remaining().saturating_add(PAGE_GLYPH_SLACK);
        interp.run_page(page, sink)?;
        let text = layout::page_text(&interp.page);
        if !text.is_empty() {
            sink.push(&text)?;
            sink.line_break()?;
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
