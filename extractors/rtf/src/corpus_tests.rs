//! Tests against the shared corpus of real documents (`shared/corpus`, beside the repository):
//! every rtf is detected from its bytes and yields text, and the `bad/` files are not ours. The
//! corpus has no Tika oracle for RTF, so the recall gate is against the peers' outputs: for
//! every file, recall against the best-agreeing peer is at least 0.95.
//! The test bodies are the shared ones of `inlet-extract-testkit`.

use inlet_extract_testkit::{CorpusSuite, Gate};

const SUITE: CorpusSuite = CorpusSuite {
    folders: &[("rtf", "rtf")],
    detected_otherwise: &[],
    foreign: &[],
    no_text: &[
        // One picture: peers print its file name or a placeholder.
        "image.rtf",
    ],
    gate: Gate::BestPeer,
    min_oracles: 10,
};

inlet_extract_testkit::corpus_tests!(SUITE);

fn document(name: &str) -> Vec<u8> {
    let path = format!("{}/rtf/{name}", inlet_extract_testkit::CORPUS);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn info_group_is_reported() {
    use inlet_extract_testkit::metadata;
    // Expected values read from each file's `{\info ...}` group (printed with a few lines of
    // Python); RTF dates carry no zone and are written as UTC.
    let m = metadata("rtf", &document("list_complex.rtf"));
    assert_eq!(m.title.as_deref(), Some("Text before list"));
    assert_eq!(m.authors, ["Cynthia Johnson"]);
    assert_eq!(m.created.as_deref(), Some("2003-10-13T19:55:00Z"));
    assert_eq!(m.modified.as_deref(), Some("2021-08-09T10:28:00Z"));
    assert_eq!(m.pages, Some(1));
    // The same document as corpus docx/word_sample.docx, whose core properties say
    // 2024-10-09T12:43:00Z and 2024-10-15T11:34:00Z; the operator is not an author.
    let m = metadata("rtf", &document("word_sample.rtf"));
    assert_eq!(m.title, None);
    assert_eq!(m.authors, ["Christoph Auer"]);
    assert_eq!(m.created.as_deref(), Some("2024-10-09T12:43:00Z"));
    assert_eq!(m.modified.as_deref(), Some("2024-10-15T11:34:00Z"));
    assert_eq!(m.pages, Some(2));
    // `\nofpages1` directly in `\info`, not in a group of its own.
    let m = metadata("rtf", &document("eng_spa_mult.rtf"));
    assert_eq!(m.pages, Some(1));
    assert_eq!((m.title, m.created), (None, None));
    // No `\info` group: nothing reported.
    assert!(metadata("rtf", &document("unicode.rtf")).is_empty());
}
