//! Test and benchmark support shared by Inlet's extractor crates.
//!
//! Every extractor crate tests itself the same way: against the shared corpus of real documents
//! beside the checkout (detection from bytes, non-empty text, token recall against Apache Tika's
//! published output), against hostile input (truncations, noise, bombs) and against the inputs its
//! fuzzer once crashed on. This crate holds that machinery once:
//!
//! - [`tokens`], [`recall`] and [`precision`]: the corpus README's definition, also used by the
//!   facade's `extract-bench` so the figures compare.
//! - [`detect`], [`run`], [`text`], [`capped`], [`metadata`]: run whatever extractors are linked
//!   into the test binary through their `inventory` registrations, as the facade would.
//! - [`check_output_cap`] and [`check_decompression_cap`]: the configured [`Limits`], not a
//!   default, cut an extractor's output.
//! - [`corpus_tests!`]: the standard corpus test functions for a crate's formats.
//! - [`check_regressions`] and [`fuzz_all`]: the regression test and fuzz target bodies.
//!
//! It is a dev-dependency of the extractor crates (the facade's `extract-bench` example uses it
//! too); nothing at run time in the server uses it.

use std::{
    collections::HashMap,
    fs,
    io::{Cursor, Write},
    panic::{AssertUnwindSafe, catch_unwind},
    path::{Path, PathBuf},
    time::Instant,
};

use inlet_core::extract::{DocumentMetadata, ExtractError, ExtractorInfo, Limits, Probe, TextSink};
use unicode_normalization::UnicodeNormalization;

/// The shared corpus beside the checkout (`../shared/corpus` from the repository root).
pub const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

/// Peers whose outputs the corpus keeps under `reference/<peer>/<folder>/<file>.txt`.
pub const PEERS: &[&str] = &["extractous", "kreuzberg", "pdftotext"];

/// Container entry names as the facade computes them for the probe: ZIP central-directory names or
/// OLE2 stream paths (without the leading `/`); empty for anything else or damaged containers.
pub fn entries(bytes: &[u8]) -> Vec<String> {
    let read = || {
        if bytes.starts_with(b"PK\x03\x04") {
            zip::ZipArchive::new(Cursor::new(bytes))
                .map(|a| {
                    a.file_names()
                        .filter_map(Result::ok)
                        .map(|n| n.into_owned())
                        .collect()
                })
                .unwrap_or_default()
        } else if bytes.starts_with(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1") {
            cfb::CompoundFile::open(Cursor::new(bytes))
                .map(|file| {
                    file.walk()
                        .filter(|e| !e.is_root())
                        .map(|e| {
                            e.path()
                                .to_string_lossy()
                                .trim_start_matches('/')
                                .to_owned()
                        })
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        }
    };
    catch_unwind(read).unwrap_or_default()
}

/// Builds a ZIP archive (deflated; an entry named `mimetype` stored, as ODF and EPUB want) from
/// `(name, content)` pairs.
pub fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in files {
        let options = if *name == "mimetype" {
            deflated.compression_method(zip::CompressionMethod::Stored)
        } else {
            deflated
        };
        w.start_file(*name, options).expect("zip entry");
        w.write_all(content).expect("zip write");
    }
    w.finish().expect("zip finish").into_inner()
}

/// Runs `f` and fails if it panics or takes longer than `secs` seconds (hostile inputs must
/// finish fast and never panic).
pub fn survives<T>(what: &str, secs: f64, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| panic!("{what}: panicked"));
    let took = start.elapsed().as_secs_f64();
    assert!(took < secs, "{what}: took {took:.2} s");
    result
}

/// Runs `id` on every truncation of each file and on `copies` copies of it with 64 bytes of
/// noise written at offsets spread over it: each run must end within 2 s without panicking
/// (what it answers is not checked).
pub fn check_damage(id: &str, files: &[Vec<u8>], copies: u64) {
    for bytes in files {
        for cut in truncations(bytes) {
            let _ = survives(&format!("{id} cut at {}", cut.len()), 2.0, || run(id, cut));
        }
        // Damage in the middle instead of a cut.
        for seed in 0..copies {
            let mut damaged = bytes.clone();
            if damaged.is_empty() {
                break;
            }
            let at = (seed as usize * 997) % damaged.len();
            let patch = noise(64.min(damaged.len() - at), seed + 1);
            damaged[at..at + patch.len()].copy_from_slice(&patch);
            let _ = survives(&format!("{id} damaged at {at}"), 2.0, || run(id, &damaged));
        }
    }
}

/// Prefixes of `bytes` cut at a spread of points (for truncation tests).
pub fn truncations(bytes: &[u8]) -> Vec<&[u8]> {
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

/// Deterministic pseudo-random bytes (xorshift64).
pub fn noise(len: usize, mut seed: u64) -> Vec<u8> {
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

/// The registered entry for `id` among the extractors linked into this binary.
pub fn info(id: &str) -> &'static ExtractorInfo {
    inventory::iter::<ExtractorInfo>
        .into_iter()
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("{id} is not registered"))
}

/// The score `id`'s sniffer gives `bytes` (with the container entries the facade would list).
pub fn score(id: &str, bytes: &[u8]) -> u8 {
    let entries = entries(bytes);
    (info(id).sniff)(&Probe {
        bytes,
        entries: &entries,
    })
}

/// The format id the linked sniffers pick for `bytes` (highest score, ties to the smaller id).
pub fn detect(bytes: &[u8]) -> Option<&'static str> {
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

/// Runs `id`'s extractor under `limits`; returns the result and the text.
pub fn run_with(id: &str, bytes: &[u8], limits: &Limits) -> (Result<(), ExtractError>, String) {
    let mut sink = TextSink::new(limits);
    let result = (info(id).make)().extract(bytes, &mut sink);
    (result, sink.into_text())
}

/// Runs `id`'s extractor with default limits: the text, or the error and the text read before it.
pub fn run(id: &str, bytes: &[u8]) -> Result<String, (ExtractError, String)> {
    match run_with(id, bytes, &Limits::default()) {
        (Ok(()), t) => Ok(t),
        (Err(e), t) => Err((e, t)),
    }
}

/// The nested extractor of [`run_nested`]: detects an embedded file among the linked
/// extractors and runs the one found, as the facade's does.
fn nested_linked(bytes: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    match detect(bytes) {
        Some(id) => (info(id).make)().extract(bytes, sink),
        None => Ok(()),
    }
}

/// Runs `id`'s extractor with default limits and a sink that extracts embedded files (e-mail
/// attachments) with the extractors linked into this binary: the text, or the error and the
/// text read before it.
pub fn run_nested(id: &str, bytes: &[u8]) -> Result<String, (ExtractError, String)> {
    let mut sink = TextSink::new(&Limits::default()).with_nested(nested_linked);
    match (info(id).make)().extract(bytes, &mut sink) {
        Ok(()) => Ok(sink.into_text()),
        Err(e) => Err((e, sink.into_text())),
    }
}

/// Runs `id`'s extractor and expects success.
pub fn text(id: &str, bytes: &[u8]) -> String {
    match run(id, bytes) {
        Ok(t) => t,
        Err((e, t)) => panic!("{id} failed: {e} (after {t:?})"),
    }
}

/// Runs `id`'s extractor with default limits and expects success: the metadata it reported.
pub fn metadata(id: &str, bytes: &[u8]) -> DocumentMetadata {
    let mut sink = TextSink::new(&Limits::default());
    if let Err(e) = (info(id).make)().extract(bytes, &mut sink) {
        panic!("{id} failed: {e}");
    }
    sink.metadata().clone()
}

/// Runs `id`'s extractor with a small output cap; returns the text and whether it filled up.
pub fn capped(id: &str, bytes: &[u8], max_chars: usize) -> (String, bool) {
    let limits = Limits {
        max_chars,
        ..Limits::default()
    };
    let (result, text) = run_with(id, bytes, &limits);
    (text, matches!(result, Err(ExtractError::Full)))
}

/// Runs `id`'s extractor with default limits and then under `limits`, and checks that the
/// configured limit is what cut the output: the default run succeeds, the limited one stops with
/// an error that `stopped` accepts, and its text is a strict prefix of the full text. Returns the
/// full text and the cut one.
pub fn cut_by(
    id: &str,
    bytes: &[u8],
    limits: &Limits,
    stopped: fn(&ExtractError) -> bool,
) -> (String, String) {
    let full = text(id, bytes);
    let (result, cut) = run_with(id, bytes, limits);
    match &result {
        Err(e) if stopped(e) => {}
        other => panic!("{id}: {other:?} under {limits:?}"),
    }
    assert!(
        cut.len() < full.len() && full.starts_with(&cut),
        "{id}: {cut:?} is not a strict prefix of {full:?}"
    );
    (full, cut)
}

/// [`cut_by`] an output cap of `max_chars` characters: the text stops at exactly that many.
pub fn check_output_cap(id: &str, bytes: &[u8], max_chars: usize) -> String {
    let limits = Limits {
        max_chars,
        ..Limits::default()
    };
    let (_, cut) = cut_by(id, bytes, &limits, |e| matches!(e, ExtractError::Full));
    assert_eq!(cut.chars().count(), max_chars, "{id}");
    cut
}

/// [`cut_by`] a decompression cap of `max_decompressed_bytes`: the extractor stops with
/// [`ExtractError::LimitExceeded`], keeping what it wrote before. Returns the full and cut texts.
pub fn check_decompression_cap(
    id: &str,
    bytes: &[u8],
    max_decompressed_bytes: u64,
) -> (String, String) {
    let limits = Limits {
        max_decompressed_bytes,
        ..Limits::default()
    };
    cut_by(id, bytes, &limits, |e| {
        matches!(e, ExtractError::LimitExceeded(_))
    })
}

/// The documents of the corpus folder `folder` (oracles left out), sorted.
pub fn documents(folder: &str) -> Vec<PathBuf> {
    documents_in(&Path::new(CORPUS).join(folder))
}

/// The documents of `dir`, sorted; panics if it is missing. Reference texts kept beside the
/// documents are left out (see [`is_document`]).
pub fn documents_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("corpus folder {} is missing: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| is_document(&n.to_string_lossy()))
        })
        .collect();
    files.sort();
    files
}

/// Whether the corpus file named `name` is a document rather than a reference text kept beside
/// one: Tika's oracles (names with `.expected.`) and the OCR reference of an image-only scan
/// (`<file>.ocr_reference.txt`) are not.
pub fn is_document(name: &str) -> bool {
    !name.contains(".expected.") && !name.ends_with(".ocr_reference.txt")
}

/// Token counts of `text` as the corpus README defines them: NFKC, lowercase, runs of Unicode
/// letters and digits.
pub fn tokens(text: &str) -> HashMap<String, usize> {
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

/// Matched and total tokens of `expected` (as a multiset) in `ours`.
pub fn matched(ours: &str, expected: &str) -> (usize, usize) {
    let ours = tokens(ours);
    let expected = tokens(expected);
    let total = expected.values().sum();
    let hit = expected
        .iter()
        .map(|(t, &n)| n.min(ours.get(t).copied().unwrap_or(0)))
        .sum();
    (hit, total)
}

/// Share of `expected`'s tokens (as a multiset) found in `ours`; 1 when `expected` has none.
pub fn recall(ours: &str, expected: &str) -> f64 {
    match matched(ours, expected) {
        (_, 0) => 1.0,
        (hit, total) => hit as f64 / total as f64,
    }
}

/// Share of `ours`'s tokens found in `expected` (recall with the roles swapped).
pub fn precision(ours: &str, expected: &str) -> f64 {
    recall(expected, ours)
}

/// Tika's oracle for a corpus document, if the corpus has one.
pub fn oracle(path: &Path) -> Option<String> {
    fs::read_to_string(format!("{}.expected.txt", path.display())).ok()
}

/// A peer's output for the document `folder/name` of the corpus at `corpus`, if it has one.
pub fn peer_output(corpus: &Path, peer: &str, folder: &str, name: &str) -> Option<String> {
    fs::read_to_string(corpus.join(format!("reference/{peer}/{folder}/{name}.txt"))).ok()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Token recall of `id`'s text of every document of `corpus/folder` against the peers' outputs
/// kept beside them, for a crate's own test documents laid out as the shared corpus is (format
/// folders, peer outputs under `reference/<peer>/<folder>/<file>.txt`). Prints each document's
/// recall and precision against every peer, and fails when the best recall of a document with a
/// reference is under 0.95, or under its entry in `floors` (documents the peers render
/// differently, e.g. dates, with the reason in the crate's README), or when a document fails to
/// extract. Embedded files are extracted with the linked extractors ([`run_nested`]).
/// Documents named in `skip` (not expected to extract, e.g. encrypted ones) are left out.
/// Returns the documents checked.
pub fn check_peer_recall(
    corpus: &Path,
    folder: &str,
    id: &str,
    skip: &[&str],
    floors: &[(&str, f64)],
) -> usize {
    let mut checked = 0;
    for path in documents_in(&corpus.join(folder)) {
        let name = file_name(&path);
        if skip.contains(&name.as_str()) {
            continue;
        }
        let bytes = fs::read(&path).expect("read test document");
        let ours = run_nested(id, &bytes)
            .unwrap_or_else(|(e, t)| panic!("{}: {e} after {} chars", path.display(), t.len()));
        let mut line = format!("{folder}/{name}:");
        let mut best: Option<(f64, &str)> = None;
        for peer in PEERS {
            let Some(expected) = peer_output(corpus, peer, folder, &name) else {
                continue;
            };
            let r = recall(&ours, &expected);
            line.push_str(&format!(
                "  {peer} R={r:.3} P={:.3}",
                precision(&ours, &expected)
            ));
            if !tokens(&expected).is_empty() && best.is_none_or(|(b, _)| r > b) {
                best = Some((r, peer));
            }
        }
        println!("{line}");
        if let Some((r, peer)) = best {
            let min = floors
                .iter()
                .find(|(file, _)| *file == name)
                .map_or(0.95, |&(_, floor)| floor);
            assert!(
                r >= min,
                "{folder}/{name}: recall {r:.3} against {peer}, under {min}"
            );
            checked += 1;
        }
    }
    checked
}

/// The standard corpus checks for one crate's formats; [`corpus_tests!`] turns them into tests.
pub struct CorpusSuite {
    /// Corpus folders of the crate's formats and the format id their files must be detected as.
    pub folders: &'static [(&'static str, &'static str)],
    /// Files of those folders that are not what their folder says, and what they are detected as.
    pub detected_otherwise: &'static [(&'static str, Option<&'static str>)],
    /// Documents of other folders (`folder/file`) whose bytes are one of the crate's formats.
    pub foreign: &'static [(&'static str, &'static str)],
    /// Documents without text (e.g. one picture): no text required, no recall gate.
    pub no_text: &'static [&'static str],
    /// What recall is measured against.
    pub gate: Gate,
    /// How many documents the recall check must find a reference for, at least.
    pub min_oracles: usize,
}

/// The reference of the recall gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Apache Tika's published `.expected.txt` (documents without one are skipped).
    Tika,
    /// For formats without Tika oracles: the peer output (of extractous and kreuzberg) we agree
    /// with best.
    BestPeer,
}

impl CorpusSuite {
    fn expected_id(&self, path: &Path, id: &'static str) -> Option<&'static str> {
        let name = file_name(path);
        self.detected_otherwise
            .iter()
            .find(|(file, _)| *file == name)
            .map_or(Some(id), |&(_, other)| other)
    }

    /// Every document is detected as its format from its bytes and yields some text.
    pub fn check_detection_and_text(&self) {
        let mut files: Vec<(PathBuf, &'static str)> = Vec::new();
        for &(folder, id) in self.folders {
            files.extend(documents(folder).into_iter().map(|p| (p, id)));
        }
        files.extend(
            self.foreign
                .iter()
                .map(|&(f, id)| (Path::new(CORPUS).join(f), id)),
        );
        for (path, id) in files {
            let bytes = fs::read(&path).expect("read corpus file");
            let expected = self.expected_id(&path, id);
            assert_eq!(detect(&bytes), expected, "{}", path.display());
            let Some(id) = expected else { continue };
            if self.no_text.contains(&file_name(&path).as_str()) {
                continue;
            }
            let text = run(id, &bytes)
                .unwrap_or_else(|(e, t)| panic!("{}: {e} after {t:?}", path.display()));
            assert!(
                text.chars().any(char::is_alphanumeric),
                "{} gave no text",
                path.display()
            );
        }
    }

    /// Token recall against the gate's reference is at least 0.95 for every document that has
    /// one (precision printed).
    pub fn check_recall(&self) {
        let corpus = Path::new(CORPUS);
        let mut checked = 0;
        for &(folder, id) in self.folders {
            for path in documents(folder) {
                let name = file_name(&path);
                if self.no_text.contains(&name.as_str()) {
                    continue;
                }
                let Some(id) = self.expected_id(&path, id) else {
                    continue;
                };
                let references: Vec<(&str, String)> = match self.gate {
                    Gate::Tika => oracle(&path).map(|t| ("tika", t)).into_iter().collect(),
                    Gate::BestPeer => ["extractous", "kreuzberg"]
                        .into_iter()
                        .filter_map(|peer| {
                            peer_output(corpus, peer, folder, &name).map(|t| (peer, t))
                        })
                        .collect(),
                };
                if references.is_empty() {
                    continue;
                }
                let ours = run(id, &fs::read(&path).expect("read corpus file")).unwrap_or_else(
                    |(e, t)| panic!("{}: {e} after {} chars", path.display(), t.len()),
                );
                let (r, p, against) = references
                    .iter()
                    .map(|(who, t)| (recall(&ours, t), precision(&ours, t), *who))
                    .max_by(|a, b| a.0.total_cmp(&b.0))
                    .unwrap_or((0.0, 0.0, "nobody"));
                println!("{folder}/{name}: recall {r:.3} precision {p:.3} against {against}");
                assert!(
                    r >= 0.95,
                    "{folder}/{name}: recall {r:.3} against {against}"
                );
                checked += 1;
            }
        }
        assert!(
            checked >= self.min_oracles,
            "only {checked} documents with a reference found"
        );
    }

    /// No file of `bad/` is taken for one of the crate's formats.
    pub fn check_bad_files(&self) {
        for path in documents("bad") {
            let bytes = fs::read(&path).expect("read corpus file");
            let ours = detect(&bytes).filter(|d| self.folders.iter().any(|(_, id)| id == d));
            assert_eq!(ours, None, "{}", path.display());
        }
    }

    /// Prints, for every document, recall and precision against Tika's oracles (`.expected.txt`,
    /// and `.expected.md` where the corpus has one) and each peer's output, flagging files where
    /// we find under 0.9 of what a peer found.
    pub fn recall_report(&self) {
        let corpus = Path::new(CORPUS);
        for &(folder, id) in self.folders {
            for path in documents(folder) {
                let name = file_name(&path);
                let bytes = fs::read(&path).expect("read corpus file");
                let detected = detect(&bytes);
                // Files listed in `detected_otherwise` as another of the crate's formats are
                // reported as that format, as the facade would read them.
                let Some(id) = self
                    .expected_id(&path, id)
                    .filter(|&expected| detected == Some(expected))
                else {
                    println!("{folder}/{name}: detected as {detected:?}, not {id}");
                    continue;
                };
                let start = Instant::now();
                let (ours, status) = match run(id, &bytes) {
                    Ok(t) => (t, String::new()),
                    Err((e, t)) => (t, format!(" [{e}]")),
                };
                let ms = start.elapsed().as_secs_f64() * 1000.0;
                let mut line = format!("{folder}/{name}: {} chars{status} {ms:.2} ms", {
                    ours.chars().count()
                });
                let mut references = vec![
                    ("tika", oracle(&path)),
                    (
                        "md",
                        fs::read_to_string(format!("{}.expected.md", path.display())).ok(),
                    ),
                ];
                references.extend(
                    PEERS
                        .iter()
                        .map(|&peer| (peer, peer_output(corpus, peer, folder, &name))),
                );
                let mut worst_vs_peer: Option<f64> = None;
                for (label, reference) in references {
                    let Some(expected) = reference else { continue };
                    let r = recall(&ours, &expected);
                    let p = precision(&ours, &expected);
                    line.push_str(&format!("  {label} R={r:.3} P={p:.3}"));
                    if PEERS.contains(&label) && !tokens(&expected).is_empty() {
                        worst_vs_peer = Some(worst_vs_peer.map_or(r, |w: f64| w.min(r)));
                    }
                }
                if worst_vs_peer.is_some_and(|w| w < 0.9) {
                    line.push_str("  <-- below 0.9 of a peer");
                }
                println!("{line}");
            }
        }
    }

    /// Writes our text of every document to `$INLET_DUMP/<folder>/<file>.txt` (for diffing
    /// against the peers); does nothing without `INLET_DUMP`.
    pub fn dump(&self) {
        let Ok(dir) = std::env::var("INLET_DUMP") else {
            return;
        };
        for &(folder, id) in self.folders {
            fs::create_dir_all(format!("{dir}/{folder}")).expect("create dump folder");
            for path in documents(folder) {
                let text =
                    run(id, &fs::read(&path).expect("read corpus file")).unwrap_or_else(|(_, t)| t);
                fs::write(format!("{dir}/{folder}/{}.txt", file_name(&path)), text)
                    .expect("write dump");
            }
        }
    }

    /// Prints the median time per file (warm, one thread, 50 runs each) and the median over files,
    /// as the corpus README measures the peers.
    pub fn timing_report(&self) {
        for &(folder, id) in self.folders {
            let mut medians = Vec::new();
            for path in documents(folder) {
                let bytes = fs::read(&path).expect("read corpus file");
                if detect(&bytes) != Some(id) {
                    continue;
                }
                let _ = run(id, &bytes);
                let mut times: Vec<f64> = (0..50)
                    .map(|_| {
                        let start = Instant::now();
                        let _ = std::hint::black_box(run(id, std::hint::black_box(&bytes)));
                        start.elapsed().as_secs_f64() * 1000.0
                    })
                    .collect();
                times.sort_by(f64::total_cmp);
                let median = times[times.len() / 2];
                println!("{folder}/{}: {median:.3} ms", file_name(&path));
                medians.push(median);
            }
            medians.sort_by(f64::total_cmp);
            if let Some(m) = medians.get(medians.len() / 2) {
                println!(
                    "{folder}: median {m:.3} ms per file over {} files",
                    medians.len()
                );
            }
        }
    }
}

/// Defines the standard corpus tests of an extractor crate from a [`CorpusSuite`] expression:
/// detection and text, recall ≥ 0.95 against Tika, `bad/` files not taken, plus the ignored
/// `corpus_recall_report`, `corpus_dump` and `corpus_timing` tools
/// (`cargo test --release -p <crate> -- --ignored --nocapture corpus_timing`).
#[macro_export]
macro_rules! corpus_tests {
    ($suite:expr) => {
        #[test]
        fn corpus_files_are_detected_and_yield_text() {
            $suite.check_detection_and_text();
        }

        #[test]
        fn corpus_recall_is_at_least_95_percent() {
            $suite.check_recall();
        }

        #[test]
        fn bad_files_are_not_ours() {
            $suite.check_bad_files();
        }

        /// Recall against every oracle and peer output (a report, run with `--ignored`).
        #[test]
        #[ignore = "a report, not a check"]
        fn corpus_recall_report() {
            $suite.recall_report();
        }

        /// Writes our text of every document under `$INLET_DUMP` (run with `--ignored`).
        #[test]
        #[ignore = "a tool, not a check"]
        fn corpus_dump() {
            $suite.dump();
        }

        /// Median time per file (run in release with `--ignored`).
        #[test]
        #[ignore = "a measurement, not a check"]
        fn corpus_timing() {
            $suite.timing_report();
        }
    };
}

/// Runs every linked extractor over each file of `dir` (inputs that once crashed or hung one, from
/// fuzzing), failing on a panic or on one taking 5 s or more. Panics if `dir` is missing.
pub fn check_regressions(dir: &Path) {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| !file_name(p).starts_with('.'))
        .collect();
    files.sort();
    for path in files {
        let bytes = fs::read(&path).expect("read regression input");
        for info in inventory::iter::<ExtractorInfo> {
            let start = Instant::now();
            let mut sink = TextSink::new(&Limits::default());
            let _ = (info.make)().extract(&bytes, &mut sink);
            let took = start.elapsed();
            assert!(
                took.as_secs() < 5,
                "{}: {} took {took:?}",
                path.display(),
                info.id
            );
        }
    }
}

/// The body of every fuzz target: probes `bytes` with each linked sniffer (with the container
/// entries the facade would list) and runs each linked extractor under a 100,000-character cap.
/// Any panic is a bug.
pub fn fuzz_all(bytes: &[u8]) {
    let entries = entries(bytes);
    let probe = Probe {
        bytes,
        entries: &entries,
    };
    for info in inventory::iter::<ExtractorInfo> {
        let _ = (info.sniff)(&probe);
        let mut sink = TextSink::new(&Limits {
            max_chars: 100_000,
            ..Limits::default()
        });
        let _ = (info.make)().extract(bytes, &mut sink);
    }
}
