//! `sync-folder` over a folder of every format the extractors read, against a real Inlet: each
//! file uploaded, its text found in its record and by search.

mod common;

use std::{fs, path::Path};

use inlet_tests::{ADMIN_EMAIL, ADMIN_TOKEN, TestServer};

use common::*;

/// One file of every format issue 16 names (legacy Office, e-mail, archives, images and scans,
/// Type 3 PDF, OOXML with embedded files, metafiles) and a few others, from other projects' test
/// suites (origins in the MANIFEST.tsv of `extractors/testdata`, `extractors/ocr/tests/data`,
/// `extractors/archive/tests/data` and `../shared/corpus`; the mail README): the path from
/// the workspace, the file's name in the synced folder, whether its words come from OCR, and
/// words its record must hold.
const EVERY_FORMAT: &[(&str, &str, bool, &str)] = &[
    (
        "extractors/testdata/xls/Test97.xls",
        "budget.xls",
        false,
        "This Data is 'ASC Only'",
    ),
    (
        "extractors/testdata/xls/Test95.xls",
        "excel95.xls",
        false,
        "BIG INTEGER",
    ),
    (
        "extractors/testdata/ppt/master-text-43781.ppt",
        "debates.ppt",
        false,
        "Great Debates in Astronomy",
    ),
    (
        "extractors/testdata/ppt/master-text-43781.ppt",
        "debates-picture.ppt",
        true,
        "ASTROPHYSICS",
    ),
    (
        "extractors/testdata/doc/Word95.doc",
        "word95.doc",
        false,
        "quick brown fox",
    ),
    (
        "../shared/corpus/doc/simple.doc",
        "simple.doc",
        false,
        "favorite things",
    ),
    (
        "extractors/testdata/msg/example_sent_regular.msg",
        "sent.msg",
        false,
        "This is a test message please ignore",
    ),
    (
        "extractors/mail/tests/data/msg_07.txt",
        "dingus.eml",
        false,
        "Here is your dingus fish",
    ),
    (
        "extractors/archive/tests/data/test.zip",
        "test.zip",
        false,
        "This is a test text file",
    ),
    (
        "extractors/archive/tests/data/gnu.tar",
        "gnu.tar",
        false,
        "Kilts",
    ),
    (
        "extractors/ocr/tests/data/crom.png",
        "whiteboard.png",
        true,
        "cromulent word",
    ),
    (
        "extractors/ocr/tests/data/c03-29.pdf",
        "scanned.pdf",
        true,
        "the widow",
    ),
    (
        "extractors/testdata/pdf/multi_font_type3.pdf",
        "type3.pdf",
        false,
        "There are basic characters",
    ),
    (
        "extractors/testdata/xlsx/WithEmbeded.xlsx",
        "embedded.xlsx",
        false,
        "This is a simple excel document",
    ),
    (
        "extractors/testdata/docx/WordWithAttachments.docx",
        "attachments.docx",
        false,
        "this is ooxml",
    ),
    (
        "extractors/testdata/pptx/bar-chart.pptx",
        "chart.pptx",
        false,
        "1st Qtr\t8.2",
    ),
    (
        "../shared/corpus/odt/extraction_test.odt",
        "test.odt",
        false,
        "Comprehensive Extraction Test Document",
    ),
    (
        "../shared/corpus/rtf/extraction_test.rtf",
        "test.rtf",
        false,
        "Comprehensive Extraction Test Document",
    ),
    (
        "../shared/corpus/epub/features.epub",
        "features.epub",
        false,
        "Reflowable EPUB 3",
    ),
    (
        "extractors/testdata/emf/vector_image.emf",
        "diagram.emf",
        false,
        "Frequency of",
    ),
    (
        "extractors/testdata/wmf/testException2.doc-2.wmf",
        "drawing.wmf",
        false,
        "Rotating Coil",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_of_every_format_syncs_with_each_files_text() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (from, name, _, _) in EVERY_FORMAT {
        fs::copy(workspace.join(from), dir.path().join(name))
            .unwrap_or_else(|e| panic!("{from}: {e}"));
    }
    let root = dir.path().to_str().unwrap();
    let auth = ["--user", ADMIN_EMAIL, "--token", ADMIN_TOKEN];
    let args: Vec<&str> = auth
        .iter()
        .copied()
        .chain(["--create-source", "drive", root])
        .collect();
    let run = sync_folder(&server, &args).await;
    run.assert_ok();
    assert_eq!(
        run.count("uploaded"),
        EVERY_FORMAT.len() as u64,
        "{}",
        run.stdout
    );
    let mirror = Mirror::of(&server, "drive").await;
    let ocr = std::process::Command::new("tesseract")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ocr || std::env::var("INLET_REQUIRE_OCR").is_err(),
        "INLET_REQUIRE_OCR is set but tesseract does not run"
    );
    for (_, name, by_ocr, words) in EVERY_FORMAT {
        let record = mirror.record(&server, name).await;
        let content = record["content"].as_str().unwrap_or_default();
        let extraction = &record["extraction"];
        if *by_ocr && !ocr {
            // Without Tesseract: an image is stored with the reason, a document with its text.
            if extraction["format"] == "png" {
                assert_eq!(
                    extraction["failure"], "unsupported: OCR is not available",
                    "{name}: {record}"
                );
            }
            continue;
        }
        assert!(content.contains(words), "{name}: {words:?} in {record}");
        assert!(extraction["failure"].is_null(), "{name}: {record}");
    }
    // Found by search, as people look for them.
    for (q, name) in [
        ("dingus", "dingus.eml"),
        ("Quadruple Beam Balance", "drawing.wmf"),
    ] {
        let found = mirror.search(&server, q).await;
        assert!(found.iter().any(|id| id == name), "{q}: {found:?}");
    }
}
