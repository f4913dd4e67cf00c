//! OCR benchmark (issue 16 point 9): seconds per page for Inlet's OCR (the registry, as the
//! server runs it) against the bare `tesseract` command on the same images in the same run,
//! with the ratio. Run in release:
//!
//! ```text
//! cargo run --release -p inlet-extract-ocr --example ocr-bench [-- ROUNDS]
//! ```
//!
//! The bare command runs twice: as installed (Tesseract's OpenMP threads on every core) and with
//! `OMP_THREAD_LIMIT=1` (one thread, as Inlet runs it). Inputs: extractors/ocr/tests/data.

use std::{
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use inlet_core::extract::Limits;

const INPUTS: &[&str] = &[
    "linn.png",
    "typewriter.png",
    "crom.png",
    "ccitt.pdf",
    "c03-29.pdf",
];

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One run of the bare command on an image file (tesseract cannot read a PDF, so scanned PDFs
/// have Inlet's figure only).
fn bare(path: &Path, single_thread: bool) -> Duration {
    let mut cmd = Command::new("tesseract");
    cmd.arg(path)
        .arg("stdout")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if single_thread {
        cmd.env("OMP_THREAD_LIMIT", "1");
    }
    let started = Instant::now();
    let status = cmd.status().expect("tesseract runs");
    assert!(status.success(), "tesseract failed on {}", path.display());
    started.elapsed()
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    assert!(
        inlet_extract_ocr::status().available,
        "OCR is not available: {:?}",
        inlet_extract_ocr::status().reason
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    println!(
        "tesseract: {}; {rounds} rounds, median seconds per page",
        inlet_extract_ocr::status()
            .version
            .as_deref()
            .unwrap_or("?")
    );
    println!("| input | Inlet | tesseract (OMP=1) | ratio | tesseract (as installed) | ratio |");
    println!("|---|---|---|---|---|---|");
    for name in INPUTS {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).expect("input");
        let ours = median(
            (0..rounds)
                .map(|_| {
                    let started = Instant::now();
                    let o = inlet_extractors::extract(&bytes, &Limits::default());
                    assert!(o.failure.is_none() && !o.text.is_empty(), "{name}: {o:?}");
                    started.elapsed()
                })
                .collect(),
        );
        if name.ends_with(".pdf") {
            println!("| {name} | {:.2} | — | — | — | — |", ours.as_secs_f64());
            continue;
        }
        let one = median((0..rounds).map(|_| bare(&path, true)).collect());
        let all = median((0..rounds).map(|_| bare(&path, false)).collect());
        println!(
            "| {name} | {:.2} | {:.2} | {:.2}× | {:.2} | {:.2}× |",
            ours.as_secs_f64(),
            one.as_secs_f64(),
            ours.as_secs_f64() / one.as_secs_f64(),
            all.as_secs_f64(),
            ours.as_secs_f64() / all.as_secs_f64()
        );
    }
}
