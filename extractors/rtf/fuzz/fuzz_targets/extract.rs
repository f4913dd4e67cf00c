//! Runs the `rtf` extractor on arbitrary bytes, as they are and prefixed with `{\rtf1` so that
//! most inputs get past the header, under a small output cap. Any panic is a bug.
#![no_main]

use inlet_extract_rtf as _;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    inlet_extract_testkit::fuzz_all(data);
    let mut input = b"{\\rtf1 ".to_vec();
    input.extend_from_slice(data);
    inlet_extract_testkit::fuzz_all(&input);
});
