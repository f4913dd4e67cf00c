//! Plain text (`text`): the fallback for anything that decodes as text.

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};

use crate::decode;

/// Score of plain text: low, so that every more specific text format wins.
const SCORE: u8 = 10;

/// Decodes the file and writes it as is, line ends normalised.
struct Plain;

impl Extractor for Plain {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let detected = decode::detect_or_fail(input)?;
        decode::stream_into(input, &detected, sink)
    }
}

fn sniff(probe: &Probe<'_>) -> u8 {
    if decode::is_text(probe.bytes) {
        SCORE
    } else {
        0
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "text",
        version: 1,
        media_type: "text/plain",
        sniff,
        make: || Box::new(Plain),
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{capped, detect, noise, run, score, text};

    #[test]
    fn plain_text_is_the_fallback() {
        let bytes = b"Just a note.\r\nSecond line.\r\n";
        assert_eq!(score("text", bytes), 10);
        assert_eq!(detect(bytes), Some("text"));
        assert_eq!(text("text", bytes), "Just a note.\nSecond line.\n");
    }

    #[test]
    fn random_bytes_give_no_text() {
        let bytes = noise(1_000_000, 0x9E37_79B9_7F4A_7C15);
        assert_eq!(score("text", &bytes), 0);
        assert_eq!(detect(&bytes), None);
        assert!(run("text", &bytes).is_err());
    }

    #[test]
    fn rtf_is_left_to_its_own_extractor() {
        assert_eq!(detect(b"{\\rtf1\\ansi\\deff0 {\\fonttbl} Hello}"), None);
    }

    #[test]
    fn a_huge_text_stops_at_the_cap() {
        let line = "The quick brown fox jumps over the lazy dog.\n";
        let bytes = line.repeat(20 * 1024 * 1024 / line.len()).into_bytes();
        let started = std::time::Instant::now();
        let (out, full) = capped("text", &bytes, 1_000_000);
        assert!(full);
        assert_eq!(out.chars().count(), 1_000_000);
        assert!(started.elapsed().as_secs() < 5);
    }
}
