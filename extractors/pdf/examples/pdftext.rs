//! Prints the text of PDF files, or with `--time` the median extraction time per file.
//!
//! `cargo run --release -p inlet-extract-pdf --example pdftext -- [--time] FILE...`

use std::time::Instant;

use inlet_core::extract::{Limits, TextSink};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let time = args.first().is_some_and(|a| a == "--time");
    if time {
        args.remove(0);
    }
    let mut medians = Vec::new();
    for path in &args {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let runs = if time { 21 } else { 1 };
        let mut times = Vec::new();
        let mut text = String::new();
        let mut result = Ok(());
        for _ in 0..runs {
            let mut sink = TextSink::new(&Limits::default());
            let start = Instant::now();
            result = inlet_extract_pdf::extract(&bytes, &mut sink);
            times.push(start.elapsed().as_secs_f64() * 1000.0);
            text = sink.into_text();
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        if time {
            println!("{median:8.2} ms  {:>8} chars  {path}", text.chars().count());
            medians.push(median);
        } else {
            print!("{text}");
        }
        if let Err(e) = result {
            eprintln!("{path}: {e}");
        }
    }
    if time && !medians.is_empty() {
        medians.sort_by(f64::total_cmp);
        println!("median of medians: {:.2} ms", medians[medians.len() / 2]);
    }
}
