//! Apache POI's metafiles (extractors/testdata/{emf,wmf}, MANIFEST.tsv) against Tika's text.

use std::path::Path;

use inlet_extract_testkit::{check_peer_recall, detect, documents_in, run, text};

const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

fn file(path: &str) -> Vec<u8> {
    let path = format!("{TESTDATA}/{path}");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn metafiles_are_detected_by_their_headers() {
    for (folder, id) in [("emf", "emf"), ("wmf", "wmf")] {
        for path in documents_in(&Path::new(TESTDATA).join(folder)) {
            assert_eq!(
                detect(&std::fs::read(&path).unwrap()),
                Some(id),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn recall_against_tika_is_at_least_95_percent() {
    for folder in ["emf", "wmf"] {
        // Tika writes SimpleEMF_mac.emf's text twice: from its text records, and from the PDF
        // the Mac embedded in a comment record (every token of ours is in its text).
        let floors = [("SimpleEMF_mac.emf", 0.49)];
        let checked = check_peer_recall(Path::new(TESTDATA), folder, folder, &[], &floors);
        assert!(checked >= 1, "{folder}: {checked}");
    }
}

#[test]
fn a_diagram_reads_line_by_line() {
    // POI's vector_image.emf: a diagram of boxes, each label on lines of its own.
    let t = text("emf", &file("emf/vector_image.emf"));
    for line in ["Analyse", "Behaviour and", "Occurrence and", "All Company"] {
        assert!(t.lines().any(|l| l == line), "{line}: {t}");
    }
    // testException2.doc-2.wmf: a labelled drawing, in the font's character set.
    let t = text("wmf", &file("wmf/testException2.doc-2.wmf"));
    assert!(t.contains("Current Balance with Rotating Coil"), "{t}");
    assert!(t.contains("5. - Quadruple Beam Balance"), "{t}");
}

#[test]
fn damaged_and_textless_metafiles_give_what_they_hold() {
    // Tika fails on both damaged files; pictures without text give none.
    for path in [
        "emf/61294.emf",
        "wmf/61338.wmf",
        "emf/wrench.emf",
        "wmf/santa.wmf",
    ] {
        let bytes = file(path);
        assert!(run(&bytes_id(path), &bytes).is_ok(), "{path}");
        for cut in inlet_extract_testkit::truncations(&bytes) {
            let _ = run(&bytes_id(path), cut);
        }
    }
    assert_eq!(text("emf", &file("emf/wrench.emf")), "");
}

fn bytes_id(path: &str) -> String {
    path.split('/').next().unwrap_or_default().to_owned()
}
