//! `extract-bench`: extraction throughput and recall on a corpus, ours and (optionally) the peers'.
//!
//! ```text
//! cargo run --release -p inlet-extractors --example extract-bench -- ../shared/corpus
//! cargo run --release -p inlet-extractors --example extract-bench -- ../shared/corpus \
//!     --peers target/peer-bench --markdown docs/extraction.md
//! cargo run --release -p inlet-extractors --example extract-bench -- ../shared/corpus \
//!     target/peer-bench/testdata-corpus --peers target/peer-bench --no-ocr pdf,eml,msg,zip,tar \
//!     --markdown docs/extraction.md
//! ```
//!
//! Several corpora may be given (each laid out as the shared corpus: one folder per format; a
//! format folder in one of them only); each has its own table, the first one's as it always was.
//! A later corpus may carry a `SOURCES.md`, printed above its table. For every document of every
//! format folder of a corpus (`bad/` and `reference/` left out) it
//! runs the facade's [`inlet_extractors::extract`] (detection from bytes and extraction, default
//! limits) once to warm up, then repeatedly until a time budget per file is spent (at least 3 and
//! at most 50 runs), and keeps the median. Per format it prints files, bytes, the median time per
//! file, files/s and MB/s (from the sum of the per-file medians: one thread, warm), and token
//! recall as the corpus README defines it (`inlet_extract_testkit::recall`): against Apache Tika's
//! published `.expected.txt` where the corpus has one, and against extractous's output for every
//! file (the corpus's `reference/extractous/` when it has one, else what extractous gave in the
//! same run, read from `--peers`).
//!
//! `--peers DIR` reads what `scripts/bench-peers.py` measured in the same run: for each peer,
//! `DIR/<peer>/timings.tsv` (`folder`, `file`, `median ms`, `status` per line) and its text of
//! each file at `DIR/<peer>/<folder>/<file>.txt`; the peers' recall is computed here, by the same
//! code as ours. `--markdown FILE` writes the comparison as `docs/extraction.md`; `--note TEXT`
//! adds a paragraph under the first table (the script states the machine's load there; `{loadavg}`
//! in it becomes the load average when the file is written), and
//! `--append FILE` appends a file's text to it (the script's OCR section).
//!
//! `--no-ocr FORMATS` (format folders, comma-separated, or `all`) also runs Inlet with OCR off on
//! those folders' files, measured the same way: [`inlet_extractors::extract_without_ocr`], the
//! registry without the OCR extractors, so that pictures attached to e-mails or stored in
//! archives and image-only PDF pages are skipped as the peers skip them by default. It is
//! reported as *Inlet, OCR off* beside Inlet as the server runs it (with OCR when Tesseract is
//! installed), so the non-OCR extractors can be compared with the peers like for like.

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
use inlet_extractors::Outcome;

/// Peers, in table order, with the label the table gives them.
const PEERS: &[(&str, &str)] = &[
    ("kreuzberg", "kreuzberg"),
    ("extractous", "Tika (extractous)"),
    ("pdftotext", "pdftotext"),
];

/// Inlet as the server runs it, and with OCR off (`--no-ocr`): summary keys and labels.
const INLET: &str = "inlet";
const INLET_NO_OCR: &str = "inlet, OCR off";
const INLET_NO_OCR_LABEL: &str = "Inlet, OCR off";

/// Runs per file at least and at most.
const MIN_RUNS: usize = 3;
const MAX_RUNS: usize = 50;

struct Args {
    corpora: Vec<PathBuf>,
    peers: Option<PathBuf>,
    markdown: Option<PathBuf>,
    notes: Vec<String>,
    appends: Vec<PathBuf>,
    budget: Duration,
    /// Format folders where Inlet also runs with OCR off (`all` for every folder).
    no_ocr: Vec<String>,
}

impl Args {
    fn no_ocr_in(&self, folder: &str) -> bool {
        self.no_ocr.iter().any(|f| f == "all" || f == folder)
    }
}

fn usage() -> String {
    "usage: extract-bench CORPUS [CORPUS ...] [--peers DIR] [--markdown FILE] [--note TEXT] \
     [--append FILE] [--budget-ms N] [--no-ocr FORMAT,FORMAT,...|all]"
        .into()
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut corpora = Vec::new();
    let mut peers = None;
    let mut markdown = None;
    let mut notes = Vec::new();
    let mut appends = Vec::new();
    let mut budget = Duration::from_millis(200);
    let mut no_ocr = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--peers" => peers = Some(PathBuf::from(value("--peers")?)),
            "--markdown" => markdown = Some(PathBuf::from(value("--markdown")?)),
            "--note" => notes.push(value("--note")?),
            "--append" => appends.push(PathBuf::from(value("--append")?)),
            "--budget-ms" => {
                let ms = value("--budget-ms")?;
                budget = Duration::from_millis(ms.parse().map_err(|_| format!("bad ms: {ms}"))?);
            }
            "--no-ocr" => no_ocr.extend(
                value("--no-ocr")?
                    .split(',')
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned),
            ),
            "-h" | "--help" => return Err(usage()),
            other if other.starts_with('-') => return Err(format!("unknown flag {other}")),
            other => corpora.push(PathBuf::from(other)),
        }
    }
    if corpora.is_empty() {
        return Err(usage());
    }
    Ok(Args {
        corpora,
        peers,
        markdown,
        notes,
        appends,
        budget,
        no_ocr,
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

/// Runs `extract` ([`inlet_extractors::extract`] or its OCR-off twin) on one document.
fn ours(bytes: &[u8], budget: Duration, extract: fn(&[u8], &Limits) -> Outcome) -> Run {
    let limits = Limits::default();
    let outcome = extract(bytes, &limits);
    let ms = median_ms(budget, || {
        std::hint::black_box(extract(std::hint::black_box(bytes), &limits));
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
    failed_files: Vec<String>,
    tika: Vec<f64>,
    extractous: Vec<f64>,
}

impl Summary {
    fn add(
        &mut self,
        name: &str,
        bytes: u64,
        run: &Run,
        tika: Option<&str>,
        extractous: Option<&str>,
    ) {
        self.files += 1;
        self.bytes += bytes;
        self.times.push(run.ms);
        self.failed += usize::from(run.failed);
        if run.failed {
            self.failed_files.push(name.to_owned());
        }
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

/// Per format folder, per extractor.
type Summaries<'a> = BTreeMap<String, BTreeMap<&'a str, Summary>>;

fn run(args: &Args) -> Result<(), String> {
    let mut peers: Vec<(&str, &str, Runs)> = Vec::new();
    if let Some(dir) = &args.peers {
        for &(peer, label) in PEERS {
            peers.push((peer, label, peer_runs(dir, peer)?));
        }
    }
    let mut tables = Vec::new();
    let mut seen = Vec::new();
    for corpus in &args.corpora {
        let summaries = bench_corpus(corpus, &peers, args)?;
        if let Some(twice) = summaries.keys().find(|f| seen.contains(*f)) {
            return Err(format!("format folder {twice} is in two corpora"));
        }
        seen.extend(summaries.keys().cloned());
        tables.push((corpus.clone(), summaries));
    }

    if let Some(out) = &args.markdown {
        let labels = peers.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>();
        let mut doc = String::new();
        for (i, (corpus, summaries)) in tables.iter().enumerate() {
            if i == 0 {
                doc.push_str(&markdown(summaries, &labels));
                let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
                let load: Vec<&str> = load.split_whitespace().take(3).collect();
                for note in &args.notes {
                    let note = note.replace("{loadavg}", &load.join(" "));
                    let _ = write!(doc, "\n{note}\n");
                }
            } else {
                let _ = write!(
                    doc,
                    "\n## Formats the shared corpus lacks: the repository's test documents\n\n"
                );
                if let Ok(sources) = fs::read_to_string(corpus.join("SOURCES.md")) {
                    let _ = writeln!(doc, "{}", sources.trim_end());
                    doc.push('\n');
                }
                doc.push_str(&table(summaries, &labels));
            }
            doc.push_str(&findings(summaries, &labels));
        }
        for path in &args.appends {
            let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let _ = write!(doc, "\n{}\n", text.trim_end());
        }
        fs::write(out, doc).map_err(|e| format!("{}: {e}", out.display()))?;
        println!("\nwrote {}", out.display());
    }
    Ok(())
}

/// Measures ours over one corpus, adds the peers' runs, prints the summaries.
fn bench_corpus<'a>(
    corpus: &Path,
    peers: &[(&'a str, &str, Runs)],
    args: &Args,
) -> Result<Summaries<'a>, String> {
    let budget = args.budget;
    let mut folders: Vec<String> = fs::read_dir(corpus)
        .map_err(|e| format!("{}: {e}", corpus.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f != "bad" && f != "reference" && !f.starts_with('.'))
        .collect();
    folders.sort();
    // Without the corpus's own extractous outputs, recall is against extractous in this run.
    let own_reference = corpus.join("reference/extractous").is_dir();
    let same_run = peers.iter().find(|p| p.0 == "extractous").map(|p| &p.2);

    let mut summaries: Summaries<'a> = BTreeMap::new();
    println!("{}:", corpus.display());
    println!(
        "{:<8} {:>5} {:>9} {:>10} {:>9} {:>8} {:>10} {:>12}",
        "format", "files", "KB", "ms/file", "files/s", "MB/s", "R(Tika)", "R(extractous)"
    );
    for folder in &folders {
        let by_extractor = summaries.entry(folder.clone()).or_default();
        for path in documents_in(&corpus.join(folder)) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let bytes = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let tika = oracle(&path);
            let key = (folder.clone(), name.clone());
            let extractous = if own_reference {
                fs::read_to_string(corpus.join(format!("reference/extractous/{folder}/{name}.txt")))
                    .ok()
            } else {
                same_run
                    .and_then(|runs| runs.get(&key))
                    .filter(|r| !r.failed)
                    .map(|r| r.text.clone())
            };
            let size = bytes.len() as u64;
            let run = ours(&bytes, budget, inlet_extractors::extract);
            by_extractor.entry(INLET).or_default().add(
                &name,
                size,
                &run,
                tika.as_deref(),
                extractous.as_deref(),
            );
            if args.no_ocr_in(folder) {
                let run = ours(&bytes, budget, inlet_extractors::extract_without_ocr);
                by_extractor.entry(INLET_NO_OCR).or_default().add(
                    &name,
                    size,
                    &run,
                    tika.as_deref(),
                    extractous.as_deref(),
                );
            }
            for (peer, _, runs) in peers {
                let Some(run) = runs.get(&key) else {
                    continue;
                };
                // A peer is not measured against its own output.
                let vs_extractous = extractous.as_deref().filter(|_| *peer != "extractous");
                by_extractor.entry(peer).or_default().add(
                    &name,
                    size,
                    run,
                    tika.as_deref(),
                    vs_extractous,
                );
            }
        }
        for (key, label) in [(INLET, folder.as_str()), (INLET_NO_OCR, "  no OCR")] {
            if let Some(s) = by_extractor.get(key) {
                println!(
                    "{:<8} {:>5} {:>9.0} {:>10.3} {:>9.0} {:>8.1} {:>10} {:>12}",
                    label,
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
    }

    if !peers.is_empty() {
        println!();
        println!("median ms per file (recall against Tika's oracles), same run:");
        for (folder, by) in &summaries {
            let mut line = format!("{folder:<8}");
            let names = [INLET, INLET_NO_OCR].into_iter();
            for name in names.chain(peers.iter().map(|p| p.0)) {
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
        println!();
    }
    Ok(summaries)
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

fn markdown(summaries: &Summaries<'_>, peers: &[(&str, &str)]) -> String {
    let mut doc = String::from(
        "# Extraction: Inlet against its peers\n\n\
         Written by `scripts/bench-extractors` (do not edit by hand): it installs the peers, runs \
         them and `extract-bench` over `../shared/corpus` and over the repository's own test \
         documents of the formats the corpus lacks (second table) in one run on one machine, \
         measures OCR (last section), and writes this file. One thread, warm, median time per \
         file (each file run until a 200 ms budget is spent, 3–50 runs). Throughput is files and \
         bytes over the sum of the per-file medians. Inlet's time includes format detection \
         from the bytes; pdftotext's includes starting a process (it has no library interface \
         here). Tika's PDF OCR is off (`PdfOcrStrategy.NO_OCR`; Tesseract is installed for the \
         OCR section), Inlet's and kreuzberg's are as they come: with Tesseract installed, the \
         **Inlet** column OCRs image-only PDF pages, pictures attached to e-mails and images in \
         archives, as the server does. **Inlet, OCR off** is the same extraction with the OCR \
         extractors left out of the registry (`inlet_extractors::extract_without_ocr`, \
         `extract-bench --no-ocr`), so those pictures and pages are skipped as the peers skip \
         them by default: the like-for-like comparison of the non-OCR extractors. The script \
         measures it on pdf, eml, msg, zip and tar, the formats whose files can hold an image \
         that Inlet reads by OCR (— elsewhere, where it changes nothing). A file counts as \
         *failed* when the extractor reported an error and gave no text.\n\n\
         Recall is the corpus README's token recall (NFKC, lowercase, runs of letters and \
         digits, multiset), computed for every extractor by the same Rust code: **R(Tika)** \
         against Apache Tika's published `.expected.txt` (mean over the files that have one; \
         their number is in the first column), **R(ext.)** against extractous's output for \
         every file of the format (extractous is Tika; not shown for itself).\n\n",
    );
    doc.push_str(&table(summaries, peers));
    doc
}

/// Whether Inlet ran with OCR off (`--no-ocr`) on any format of one corpus.
fn has_no_ocr(summaries: &Summaries<'_>) -> bool {
    summaries
        .values()
        .any(|by| by.get(INLET_NO_OCR).is_some_and(|s| s.files > 0))
}

/// The comparison table of one corpus, with the peers that ran on any of its files, and Inlet
/// with OCR off where it ran so.
fn table(summaries: &Summaries<'_>, peers: &[(&str, &str)]) -> String {
    let peers: Vec<(&str, &str)> = peers
        .iter()
        .filter(|(peer, _)| {
            summaries
                .values()
                .any(|by| by.get(peer).is_some_and(|s| s.files > 0))
        })
        .copied()
        .collect();
    let peers = &peers[..];
    let no_ocr = has_no_ocr(summaries);
    let kreuzberg = peers.iter().any(|p| p.0 == "kreuzberg");
    let mut doc = String::new();
    let mut header = String::from("| format (files, oracles) | Inlet | R(Tika) | R(ext.) |");
    let mut rule = String::from("|---|---|---|---|");
    if no_ocr {
        let _ = write!(header, " {INLET_NO_OCR_LABEL} | R(Tika) | R(ext.) |");
        rule.push_str("---|---|---|");
    }
    for (_, label) in peers {
        let _ = write!(header, " {label} | R(Tika) | R(ext.) |");
        rule.push_str("---|---|---|");
    }
    if kreuzberg {
        header.push_str(" Inlet vs kreuzberg |");
        rule.push_str("---|");
        if no_ocr {
            let _ = write!(header, " {INLET_NO_OCR_LABEL} vs kreuzberg |");
            rule.push_str("---|");
        }
    }
    let _ = writeln!(doc, "{header}\n{rule}");
    let speed_and_recall = |s: Option<&Summary>| {
        format!(
            " {} | {} | {} |",
            cell_speed(s),
            s.map_or("—".into(), |s| fmt_recall(&s.tika)),
            s.map_or("—".into(), |s| fmt_recall(&s.extractous)),
        )
    };
    for (folder, by) in summaries {
        let Some(inlet) = by.get(INLET) else {
            continue;
        };
        let off = by.get(INLET_NO_OCR).filter(|s| s.files > 0);
        let mut row = format!("| {folder} ({}, {}) |", inlet.files, inlet.tika.len());
        row.push_str(&speed_and_recall(Some(inlet)));
        if no_ocr {
            row.push_str(&speed_and_recall(off));
        }
        for (peer, _) in peers {
            row.push_str(&speed_and_recall(by.get(peer).filter(|s| s.files > 0)));
        }
        if kreuzberg {
            let k = by.get("kreuzberg").filter(|s| s.files > 0);
            let versus = |ours: Option<&Summary>| match (k, ours) {
                (Some(k), Some(ours)) => ratio(k.total_s() / ours.total_s()),
                _ => "—".into(),
            };
            let _ = write!(row, " {} |", versus(Some(inlet)));
            if no_ocr {
                let _ = write!(row, " {} |", versus(off));
            }
        }
        let _ = writeln!(doc, "{row}");
    }
    let pdf = summaries.get("pdf");
    if let (Some(inlet), Some(poppler)) = (
        pdf.and_then(|b| b.get(INLET)),
        pdf.and_then(|b| b.get("pdftotext")).filter(|s| s.files > 0),
    ) {
        let off = pdf
            .and_then(|b| b.get(INLET_NO_OCR))
            .filter(|s| s.files > 0)
            .map_or(String::new(), |off| {
                format!(
                    "; with OCR off: {}",
                    ratio(poppler.total_s() / off.total_s())
                )
            });
        let _ = writeln!(
            doc,
            "\nPDF, Inlet against pdftotext (total of per-file medians): {}{off}.",
            ratio(poppler.total_s() / inlet.total_s())
        );
    }
    doc
}

/// What the table of one corpus shows against Inlet, in words: the formats where a peer is as fast
/// or faster (than Inlet as the server runs it, and than Inlet with OCR off where it ran so), where
/// Inlet's recall against extractous is under 0.95 or under a peer's, and the files Inlet failed
/// on.
fn findings(summaries: &Summaries<'_>, peers: &[(&str, &str)]) -> String {
    let mut slower = Vec::new();
    let mut slower_off = Vec::new();
    let mut recall = Vec::new();
    let mut failed = Vec::new();
    for (folder, by) in summaries {
        let Some(inlet) = by.get(INLET).filter(|s| s.files > 0) else {
            continue;
        };
        let off = by.get(INLET_NO_OCR).filter(|s| s.files > 0);
        let ours = mean(&inlet.extractous);
        let mut better = Vec::new();
        for (peer, label) in peers {
            let Some(s) = by.get(peer).filter(|s| s.files > 0) else {
                continue;
            };
            if s.total_s() <= inlet.total_s() {
                slower.push(format!(
                    "{folder}: {label} {}",
                    ratio(inlet.total_s() / s.total_s())
                ));
            }
            if let Some(off) = off
                && s.total_s() <= off.total_s()
            {
                slower_off.push(format!(
                    "{folder}: {label} {}",
                    ratio(off.total_s() / s.total_s())
                ));
            }
            if let (Some(o), Some(p)) = (ours, mean(&s.extractous))
                && p > o + 0.005
            {
                better.push(format!("{label} {p:.3}"));
            }
        }
        if let Some(o) = ours
            && (o < 0.95 || !better.is_empty())
        {
            let peers = if better.is_empty() {
                String::new()
            } else {
                format!(" (higher: {})", better.join(", "))
            };
            recall.push(format!("{folder} {o:.3}{peers}"));
        }
        if !inlet.failed_files.is_empty() {
            failed.push(format!("{folder}: {}", inlet.failed_files.join(", ")));
        }
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join("; ")
        }
    };
    let off = if has_no_ocr(summaries) {
        let folders: Vec<&str> = summaries
            .iter()
            .filter(|(_, by)| by.get(INLET_NO_OCR).is_some_and(|s| s.files > 0))
            .map(|(folder, _)| folder.as_str())
            .collect();
        format!(
            " A peer as fast as {INLET_NO_OCR_LABEL} or faster (measured on {}): {}.",
            folders.join(", "),
            list(&slower_off)
        )
    } else {
        String::new()
    };
    format!(
        "\nIn this table (generated from the numbers above): a peer as fast as Inlet or faster \
         (total of per-file medians): {}.{off} Inlet's R(ext.) under 0.95 or under a peer's: {}. \
         Files Inlet failed on: {}.\n",
        list(&slower),
        list(&recall),
        list(&failed)
    )
}

/// `peer time / our time` in words.
fn ratio(r: f64) -> String {
    if r >= 1.0 {
        format!("{r:.1}× faster")
    } else {
        format!("{:.1}× slower", 1.0 / r)
    }
}
