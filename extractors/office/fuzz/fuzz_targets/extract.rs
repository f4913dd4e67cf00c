//! Runs every extractor of `inlet-extract-office` on arbitrary bytes, with the ZIP entry names
//! the facade would probe, under a small output cap. Any panic is a bug.
#![no_main]

use std::io::Cursor;

use inlet_core::extract::{ExtractorInfo, Limits, Probe, TextSink};
use inlet_extract_office as _;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let entries: Vec<String> = match zip::ZipArchive::new(Cursor::new(data)) {
        Ok(a) => a
            .file_names()
            .filter_map(Result::ok)
            .map(|n| n.into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    let probe = Probe {
        bytes: data,
        entries: &entries,
    };
    for info in inventory::iter::<ExtractorInfo> {
        let _ = (info.sniff)(&probe);
        let mut sink = TextSink::new(&Limits {
            max_chars: 100_000,
            ..Limits::default()
        });
        let _ = (info.make)().extract(data, &mut sink);
    }
});
