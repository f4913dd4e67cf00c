//! Real workbooks from other projects' test suites (`extractors/testdata/xls`, origins in its
//! MANIFEST.tsv): detection among the other OLE2 formats, token recall against the peers'
//! outputs kept in `extractors/testdata/reference`, and text we can see in the files.

use std::{fs, path::Path};

use inlet_core::extract::ExtractError;
use inlet_extract_testkit::{
    CORPUS, check_peer_recall, detect, documents, documents_in, metadata, run, run_nested, text,
};

// The other OLE2 formats, so that detection is tested against their sniffers.
use inlet_extract_doc as _;
use inlet_extract_mail as _;
use inlet_extract_ppt as _;
// An embedded object's text file.
use inlet_extract_text as _;

/// The test documents shared by the legacy Office extractors.
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

fn workbook(name: &str) -> Vec<u8> {
    let path = format!("{TESTDATA}/xls/{name}");
    fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_ole2_test_document_is_detected_as_its_own_format() {
    for (folder, id) in [
        ("xls", "xls"),
        ("ppt", "ppt"),
        ("msg", "msg"),
        ("doc", "doc"),
    ] {
        for path in documents_in(&Path::new(TESTDATA).join(folder)) {
            let bytes = fs::read(&path).unwrap();
            assert_eq!(detect(&bytes), Some(id), "{}", path.display());
        }
    }
    // Word files stay Word files (the corpus doc that is a docx is nobody's here).
    for path in documents("doc") {
        let bytes = fs::read(&path).unwrap();
        if bytes.starts_with(b"PK") {
            continue;
        }
        assert_eq!(detect(&bytes), Some("doc"), "{}", path.display());
    }
}

#[test]
fn recall_against_the_peers_is_at_least_95_percent() {
    // The peers print dates and formatted numbers their own way (kreuzberg adds `00:00:00` to
    // every date, Tika writes Excel's display form `3/23/64` or, for BIFF5, raw `23459.0`): on
    // these workbooks the only tokens we miss are those (README, "Measurements").
    let floors = [
        ("FmtTest.xls", 0.76),
        ("Test1904.xls", 0.88),
        ("Test95.xls", 0.78),
        ("Test95J.xls", 0.83),
        ("Test97.xls", 0.93),
        ("date_field.xls", 0.82),
    ];
    let checked = check_peer_recall(
        Path::new(TESTDATA),
        "xls",
        "xls",
        &["encrypted.xls"],
        &floors,
    );
    assert!(checked >= 18, "{checked} workbooks with a reference");
    assert!(Path::new(CORPUS).exists());
}

#[test]
fn biff5_and_biff8_sheets_give_their_names_strings_and_numbers() {
    // Excel 95 (BIFF5, a `Book` stream): every sheet under its name, numbers in their formats.
    let t = text("xls", &workbook("Test95.xls"));
    assert!(t.starts_with("Sheet1-ASC\n"), "{t}");
    assert!(t.contains("\nSheet1-ASC (2)\n"), "{t}");
    assert!(t.contains("This Data is 'ASC Only'"), "{t}");
    assert!(t.contains("INTEGER\t12345"), "{t}");
    assert!(t.contains("Double\t1234567.89012345"), "{t}");
    // Excel 97 (BIFF8): shared strings.
    let t = text("xls", &workbook("Test97.xls"));
    assert!(t.contains("This Data is 'ASC Only'"), "{t}");
    // A BIFF5 workbook in code page 932 (Shift_JIS).
    let t = text("xls", &workbook("Test95J.xls"));
    assert!(t.contains("漢字"), "{t}");
}

#[test]
fn numbers_read_as_the_xlsx_extractor_writes_them() {
    let t = text("xls", &workbook("FmtTest.xls"));
    for shown in ["123,456.12", "(123,456)", "$123,456.12", "12345612.00%"] {
        assert!(t.contains(shown), "{shown}: {t}");
    }
    // Dates as ISO 8601.
    assert!(t.contains("1964-03-23"), "{t}");
}

#[test]
fn zero_in_a_time_format_is_midnight_and_in_a_date_format_a_date() {
    // date_field.xls's last row: 0 in `dd/mm/yy` and in `h:mm:ss` (Excel shows `0:00:00`).
    let t = text("xls", &workbook("date_field.xls"));
    assert!(t.contains("\n1899-12-31\t00:00:00\n"), "{t}");
    assert!(t.contains("2014-12-25\t11:11:11"), "{t}");
    for code in [
        "h:mm:ss",
        "[$-F400]h:mm:ss\\ AM/PM",
        "mm:ss",
        "hh\"h\"",
        "[h]:mm:ss",
    ] {
        assert!(inlet_extract_support::cells::time_only(code), "{code}");
    }
    for code in [
        "dd/mm/yy",
        "yyyy-mm-dd h:mm",
        "d-mmm",
        "mmm",
        "General",
        "0.00\"s\"",
        "#,##0",
    ] {
        assert!(!inlet_extract_support::cells::time_only(code), "{code}");
    }
}

#[test]
fn summary_properties_and_the_sheet_count_are_reported() {
    // Expected values read independently with python olefile 0.47 (getproperties of
    // SummaryInformation, times converted to UTC) and the sheet counts from the workbooks'
    // BOUNDSHEET records (type 0: worksheet) listed with a few lines of Python.
    let m = metadata("xls", &workbook("namesdemo.xls"));
    assert_eq!(m.title, None);
    assert_eq!(m.authors, ["John Machin"]);
    assert_eq!(m.created.as_deref(), Some("2006-09-01T12:58:55Z"));
    assert_eq!(m.modified.as_deref(), Some("2006-12-10T09:28:56Z"));
    assert_eq!(m.pages, Some(4));
    // No last-saved time in the file: none reported.
    let m = metadata("xls", &workbook("Test97.xls"));
    assert_eq!(m.authors, ["Kawai, Takanori (Hippo2000)"]);
    assert_eq!(m.created.as_deref(), Some("2000-09-20T01:47:27Z"));
    assert_eq!(m.modified, None);
    assert_eq!(m.pages, Some(2));
    // BIFF5 (a `Book` stream), the properties in code page 932.
    let m = metadata("xls", &workbook("Test95.xls"));
    assert_eq!(m.authors, ["Kawai, Takanori (Hippo2000)"]);
    assert_eq!(m.pages, Some(2));
    // Code page 65001 (stored as -535), no author.
    let m = metadata("xls", &workbook("date_field.xls"));
    assert!(m.authors.is_empty());
    assert_eq!(m.created.as_deref(), Some("2014-09-26T21:04:00Z"));
    assert_eq!(m.modified.as_deref(), Some("2014-09-27T22:23:18Z"));
    assert_eq!(m.pages, Some(3));
    // Office for Mac's code page 10008.
    let m = metadata("xls", &workbook("mimetype.xls"));
    assert_eq!(m.authors, ["Microsoft Office User"]);
    assert_eq!(m.created.as_deref(), Some("2018-08-17T05:35:41Z"));
    assert_eq!(m.pages, Some(1));
}

#[test]
fn an_encrypted_workbook_is_unsupported() {
    match run("xls", &workbook("encrypted.xls")) {
        Err((ExtractError::Unsupported(reason), text)) => {
            assert!(reason.starts_with("encrypted"), "{reason}");
            assert_eq!(text, "");
        }
        other => panic!("{other:?}"),
    }
}

/// Writes our text of every test workbook to `$INLET_DUMP/xls/<file>.txt` (run with
/// `--ignored`).
#[test]
#[ignore = "a tool, not a check"]
fn dump() {
    let Ok(dir) = std::env::var("INLET_DUMP") else {
        return;
    };
    fs::create_dir_all(format!("{dir}/xls")).unwrap();
    for path in documents_in(&Path::new(TESTDATA).join("xls")) {
        let out =
            run("xls", &fs::read(&path).unwrap()).unwrap_or_else(|(e, t)| format!("{t}[{e}]"));
        let name = path.file_name().unwrap().to_string_lossy();
        fs::write(format!("{dir}/xls/{name}.txt"), out).unwrap();
    }
}

#[test]
fn page_headers_and_footers_are_text_without_their_codes() {
    // FmtTest.xls (Spreadsheet::ParseExcel) prints "&LLeft Header&RHippo2000" above one sheet
    // and "&LHippo2000&CCenter Footer" below it; Test97.xls "&L&P/&N&CCHECK FOR HEADER&R&F &A"
    // and a footer of fields only ("&R&D &T"); date_field.xls (pyexcel-xls) a font, a size and
    // the sheet name's field.
    let fmt = text("xls", &workbook("FmtTest.xls"));
    for seen in [
        "Left Header\tHippo2000",
        "Hippo2000\tCenter Footer",
        "Header Center",
        "Left Footer",
    ] {
        assert!(fmt.contains(seen), "{seen:?} in {fmt}");
    }
    let test97 = text("xls", &workbook("Test97.xls"));
    assert!(test97.contains("\nCHECK FOR HEADER\n"), "{test97}");
    let dates = text("xls", &workbook("date_field.xls"));
    for output in [&fmt, &test97, &dates] {
        assert!(!output.contains("&L") && !output.contains("&C") && !output.contains("&R"));
        assert!(
            !output.contains("Times New Roman") && !output.contains("&P"),
            "{output}"
        );
    }
}

#[test]
fn comments_and_text_boxes_follow_their_sheets_cells() {
    // Apache POI's test workbooks: comments (the author's name opens the text, as Excel
    // writes it), comments beside drawings, text boxes on a sheet without cells, and a text
    // box with Cyrillic sheet names.
    let t = text("xls", &workbook("SimpleWithComments.xls"));
    assert!(
        t.contains("3\tthree\nYegor Kozlov:\nfirst cell\nYegor Kozlov:\nsecond cell\n"),
        "{t}"
    );
    assert!(t.contains("\nthird cell\nSheet2\n"), "{t}");
    let t = text("xls", &workbook("comments.xls"));
    for n in ["row1 (index0)", "row3 (index2)", "row4 (index3)"] {
        assert!(t.contains(&format!("\ncomment top {n}\n")), "{n}: {t}");
    }
    let t = text("xls", &workbook("DrawingAndComments.xls"));
    assert!(t.contains("\nevgeniy:\n1sdasdadsas\nsdasd\n"), "{t}");
    assert!(
        t.contains("\n21313213sfdf\n") && t.contains("\ndbgdfbtgbfdgb\n"),
        "{t}"
    );
    let t = text("xls", &workbook("dg-text.xls"));
    assert!(
        t.starts_with("Sheet1\ntext-1\ntext-2\ntext-3\ntext-4\ntext-5\nSheet2"),
        "{t}"
    );
    let t = text("xls", &workbook("text-box-cyrillic.xls"));
    assert!(t.starts_with("Лист1\ntextytt\nЛист2"), "{t}");
}

#[test]
fn charts_give_their_titles_and_series_names() {
    // POI bug 26100's workbook: a chart on the sheet, its series names, axis titles and title
    // after the cells.
    let t = text("xls", &workbook("chart-series-titles-26100.xls"));
    for seen in [
        "\nGKN B10 Minimum\n",
        "\n38B3 B50 50-60% Case Depth\n",
        "\nCycles\n± Torque (Nm)\nNew T-N Curve\n",
    ] {
        assert!(t.contains(seen), "{seen:?} in {t}");
    }
    // WithChart.xls: Sheet2 holds no cells, only a chart of Sheet1's; its series names, then
    // the values it plots from the chart's cache (a point per line, a series per column).
    let t = text("xls", &workbook("WithChart.xls"));
    assert!(
        t.contains(
            "\nSheet2\n1st Column\n2nd Column\n1\t10\n2\t12\n3\t14\n4\t9\n5\t15\n6\t17\nSheet3"
        ),
        "{t}"
    );
}

#[test]
fn scientific_and_fraction_formats_read_as_excel_shows_them() {
    let t = text("xls", &workbook("FmtTest.xls"));
    for shown in [
        "1.23E+05\t-1.23E+05\t0.00E+00",
        "123.5E+3\t-123.5E+3\t0.0E+0",
        "123456 1/8\t-123456 1/8\t0",
        "123456 3/25\t-123456 3/25\t0",
    ] {
        assert!(t.contains(shown), "{shown}: {t}");
    }
}

#[test]
fn embedded_documents_follow_the_sheets_under_their_names() {
    // oletools' embedded-simple-2007.xls: a text file the Packager wrapped (`\x01Ole10Native`),
    // under its label.
    let t = run_nested("xls", &workbook("embedded-simple-2007.xls")).unwrap();
    assert!(
        t.contains("\nsimple-text-file.txt\nThis is a simple ascii contents"),
        "{t}"
    );
    // POI's ole2-embedding.xls: a Word document and a PowerPoint slide (MBD storages).
    let t = run_nested("xls", &workbook("ole2-embedding.xls")).unwrap();
    assert!(t.contains("\nMBD06CAB431\nEmbedded Word document\n"), "{t}");
    assert!(
        t.contains("\nMBD06CAC85A\nPowerPoint Slide\nEmbedded in an Excel spreadsheet\n"),
        "{t}"
    );
    // POI's WithEmbeddedObjects.xls: Word documents embedding documents and workbooks, read
    // three levels deep.
    let t = run_nested("xls", &workbook("WithEmbeddedObjects.xls")).unwrap();
    for seen in ["\nDoc-1\n", "\nDoc-1-1\n", "\nxls-1-2\n", "\nDoc-2-1-1\n"] {
        assert!(t.contains(seen), "{seen:?} in {t}");
    }
    // Without a nested extractor only the names are written, then the text of the objects'
    // preview pictures (metafiles in the drawing group that draw their first page).
    let t = text("xls", &workbook("ole2-embedding.xls"));
    assert!(
        t.contains("\nMBD06CAB431\nMBD06CAC85A\nimage1.emf\nPowerPoint Slide\n"),
        "{t}"
    );
    assert!(t.contains("\nimage2.emf\nEmbedded Word document\n"), "{t}");
}
