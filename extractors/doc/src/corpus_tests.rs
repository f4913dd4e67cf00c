//! Tests against the shared corpus of real documents (`shared/corpus`, beside the repository):
//! every doc is detected from its bytes and yields text, token recall against Apache Tika's
//! `.expected.txt` output is at least 0.95, and the `bad/` files are not ours.
//! The test bodies are the shared ones of `inlet-extract-testkit`.

use inlet_extract_testkit::{CORPUS, CorpusSuite, Gate, metadata};
// Embedded documents' formats.
use inlet_extract_ppt as _;
use inlet_extract_xls as _;

const SUITE: CorpusSuite = CorpusSuite {
    folders: &[("doc", "doc")],
    detected_otherwise: &[
        // Its bytes are OOXML (a docx): the office extractor's, not ours.
        ("eng_spa_mult.doc", None),
    ],
    foreign: &[],
    no_text: &[],
    gate: Gate::Tika,
    min_oracles: 1,
};

inlet_extract_testkit::corpus_tests!(SUITE);

fn corpus(name: &str) -> Vec<u8> {
    let path = format!("{CORPUS}/doc/{name}");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn summary_properties_are_reported() {
    // Expected values read independently with python olefile 0.47 (getproperties of
    // SummaryInformation, times converted to UTC; the fractions of a second are dropped).
    // Code page 1252, an empty title (not reported) and a page count.
    let m = metadata("doc", &corpus("fake-doc-emphasized-text.doc"));
    assert_eq!(m.title, None);
    assert_eq!(m.authors, ["Win"]);
    assert_eq!(m.created.as_deref(), Some("2023-08-04T07:32:00Z"));
    assert_eq!(m.modified.as_deref(), Some("2023-08-04T07:32:00Z"));
    assert_eq!(m.pages, Some(1));
    // Code page 65001 (stored as -535), no page count in the file.
    let m = metadata("doc", &corpus("simple.doc"));
    assert_eq!(m.authors, ["python-docx"]);
    assert_eq!(m.created.as_deref(), Some("2024-07-09T22:02:00Z"));
    assert_eq!(m.modified.as_deref(), Some("2024-07-11T19:20:35Z"));
    assert_eq!(m.pages, None);
    let m = metadata("doc", &corpus("unit_test_lists.doc"));
    assert_eq!(m.authors, ["Peter Staar"]);
    assert_eq!(m.created.as_deref(), Some("2024-09-26T08:20:00Z"));
    assert_eq!(m.modified.as_deref(), Some("2024-09-26T10:39:00Z"));
}

#[test]
fn embedded_documents_follow_the_text_under_their_names() {
    // Apache POI's word_with_embeded.doc (extractors/testdata/doc): two workbooks, a
    // presentation and a Word document in ObjectPool storages, each read by its own extractor
    // after the document's text.
    let t = inlet_extract_testkit::run_nested("doc", &testdata("word_with_embeded.doc")).unwrap();
    assert!(t.starts_with("I have lots of embedded files in me"), "{t}");
    for seen in [
        "Sheet1\nTest excel file\nThis is the first file\n",
        "Sheet1\nAnother excel file\nThis is the second file\n",
        "Sample PowerPoint file\nThis is the 1st file\n",
        "\nI am a sample document\nNot much on me\nI am document 1\n",
    ] {
        assert!(t.contains(seen), "{seen:?} in {t}");
    }
    // Each under its storage's name.
    assert!(t.contains("\n_1269427460\nSheet1\n"), "{t}");
}

/// Apache POI's Word test documents (extractors/testdata/doc).
fn testdata(name: &str) -> Vec<u8> {
    let path = format!("{}/../testdata/doc/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn recall_against_tika_on_the_test_documents() {
    let checked = inlet_extract_testkit::check_peer_recall(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata")),
        "doc",
        "doc",
        &[],
        // Tika writes each embedded document twice (where it is anchored, then under its name);
        // the second copy is matched by the text of the objects' preview pictures (metafiles).
        &[],
    );
    assert_eq!(checked, 5);
}

#[test]
fn word_6_and_95_documents_are_read() {
    // Saved in full: the text is one run of 8-bit characters.
    let t = inlet_extract_testkit::text("doc", &testdata("Word95.doc"));
    assert!(
        t.starts_with("The quick brown fox jumps over the lazy dog\n\nParagraph 2\n"),
        "{t}"
    );
    assert!(t.contains("\nLast (4th) paragraph.\n"), "{t}");
    // Fast-saved: a piece table in the WordDocument stream; text in headers too.
    let t = inlet_extract_testkit::text("doc", &testdata("Bug60942.doc"));
    assert!(t.starts_with("KATALYSE\n"), "{t}");
    assert!(t.contains("A L'ATTENTION DE :"), "{t}");
    // An English language id over Russian text: Windows-1251, as Word showed it.
    let t = inlet_extract_testkit::text("doc", &testdata("Bug49933.doc"));
    assert!(t.starts_with("Компания Аскат М\n"), "{t}");
    assert!(t.contains("молдавских вин"), "{t}");
}
