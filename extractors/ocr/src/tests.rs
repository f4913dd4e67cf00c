//! Sniffing, language choice and the process pool, without running Tesseract (tests/ocr.rs
//! runs it).

use std::time::{Duration, Instant};

use inlet_core::extract::Probe;

use inlet_core::extract::ExtractError;

use super::{DEFAULT_MAX_PIXELS, POOL, Settings, check_pixels, choose_languages, probe, sniff};

fn kind(bytes: &[u8]) -> Option<&'static str> {
    sniff(&Probe {
        bytes,
        entries: &[],
    })
}

#[test]
fn images_by_their_magic_bytes() {
    let mut bmp = b"BM".to_vec();
    bmp.extend_from_slice(&[0; 12]);
    bmp.extend_from_slice(&40u32.to_le_bytes());
    bmp.extend_from_slice(&[0; 8]);
    let table: [(&[u8], Option<&str>); 13] = [
        (b"\0\0\0\x0cjP  \r\n\x87\n\0\0", Some("jp2")),
        (b"\xff\x4f\xff\x51\0\x2f", Some("jp2")),
        (b"\x89PNG\r\n\x1a\n....", Some("png")),
        (b"\xff\xd8\xff\xe0..JFIF", Some("jpeg")),
        (b"II*\0\x08\0\0\0", Some("tiff")),
        (b"MM\0*\0\0\0\x08", Some("tiff")),
        (b"RIFF\0\0\0\0WEBPVP8 ", Some("webp")),
        (b"GIF89a....", Some("gif")),
        (&bmp, Some("bmp")),
        (b"P5\n10 10\n255\n", Some("pnm")),
        (b"BM but not a bitmap header at all", None),
        (b"PNG without the signature", None),
        (b"P7\n", None),
    ];
    for (bytes, want) in table {
        assert_eq!(kind(bytes), want, "{:?}", String::from_utf8_lossy(bytes));
    }
}

#[test]
fn configured_languages_that_are_installed_else_every_installed_one() {
    let installed = vec!["eng".to_string(), "deu".to_string()];
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(choose_languages(&[], &installed), installed);
    assert_eq!(choose_languages(&s(&["deu"]), &installed), s(&["deu"]));
    assert_eq!(
        choose_languages(&s(&["fra", "eng"]), &installed),
        s(&["eng"])
    );
    assert_eq!(choose_languages(&s(&["fra"]), &installed), installed);
    assert!(choose_languages(&s(&["eng"]), &[]).is_empty());
}

#[test]
fn a_missing_command_turns_ocr_off_with_the_reason() {
    let status = probe(&Settings {
        command: "/nonexistent/tesseract".into(),
        ..Settings::default()
    });
    assert!(!status.available);
    let reason = status.reason.unwrap_or_default();
    assert!(reason.contains("cannot be run"), "{reason}");
}

#[test]
fn the_pool_waits_until_the_deadline() {
    POOL.resize(1);
    let first = POOL
        .acquire(Instant::now() + Duration::from_secs(1))
        .expect("a free process");
    let started = Instant::now();
    assert!(
        POOL.acquire(Instant::now() + Duration::from_millis(100))
            .is_err()
    );
    assert!(started.elapsed() >= Duration::from_millis(90));
    drop(first);
    assert!(
        POOL.acquire(Instant::now() + Duration::from_secs(1))
            .is_ok()
    );
}

#[test]
fn images_beyond_the_pixel_cap_are_refused_from_their_header() {
    // OCRmyPDF's crom.png (tests/data/MANIFEST.tsv) as it is, and with its header claiming
    // 30,000 × 30,000 pixels.
    let real = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/crom.png"))
        .expect("crom.png");
    assert!(check_pixels(&real, DEFAULT_MAX_PIXELS).is_ok());
    let mut bomb = real.clone();
    bomb[16..20].copy_from_slice(&30_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&30_000u32.to_be_bytes());
    match check_pixels(&bomb, DEFAULT_MAX_PIXELS) {
        Err(ExtractError::Unsupported(why)) => {
            assert!(
                why.contains("30000 × 30000 pixels") && why.contains("50 megapixels"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    // Bytes whose size cannot be read go on to Tesseract (under its memory limit).
    assert!(check_pixels(b"\0\0\0\x0cjP  \r\n\x87\n", DEFAULT_MAX_PIXELS).is_ok());
}
