#![doc = include_str!("../README.md")]

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use inlet_extract_support::metafile;

#[cfg(test)]
mod tests;

/// Detection score of an EMF header: above the PDF sniffer's 95 for `%PDF-` anywhere in the
/// first KiB, because a Mac's EMF may embed the PDF it was made from in a comment record near
/// its start, while its own header is exact (record type 1, the `" EMF"` signature).
const EMF_SCORE: u8 = 98;
/// Detection score of a WMF header (a placeable key, or a header's type, size and version).
const WMF_SCORE: u8 = 90;

/// The text a metafile draws.
struct Metafile;

impl Extractor for Metafile {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        if let Some(text) = metafile::text(input) {
            sink.push(&text)?;
            sink.line_break()?;
        }
        Ok(())
    }
}

fn sniff_emf(probe: &Probe<'_>) -> u8 {
    if metafile::is_emf(probe.bytes) {
        EMF_SCORE
    } else {
        0
    }
}

fn sniff_wmf(probe: &Probe<'_>) -> u8 {
    if metafile::is_wmf(probe.bytes) {
        WMF_SCORE
    } else {
        0
    }
}

inventory::submit! {
    ExtractorInfo { id: "emf", version: 1, media_type: "image/emf", sniff: sniff_emf, make: || Box::new(Metafile) }
}

inventory::submit! {
    ExtractorInfo { id: "wmf", version: 1, media_type: "image/wmf", sniff: sniff_wmf, make: || Box::new(Metafile) }
}
