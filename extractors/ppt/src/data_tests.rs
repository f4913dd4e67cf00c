//! Real presentations from other projects' test suites (`extractors/testdata/ppt`, origins in
//! its MANIFEST.tsv): token recall against the peers' outputs kept in
//! `extractors/testdata/reference`, and text we can see in the files.

use std::{fs, path::Path};

use inlet_core::extract::ExtractError;
use inlet_extract_testkit::{check_peer_recall, documents_in, metadata, run, run_nested, text};
// Embedded documents' formats.
use inlet_extract_doc as _;
use inlet_extract_text as _;
use inlet_extract_xls as _;

/// The test documents shared by the legacy Office extractors.
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

fn presentation(name: &str) -> Vec<u8> {
    let path = format!("{TESTDATA}/ppt/{name}");
    fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn recall_against_the_peers_is_at_least_95_percent() {
    // Tika also reads the text a picture (a metafile) draws on 43781's master.
    let floors = [("master-text-43781.ppt", 0.61)];
    let checked = check_peer_recall(
        Path::new(TESTDATA),
        "ppt",
        "ppt",
        &["encrypted.ppt"],
        &floors,
    );
    assert!(checked >= 5, "{checked} presentations with a reference");
}

#[test]
fn slides_give_their_titles_and_bodies_in_order() {
    let t = text("ppt", &presentation("embedded-simple-2007.ppt"));
    assert!(
        t.starts_with(
            "Embedded Objects\nThis slide contains an embedded object\nIt is a simple harmless ASCII text file\n"
        ),
        "{t}"
    );
    assert_eq!(text("ppt", &presentation("mimetype.ppt")), "zZZZZZZ\n");
}

#[test]
fn summary_properties_and_the_slide_count_are_reported() {
    // Expected values read independently with python olefile 0.47 (getproperties of
    // SummaryInformation and DocumentSummaryInformation, times converted to UTC; the fractions
    // of a second are dropped).
    let m = metadata("ppt", &presentation("embedded-simple-2007.ppt"));
    assert_eq!(m.title.as_deref(), Some("Embedded Objects"));
    assert_eq!(m.authors, ["user"]);
    assert_eq!(m.created.as_deref(), Some("2018-01-18T13:13:30Z"));
    assert_eq!(m.modified.as_deref(), Some("2018-01-18T13:15:08Z"));
    assert_eq!(m.pages, Some(1));
    // The title in Office for Mac's code page 10008 (GB2312 bytes; Python decodes them as
    // "PowerPoint 演示文稿").
    let m = metadata("ppt", &presentation("mimetype.ppt"));
    assert_eq!(m.title.as_deref(), Some("PowerPoint 演示文稿"));
    assert_eq!(m.authors, ["Microsoft Office User"]);
    assert_eq!(m.created.as_deref(), Some("2018-08-17T05:37:26Z"));
    assert_eq!(m.modified.as_deref(), Some("2018-08-17T05:47:32Z"));
    assert_eq!(m.pages, Some(1));
    // No title or author in the file: none reported.
    let m = metadata("ppt", &presentation("puremagic.ppt"));
    assert_eq!(m.title, None);
    assert!(m.authors.is_empty());
    assert_eq!(m.created.as_deref(), Some("2013-01-06T05:20:24Z"));
    assert_eq!(m.modified.as_deref(), Some("2013-01-06T05:20:48Z"));
    assert_eq!(m.pages, Some(1));
}

#[test]
fn an_encrypted_presentation_is_unsupported() {
    match run("ppt", &presentation("encrypted.ppt")) {
        Err((ExtractError::Unsupported(reason), text)) => {
            assert!(reason.starts_with("encrypted"), "{reason}");
            assert_eq!(text, "");
        }
        other => panic!("{other:?}"),
    }
}

/// Writes our text of every test presentation to `$INLET_DUMP/ppt/<file>.txt` (run with
/// `--ignored`).
#[test]
#[ignore = "a tool, not a check"]
fn dump() {
    let Ok(dir) = std::env::var("INLET_DUMP") else {
        return;
    };
    fs::create_dir_all(format!("{dir}/ppt")).unwrap();
    for path in documents_in(&Path::new(TESTDATA).join("ppt")) {
        let out =
            run("ppt", &fs::read(&path).unwrap()).unwrap_or_else(|(e, t)| format!("{t}[{e}]"));
        let name = path.file_name().unwrap().to_string_lossy();
        fs::write(format!("{dir}/ppt/{name}.txt"), out).unwrap();
    }
}

#[test]
fn embedded_documents_follow_the_slides() {
    // oletools' embedded-simple-2007.ppt: a text file the Packager wrapped, under its label.
    let t = run_nested("ppt", &presentation("embedded-simple-2007.ppt")).unwrap();
    assert!(
        t.contains(
            "ASCII text file\nsimple-text-file.txt\nThis is a simple ascii contents of this simple text file.\n"
        ),
        "{t}"
    );
    // POI's ole2-embedding-2003.ppt: a Word document and a workbook, zlib-compressed
    // `ExOleObjStg` records.
    let t = run_nested("ppt", &presentation("ole2-embedding-2003.ppt")).unwrap();
    assert!(
        t.contains("\nembedded object\nOLE embedding is thoroughly unremarkable.\n"),
        "{t}"
    );
    assert!(
        t.contains("\nembedded object\nSheet1\n1\n1\n2\n3\n5\n8\n"),
        "{t}"
    );
}

#[test]
fn comments_and_the_text_masters_draw_are_read() {
    // POI's WithComments.ppt: a comment kept in a PowerPoint 2002 programmable tag, with its
    // author.
    let t = text("ppt", &presentation("WithComments.ppt"));
    assert_eq!(
        t,
        "Test Slide\nWith a comment on it\nAdministrator: This is a test comment\n\nIt is on the first, only slide\n"
    );
    // POI bug 43781's presentation: its master draws a course name and a copyright line on
    // every slide; its placeholders' prompts are left out.
    let t = text("ppt", &presentation("master-text-43781.ppt"));
    assert!(
        t.ends_with("\nHET616 \u{2013} Great Debates in Astronomy\n\u{a9} Swinburne University\n"),
        "{t}"
    );
    assert!(!t.contains("Click to edit"), "{t}");
}
