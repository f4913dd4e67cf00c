//! Tests against the shared corpus (`shared/corpus`, beside the repository): every PDF is
//! detected and yields text (but the image-only scan), token recall against Apache Tika's
//! `.expected.txt` is at least 0.95, the `bad/` files are ours exactly when they have a PDF header
//! (and then hit no limit), and ignored tools report recall against every peer, dump our text and
//! time us. The standard bodies are those of `inlet-extract-testkit`; `bad/` holds damaged PDFs,
//! so its check is this crate's own.

use std::fs;

use inlet_core::extract::ExtractError;
use inlet_extract_testkit::{CorpusSuite, Gate, detect, documents, run};

/// Image-only scans (MANIFEST.tsv): without OCR, empty or near-empty text is right.
const IMAGE_ONLY: &[&str] = &["eng-ocr.pdf"];

const SUITE: CorpusSuite = CorpusSuite {
    folders: &[("pdf", "pdf")],
    detected_otherwise: &[],
    foreign: &[],
    no_text: IMAGE_ONLY,
    gate: Gate::Tika,
    min_oracles: 1,
};

/// Every PDF is detected from its bytes and extracts without an error: more than 20 words each,
/// but the image-only scans, which give fewer.
#[test]
fn corpus_pdfs_are_detected_and_yield_text() {
    let files = documents("pdf");
    assert!(files.len() >= 17, "corpus PDFs missing");
    for path in files {
        let bytes = fs::read(&path).expect("read corpus file");
        assert_eq!(
            detect(&bytes),
            Some("pdf"),
            "{} not detected",
            path.display()
        );
        let text = run("pdf", &bytes).unwrap_or_else(|(e, _)| panic!("{}: {e}", path.display()));
        let words = text.split_whitespace().count();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if IMAGE_ONLY.contains(&name.as_ref()) {
            assert!(
                words < 20,
                "{}: {words} words from an image",
                path.display()
            );
        } else {
            assert!(words > 20, "{} gave {words} words", path.display());
        }
    }
}

#[test]
fn corpus_recall_is_at_least_95_percent() {
    SUITE.check_recall();
}

/// `bad/` files are taken for PDFs exactly when they have a `%PDF-` header; those are damaged
/// PDFs, which give whatever was readable, never a panic or a limit.
#[test]
fn corpus_bad_files_other_than_pdfs_are_not_detected() {
    for path in documents("bad") {
        let bytes = fs::read(&path).expect("read corpus file");
        let is_pdf = bytes.windows(5).take(1024).any(|w| w == b"%PDF-");
        assert_eq!(detect(&bytes) == Some("pdf"), is_pdf, "{}", path.display());
        if is_pdf {
            let r = run("pdf", &bytes).map(drop).map_err(|(e, _)| e);
            assert!(
                !matches!(
                    r,
                    Err(ExtractError::LimitExceeded(_) | ExtractError::TimedOut)
                ),
                "{}: {r:?}",
                path.display()
            );
        }
    }
}

/// Per file: recall and precision against Tika's oracle and each peer's output and the time
/// taken, flagging files where we find less than 0.9 of a peer's tokens. Run with
/// `cargo test --release -p inlet-extract-pdf corpus_recall_report -- --ignored --nocapture`.
#[test]
#[ignore = "a report, not a check"]
fn corpus_recall_report() {
    SUITE.recall_report();
}

/// Writes our text of every PDF under `$INLET_DUMP` (run with `--ignored`).
#[test]
#[ignore = "a tool, not a check"]
fn corpus_dump() {
    SUITE.dump();
}

/// Median time per file (run in release with `--ignored`).
#[test]
#[ignore = "a measurement, not a check"]
fn corpus_timing() {
    SUITE.timing_report();
}
