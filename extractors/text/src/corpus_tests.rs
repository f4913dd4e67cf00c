//! Tests against the shared corpus of real documents (`shared/corpus`, beside the repository):
//! every file of these formats is detected as its format and yields text, token recall against
//! Apache Tika's `.expected.txt` output is at least 0.95, and the `bad/` files are not text.

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
};

use unicode_normalization::UnicodeNormalization;

use crate::testutil::{detect, run};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

/// Corpus folders of this crate's formats and the format id their files must be detected as.
const FOLDERS: &[(&str, &str)] = &[
    ("txt", "text"),
    ("md", "markdown"),
    ("html", "html"),
    ("json", "json"),
    ("xml", "xml"),
    ("csv", "csv"),
];

/// Files whose bytes say another format than their folder: `md/tables.markdown` is pandoc's
/// plain-text tables, byte for byte `txt/tables.plain` but for two apostrophes.
const DETECTED_OTHERWISE: &[(&str, &str)] = &[("tables.markdown", "text")];

/// The documents of a corpus folder (oracles and references left out).
fn documents(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(CORPUS).join(folder);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus folder {} is missing: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.contains(".expected.") && !name.ends_with(".ocr_reference.txt")
        })
        .collect();
    files.sort();
    files
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

fn extract(path: &Path, id: &str) -> String {
    let bytes = fs::read(path).unwrap();
    match run(id, &bytes) {
        Ok(text) => text,
        Err((e, _)) => panic!("{}: {id} failed: {e}", path.display()),
    }
}

#[test]
fn corpus_files_are_detected_and_yield_text() {
    for &(folder, id) in FOLDERS {
        for path in documents(folder) {
            let bytes = fs::read(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy();
            let id = DETECTED_OTHERWISE
                .iter()
                .find(|(file, _)| *file == name)
                .map_or(id, |&(_, other)| other);
            assert_eq!(detect(&bytes), Some(id), "{}", path.display());
            let text = extract(&path, id);
            assert!(
                text.chars().any(char::is_alphanumeric),
                "{} gave no text",
                path.display()
            );
        }
    }
}

#[test]
fn corpus_recall_against_tika_is_at_least_95_percent() {
    let mut checked = 0;
    for &(folder, id) in FOLDERS {
        for path in documents(folder) {
            let oracle = PathBuf::from(format!("{}.expected.txt", path.display()));
            let Ok(expected) = fs::read_to_string(&oracle) else {
                continue;
            };
            let r = recall(&extract(&path, id), &expected);
            assert!(r >= 0.95, "{}: recall {r:.3}", path.display());
            checked += 1;
        }
    }
    assert!(
        checked >= 1,
        "no .expected.txt oracle found for these formats"
    );
}

#[test]
fn bad_files_are_not_text() {
    for path in documents("bad") {
        let bytes = fs::read(&path).unwrap();
        assert_eq!(detect(&bytes), None, "{}", path.display());
    }
}

/// Prints recall against every oracle and peer output of the corpus (for the docs; run with
/// `cargo test -p inlet-extract-text -- --ignored --nocapture corpus_recall_report`).
#[test]
#[ignore = "a report, not a check"]
fn corpus_recall_report() {
    for &(folder, id) in FOLDERS {
        for path in documents(folder) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let ours = extract(&path, id);
            let mut line = format!("{folder}/{name}: {} chars", ours.chars().count());
            let references = [
                ("tika", format!("{}.expected.txt", path.display())),
                ("md", format!("{}.expected.md", path.display())),
                (
                    "extractous",
                    format!("{CORPUS}/reference/extractous/{folder}/{name}.txt"),
                ),
                (
                    "kreuzberg",
                    format!("{CORPUS}/reference/kreuzberg/{folder}/{name}.txt"),
                ),
            ];
            for (label, reference) in references {
                if let Ok(expected) = fs::read_to_string(&reference) {
                    let r = recall(&ours, &expected);
                    let p = recall(&expected, &ours);
                    line.push_str(&format!("  {label} R={r:.3} P={p:.3}"));
                }
            }
            println!("{line}");
        }
    }
}
