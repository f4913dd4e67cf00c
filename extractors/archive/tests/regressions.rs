//! Inputs that once crashed or hung an extractor (from fuzzing: copy `fuzz/artifacts/extract/*`
//! here) are run through every extractor of this crate on each `cargo test`; each must finish
//! within a few seconds without panicking.

use inlet_extract_archive as _;

#[test]
fn regression_inputs_do_not_panic_or_hang() {
    inlet_extract_testkit::check_regressions(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions"),
    );
}
