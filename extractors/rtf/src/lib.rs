#![doc = include_str!("../README.md")]

mod parser;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
use inlet_extract_testkit as testutil;

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};

/// Detection score for bytes starting with `{\rtf`.
const SCORE: u8 = 95;

/// Extracts the text of an RTF document.
struct Rtf;

impl Extractor for Rtf {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        parser::Parser::new(input).run(sink)
    }
}

fn sniff(probe: &Probe<'_>) -> u8 {
    let bytes = probe
        .bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(probe.bytes);
    if bytes.starts_with(b"{\\rtf") {
        SCORE
    } else {
        0
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "rtf",
        version: 1,
        media_type: "application/rtf",
        sniff,
        make: || Box::new(Rtf),
    }
}
