//! Tests against the shared corpus (`shared/corpus`, beside the repository): every PDF is
//! detected and yields text (but the image-only scan), token recall against Apache Tika's
//! `.expected.txt` is at least 0.95, and an ignored report compares us with every peer.

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
    time::Instant,
};

use inlet_core::extract::{ExtractError, Probe};
use unicode_normalization::UnicodeNormalization;

use crate::testutil::{info, run};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

/// Image-only scans (MANIFEST.tsv): without OCR, empty or near-empty text is right.
const IMAGE_ONLY: &[&str] = &["eng-ocr.pdf"];

/// The peers whose outputs are kept under `reference/<peer>/pdf/`.
const PEERS: &[&str] = &["extractous", "kreuzberg", "pdftotext"];

fn pdfs() -> Vec<PathBuf> {
    let dir = Path::new(CORPUS).join("pdf");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus folder {} is missing: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pdf"))
        .collect();
    files.sort();
    files
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// NFKC, lowercase, runs of letters and digits (the corpus README's definition).
fn tokens(text: &str) -> HashMap<String, usize> {
    let normalized: String = text.nfkc().collect::<String>().to_lowercase();
    let mut counts = HashMap::new();
    for token in normalized
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
    {
        *counts.entry(token.to_owned()).or_insert(0) += 1;
    }
    counts
}

/// Share of `expected`'s tokens (as a multiset) found in `ours`.
fn recall(ours: &str, expected: &str) -> f64 {
    let ours = tokens(ours);
    let expected = tokens(expected);
    let total: usize = expected.values().sum();
    if total == 0 {
        return 1.0;
    }
    let matched: usize = expected
        .iter()
        .map(|(t, &n)| n.min(ours.get(t).copied().unwrap_or(0)))
        .sum();
    matched as f64 / total as f64
}

fn extract(path: &Path) -> String {
    let bytes = fs::read(path).unwrap();
    match run(&bytes) {
        (Ok(()), text) => text,
        (Err(e), _) => panic!("{}: {e}", path.display()),
    }
}

#[test]
fn corpus_pdfs_are_detected_and_yield_text() {
    let files = pdfs();
    assert!(files.len() >= 17, "corpus PDFs missing");
    for path in files {
        let bytes = fs::read(&path).unwrap();
        let probe = Probe {
            bytes: &bytes,
            entries: &[],
        };
        assert!(
            (info().sniff)(&probe) > 0,
            "{} not detected",
            path.display()
        );
        let text = extract(&path);
        let words = text.split_whitespace().count();
        if IMAGE_ONLY.contains(&name(&path).as_str()) {
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
fn corpus_recall_against_tika_is_at_least_95_percent() {
    let mut checked = 0;
    for path in pdfs() {
        let oracle = PathBuf::from(format!("{}.expected.txt", path.display()));
        let Ok(expected) = fs::read_to_string(&oracle) else {
            continue;
        };
        let ours = extract(&path);
        let r = recall(&ours, &expected);
        let precision = recall(&expected, &ours);
        println!("{}: recall {r:.3}, precision {precision:.3}", name(&path));
        assert!(r >= 0.95, "{}: recall {r:.3}", path.display());
        checked += 1;
    }
    assert!(checked >= 1, "no .expected.txt oracle found");
}

#[test]
fn corpus_bad_files_other_than_pdfs_are_not_detected() {
    let dir = Path::new(CORPUS).join("bad");
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = fs::read(&path).unwrap();
        let probe = Probe {
            bytes: &bytes,
            entries: &[],
        };
        let score = (info().sniff)(&probe);
        let is_pdf = bytes.windows(5).take(1024).any(|w| w == b"%PDF-");
        assert_eq!(score > 0, is_pdf, "{}", path.display());
        if is_pdf {
            // Damaged PDFs: whatever was readable, never a panic or a limit.
            let (r, _) = run(&bytes);
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

/// Prints, per file, token recall against Tika's oracle and against each peer's output, our
/// precision against each peer, and the time taken; flags files where we find less than 0.9 of
/// a peer's tokens. Run with
/// `cargo test --release -p inlet-extract-pdf corpus_report -- --ignored --nocapture`.
#[test]
#[ignore = "report, not a check"]
fn corpus_report() {
    println!(
        "{:<44} {:>7} {:>21} {:>21} {:>21} {:>8}",
        "file (recall | precision vs peer)",
        "tika-exp",
        "extractous",
        "kreuzberg",
        "pdftotext",
        "ms"
    );
    for path in pdfs() {
        let bytes = fs::read(&path).unwrap();
        let start = Instant::now();
        let (_, ours) = run(&bytes);
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        let file = name(&path);
        let oracle = fs::read_to_string(format!("{}.expected.txt", path.display()))
            .map(|e| format!("{:.3}", recall(&ours, &e)))
            .unwrap_or_else(|_| "-".to_owned());
        let mut cells = Vec::new();
        let mut flag = String::new();
        for peer in PEERS {
            let reference = Path::new(CORPUS)
                .join("reference")
                .join(peer)
                .join("pdf")
                .join(format!("{file}.txt"));
            match fs::read_to_string(&reference) {
                Ok(theirs) => {
                    let r = recall(&ours, &theirs);
                    let p = recall(&theirs, &ours);
                    if r < 0.9 {
                        flag.push_str(&format!(" <0.9 vs {peer}"));
                    }
                    cells.push(format!("{r:.3} | {p:.3}"));
                }
                Err(_) => cells.push("-".to_owned()),
            }
        }
        println!(
            "{:<44} {:>7} {:>21} {:>21} {:>21} {:>8.2}{flag}",
            file.chars().take(44).collect::<String>(),
            oracle,
            cells[0],
            cells[1],
            cells[2],
            ms
        );
    }
}
