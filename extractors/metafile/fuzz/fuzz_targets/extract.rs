//! Runs every extractor of `inlet-extract-metafile` on arbitrary bytes, with the container entries the
//! facade would probe, under a small output cap. Any panic is a bug.
#![no_main]

use inlet_extract_metafile as _;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| inlet_extract_testkit::fuzz_all(data));
