//! The registry picks the toy format up by its bytes, whatever the file is called, and the other
//! formats are unaffected.

// Linking the crate is what registers it.
use inlet_example_toy_extractor as _;

use inlet_core::extract::Limits;

#[test]
fn registry_detects_the_toy_format_by_its_bytes() {
    let registry = inlet_extractors::registry();
    assert!(registry.formats().any(|f| f == "toy"));
    let out = inlet_extractors::extract(b"TOY1\ntitle=Hello\nbody=toy world\n", &Limits::default());
    assert_eq!(out.format, Some("toy"));
    assert_eq!(out.text, "Hello\ntoy world\n");
    assert!(out.failure.is_none());
}

#[test]
fn damaged_toy_files_keep_what_was_read_and_other_formats_still_work() {
    let out = inlet_extractors::extract(b"TOY1\nok=first\nbroken line\n", &Limits::default());
    assert_eq!(out.format, Some("toy"));
    assert_eq!(out.text, "first\n");
    assert!(out.failure.is_some());
    let plain = inlet_extractors::extract(b"just some plain text\n", &Limits::default());
    assert_eq!(plain.format, Some("text"));
}
