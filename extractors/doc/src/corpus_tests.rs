//! Tests against the shared corpus of real documents (`shared/corpus`, beside the repository):
//! every doc is detected from its bytes and yields text, token recall against Apache Tika's
//! `.expected.txt` output is at least 0.95, and the `bad/` files are not ours.
//! The test bodies are the shared ones of `inlet-extract-testkit`.

use inlet_extract_testkit::{CorpusSuite, Gate};

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
