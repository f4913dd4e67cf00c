//! Helpers shared by the unit tests: running the registered extractor, reading the shared corpus
//! and counting token recall as its README defines it.

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
};

use inlet_core::extract::{ExtractError, ExtractorInfo, Limits, Probe, TextSink};
use unicode_normalization::UnicodeNormalization;

/// RTF is not a container: no entries.
pub(crate) fn entries(_bytes: &[u8]) -> Vec<String> {
    Vec::new()
}

/// Runs `f` and fails if it panics or takes longer than `secs` seconds (hostile inputs must
/// finish fast and never panic).
pub(crate) fn survives<T>(what: &str, secs: f64, f: impl FnOnce() -> T) -> T {
    let start = std::time::Instant::now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| panic!("{what}: panicked"));
    let took = start.elapsed().as_secs_f64();
    assert!(took < secs, "{what}: took {took:.2} s");
    result
}

/// Prefixes of `bytes` cut at a spread of points (for truncation tests).
pub(crate) fn truncations(bytes: &[u8]) -> Vec<&[u8]> {
    let n = bytes.len();
    let mut cuts: Vec<usize> = (1..20).map(|i| n * i / 20).collect();
    cuts.extend([
        0,
        1,
        2,
        4,
        8,
        30,
        64,
        512,
        n.saturating_sub(1),
        n.saturating_sub(22),
    ]);
    cuts.sort_unstable();
    cuts.dedup();
    cuts.into_iter()
        .filter(|&c| c < n)
        .map(|c| &bytes[..c])
        .collect()
}

/// Runs `id`'s extractor under `limits`; returns the result and the text.
pub(crate) fn run_with(
    id: &str,
    bytes: &[u8],
    limits: &Limits,
) -> (Result<(), ExtractError>, String) {
    let mut sink = TextSink::new(limits);
    let result = (info(id).make)().extract(bytes, &mut sink);
    (result, sink.into_text())
}

/// The shared corpus beside the checkout.
pub(crate) const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

/// Deterministic pseudo-random bytes (xorshift64).
pub(crate) fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        out.extend_from_slice(&seed.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// The registered entry for `id`.
pub(crate) fn info(id: &str) -> &'static ExtractorInfo {
    inventory::iter::<ExtractorInfo>
        .into_iter()
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("{id} is not registered"))
}

/// The format id this crate's sniffers pick for `bytes` (highest score, ties to the smaller id).
pub(crate) fn detect(bytes: &[u8]) -> Option<&'static str> {
    let entries = entries(bytes);
    let probe = Probe {
        bytes,
        entries: &entries,
    };
    let mut all: Vec<_> = inventory::iter::<ExtractorInfo>.into_iter().collect();
    all.sort_by_key(|e| e.id);
    let mut best: Option<(u8, &'static str)> = None;
    for e in all {
        let s = (e.sniff)(&probe);
        if s > 0 && best.is_none_or(|(b, _)| s > b) {
            best = Some((s, e.id));
        }
    }
    best.map(|(_, id)| id)
}

/// Runs `id`'s extractor with default limits.
pub(crate) fn run(id: &str, bytes: &[u8]) -> Result<String, (ExtractError, String)> {
    let mut sink = TextSink::new(&Limits::default());
    match (info(id).make)().extract(bytes, &mut sink) {
        Ok(()) => Ok(sink.into_text()),
        Err(e) => Err((e, sink.into_text())),
    }
}

/// Runs `id`'s extractor and expects success.
pub(crate) fn text(id: &str, bytes: &[u8]) -> String {
    match run(id, bytes) {
        Ok(t) => t,
        Err((e, t)) => panic!("{id} failed: {e} (after {t:?})"),
    }
}

/// Runs `id`'s extractor with a small output cap; returns the text and whether it filled up.
pub(crate) fn capped(id: &str, bytes: &[u8], max_chars: usize) -> (String, bool) {
    let mut sink = TextSink::new(&Limits {
        max_chars,
        ..Limits::default()
    });
    let full = matches!(
        (info(id).make)().extract(bytes, &mut sink),
        Err(ExtractError::Full)
    );
    (sink.into_text(), full)
}

/// The documents of a corpus folder (oracles and references left out).
pub(crate) fn documents(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(CORPUS).join(folder);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus folder {} is missing: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.contains(".expected.")
        })
        .collect();
    files.sort();
    files
}

/// NFKC, lowercase, runs of letters and digits (the corpus README's definition).
pub(crate) fn tokens(text: &str) -> HashMap<String, usize> {
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
pub(crate) fn recall(ours: &str, expected: &str) -> f64 {
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

/// Prints, for every document of `folders`, recall and precision against Tika's oracle and each
/// peer's output, and flags files where we find under 0.9 of what the best peer found.
pub(crate) fn recall_report(folders: &[(&str, &str)]) {
    for &(folder, id) in folders {
        for path in documents(folder) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = fs::read(&path).unwrap();
            let detected = detect(&bytes);
            if detected != Some(id) {
                println!("{folder}/{name}: detected as {detected:?}, not {id}");
                continue;
            }
            let start = std::time::Instant::now();
            let (ours, status) = match run(id, &bytes) {
                Ok(t) => (t, String::new()),
                Err((e, t)) => (t, format!(" [{e}]")),
            };
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            let mut line = format!(
                "{folder}/{name}: {} chars{status} {ms:.2} ms (debug)",
                ours.chars().count()
            );
            let references = [
                ("tika", format!("{}.expected.txt", path.display())),
                (
                    "extractous",
                    format!("{CORPUS}/reference/extractous/{folder}/{name}.txt"),
                ),
                (
                    "kreuzberg",
                    format!("{CORPUS}/reference/kreuzberg/{folder}/{name}.txt"),
                ),
            ];
            let mut worst_vs_peer: Option<f64> = None;
            for (label, reference) in references {
                if let Ok(expected) = fs::read_to_string(&reference) {
                    let r = recall(&ours, &expected);
                    let p = recall(&expected, &ours);
                    line.push_str(&format!("  {label} R={r:.3} P={p:.3}"));
                    if label != "tika" && tokens(&expected).values().sum::<usize>() > 0 {
                        worst_vs_peer = Some(worst_vs_peer.map_or(r, |w: f64| w.min(r)));
                    }
                }
            }
            if worst_vs_peer.is_some_and(|w| w < 0.9) {
                line.push_str("  <-- below 0.9 of a peer");
            }
            println!("{line}");
        }
    }
}

/// Prints the median time per file of `folders`' documents (warm, one thread, 50 runs each) and
/// the median over files, as the corpus README measures the peers.
pub(crate) fn timing_report(folders: &[(&str, &str)]) {
    for &(folder, id) in folders {
        let mut medians = Vec::new();
        for path in documents(folder) {
            let bytes = fs::read(&path).unwrap();
            if detect(&bytes) != Some(id) {
                continue;
            }
            let _ = run(id, &bytes);
            let mut times: Vec<f64> = (0..50)
                .map(|_| {
                    let start = std::time::Instant::now();
                    let _ = std::hint::black_box(run(id, std::hint::black_box(&bytes)));
                    start.elapsed().as_secs_f64() * 1000.0
                })
                .collect();
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            println!(
                "{folder}/{}: {median:.3} ms",
                path.file_name().unwrap().to_string_lossy()
            );
            medians.push(median);
        }
        medians.sort_by(f64::total_cmp);
        println!(
            "{folder}: median {:.3} ms per file over {} files",
            medians[medians.len() / 2],
            medians.len()
        );
    }
}
