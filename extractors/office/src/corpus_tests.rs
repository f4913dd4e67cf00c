//! Tests against the shared corpus of real documents (`shared/corpus`, beside the repository):
//! every docx, pptx and xlsx is detected from its bytes and yields text, token recall against
//! Apache Tika's `.expected.txt` output is at least 0.95, and the `bad/` files are not ours.
//! The test bodies are the shared ones of `inlet-extract-testkit`.

use inlet_extract_testkit::{CorpusSuite, Gate};

const SUITE: CorpusSuite = CorpusSuite {
    folders: &[("docx", "docx"), ("pptx", "pptx"), ("xlsx", "xlsx")],
    detected_otherwise: &[
        // Encrypted OOXML is an OLE2 container: nothing of ours opens it.
        ("password_protected.xlsx", None),
    ],
    foreign: &[("doc/eng_spa_mult.doc", "docx")],
    no_text: &[],
    gate: Gate::Tika,
    min_oracles: 5,
};

inlet_extract_testkit::corpus_tests!(SUITE);
