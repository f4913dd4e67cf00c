//! `extract-bench`: extraction throughput and recall on a corpus, ours and (optionally) the peers'.
//!
//! ```text
//! cargo run --release -p inlet-extractors --example extract-bench -- ../shared/corpus
//! cargo run --release -p inlet-extractors --example extract-bench -- ../shared/corpus \
//!     --peers target/peer-bench --markdown docs/extraction.md
//! ```
//!
//! For every document of every format folder of the corpus (`bad/` and `reference/` left out) it
//! runs the facade's [`inlet_extractors::extract`] (detection from bytes and extraction, default
//! limits) once to warm up, then repeatedly until a time budget per file is spent (at least 3 and
//! at most 50 runs), and keeps the median. Per format it prints files, bytes, the median time per
//! file, files/s and MB/s (from the sum of the per-file medians: one thread, warm), and token
//! recall as the corpus README defines it (`inlet_extract_testkit::recall`): against Apache Tika's
//! published `.expected.txt` where the corpus has one, and against extractous's output for every
//! file.
//!
//! `--peers DIR` reads what `scripts/bench-peers.py` measured in the same run: for each peer,
//! `DIR/<peer>/timings.tsv` (`folder`, `file`, `median ms`, `status` per line) and its text of
//! each file at `DIR/<peer>/<folder>/<file>.txt`; the peers' recall is computed here, by the same
//! code as ours. `--markdown FILE` writes the comparison as `docs/extraction.md`.

use std::{
    collections::{BTreeMap, HashMap},
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
    process::ExitCode,
    time::{Duration, Instant},
};

use inlet_core::extract::Limits;
use inlet_extract_testkit::{documents_in, oracle, recall};

/// Peers, in table order, with the label the table gives them.
const PEERS: &[(&str, &str)] = &[
    ("kreuzberg", "kreuzberg"),
    ("extractous", "Tika (extractous)"),
    ("pdftotext", "pdftotext"),
];

/// Runs per file at least and at most.
const MIN_RUNS: usize = 3;
const MAX_RUNS: usize = 50;

struct Args {
    corpus: PathBuf,
    peers: Option<PathBuf>,
    markdown: Option<PathBuf>,
    budget: Duration,
}

fn usage() -> String {
    "usage: extract-bench CORPUS [--peers DIR] [--markdown FILE] [--budget-ms N]".into()
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut corpus = None;
    let mut peers = None;
    let mut markdown = None;
    let mut budget = Duration::from_millis(200);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--peers" => peers = Some(PathBuf::from(value("--peers")?)),
            "--markdown" => markdown = Some(PathBuf::from(value("--markdown")?)),
            "--budget-ms" => {
                let ms = value("--budget-ms")?;
                budget = Duration::from_millis(ms.parse().map_err(|_| format!("bad ms: {ms}"))?);
            }
            "-h" | "--help" => return Err(usage()),
            other if other.starts_with('-') => return Err(format!("unknown flag {other}")),
            other => corpus = Some(PathBuf::from(other)),
        }
    }
    Ok(Args {
        corpus: corpus.ok_or_else(usage)?,
        peers,
        markdown,
        budget,
    })
}

/// One extractor's result for one document.
struct Run {
    ms: f64,
    text: String,
    failed: bool,
}

/// Median wall time of `f` in milliseconds: one warm-up, then runs until `budget` is spent.
fn median_ms(budget: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    let mut times = Vec::new();
    while times.len() < MIN_RUNS || (times.len() < MAX_RUNS && start.elapsed() < budget) {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn ours(bytes: &[u8], budget: Duration) -> Run {
    let limits = Limits::default();
    let outcome = inlet_extractors::extract(bytes, &limits);
    let ms = median_ms(budget, || {
        std::hint::black_box(inlet_extractors::extract(
            std::hint::black_box(bytes),
            &limits,
        ));
    });
    Run {
        ms,
        failed: outcome.failure.is_some() && outcome.text.is_empty(),
        text: outcome.text,
    }
}

/// One extractor's runs, by `(folder, file)`.
type Runs = HashMap<(String, String), Run>;

/// A peer's runs as `scripts/bench-peers.py` recorded them.
fn peer_runs(dir: &Path, peer: &str) -> Result<Runs, String> {
    let base = dir.join(peer);
    let tsv = base.join("timings.tsv");
    let timings = fs::read_to_string(&tsv).map_err(|e| format!("{}: {e}", tsv.display()))?;
    let mut runs = HashMap::new();
    for line in timings.lines().filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [folder, file, ms, status, ..] = cols[..] else {
            return Err(format!("{}: bad line {line:?}", tsv.display()));
        };
        let ms: f64 = ms.parse().map_err(|_| format!("bad ms in {line:?}"))?;
        let text =
            fs::read_to_string(base.join(folder).join(format!("{file}.txt"))).unwrap_or_default();
        runs.insert(
            (folder.to_owned(), file.to_owned()),
            Run {
                ms,
                failed: status != "ok",
                text,
            },
        );
    }
    Ok(runs)
}

/// Totals of one extractor over one format folder.
#[derive(Default)]
struct Summary {
    files: usize,
    bytes: u64,
    times: Vec<f64>,
    failed: usize,
    tika: Vec<f64>,
    extractous: Vec<f64>,
}

impl Summary {
    fn add(&mut self, bytes: u64, run: &Run, tika: Option<&str>, extractous: Option<&str>) {
        self.files += 1;
        self.bytes += bytes;
        self.times.push(run.ms);
        self.failed += usize::from(run.failed);
        if let Some(expected) = tika {
            self.tika.push(recall(&run.text, expected));
        }
        if let Some(expected) = extractous {
            self.extractous.push(recall(&run.text, expected));
        }
    }

    fn total_s(&self) -> f64 {
        self.times.iter().sum::<f64>() / 1000.0
    }

    fn median_ms(&self) -> f64 {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        t.get(t.len() / 2).copied().unwrap_or(f64::NAN)
    }

    fn files_per_s(&self) -> f64 {
        self.files as f64 / self.total_s()
    }

    fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.total_s()
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn fmt_recall(values: &[f64]) -> String {
    mean(values).map_or("—".into(), |m| format!("{m:.3}"))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("extract-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let mut folders: Vec<String> = fs::read_dir(&args.corpus)
        .map_err(|e| format!("{}: {e}", args.corpus.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f != "bad" && f != "reference")
        .collect();
    folders.sort();

    let mut peers: Vec<(&str, &str, Runs)> = Vec::new();
    if let Some(dir) = &args.peers {
        for &(peer, label) in PEERS {
            peers.push((peer, label, peer_runs(dir, peer)?));
        }
    }

    // summaries[folder][extractor]
    let mut summaries: BTreeMap<String, BTreeMap<&str, Summary>> = BTreeMap::new();
    println!(
        "{:<8} {:>5} {:>9} {:>10} {:>9} {:>8} {:>10} {:>12}",
        "format", "files", "KB", "ms/file", "files/s", "MB/s", "R(Tika)", "R(extractous)"
    );
    for folder in &folders {
        let by_extractor = summaries.entry(folder.clone()).or_default();
        for path in documents_in(&args.corpus.join(folder)) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let bytes = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let tika = oracle(&path);
            let extractous = fs::read_to_string(
                args.corpus
                    .join(format!("reference/extractous/{folder}/{name}.txt")),
            )
            .ok();
            let size = bytes.len() as u64;
            let run = ours(&bytes, args.budget);
            by_extractor.entry("inlet").or_default().add(
                size,
                &run,
                tika.as_deref(),
                extractous.as_deref(),
            );
            for (peer, _, runs) in &peers {
                let Some(run) = runs.get(&(folder.clone(), name.clone())) else {
                    continue;
                };
                // A peer is not measured against its own output.
                let vs_extractous = extractous.as_deref().filter(|_| *peer != "extractous");
                by_extractor.entry(peer).or_default().add(
                    size,
                    run,
                    tika.as_deref(),
                    vs_extractous,
                );
            }
        }
        if let Some(s) = by_extractor.get("inlet") {
            println!(
                "{:<8} {:>5} {:>9.0} {:>10.3} {:>9.0} {:>8.1} {:>10} {:>12}",
                folder,
                s.files,
                s.bytes as f64 / 1024.0,
                s.median_ms(),
                s.files_per_s(),
                s.mb_per_s(),
                format!("{} ({})", fmt_recall(&s.tika), s.tika.len()),
                fmt_recall(&s.extractous),
            );
        }
    }

    if !peers.is_empty() {
        println!();
        println!("median ms per file (recall against Tika's oracles), same run:");
        for (folder, by) in &summaries {
            let mut line = format!("{folder:<8}");
            for name in std::iter::once("inlet").chain(peers.iter().map(|p| p.0)) {
                if let Some(s) = by.get(name).filter(|s| s.files > 0) {
                    let _ = write!(
                        line,
                        "  {name} {:.3} ms ({})",
                        s.median_ms(),
                        fmt_recall(&s.tika)
                    );
                }
            }
            println!("{line}");
        }
    }

    if let Some(out) = &args.markdown {
        let doc = markdown(
            &summaries,
            &peers.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
        );
        fs::write(out, doc).map_err(|e| format!("{}: {e}", out.display()))?;
        println!("\nwrote {}", out.display());
    }
    Ok(())
}

fn cell_speed(s: Option<&Summary>) -> String {
    match s.filter(|s| s.files > 0) {
        None => "—".into(),
        Some(s) => {
            let failed = if s.failed > 0 {
                format!(", {} failed", s.failed)
            } else {
                String::new()
            };
            format!(
                "{:.3} ms · {:.0} files/s · {:.1} MB/s{failed}",
                s.median_ms(),
                s.files_per_s(),
                s.mb_per_s()
            )
        }
    }
}

fn markdown(
    summaries: &BTreeMap<String, BTreeMap<&str, Summary>>,
    peers: &[(&str, &str)],
) -> String {
    let mut doc = String::from(
        "# Extraction: Inlet against its peers\n\n\
         Written by `scripts/bench-extractors` (do not edit by hand): it installs the peers, runs \
         them and `extract-bench` over `../shared/corpus` in one run on one machine, and writes \
         this file. One thread, warm, median time per file (each file run until a 200 ms budget \
         is spent, 3–50 runs). Throughput is files and bytes over the sum of the per-file \
         medians. Inlet's time includes format detection from the bytes; pdftotext's includes \
         starting a process (it has no library interface here). A file counts as *failed* when \
         the extractor reported an error and gave no text.\n\n\
         Recall is the corpus README's token recall (NFKC, lowercase, runs of letters and \
         digits, multiset), computed for every extractor by the same Rust code: **R(Tika)** \
         against Apache Tika's published `.expected.txt` (mean over the files that have one; \
         their number is in the first column), **R(ext.)** against extractous's output for \
         every file of the format (extractous is Tika; not shown for itself).\n\n",
    );
    let mut header = String::from("| format (files, oracles) | Inlet | R(Tika) | R(ext.) |");
    let mut rule = String::from("|---|---|---|---|");
    for (_, label) in peers {
        let _ = write!(header, " {label} | R(Tika) | R(ext.) |");
        rule.push_str("---|---|---|");
    }
    if peers.iter().any(|p| p.0 == "kreuzberg") {
        header.push_str(" Inlet vs kreuzberg |");
        rule.push_str("---|");
    }
    let _ = writeln!(doc, "{header}\n{rule}");
    for (folder, by) in summaries {
        let Some(inlet) = by.get("inlet") else {
            continue;
        };
        let mut row = format!(
            "| {folder} ({}, {}) | {} | {} | {} |",
            inlet.files,
            inlet.tika.len(),
            cell_speed(Some(inlet)),
            fmt_recall(&inlet.tika),
            fmt_recall(&inlet.extractous)
        );
        for (peer, _) in peers {
            let s = by.get(peer).filter(|s| s.files > 0);
            let _ = write!(
                row,
                " {} | {} | {} |",
                cell_speed(s),
                s.map_or("—".into(), |s| fmt_recall(&s.tika)),
                s.map_or("—".into(), |s| fmt_recall(&s.extractous)),
            );
        }
        if peers.iter().any(|p| p.0 == "kreuzberg") {
            let ratio = by
                .get("kreuzberg")
                .filter(|s| s.files > 0)
                .map_or("—".into(), |k| ratio(k.total_s() / inlet.total_s()));
            let _ = write!(row, " {ratio} |");
        }
        let _ = writeln!(doc, "{row}");
    }
    let pdf = summaries.get("pdf");
    if let (Some(inlet), Some(poppler)) = (
        pdf.and_then(|b| b.get("inlet")),
        pdf.and_then(|b| b.get("pdftotext")).filter(|s| s.files > 0),
    ) {
        let _ = writeln!(
            doc,
            "\nPDF, Inlet against pdftotext (total of per-file medians): {}.",
            ratio(poppler.total_s() / inlet.total_s())
        );
    }
    doc
}

/// `peer time / our time` in words.
fn ratio(r: f64) -> String {
    if r >= 1.0 {
        format!("{r:.1}× faster")
    } else {
        format!("{:.1}× slower", 1.0 / r)
    }
}
