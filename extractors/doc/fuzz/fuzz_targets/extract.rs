//! Runs the `doc` extractor on arbitrary bytes, with the OLE2 stream names the facade would
//! probe, under a small output cap. Any panic is a bug.
#![no_main]

use std::io::Cursor;

use inlet_core::extract::{ExtractorInfo, Limits, Probe, TextSink};
use inlet_extract_doc as _;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let entries: Vec<String> = match cfb::CompoundFile::open(Cursor::new(data)) {
        Ok(file) => file
            .walk()
            .filter(|e| !e.is_root())
            .map(|e| {
                e.path()
                    .to_string_lossy()
                    .trim_start_matches('/')
                    .to_owned()
            })
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
