//! Tests against the shared corpus of real documents (`shared/corpus`, beside the repository):
//! every file of these formats is detected as its format and yields text, token recall against
//! Apache Tika's `.expected.txt` output is at least 0.95, and the `bad/` files are not text.
//! The test bodies are the shared ones of `inlet-extract-testkit`.

use inlet_extract_testkit::{CorpusSuite, Gate};

const SUITE: CorpusSuite = CorpusSuite {
    folders: &[
        ("txt", "text"),
        ("md", "markdown"),
        ("html", "html"),
        ("json", "json"),
        ("xml", "xml"),
        ("csv", "csv"),
    ],
    // `md/tables.markdown` is pandoc's plain-text tables, byte for byte `txt/tables.plain` but
    // for two apostrophes: its bytes say plain text.
    detected_otherwise: &[("tables.markdown", Some("text"))],
    foreign: &[],
    no_text: &[],
    gate: Gate::Tika,
    min_oracles: 1,
};

inlet_extract_testkit::corpus_tests!(SUITE);
