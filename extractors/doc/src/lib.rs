#![doc = include_str!("../README.md")]

mod piece;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
use inlet_extract_testkit as testutil;

use std::io::Cursor;

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use inlet_extract_support::ole::{
    Summary, read_stream, scan_blips, write_embedded, write_pictures,
};

use piece::Fib;

use inlet_extract_support::ole::OLE2_MAGIC;

/// The stream holding a Word document's text and FIB.
const WORD_DOCUMENT: &str = "WordDocument";

/// The stream holding inline pictures (and other binary data the text points at).
const DATA: &str = "Data";

/// The storage Word keeps embedded objects in, one `_<id>` storage each.
const OBJECT_POOL: &str = "ObjectPool";

/// Detection score for an OLE2 file with a `WordDocument` stream.
const SCORE: u8 = 95;

/// Extracts the text of a Word 97–2003 binary document.
struct Doc;

impl Extractor for Doc {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        extract(input, sink)
    }
}

/// Opens the compound file, reports its summary properties (title, author, dates, page count)
/// and writes the document's text, reading at most the sink's decompression budget from its
/// streams.
fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut budget = sink.max_decompressed_bytes();
    let mut file = cfb::CompoundFile::open(Cursor::new(input)).map_err(ExtractError::malformed)?;
    if let Some(m) = sink.metadata_mut() {
        let summary = Summary::read(&mut file, &mut budget);
        summary.fill(m);
        m.pages = summary.pages;
    }
    let word = read_stream(&mut file, WORD_DOCUMENT, &mut budget)?;
    let fib = Fib::parse(&word)?;
    if fib.encrypted {
        return Err(ExtractError::Unsupported("encrypted Word document".into()));
    }
    let (chars, encoding) = (fib.total_chars(), fib.encoding);
    if fib.clx_len == 0 {
        // Word 6/95 saved in full (no piece table): the text is one run of 8-bit characters.
        piece::write_pieces(&word, &[fib.flat_piece()], chars, encoding, sink)?;
    } else if fib.word6 {
        // Word 6/95 fast-saved: the piece table is in the WordDocument stream.
        let pieces = piece::pieces(&word, fib.clx_offset, fib.clx_len, true)?;
        piece::write_pieces(&word, &pieces, chars, encoding, sink)?;
    } else {
        let table_name = if fib.table_one { "1Table" } else { "0Table" };
        let table = read_stream(&mut file, table_name, &mut budget)?;
        let pieces = piece::pieces(&table, fib.clx_offset, fib.clx_len, false)?;
        piece::write_pieces(&word, &pieces, chars, encoding, sink)?;
    }
    // Floating pictures are kept after the text; inline ones in the `Data` stream.
    let mut pictures = scan_blips(&word, sink);
    drop(word);
    // Embedded documents (`ObjectPool/_…` storages) after the text, as Tika writes them, then
    // the words in pictures.
    write_embedded(&mut file, OBJECT_POOL, "_", &mut budget, sink)?;
    if file.is_stream(DATA)
        && let Ok(data) = read_stream(&mut file, DATA, &mut budget)
    {
        pictures.extend(scan_blips(&data, sink));
    }
    write_pictures(pictures, sink)
}

fn sniff(probe: &Probe<'_>) -> u8 {
    if probe.bytes.starts_with(OLE2_MAGIC) && probe.has_entry(WORD_DOCUMENT) {
        SCORE
    } else {
        0
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "doc",
        version: 1,
        media_type: "application/msword",
        sniff,
        make: || Box::new(Doc),
    }
}
