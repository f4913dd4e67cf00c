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
