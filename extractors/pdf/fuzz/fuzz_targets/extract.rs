//! Fuzz target: the PDF extractor on arbitrary bytes (with and without a `%PDF-` header), under
//! small caps so that each input runs quickly. Any panic, overflow or hang is a finding.
#![no_main]

use std::time::{Duration, Instant};

use inlet_core::extract::{Limits, TextSink};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_chars: 100_000,
        max_decompressed_bytes: 16 << 20,
        deadline: Some(Instant::now() + Duration::from_secs(2)),
    };
    let mut sink = TextSink::new(&limits);
    let _ = inlet_extract_pdf::extract(data, &mut sink);
    if !data.starts_with(b"%PDF-") {
        let mut with_header = b"%PDF-1.7\n".to_vec();
        with_header.extend_from_slice(data);
        let mut sink = TextSink::new(&limits);
        let _ = inlet_extract_pdf::extract(&with_header, &mut sink);
    }
});
