//! Hostile and oversized inputs, generated here: zip bombs (declared and real), truncated and
//! damaged packages, empty and random bytes, deeply nested XML, and documents far over the
//! output cap. Every case must finish fast, never panic, and keep what was readable.

use std::{fs, io::Write, time::Instant};

use inlet_core::extract::{ExtractError, Limits};

use crate::testutil::{
    capped, check_decompression_cap, check_output_cap, detect, documents, entries, noise, run,
    run_with, survives, text, truncations, zip_of,
};

const CONTENT_TYPES: &[u8] = b"<?xml version=\"1.0\"?><Types \
    xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>";

/// A docx whose body is the given WordprocessingML body content.
fn docx(body: &str) -> Vec<u8> {
    let doc = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document \
         xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}\
         </w:body></w:document>"
    );
    zip_of(&[
        ("[Content_Types].xml", CONTENT_TYPES),
        ("word/document.xml", doc.as_bytes()),
    ])
}

/// A workbook with one sheet of the given `<row>` elements.
fn xlsx(rows: &str) -> Vec<u8> {
    let workbook = b"<?xml version=\"1.0\"?><workbook \
        xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" \
        xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">\
        <sheets><sheet name=\"Data\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>";
    let rels = b"<?xml version=\"1.0\"?><Relationships \
        xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
        <Relationship Id=\"rId1\" \
        Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet\" \
        Target=\"worksheets/sheet1.xml\"/></Relationships>";
    let sheet = format!(
        "<?xml version=\"1.0\"?><worksheet \
         xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>{rows}\
         </sheetData></worksheet>"
    );
    let root_rels = b"<?xml version=\"1.0\"?><Relationships \
        xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
        <Relationship Id=\"rId1\" \
        Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" \
        Target=\"xl/workbook.xml\"/></Relationships>";
    zip_of(&[
        ("[Content_Types].xml", CONTENT_TYPES),
        ("_rels/.rels", root_rels),
        ("xl/workbook.xml", workbook),
        ("xl/_rels/workbook.xml.rels", rels),
        ("xl/worksheets/sheet1.xml", sheet.as_bytes()),
    ])
}

/// `n` rows of three cells: an inline string, an integer and a fraction.
fn rows(n: usize) -> String {
    let mut out = String::new();
    for r in 1..=n {
        out.push_str(&format!(
            "<row r=\"{r}\"><c r=\"A{r}\" t=\"inlineStr\"><is><t>item {r}</t></is></c>\
             <c r=\"B{r}\"><v>{r}</v></c><c r=\"C{r}\"><v>{r}.25</v></c></row>"
        ));
    }
    out
}

fn paragraphs(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!("<w:p><w:r><w:t>Paragraph number {i} of the generated body.</w:t></w:r></w:p>")
        })
        .collect()
}

#[test]
fn generated_documents_read_back() {
    let d = docx(
        "<w:p><w:r><w:t>Hello</w:t><w:tab/><w:t xml:space=\"preserve\"> world &amp; co</w:t></w:r></w:p>\
        <w:tbl><w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p><w:p><w:r><w:t>b</w:t></w:r></w:p></w:tc>\
        <w:tc><w:p><w:r><w:delText>gone</w:delText><w:instrText>HYPERLINK</w:instrText><w:t>c</w:t></w:r></w:p></w:tc></w:tr></w:tbl>",
    );
    assert_eq!(detect(&d), Some("docx"));
    assert_eq!(text("docx", &d), "Hello\t world & co\na b\tc\t\n");
    let x = xlsx(&rows(2));
    assert_eq!(detect(&x), Some("xlsx"));
    assert_eq!(text("xlsx", &x), "Data\nitem 1\t1\t1.25\nitem 2\t2\t2.25\n");
}

#[test]
fn empty_and_random_bytes_fail_fast_without_panic() {
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), b"PK".to_vec(), b"PK\x03\x04".to_vec()];
    for seed in 1..20u64 {
        inputs.push(noise(4096, seed));
        let mut zipish = b"PK\x03\x04".to_vec();
        zipish.extend(noise(2048, seed));
        inputs.push(zipish);
    }
    for input in &inputs {
        assert_eq!(detect(input), None);
        for id in ["docx", "pptx", "xlsx"] {
            let result = survives(id, 2.0, || run(id, input));
            assert!(result.is_err(), "{id} accepted random bytes");
        }
    }
}

#[test]
fn truncated_corpus_files_fail_fast_keeping_what_was_read() {
    for (folder, id) in [("docx", "docx"), ("pptx", "pptx"), ("xlsx", "xlsx")] {
        for path in documents(folder) {
            let bytes = fs::read(&path).unwrap();
            for cut in truncations(&bytes) {
                let what = format!("{} cut at {}", path.display(), cut.len());
                let _ = survives(&what, 2.0, || run(id, cut));
            }
        }
    }
    let bad = fs::read(format!("{}/bad/truncated.docx", crate::testutil::CORPUS)).unwrap();
    assert!(entries(&bad).is_empty());
    assert!(matches!(
        run("docx", &bad),
        Err((ExtractError::Malformed(_), _))
    ));
}

#[test]
fn damaged_xml_keeps_the_text_before_the_damage() {
    let d = zip_of(&[(
        "word/document.xml",
        b"<w:document><w:body><w:p><w:r><w:t>kept text</w:t></w:r></w:p><w:p><w:r><w:t attr=\"x>lost",
    )]);
    let (err, partial) = run("docx", &d).unwrap_err();
    assert!(matches!(err, ExtractError::Malformed(_)), "{err}");
    assert_eq!(partial, "kept text\n");
    // Damage in a header still lets the body through.
    let p = zip_of(&[
        ("ppt/presentation.xml", b"<p:presentation/>"),
        (
            "ppt/slides/slide1.xml",
            b"<p:sld><a:p><a:r><a:t>first</a:t></a:r></a:p></p:sld>",
        ),
        (
            "ppt/slides/slide2.xml",
            b"<p:sld><a:p><a:r><a:t>second</a:t></a:r></a:p><a:t x=\"></p:sld>",
        ),
        (
            "ppt/slides/slide10.xml",
            b"<p:sld><a:p><a:r><a:t>tenth</a:t></a:r></a:p></p:sld>",
        ),
    ]);
    let (err, partial) = run("pptx", &p).unwrap_err();
    assert!(matches!(err, ExtractError::Malformed(_)));
    assert_eq!(partial, "first\nsecond\ntenth\n");
}

#[test]
fn deeply_nested_xml_finishes_fast() {
    let depth = 200_000;
    let body = format!(
        "{}<w:p><w:r><w:t>deep</w:t></w:r></w:p>{}",
        "<w:sdt><w:sdtContent>".repeat(depth),
        "</w:sdtContent></w:sdt>".repeat(depth)
    );
    let d = docx(&body);
    let out = survives("nested docx", 5.0, || text("docx", &d));
    assert_eq!(out, "deep\n");
    let tables = format!(
        "{}<w:p><w:r><w:t>cell</w:t></w:r></w:p>{}",
        "<w:tbl><w:tr><w:tc>".repeat(depth),
        "</w:tc></w:tr></w:tbl>".repeat(depth)
    );
    let d = docx(&tables);
    survives("nested tables", 5.0, || text("docx", &d));
}

/// Overwrites the uncompressed size of every entry in the central directory (and local headers).
fn declare_size(mut zip: Vec<u8>, size: u32) -> Vec<u8> {
    let mut i = 0;
    while i + 30 <= zip.len() {
        if zip[i..].starts_with(b"PK\x01\x02") {
            zip[i + 24..i + 28].copy_from_slice(&size.to_le_bytes());
        } else if zip[i..].starts_with(b"PK\x03\x04") {
            zip[i + 22..i + 26].copy_from_slice(&size.to_le_bytes());
        }
        i += 1;
    }
    zip
}

#[test]
fn an_entry_declaring_a_gibibyte_is_refused_before_inflating() {
    let d = declare_size(docx(&paragraphs(3)), 1 << 30);
    assert_eq!(detect(&d), Some("docx"));
    for id in ["docx", "xlsx", "pptx"] {
        let result = survives(id, 1.0, || run(id, &d));
        assert!(result.is_err());
    }
    let (err, _) = run("docx", &d).unwrap_err();
    assert!(matches!(err, ExtractError::LimitExceeded(_)), "{err}");
    let x = declare_size(xlsx(&rows(3)), 1 << 30);
    let (err, _) = run("xlsx", &x).unwrap_err();
    assert!(matches!(err, ExtractError::LimitExceeded(_)), "{err}");
}

/// A package whose `part` inflates to `size` bytes of whitespace, which hold no text: reading it
/// all is the only way to get past it.
fn bomb(part: &str, prefix: &str, size: usize) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(size >= u32::MAX as usize);
    w.start_file("[Content_Types].xml", options).unwrap();
    w.write_all(CONTENT_TYPES).unwrap();
    w.start_file(part, options).unwrap();
    w.write_all(prefix.as_bytes()).unwrap();
    let chunk = vec![b' '; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len());
        w.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn a_zip_bomb_stops_at_the_decompression_budget() {
    let limits = Limits {
        max_decompressed_bytes: 4 << 20,
        ..Limits::default()
    };
    for (id, part, prefix) in [
        ("docx", "word/document.xml", "<w:document><w:body>"),
        ("pptx", "ppt/presentation.xml", "<p:presentation>"),
        ("xlsx", "xl/workbook.xml", "<workbook>"),
    ] {
        let b = bomb(part, prefix, 32 << 20);
        let (result, _) = survives(&format!("{id} bomb"), 5.0, || run_with(id, &b, &limits));
        let err = result.unwrap_err();
        assert!(matches!(err, ExtractError::LimitExceeded(_)), "{err}");
    }
}

#[test]
fn an_entry_inflating_past_its_declared_size_fails_fast() {
    let limits = Limits::default();
    for (id, part, prefix) in [
        ("docx", "word/document.xml", "<w:document><w:body>"),
        ("xlsx", "xl/workbook.xml", "<workbook>"),
        ("pptx", "ppt/presentation.xml", "<p:presentation>"),
    ] {
        let lying = declare_size(bomb(part, prefix, 32 << 20), 1000);
        let (result, _) = survives(id, 2.0, || run_with(id, &lying, &limits));
        assert!(result.is_err(), "{id}");
    }
}

/// The real thing through the public extractors and the default 512 MiB budget: a 1 GiB entry.
/// Release only (`cargo test --release -p inlet-extract-office -- --ignored gibibyte`).
#[test]
#[ignore = "slow in debug builds: builds a 1 GiB zip bomb"]
fn a_gibibyte_zip_bomb_stops_at_the_default_budget() {
    for (id, part, prefix) in [
        ("docx", "word/document.xml", "<w:document><w:body>"),
        ("xlsx", "xl/workbook.xml", "<workbook>"),
        ("pptx", "ppt/presentation.xml", "<p:presentation>"),
    ] {
        let b = bomb(part, prefix, 1 << 30);
        println!("{id} bomb: {} bytes compressed", b.len());
        let start = Instant::now();
        let (err, _) = run(id, &b).unwrap_err();
        println!("{id}: {err} after {:?}", start.elapsed());
        assert!(matches!(err, ExtractError::LimitExceeded(_)), "{err}");
    }
}

#[test]
fn configured_limits_cut_the_output() {
    // docx: the body, then a header found through the document's relationships.
    let document = b"<?xml version=\"1.0\"?><w:document \
        xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>\
        <w:p><w:r><w:t>body text</w:t></w:r></w:p></w:body></w:document>";
    let rels = b"<?xml version=\"1.0\"?><Relationships \
        xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
        <Relationship Id=\"rId1\" \
        Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/header\" \
        Target=\"header1.xml\"/></Relationships>";
    let header = b"<?xml version=\"1.0\"?><w:hdr \
        xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">\
        <w:p><w:r><w:t>header text</w:t></w:r></w:p></w:hdr>";
    let d = zip_of(&[
        ("[Content_Types].xml", CONTENT_TYPES),
        ("word/document.xml", document),
        ("word/_rels/document.xml.rels", rels),
        ("word/header1.xml", header),
    ]);
    // Room for the relationships and the body, not for the header.
    let cap = (rels.len() + document.len() + header.len() / 2) as u64;
    let (full, cut) = check_decompression_cap("docx", &d, cap);
    assert_eq!(full, "body text\nheader text\n");
    assert_eq!(cut, "body text\n");
    assert_eq!(check_output_cap("docx", &d, 5), "body ");

    // pptx: the first slide fits, the second does not.
    let presentation = b"<p:presentation/>";
    let first = b"<p:sld><a:p><a:r><a:t>first</a:t></a:r></a:p></p:sld>";
    let second = b"<p:sld><a:p><a:r><a:t>second</a:t></a:r></a:p></p:sld>";
    let p = zip_of(&[
        ("ppt/presentation.xml", presentation),
        ("ppt/slides/slide1.xml", first),
        ("ppt/slides/slide2.xml", second),
    ]);
    let cap = (presentation.len() + first.len() + second.len() / 2) as u64;
    let (full, cut) = check_decompression_cap("pptx", &p, cap);
    assert_eq!(full, "first\nsecond\n");
    assert_eq!(cut, "first\n");
    assert_eq!(check_output_cap("pptx", &p, 3), "fir");

    // xlsx: the parts' declared sizes are checked before anything is read.
    let x = xlsx(&rows(2));
    let (_, cut) = check_decompression_cap("xlsx", &x, 100);
    assert_eq!(cut, "");
    assert_eq!(check_output_cap("xlsx", &x, 7), "Data\nit");
}

#[test]
fn the_output_cap_stops_extraction() {
    let d = docx(&paragraphs(20_000));
    let (out, full) = capped("docx", &d, 1000);
    assert!(full);
    assert_eq!(out.chars().count(), 1000);
    let x = xlsx(&rows(20_000));
    let (out, full) = capped("xlsx", &x, 1000);
    assert!(full);
    assert_eq!(out.chars().count(), 1000);
}

#[test]
fn a_past_deadline_stops_extraction() {
    let d = docx(&paragraphs(50_000));
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    let (result, _) = run_with("docx", &d, &limits);
    assert!(matches!(result, Err(ExtractError::TimedOut)), "{result:?}");
    let x = xlsx(&rows(50_000));
    let (result, _) = run_with("xlsx", &x, &limits);
    assert!(matches!(result, Err(ExtractError::TimedOut)), "{result:?}");
}

/// Huge generated documents stop at the default 1,000,000-character cap quickly. Release only
/// (`cargo test --release -p inlet-extract-office -- --ignored --nocapture huge`).
#[test]
#[ignore = "slow in debug builds: generates ~100 MB documents"]
fn huge_documents_stop_at_the_cap_quickly() {
    let d = docx(&paragraphs(2_000_000));
    let x = xlsx(&rows(2_000_000));
    for (id, doc) in [("docx", &d), ("xlsx", &x)] {
        let start = Instant::now();
        let (result, out) = run_with(id, doc, &Limits::default());
        let took = start.elapsed();
        println!("{id}: {} bytes zipped, cap reached in {took:?}", doc.len());
        assert!(matches!(result, Err(ExtractError::Full)), "{result:?}");
        assert_eq!(out.chars().count(), inlet_core::extract::MAX_CHARS);
        assert!(took.as_millis() < 1000, "{id} took {took:?}");
    }
}

/// The entries of a real package, each renamed by `rename` and its bytes changed by `edit`.
fn repackaged(
    path: &str,
    rename: impl Fn(&str) -> String,
    edit: impl Fn(&str, Vec<u8>) -> Vec<u8>,
) -> Vec<u8> {
    let bytes = fs::read(format!("{}/{path}", crate::testutil::CORPUS)).unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
        entries.push((rename(&name), edit(&name, data)));
    }
    let refs: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    zip_of(&refs)
}

#[test]
fn part_names_in_another_case_or_with_backslashes_are_found() {
    let original = text(
        "docx",
        &fs::read(format!("{}/docx/word_sample.docx", crate::testutil::CORPUS)).unwrap(),
    );
    assert!(!original.trim().is_empty());
    for (what, rename) in [
        (
            "upper case",
            (|n: &str| n.to_ascii_uppercase()) as fn(&str) -> String,
        ),
        ("backslashes", |n: &str| n.replace('/', "\\")),
        ("both", |n: &str| n.replace('/', "\\").to_ascii_uppercase()),
    ] {
        let docx = repackaged("docx/word_sample.docx", rename, |_, d| d);
        assert_eq!(detect(&docx), Some("docx"), "{what}");
        assert_eq!(text("docx", &docx), original, "{what}");
    }
}

#[test]
fn chart_sheets_are_skipped_and_the_other_sheets_read() {
    // The workbook's first sheet becomes a chart sheet as Excel writes one (a `chartsheet` part
    // with a drawing and no cells, under a chartsheet relationship): the second sheet is still
    // read.
    let chartsheet = b"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
        <chartsheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" \
        xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">\
        <sheetPr/><sheetViews><sheetView workbookViewId=\"0\"/></sheetViews>\
        <pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" header=\"0.3\" \
        footer=\"0.3\"/><drawing r:id=\"rId1\"/></chartsheet>";
    for relationship_too in [false, true] {
        let book = repackaged(
            "xlsx/excel_multi_sheet.xlsx",
            |n| n.to_string(),
            |name, data| match name {
                "xl/worksheets/sheet1.xml" => chartsheet.to_vec(),
                "xl/_rels/workbook.xml.rels" if relationship_too => String::from_utf8(data)
                    .unwrap()
                    .replacen("relationships/worksheet\"", "relationships/chartsheet\"", 1)
                    .into_bytes(),
                _ => data,
            },
        );
        let out = text("xlsx", &book);
        assert!(!out.contains("first_sheet"), "{out}");
        assert!(out.contains("second_sheet\nProduct"), "{out}");
    }
    let whole = text(
        "xlsx",
        &fs::read(format!(
            "{}/xlsx/excel_multi_sheet.xlsx",
            crate::testutil::CORPUS
        ))
        .unwrap(),
    );
    assert!(whole.contains("first_sheet\nColumn 1") && whole.contains("second_sheet\nProduct"));
}
