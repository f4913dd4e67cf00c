//! Inputs that once crashed or hung an extractor (from fuzzing: copy `fuzz/artifacts/extract/*`
//! here) are run through every extractor of this crate on each `cargo test`; each must finish
//! within a few seconds without panicking.

use std::{fs, path::Path, time::Instant};

use inlet_core::extract::{ExtractorInfo, Limits, TextSink};
use inlet_extract_office as _;

#[test]
fn regression_inputs_do_not_panic_or_hang() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    files.sort();
    for path in files {
        let bytes = fs::read(&path).unwrap();
        for info in inventory::iter::<ExtractorInfo> {
            let start = Instant::now();
            let mut sink = TextSink::new(&Limits::default());
            let _ = (info.make)().extract(&bytes, &mut sink);
            let took = start.elapsed();
            assert!(
                took.as_secs() < 5,
                "{}: {} took {took:?}",
                path.display(),
                info.id
            );
        }
    }
}
