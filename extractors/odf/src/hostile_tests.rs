//! Hostile and oversized inputs, generated here: zip bombs, truncated and damaged packages,
//! empty and random bytes, deeply nested XML, and documents far over the output cap. Every case
//! must finish fast, never panic, and keep what was readable.

use std::{fs, io::Write, time::Instant};

use inlet_core::extract::{ExtractError, Limits};

use crate::testutil::{
    capped, check_decompression_cap, check_output_cap, detect, documents, noise, run, run_with,
    survives, text, truncations, zip_of,
};

const MIME_ODT: &[u8] = b"application/vnd.oasis.opendocument.text";

/// An odt whose `office:text` holds `body`.
fn odt(body: &str) -> Vec<u8> {
    let content = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><office:document-content \
         xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" \
         xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" \
         xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\">\
         <office:body><office:text>{body}</office:text></office:body></office:document-content>"
    );
    zip_of(&[
        ("mimetype", MIME_ODT),
        ("content.xml", content.as_bytes()),
        ("META-INF/manifest.xml", b"<manifest:manifest/>"),
    ])
}

fn paragraphs(n: usize) -> String {
    (0..n)
        .map(|i| format!("<text:p>Paragraph number {i} of the generated body.</text:p>"))
        .collect()
}

#[test]
fn generated_documents_read_back() {
    let d = odt(
        "<text:h>Title</text:h><text:p>a<text:s text:c=\"3\"/>b<text:tab/>c\
        <text:line-break/>d  &amp;\n e<text:note><text:note-citation>1</text:note-citation>\
        <text:note-body><text:p>note</text:p></text:note-body></text:note></text:p>\
        <text:tracked-changes><text:changed-region><text:deletion><text:p>gone</text:p>\
        </text:deletion></text:changed-region></text:tracked-changes>\
        <table:table><table:table-row><table:table-cell><text:p>x</text:p></table:table-cell>\
        <table:table-cell><text:p>y</text:p></table:table-cell></table:table-row></table:table>",
    );
    assert_eq!(detect(&d), Some("odt"));
    assert_eq!(text("odt", &d), "Title\na   b\tc\nd & e 1 note\nx\ty\t\n");
    let ods = zip_of(&[
        (
            "mimetype",
            b"application/vnd.oasis.opendocument.spreadsheet",
        ),
        ("content.xml", b"<office:document-content/>"),
    ]);
    assert_eq!(detect(&ods), Some("ods"));
    // Without a stored mimetype, content.xml and a manifest still say ODF.
    let bare = zip_of(&[
        (
            "content.xml",
            b"<office:document-content><text:p>t</text:p></office:document-content>",
        ),
        ("META-INF/manifest.xml", b"<manifest:manifest/>"),
    ]);
    assert_eq!(detect(&bare), Some("odt"));
    assert_eq!(text("odt", &bare), "t\n");
}

#[test]
fn empty_and_random_bytes_fail_fast_without_panic() {
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), b"PK\x03\x04".to_vec()];
    for seed in 1..20u64 {
        inputs.push(noise(4096, seed));
        let mut zipish = b"PK\x03\x04\x14\x00\x00\x00\x00\x00".to_vec();
        zipish.extend(noise(2048, seed));
        inputs.push(zipish);
    }
    for input in &inputs {
        assert_eq!(detect(input), None);
        let result = survives("odt", 2.0, || run("odt", input));
        assert!(result.is_err());
    }
}

#[test]
fn truncated_corpus_files_fail_fast() {
    for path in documents("odt") {
        let bytes = fs::read(&path).unwrap();
        for cut in truncations(&bytes) {
            let what = format!("{} cut at {}", path.display(), cut.len());
            let _ = survives(&what, 2.0, || run("odt", cut));
        }
    }
}

#[test]
fn damaged_xml_keeps_the_text_before_the_damage() {
    let d = zip_of(&[
        ("mimetype", MIME_ODT),
        (
            "content.xml",
            b"<office:text><text:p>kept</text:p><text:p a=\"x>lost",
        ),
    ]);
    let (err, partial) = run("odt", &d).unwrap_err();
    assert!(matches!(err, ExtractError::Malformed(_)), "{err}");
    assert_eq!(partial, "kept\n");
}

#[test]
fn deeply_nested_xml_finishes_fast() {
    let depth = 200_000;
    let body = format!(
        "{}deep{}",
        "<text:p><text:span>".repeat(depth),
        "</text:span></text:p>".repeat(depth)
    );
    let d = odt(&body);
    let out = survives("nested odt", 5.0, || text("odt", &d));
    assert!(out.starts_with("deep\n"));
}

/// A package whose content.xml inflates to `size` bytes of whitespace.
fn bomb(size: usize) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    w.start_file("mimetype", stored).unwrap();
    w.write_all(MIME_ODT).unwrap();
    w.start_file("content.xml", deflated).unwrap();
    w.write_all(b"<office:document-content>").unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..size >> 20 {
        w.write_all(&chunk).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn a_zip_bomb_stops_at_the_decompression_budget() {
    let d = bomb(32 << 20);
    assert_eq!(detect(&d), Some("odt"));
    let limits = Limits {
        max_decompressed_bytes: 4 << 20,
        ..Limits::default()
    };
    let (result, _) = survives("odt bomb", 5.0, || run_with("odt", &d, &limits));
    let err = result.unwrap_err();
    assert!(matches!(err, ExtractError::LimitExceeded(_)), "{err}");
}

/// A 1 GiB entry through the public extractor and the default budget. Release only
/// (`cargo test --release -p inlet-extract-odf -- --ignored gibibyte`).
#[test]
#[ignore = "slow in debug builds: builds a 1 GiB zip bomb"]
fn a_gibibyte_zip_bomb_stops_at_the_default_budget() {
    let d = bomb(1 << 30);
    let start = Instant::now();
    let (err, _) = run("odt", &d).unwrap_err();
    println!("odt: {err} after {:?}", start.elapsed());
    assert!(matches!(err, ExtractError::LimitExceeded(_)), "{err}");
}

#[test]
fn configured_limits_cut_the_output() {
    let content = b"<office:document-content><office:body><office:text>\
        <text:p>body text</text:p></office:text></office:body></office:document-content>";
    let styles = b"<office:document-styles><office:master-styles><style:master-page>\
        <style:header><text:p>header text</text:p></style:header>\
        </style:master-page></office:master-styles></office:document-styles>";
    for (id, media) in [
        ("odt", "application/vnd.oasis.opendocument.text"),
        ("ods", "application/vnd.oasis.opendocument.spreadsheet"),
        ("odp", "application/vnd.oasis.opendocument.presentation"),
    ] {
        let d = zip_of(&[
            ("mimetype", media.as_bytes()),
            ("content.xml", content),
            ("styles.xml", styles),
        ]);
        assert_eq!(detect(&d), Some(id));
        // Room for content.xml, not for styles.xml.
        let cap = (content.len() + styles.len() / 2) as u64;
        let (full, cut) = check_decompression_cap(id, &d, cap);
        assert_eq!(full, "body text\nheader text\n", "{id}");
        assert_eq!(cut, "body text\n", "{id}");
        assert_eq!(check_output_cap(id, &d, 6), "body t", "{id}");
    }
}

#[test]
fn the_output_cap_and_the_deadline_stop_extraction() {
    let d = odt(&paragraphs(20_000));
    let (out, full) = capped("odt", &d, 1000);
    assert!(full);
    assert_eq!(out.chars().count(), 1000);
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    let (result, _) = run_with("odt", &d, &limits);
    assert!(matches!(result, Err(ExtractError::TimedOut)), "{result:?}");
}
