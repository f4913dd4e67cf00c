//! Tests against the shared corpus of real documents (`shared/corpus`, beside the repository):
//! every odt is detected from its bytes and yields text, token recall against
//! Apache Tika's `.expected.txt` output is at least 0.95, and the `bad/` files are not ours.

use std::{fs, path::PathBuf};

use crate::testutil::{CORPUS, detect, documents, recall, recall_report, run, timing_report};

/// Corpus folders of this crate's formats and the format id their files must be detected as.
const FOLDERS: &[(&str, &str)] = &[("odt", "odt")];

/// Files that are not what their folder says, and what they are detected as.
const DETECTED_OTHERWISE: &[(&str, Option<&str>)] = &[];

/// Documents of other folders whose bytes are one of our formats.
const FOREIGN: &[(&str, &str)] = &[];

fn expected_id(path: &std::path::Path, id: &'static str) -> Option<&'static str> {
    let name = path.file_name().unwrap().to_string_lossy();
    DETECTED_OTHERWISE
        .iter()
        .find(|(file, _)| *file == name)
        .map_or(Some(id), |&(_, other)| other)
}

#[test]
fn corpus_files_are_detected_and_yield_text() {
    let mut files: Vec<(PathBuf, &str)> = Vec::new();
    for &(folder, id) in FOLDERS {
        files.extend(documents(folder).into_iter().map(|p| (p, id)));
    }
    files.extend(
        FOREIGN
            .iter()
            .map(|&(f, id)| (PathBuf::from(CORPUS).join(f), id)),
    );
    for (path, id) in files {
        let bytes = fs::read(&path).unwrap();
        let expected = expected_id(&path, id);
        assert_eq!(detect(&bytes), expected, "{}", path.display());
        let Some(id) = expected else { continue };
        let text = match run(id, &bytes) {
            Ok(t) => t,
            Err((e, t)) => panic!("{}: {e} after {t:?}", path.display()),
        };
        assert!(
            text.chars().any(char::is_alphanumeric),
            "{} gave no text",
            path.display()
        );
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
            let ours = run(id, &fs::read(&path).unwrap())
                .unwrap_or_else(|(e, t)| panic!("{}: {e} after {} chars", path.display(), t.len()));
            let r = recall(&ours, &expected);
            let p = recall(&expected, &ours);
            println!("{}: recall {r:.3} precision {p:.3}", path.display());
            assert!(r >= 0.95, "{}: recall {r:.3}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 1, "only {checked} .expected.txt oracles found");
}

#[test]
fn bad_files_are_not_ours() {
    for path in documents("bad") {
        let bytes = fs::read(&path).unwrap();
        assert_eq!(detect(&bytes), None, "{}", path.display());
    }
}

/// Prints recall against every oracle and peer output of the corpus (for the README; run with
/// `cargo test -p inlet-extract-odf -- --ignored --nocapture corpus_recall_report`).
#[test]
#[ignore = "a report, not a check"]
fn corpus_recall_report() {
    recall_report(FOLDERS);
}

/// Writes our text of every corpus document to `$INLET_DUMP/<folder>/<file>.txt` (for diffing
/// against the peers; run with `--ignored`).
#[test]
#[ignore = "a tool, not a check"]
fn corpus_dump() {
    let Ok(dir) = std::env::var("INLET_DUMP") else {
        return;
    };
    for &(folder, id) in FOLDERS {
        fs::create_dir_all(format!("{dir}/{folder}")).unwrap();
        for path in documents(folder) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = run(id, &fs::read(&path).unwrap()).unwrap_or_else(|(_, t)| t);
            fs::write(format!("{dir}/{folder}/{name}.txt"), text).unwrap();
        }
    }
}

/// Prints the median time per file (run in release:
/// `cargo test --release -p inlet-extract-odf -- --ignored --nocapture corpus_timing`).
#[test]
#[ignore = "a measurement, not a check"]
fn corpus_timing() {
    timing_report(FOLDERS);
}
