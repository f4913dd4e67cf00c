//! Facade tests: what is registered, detection from bytes alone, caps and failures.

use std::{
    fs,
    time::{Duration, Instant},
};

use inlet_core::extract::{Extractor, TextSink};
use inlet_extract_testkit::{CORPUS, noise};

use super::*;

/// Every family crate the facade links, with the format ids it must register.
const FAMILIES: &[(&str, &[&str])] = &[
    (
        "inlet-extract-text",
        &["text", "markdown", "html", "json", "xml", "csv"],
    ),
    ("inlet-extract-pdf", &["pdf"]),
    ("inlet-extract-office", &["docx", "pptx", "xlsx"]),
    ("inlet-extract-odf", &["odt", "ods", "odp"]),
    ("inlet-extract-doc", &["doc"]),
    ("inlet-extract-rtf", &["rtf"]),
    ("inlet-extract-epub", &["epub"]),
    ("inlet-extract-mail", &["eml", "msg"]),
    ("inlet-extract-xls", &["xls"]),
    ("inlet-extract-ppt", &["ppt"]),
    ("inlet-extract-metafile", &["emf", "wmf"]),
    ("inlet-extract-archive", &["zip", "tar", "gzip"]),
    (
        "inlet-extract-ocr",
        &["png", "jpeg", "tiff", "webp", "gif", "bmp", "pnm", "jp2"],
    ),
];

fn corpus(path: &str) -> Vec<u8> {
    fs::read(format!("{CORPUS}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The extractors' own test documents (extractors/testdata/MANIFEST.tsv).
fn testdata(path: &str) -> Vec<u8> {
    let path = format!("{}/../testdata/{path}", env!("CARGO_MANIFEST_DIR"));
    fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Whether Tesseract runs here; INLET_REQUIRE_OCR=1 (CI) makes its absence a failure.
fn ocr_runs() -> bool {
    let status = ocr::status();
    assert!(
        status.available || std::env::var("INLET_REQUIRE_OCR").is_err(),
        "INLET_REQUIRE_OCR is set but OCR is off: {:?}",
        status.reason
    );
    status.available
}

#[test]
fn pictures_in_documents_are_read_by_ocr_after_their_text() {
    if !ocr_runs() {
        return;
    }
    let limits = Limits::default();
    // Real documents whose pictures hold words (Tika, which OCRs them too, reads the same
    // words in the first three): each picture's words under its name, after the text.
    for (bytes, what, text, picture, words) in [
        (
            testdata("ppt/master-text-43781.ppt"),
            "a slide's PNG (Pictures stream)",
            "Great Debates in Astronomy",
            "image2.png",
            "ASTROPHYSICS",
        ),
        (
            testdata("doc/PngPicture.doc"),
            "an inline PNG (Data stream)",
            "The quick brown fox",
            "image1.png",
            "Alfresco",
        ),
        (
            testdata("xls/45538_form_Header.xls"),
            "a logo (drawing group)",
            "CEIBS Executive Education",
            "image1.jpg",
            "CEIBS",
        ),
        (
            corpus("xlsx/vodafone.xlsx"),
            "a logo (xl/media)",
            "Financial performance",
            "image1.png",
            "vodafone",
        ),
        (
            corpus("pptx/science-exploration-1p.pptx"),
            "a slide's picture (ppt/media)",
            "Science",
            "image1.png",
            "IT Summit",
        ),
    ] {
        let outcome = extract(&bytes, &limits);
        assert_eq!(outcome.failure, None, "{what}");
        assert!(!outcome.truncated, "{what}");
        let t = &outcome.text;
        let heading = format!("\n{picture}\n");
        let at = t.find(&heading).unwrap_or_else(|| panic!("{what}: {t}"));
        assert!(t[..at].contains(text), "{what}: {t}");
        let after = &t[at + heading.len()..];
        let next = after.find("\nimage").unwrap_or(after.len());
        assert!(after[..next].contains(words), "{what}: {words} in {after}");
        // Without OCR the picture leaves no trace, and the rest is there as with it.
        let without = extract_without_ocr(&bytes, &limits);
        assert!(!without.text.contains(&heading), "{what}");
        let missing: Vec<&str> = without.text.lines().filter(|l| !t.contains(l)).collect();
        assert!(missing.is_empty(), "{what}: {missing:?}");
    }
    // A picture embedded as a file (a Packager object in the workbook embedded in POI's
    // WordWithAttachments.docx) is an embedded file: under its name, its words by OCR.
    let t = extract(&testdata("docx/WordWithAttachments.docx"), &limits).text;
    assert!(t.contains("\nTryhere.jpg\nDO YOU USE IT"), "{t}");
}

#[test]
fn metafiles_are_detected_as_metafiles_and_give_their_text() {
    // POI's SimpleEMF_mac.emf embeds the PDF it was made from near its start.
    let outcome = extract(&testdata("emf/SimpleEMF_mac.emf"), &Limits::default());
    assert_eq!(outcome.format, Some("emf"));
    assert!(
        outcome.text.contains("Tika - Content Analysis Toolkit"),
        "{}",
        outcome.text
    );
    let outcome = extract(
        &testdata("wmf/testException2.doc-2.wmf"),
        &Limits::default(),
    );
    assert_eq!(outcome.format, Some("wmf"));
}

#[test]
fn every_expected_format_is_registered() {
    let registered: Vec<&str> = try_registry()
        .expect("the linked extractors register distinct ids")
        .formats()
        .collect();
    for (family, formats) in FAMILIES {
        for format in *formats {
            assert!(
                registered.contains(format),
                "{format} missing from {registered:?}: is {family} still linked (a dependency \
                 and a `use {} as _;` line in src/lib.rs)?",
                family.replace('-', "_")
            );
        }
    }
    // And the other way round: a newly linked family is listed above.
    for format in &registered {
        assert!(
            FAMILIES.iter().any(|(_, formats)| formats.contains(format)),
            "{format} is registered but FAMILIES does not list it"
        );
    }
}

#[test]
fn the_registry_without_ocr_lacks_exactly_the_ocr_formats() {
    let ocr_family = FAMILIES
        .iter()
        .find(|(family, _)| *family == "inlet-extract-ocr")
        .map(|(_, formats)| *formats);
    assert_eq!(ocr_family, Some(ocr::FORMATS));
    let built = built_without_ocr();
    assert!(built.error.is_none(), "{:?}", built.error);
    let all: Vec<&str> = registry().formats().collect();
    let without: Vec<&str> = built.registry.formats().collect();
    let left_out: Vec<&str> = all
        .iter()
        .copied()
        .filter(|f| !without.contains(f))
        .collect();
    let mut expected = ocr::FORMATS.to_vec();
    expected.sort_unstable();
    assert_eq!(left_out, expected);
}

#[test]
fn without_ocr_images_are_unrecognized_and_other_files_read_the_same() {
    let limits = Limits::default();
    let image = corpus("bad/image_only.png");
    assert_eq!(extract(&image, &limits).format, Some("png"));
    let outcome = extract_without_ocr(&image, &limits);
    assert_eq!(outcome.format, None);
    assert_eq!(outcome.failure.as_deref(), Some(UNRECOGNIZED));
    for path in [
        "docx/category-level.docx",
        "pdf/multi_page.pdf",
        "xlsx/test_01.xlsx",
    ] {
        let bytes = corpus(path);
        assert_eq!(
            extract_without_ocr(&bytes, &limits),
            extract(&bytes, &limits),
            "{path}"
        );
    }
    // An attached picture adds its heading only (with OCR, its text follows when Tesseract is
    // installed); the rest of the message is read as always.
    let mail = message_with("whiteboard.png", "image/png", &image);
    let outcome = extract_without_ocr(&mail, &limits);
    assert_eq!(outcome.format, Some("eml"));
    assert_eq!(outcome.failure, None);
    assert!(
        outcome.text.contains("See the attachment."),
        "{}",
        outcome.text
    );
    assert!(
        outcome.text.trim_end().ends_with("whiteboard.png"),
        "{}",
        outcome.text
    );
}

#[test]
fn duplicate_ids_are_an_error() {
    static A: ExtractorInfo = ExtractorInfo {
        id: "dup",
        version: 1,
        media_type: "application/octet-stream",
        sniff: |_| 10,
        make: || Box::new(Fails(None)),
    };
    static B: ExtractorInfo = ExtractorInfo {
        id: "dup",
        version: 1,
        media_type: "application/octet-stream",
        sniff: |_| 20,
        make: || Box::new(Fails(None)),
    };
    static C: ExtractorInfo = ExtractorInfo {
        id: "other",
        version: 1,
        media_type: "application/octet-stream",
        sniff: |_| 5,
        make: || Box::new(Fails(None)),
    };
    let built = build(&[&A, &C, &B]);
    let error = built.error.expect("a duplicate id is an error");
    assert!(error.contains("'dup'"), "{error}");
    // What `registry()` falls back to: neither claimant of the id, the others as registered.
    assert_eq!(built.registry.formats().collect::<Vec<_>>(), ["other"]);
    let built = build(&[&A, &C]);
    assert!(built.error.is_none());
    assert_eq!(
        built.registry.formats().collect::<Vec<_>>(),
        ["dup", "other"]
    );
}

#[test]
fn detection_looks_at_bytes_not_names() {
    // Files whose names say something else, or nothing useful: only the bytes count (the API
    // takes no name at all).
    for (path, format) in [
        ("html/tables.html5", Some("html")),
        // Pandoc plain-text tables: no Markdown syntax in the bytes, whatever the name says.
        ("md/tables.markdown", Some("text")),
        ("md/readme.md", Some("markdown")),
        ("json/earthquakes.geojson", Some("json")),
        ("txt/tables.plain", Some("text")),
        ("csv/stanley-cups-utf-16.csv", Some("csv")),
        ("bad/random_named.txt", None),
        // An image is OCR's (issue 16): the corpus marks it "no text without OCR".
        ("bad/image_only.png", Some("png")),
    ] {
        let outcome = extract(&corpus(path), &Limits::default());
        assert_eq!(outcome.format, format, "{path}");
    }
    // The same words, as different formats.
    for (bytes, format) in [
        (&b"{\"greeting\": \"hello world\"}"[..], "json"),
        (b"<greeting>hello world</greeting>", "xml"),
        (b"<!doctype html><p>hello world</p>", "html"),
        (b"greeting,target\nhello,world\nhi,there\nhey,you\n", "csv"),
        (b"# Greeting\n\n- hello\n- world\n", "markdown"),
        (b"hello world", "text"),
    ] {
        let outcome = extract(bytes, &Limits::default());
        assert_eq!(outcome.format, Some(format));
        assert!(
            outcome.text.contains("hello"),
            "{format}: {:?}",
            outcome.text
        );
        assert_eq!(outcome.failure, None);
    }
}

#[test]
fn random_bytes_give_no_text() {
    for (len, seed) in [(1_000_000, 42), (8192, 7)] {
        let outcome = extract(&noise(len, seed), &Limits::default());
        assert_eq!(outcome.format, None);
        assert_eq!(outcome.text, "");
        assert_eq!(outcome.failure.as_deref(), Some(UNRECOGNIZED));
    }
    for path in [
        "bad/random.bin",
        "bad/random_named.txt",
        "bad/garbage_after_pdf_header.pdf",
    ] {
        assert_eq!(
            extract(&corpus(path), &Limits::default()).text,
            "",
            "{path}"
        );
    }
}

#[test]
fn empty_input_is_reported() {
    let outcome = extract(b"", &Limits::default());
    assert_eq!(outcome.format, None);
    assert_eq!(outcome.failure.as_deref(), Some(EMPTY));
}

/// `mib` MiB of text lines, capped at the default 1,000,000 characters.
fn capped_text(mib: usize) -> Duration {
    let line = "Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod.\n";
    let bytes = line.repeat(mib * 1024 * 1024 / line.len()).into_bytes();
    let started = Instant::now();
    let outcome = extract(&bytes, &Limits::default());
    let took = started.elapsed();
    assert_eq!(outcome.format, Some("text"));
    assert_eq!(outcome.text.chars().count(), 1_000_000);
    assert!(outcome.truncated);
    assert_eq!(outcome.failure, None);
    took
}

#[test]
fn a_huge_text_is_capped_at_a_million_chars() {
    let took = capped_text(20);
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

/// The 200 MB case; run in release: `cargo test --release -p inlet-extractors -- --ignored`.
#[test]
#[ignore = "allocates 200 MiB; run in release"]
fn a_200_mib_text_is_capped_quickly() {
    let took = capped_text(200);
    println!("200 MiB text capped in {took:?}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn a_past_deadline_discards_the_text() {
    let bytes = "some words\n".repeat(50_000).into_bytes();
    let outcome = extract(
        &bytes,
        &Limits {
            deadline: Some(Instant::now()),
            ..Limits::default()
        },
    );
    assert_eq!(outcome.format, Some("text"));
    assert!(outcome.text.is_empty());
    assert_eq!(outcome.failure.as_deref(), Some("time budget exceeded"));
}

#[test]
fn malformed_input_keeps_the_text_read_before_the_damage() {
    let outcome = extract(br#"{"a": "one", "b": ["two", "thr"#, &Limits::default());
    assert_eq!(outcome.format, Some("json"));
    assert_eq!(outcome.text, "one\ntwo\n");
    assert!(outcome.failure.unwrap().starts_with("malformed input"));
}

/// Pushes some text, then fails with the given error or panics.
struct Fails(Option<fn() -> ExtractError>);

impl Extractor for Fails {
    fn extract(&self, _: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        sink.push("partial")?;
        match self.0 {
            Some(error) => Err(error()),
            None => panic!("boom"),
        }
    }
}

#[test]
fn panics_and_hard_failures_discard_the_text() {
    static PANICS: ExtractorInfo = ExtractorInfo {
        id: "panics",
        version: 1,
        media_type: "application/octet-stream",
        sniff: |_| 1,
        make: || Box::new(Fails(None)),
    };
    static LIMIT: ExtractorInfo = ExtractorInfo {
        id: "limit",
        version: 1,
        media_type: "application/octet-stream",
        sniff: |_| 1,
        make: || {
            Box::new(Fails(Some(|| {
                ExtractError::LimitExceeded("zip bomb".into())
            })))
        },
    };
    static MALFORMED: ExtractorInfo = ExtractorInfo {
        id: "malformed",
        version: 1,
        media_type: "application/octet-stream",
        sniff: |_| 1,
        make: || Box::new(Fails(Some(|| ExtractError::Malformed("cut short".into())))),
    };
    let outcome = run(&PANICS, b"x", &Limits::default(), nested, false, None);
    assert_eq!(outcome.format, Some("panics"));
    assert_eq!(outcome.text, "");
    assert_eq!(outcome.failure.as_deref(), Some("panic: boom"));
    let outcome = run(&LIMIT, b"x", &Limits::default(), nested, false, None);
    assert_eq!(outcome.text, "");
    assert_eq!(outcome.failure.as_deref(), Some("limit exceeded: zip bomb"));
    let outcome = run(&MALFORMED, b"x", &Limits::default(), nested, false, None);
    assert_eq!(outcome.text, "partial");
    assert_eq!(
        outcome.failure.as_deref(),
        Some("malformed input: cut short")
    );
}

#[test]
fn container_entries_are_listed_without_decompressing() {
    let mut names = probe_entries(&corpus("bad/not_office.zip"));
    names.sort();
    assert_eq!(names, ["data/numbers.csv", "readme.txt"]);
    let doc = fs::read_dir(format!("{CORPUS}/doc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| fs::read(p).unwrap().starts_with(OLE2_MAGIC))
        .expect("an OLE2 .doc in the corpus");
    let names = probe_entries(&fs::read(&doc).unwrap());
    assert!(names.iter().any(|n| n == "WordDocument"), "{names:?}");
}

#[test]
fn damaged_containers_list_nothing() {
    assert!(probe_entries(&corpus("bad/truncated.docx")).is_empty());
    for magic in [ZIP_MAGIC, OLE2_MAGIC] {
        for len in [0, 10, 600, 5000] {
            let mut bytes = magic.to_vec();
            bytes.extend(noise(len, len as u64 + 1));
            assert!(probe_entries(&bytes).is_empty());
        }
    }
    assert!(probe_entries(b"plain text").is_empty());
}

/// Every text format at about 200 MiB; run in release to see the time to the cap:
/// `cargo test --release -p inlet-extractors -- --ignored --nocapture huge_inputs`.
#[test]
#[ignore = "allocates about 1 GiB; run in release"]
fn huge_inputs_of_every_format_stop_at_the_cap() {
    let size = 200 * 1024 * 1024;
    let fill = |head: &str, unit: &str, tail: &str| {
        let mut s = String::with_capacity(size + head.len() + tail.len());
        s.push_str(head);
        while s.len() < size {
            s.push_str(unit);
        }
        s.push_str(tail);
        s.into_bytes()
    };
    let cases = [
        ("text", fill("", "plain words on a line\n", "")),
        (
            "markdown",
            fill(
                "# Title\n\n",
                "Some *text* with [a link](x).\n\n- item\n",
                "",
            ),
        ),
        (
            "html",
            fill(
                "<!doctype html><html><body>",
                "<p>Some <b>text</b> here</p>\n",
                "</body></html>",
            ),
        ),
        (
            "json",
            fill("[", "{\"k\": \"some text here\", \"n\": 1},\n", "{}]"),
        ),
        (
            "xml",
            fill(
                "<?xml version=\"1.0\"?><r>",
                "<i>some text here</i>\n",
                "</r>",
            ),
        ),
        ("csv", fill("a,b,c\n", "some,text,here\n", "")),
    ];
    for (format, bytes) in cases {
        let started = Instant::now();
        let outcome = extract(&bytes, &Limits::default());
        let took = started.elapsed();
        println!("{format}: {} MiB capped in {took:?}", bytes.len() >> 20);
        assert_eq!(outcome.format, Some(format));
        assert_eq!(outcome.failure, None, "{format}");
        assert!(outcome.truncated, "{format}");
        assert_eq!(outcome.text.chars().count(), 1_000_000);
    }
}

/// A multipart/mixed message whose body is a text part and an HTML part with other words (a
/// corpus page of two tables): every word of the HTML part is found, cells kept apart as the
/// HTML extractor keeps them, after the text part.
#[test]
fn every_body_part_of_a_mixed_message_is_read() {
    let html = corpus("html/simple_table.html");
    let html = String::from_utf8(html).expect("UTF-8 page");
    let mail = format!(
        "From: Ann <ann@example.test>\r\nTo: Bob <bob@example.test>\r\nSubject: Stock\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
         --b\r\nContent-Type: text/plain\r\n\r\nThe figures are below.\r\n\
         --b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{}\r\n--b--\r\n",
        html.replace('\n', "\r\n")
    );
    let outcome = extract(mail.as_bytes(), &Limits::default());
    assert_eq!(outcome.format, Some("eml"));
    let text = &outcome.text;
    let at = text.find("The figures are below.").expect("the text part");
    let standalone = extract(html.as_bytes(), &Limits::default()).text;
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let ours = words(&text[at..]);
    let expected = words(&standalone);
    assert!(expected.len() > 30, "{standalone}");
    for word in &expected {
        assert!(ours.contains(word), "{word:?} missing from {text}");
    }
}

/// A file read without error that gives no characters says why in `failure`, so a record
/// search can never find is reported: CPython's Expat regression file is one `<a>` element
/// whose text is all in an attribute, read as HTML (extractors/testdata/MANIFEST.tsv).
#[test]
fn a_read_that_gives_no_text_says_why() {
    let outcome = extract(&testdata("xml/expat224_utf8_bug.xml"), &Limits::default());
    assert_eq!(outcome.format, Some("html"));
    assert_eq!(outcome.text.trim(), "");
    assert_eq!(outcome.failure, Some(no_text("html")));
    assert!(
        no_text("html").starts_with("no text found: the file was read as html"),
        "{}",
        no_text("html")
    );
    // As XML, its attribute is its text.
    let xml = run(
        registry().get("xml").expect("xml extractor"),
        &testdata("xml/expat224_utf8_bug.xml"),
        &Limits::default(),
        nested,
        false,
        None,
    );
    assert_eq!(xml.failure, None);
    assert!(xml.text.contains("古人咏雪"), "{}", xml.text.len());
}

/// A real message from CPython's e-mail tests (extractors/mail/tests/data/README.md).
fn mail_sample(name: &str) -> Vec<u8> {
    let path = format!("{}/../mail/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A message carrying `attachment` (base64) under `name`.
fn message_with(name: &str, content_type: &str, attachment: &[u8]) -> Vec<u8> {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(attachment);
    let lines: Vec<&str> = encoded
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect();
    format!(
        "From: Ann <ann@example.test>\r\nTo: Bob <bob@example.test>\r\nSubject: {name}\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
         --b\r\nContent-Type: text/plain\r\n\r\nSee the attachment.\r\n\
         --b\r\nContent-Type: {content_type}\r\nContent-Transfer-Encoding: base64\r\n\
         Content-Disposition: attachment; filename=\"{name}\"\r\n\r\n{}\r\n--b--\r\n",
        lines.join("\r\n")
    )
    .into_bytes()
}

#[test]
fn messages_are_detected_and_attachments_extracted_with_the_registry() {
    let outcome = extract(&mail_sample("msg_10.txt"), &Limits::default());
    assert_eq!(outcome.format, Some("eml"));
    assert!(outcome.text.contains("This is a Base64 encoded message."));
    // A corpus document attached to a message: its text is part of the message's, under its
    // file name.
    let docx = corpus("docx/category-level.docx");
    let expected = fs::read_to_string(format!("{CORPUS}/docx/category-level.docx.expected.txt"))
        .expect("expected text");
    let mail = message_with(
        "category-level.docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        &docx,
    );
    let outcome = extract(&mail, &Limits::default());
    assert_eq!(outcome.format, Some("eml"));
    assert_eq!(outcome.failure, None);
    let text = &outcome.text;
    assert!(text.contains("See the attachment."), "{text}");
    let at = text
        .find("category-level.docx\n")
        .expect("the attachment's heading");
    let standalone = extract(&docx, &Limits::default()).text;
    assert!(!standalone.is_empty());
    assert!(text[at..].contains(standalone.trim()), "{text}");
    let word = expected
        .split_whitespace()
        .find(|w| w.len() > 6)
        .expect("a word");
    assert!(text[at..].contains(word), "{word}: {text}");
    // An unreadable attachment adds its heading only; the message's own text stays.
    let noise_mail = message_with("scan.bin", "application/octet-stream", &noise(4096, 7));
    let outcome = extract(&noise_mail, &Limits::default());
    assert_eq!(outcome.failure, None);
    assert!(outcome.text.contains("See the attachment."));
    assert!(outcome.text.contains("scan.bin"));
}

#[test]
fn messages_within_messages_stop_at_the_nesting_bound() {
    // A message attached to a message attached to a message ... ten deep: only the first
    // MAX_NESTING levels are read, each under its heading, and the cap still holds.
    let mut mail = message_with("inner.txt", "text/plain", b"the innermost words");
    for depth in 0..10 {
        mail = message_with(&format!("level{depth}.eml"), "message/rfc822", &mail);
    }
    let outcome = extract(&mail, &Limits::default());
    assert_eq!(outcome.format, Some("eml"));
    assert!(
        !outcome.text.contains("the innermost words"),
        "{}",
        outcome.text
    );
    let levels = (0..10)
        .filter(|d| outcome.text.contains(&format!("Subject: level{d}.eml")))
        .count();
    assert!(
        levels <= usize::from(inlet_core::extract::MAX_NESTING) + 1,
        "{}",
        outcome.text
    );
    assert!(
        outcome.truncated,
        "levels were left out: the text is not whole"
    );
}

#[test]
fn the_decompression_cap_reaches_attachments() {
    // An attachment is extracted into its message's sink, so under the message's limits.
    let docx = corpus("docx/category-level.docx");
    let mail = message_with(
        "category-level.docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        &docx,
    );
    let limits = Limits {
        max_decompressed_bytes: 1000,
        ..Limits::default()
    };
    let standalone = extract(&docx, &Limits::default()).text;
    let word = standalone
        .split_whitespace()
        .find(|w| w.len() > 6)
        .expect("a word");
    let failure = extract(&docx, &limits).failure.unwrap_or_default();
    assert!(failure.starts_with("limit exceeded"), "{failure}");
    assert!(extract(&mail, &Limits::default()).text.contains(word));
    let outcome = extract(&mail, &limits);
    assert_eq!(outcome.failure, None);
    assert!(
        outcome.text.contains("See the attachment."),
        "{}",
        outcome.text
    );
    assert!(
        outcome.text.contains("category-level.docx"),
        "{}",
        outcome.text
    );
    assert!(!outcome.text.contains(word), "{}", outcome.text);
}

/// What documents say about themselves reaches the outcome: the format's own properties, and the
/// language detected from the text when the format does not say.
#[test]
fn document_metadata_is_reported() {
    let meta = |path: &str| extract(&corpus(path), &Limits::default()).metadata;
    let pdf = meta("pdf/a_course_in_machine_learning_ciml_v0_9_all.pdf");
    assert_eq!(pdf.title.as_deref(), Some("A Course in Machine Learning"));
    assert_eq!(pdf.authors, ["Hal Daumé III"]);
    assert_eq!(pdf.created.as_deref(), Some("2015-09-23T08:00:01-04:00"));
    assert!(pdf.pages.is_some_and(|p| p > 100), "{pdf:?}");
    assert_eq!(pdf.language.as_deref(), Some("eng"));
    assert_eq!(
        meta("pdf/non_ascii_text.pdf").language.as_deref(),
        Some("deu")
    );
    let docx = meta("docx/word_sample.docx");
    assert_eq!(docx.authors, ["Christoph Auer"]);
    assert_eq!(docx.created.as_deref(), Some("2024-10-09T12:43:00Z"));
    assert_eq!(docx.modified.as_deref(), Some("2024-10-15T11:34:00Z"));
    assert_eq!(docx.pages, Some(2));
    let odt = meta("odt/metadata_test.odt");
    assert_eq!(odt.title.as_deref(), Some("Test Metadata Document"));
    assert_eq!(odt.authors, ["John Doe"]);
    let pptx = meta("pptx/simple.pptx");
    assert_eq!(pptx.title.as_deref(), Some("Title Slide"));
    assert_eq!(pptx.pages, Some(2));
    // The legacy Office summary stream, EPUB's package document, RTF's info group, HTML's head;
    // a declared language is kept as declared, not replaced by the detected one.
    let doc = meta("doc/unit_test_lists.doc");
    assert_eq!(doc.authors, ["Peter Staar"]);
    assert_eq!(doc.created.as_deref(), Some("2024-09-26T08:20:00Z"));
    let epub = meta("epub/wasteland.epub");
    assert_eq!(epub.title.as_deref(), Some("The Waste Land"));
    assert_eq!(epub.language.as_deref(), Some("en-US"));
    let rtf = meta("rtf/list_complex.rtf");
    assert_eq!(rtf.title.as_deref(), Some("Text before list"));
    assert_eq!(rtf.pages, Some(1));
    let html = meta("html/berlin_german.html");
    assert_eq!(html.title.as_deref(), Some("Berlin – Wikipedia"));
    assert_eq!(html.language.as_deref(), Some("de"));
    // Nothing to say: nothing reported (a failure carries no metadata either).
    assert!(meta("bad/random.bin").is_empty());
}

/// An e-mail's metadata is its own, not an attachment's.
#[test]
fn e_mail_metadata_is_the_message_s() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../mail/tests/data/msg_10.txt");
    let m = extract(&fs::read(path).unwrap(), &Limits::default()).metadata;
    assert_eq!(m.title.as_deref(), Some("Lyrics"));
    assert_eq!(m.authors, ["Barry Warsaw <barry@python.org>"]);
    assert_eq!(m.recipients, ["Dingus Lovers <cravindogs@cravindogs.com>"]);
    assert_eq!(m.created.as_deref(), Some("2001-04-20T19:35:02-04:00"));
    // A message with a PDF attached: the PDF's title does not replace the subject.
    let pdf = corpus("pdf/a_course_in_machine_learning_ciml_v0_9_all.pdf");
    let mut eml = b"Subject: Course notes\r\nFrom: a@example.test\r\nTo: b@example.test\r\n\
        MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=XX\r\n\r\n--XX\r\n\
        Content-Type: text/plain\r\n\r\nSee attached.\r\n--XX\r\nContent-Type: application/pdf\r\n\
        Content-Disposition: attachment; filename=ciml.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        .to_vec();
    eml.extend_from_slice(
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &pdf).as_bytes(),
    );
    eml.extend_from_slice(b"\r\n--XX--\r\n");
    let outcome = extract(&eml, &Limits::default());
    assert!(
        outcome.text.contains("ciml.pdf"),
        "{}",
        &outcome.text[..200.min(outcome.text.len())]
    );
    assert_eq!(outcome.metadata.title.as_deref(), Some("Course notes"));
    assert_eq!(outcome.metadata.pages, None);
}

#[test]
fn pictures_attached_to_a_message_never_cost_it_its_own_text() {
    // A message with 60 copies of OCRmyPDF's crom.png attached (extractors/ocr/tests/data) and
    // a budget of 3 s: the pictures are optional members, at most MAX_MEMBER_PICTURES of them,
    // each with part of the time left; the message keeps its subject and body either way.
    use base64::Engine;
    let png = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ocr/tests/data/crom.png"
    ))
    .expect("crom.png");
    let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
    let mut mail = String::from(
        "From: Ann <ann@example.test>\r\nTo: Bob <bob@example.test>\r\nSubject: Sixty scans\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
         --b\r\nContent-Type: text/plain\r\n\r\nThe quarterly harbour figures.\r\n",
    );
    for i in 0..60 {
        mail.push_str(&format!(
            "--b\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n\
             Content-Disposition: attachment; filename=\"scan{i}.png\"\r\n\r\n{encoded}\r\n"
        ));
    }
    mail.push_str("--b--\r\n");
    let limits = Limits {
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(3)),
        ..Limits::default()
    };
    let outcome = extract(mail.as_bytes(), &limits);
    assert_eq!(outcome.format, Some("eml"));
    assert_eq!(outcome.failure, None, "{}", outcome.text);
    assert!(
        outcome.text.contains("Subject: Sixty scans"),
        "{}",
        outcome.text
    );
    assert!(outcome.text.contains("The quarterly harbour figures."));
    assert!(outcome.text.contains("scan0.png"));
    assert!(
        !outcome.text.contains("scan55.png"),
        "beyond the picture cap"
    );
    assert!(outcome.truncated, "pictures were left out");
}

#[test]
fn a_scanned_page_too_large_for_ocr_is_left_out_and_the_text_reported_cut() {
    // A page that is one 22,000 × 22,000 image (the samples are never decoded: the size says
    // enough), after a page with text.
    let objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
          /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
            .to_vec(),
        b"<< /Length 44 >>\nstream\nBT /F1 12 Tf 72 700 Td (Harbour minutes) Tj ET\nendstream".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R \
          /Resources << /XObject << /Im0 7 0 R >> >> >>"
            .to_vec(),
        b"<< /Length 30 >>\nstream\nq 612 0 0 792 0 0 cm /Im0 Do Q\nendstream".to_vec(),
        b"<< /Type /XObject /Subtype /Image /Width 22000 /Height 22000 /ColorSpace /DeviceGray \
          /BitsPerComponent 8 /Filter /DCTDecode /Length 4 >>\nstream\n\xff\xd8\xff\xd9\nendstream"
            .to_vec(),
    ];
    let mut pdf = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        pdf.extend_from_slice(body);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for off in offsets {
        pdf.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    let outcome = extract(&pdf, &Limits::default());
    assert_eq!(outcome.format, Some("pdf"));
    assert_eq!(outcome.failure, None);
    assert!(outcome.text.contains("Harbour minutes"), "{}", outcome.text);
    assert!(outcome.truncated, "the scanned page was left out");
}
