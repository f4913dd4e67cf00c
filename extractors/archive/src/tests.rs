//! The sniffers on real and near-miss headers (registry-level behaviour is in tests/archive.rs).

use inlet_core::extract::Probe;

use super::{GZIP_SCORE, USTAR_SCORE, V7_SCORE, ZIP_SCORE, sniff_gzip, sniff_tar, sniff_zip};

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn probe<'a>(bytes: &'a [u8], entries: &'a [String]) -> Probe<'a> {
    Probe { bytes, entries }
}

#[test]
fn tar_headers_by_magic_or_checksum() {
    assert_eq!(sniff_tar(&probe(&data("ustar.tar"), &[])), USTAR_SCORE);
    assert_eq!(sniff_tar(&probe(&data("gnu.tar"), &[])), USTAR_SCORE);
    // v7 has no magic: the checksum decides.
    let v7 = data("v7.tar");
    assert_eq!(sniff_tar(&probe(&v7, &[])), V7_SCORE);
    let mut broken = v7.clone();
    broken[0] ^= 1;
    assert_eq!(sniff_tar(&probe(&broken, &[])), 0);
    assert_eq!(sniff_tar(&probe(&v7[..511], &[])), 0);
    assert_eq!(sniff_tar(&probe(&[0u8; 1024], &[])), 0);
    assert_eq!(sniff_tar(&probe(b"plain text that is not a tar", &[])), 0);
}

#[test]
fn zips_unless_they_are_packages() {
    let zip = data("test.zip");
    assert_eq!(sniff_zip(&probe(&zip, &[])), ZIP_SCORE);
    for package in [
        vec!["[Content_Types].xml".to_string()],
        vec!["mimetype".to_string(), "META-INF/manifest.xml".to_string()],
        vec!["mimetype".to_string(), "META-INF/container.xml".to_string()],
    ] {
        assert_eq!(sniff_zip(&probe(&zip, &package)), 0, "{package:?}");
    }
    assert_eq!(sniff_zip(&probe(b"PK\x05\x06", &[])), ZIP_SCORE);
    assert_eq!(sniff_zip(&probe(b"not a zip", &[])), 0);
}

#[test]
fn gzip_by_magic() {
    assert_eq!(
        sniff_gzip(&probe(b"\x1f\x8b\x08\0\0\0\0\0", &[])),
        GZIP_SCORE
    );
    assert_eq!(sniff_gzip(&probe(b"\x1f\x8b", &[])), 0);
}
