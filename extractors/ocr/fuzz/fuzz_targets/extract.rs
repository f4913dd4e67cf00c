//! Runs the OCR extractor (its sniffer, and Tesseract on what it takes for an image) on arbitrary
//! bytes under a small output cap. Any panic or hang is a bug; Tesseract's own failures are not.
#![no_main]

use inlet_extract_ocr as _;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| inlet_extract_testkit::fuzz_all(data));
