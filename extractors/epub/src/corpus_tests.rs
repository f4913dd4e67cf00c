//! Tests against the shared corpus of real documents (`shared/corpus`, beside the repository):
//! every epub is detected from its bytes and yields text, token recall against Apache Tika's
//! `.expected.txt` output is at least 0.95, and the `bad/` files are not ours.
//! The test bodies are the shared ones of `inlet-extract-testkit`.

use inlet_extract_testkit::{CorpusSuite, Gate};

const SUITE: CorpusSuite = CorpusSuite {
    folders: &[("epub", "epub")],
    detected_otherwise: &[],
    foreign: &[],
    no_text: &[],
    gate: Gate::Tika,
    min_oracles: 1,
};

inlet_extract_testkit::corpus_tests!(SUITE);

fn book(name: &str) -> Vec<u8> {
    let path = format!("{}/epub/{name}", inlet_extract_testkit::CORPUS);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn package_metadata_is_reported() {
    use inlet_extract_testkit::metadata;
    // Expected values read independently from each book's package document (python zipfile:
    // META-INF/container.xml's full-path, then its <metadata> element).
    let m = metadata("epub", &book("wasteland.epub"));
    assert_eq!(m.title.as_deref(), Some("The Waste Land"));
    assert_eq!(m.authors, ["T.S. Eliot"]);
    assert_eq!(m.created.as_deref(), Some("2011-09-01"));
    assert_eq!(m.modified.as_deref(), Some("2012-01-18T12:47:00Z"));
    assert_eq!(m.language.as_deref(), Some("en-US"));
    // The spine's length is not a page count.
    assert_eq!(m.pages, None);
    // Every creator, in order; the first of two languages.
    let m = metadata("epub", &book("features.epub"));
    assert_eq!(
        m.title.as_deref(),
        Some("EPUBTEST 0100 - Reflowable Content Tests")
    );
    assert_eq!(
        m.authors,
        [
            "Markus Gylling",
            "Vincent Gros",
            "Toshiaki Koike",
            "Marisa DeMeglio",
            "Matt Garrish",
            "Ori Idan"
        ]
    );
    assert_eq!(m.created, None);
    assert_eq!(m.modified.as_deref(), Some("2014-04-24T13:00:00Z"));
    assert_eq!(m.language.as_deref(), Some("en"));
    // EPUB 2: the publication date is the created one, the conversion date is neither;
    // contributors (illustrators, photographers) are not authors.
    let m = metadata("epub", &book("winter-sports.epub"));
    assert_eq!(m.title.as_deref(), Some("Winter Sports in Switzerland"));
    assert_eq!(m.authors, ["E. F. Benson"]);
    assert_eq!(m.created.as_deref(), Some("2019-08-23"));
    assert_eq!(m.modified, None);
    assert_eq!(m.language.as_deref(), Some("en"));
    let m = metadata("epub", &book("epub2_no_cover.epub"));
    assert_eq!(m.authors, ["François Martin"]);
    assert_eq!(m.created.as_deref(), Some("2019-06-22T15:01:38Z"));
    assert_eq!(m.language.as_deref(), Some("de-DE"));
}
