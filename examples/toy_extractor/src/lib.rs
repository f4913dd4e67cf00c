//! A toy format registered with Inlet's extractor registry: files that start with the magic line
//! `TOY1` followed by records `key=value`, one per line. The extracted text is the values, one
//! per line. Nothing in core or the server knows about it: linking this crate is enough.

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};

/// The first bytes of every toy file.
pub const MAGIC: &[u8] = b"TOY1\n";

/// Extracts a toy file.
struct Toy;

impl Extractor for Toy {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let body = input
            .strip_prefix(MAGIC)
            .ok_or_else(|| ExtractError::malformed("missing TOY1 header"))?;
        let text = std::str::from_utf8(body).map_err(ExtractError::malformed)?;
        for line in text.lines() {
            // Stop early when the sink is full or the deadline passed: `?` passes it on.
            sink.check_deadline()?;
            match line.split_once('=') {
                Some((_, value)) => {
                    sink.push(value.trim())?;
                    sink.line_break()?;
                }
                None if line.trim().is_empty() => {}
                None => return Err(ExtractError::malformed(format!("not key=value: {line}"))),
            }
        }
        Ok(())
    }
}

/// Confidence that the bytes are a toy file: sure when the magic is there, else not ours.
fn sniff(probe: &Probe<'_>) -> u8 {
    if probe.bytes.starts_with(MAGIC) {
        100
    } else {
        0
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "toy",
        version: 1,
        media_type: "application/octet-stream",
        sniff,
        make: || Box::new(Toy),
    }
}
