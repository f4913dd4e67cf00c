//! Runs the `rtf` extractor on arbitrary bytes (prefixed with `{\rtf1` so that most inputs get
//! past the header) under a small output cap. Any panic is a bug.
#![no_main]

use inlet_core::extract::{ExtractorInfo, Limits, Probe, TextSink};
use inlet_extract_rtf as _;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = b"{\\rtf1 ".to_vec();
    input.extend_from_slice(data);
    for bytes in [data, &input[..]] {
        let probe = Probe {
            bytes,
            entries: &[],
        };
        for info in inventory::iter::<ExtractorInfo> {
            let _ = (info.sniff)(&probe);
            let mut sink = TextSink::new(&Limits {
                max_chars: 100_000,
                ..Limits::default()
            });
            let _ = (info.make)().extract(bytes, &mut sink);
        }
    }
});
