//! Real documents from other projects' test suites kept in `extractors/testdata` (origins and
//! licences in its MANIFEST.tsv), for what the shared corpus does not hold.

use std::fs;

use inlet_extract_office as _;
use inlet_extract_testkit::{run_nested, text};

/// The test documents shared by the extractors.
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

fn workbook(name: &str) -> Vec<u8> {
    document(&format!("xlsx/{name}"))
}

fn document(path: &str) -> Vec<u8> {
    let path = format!("{TESTDATA}/{path}");
    fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn embedded_documents_follow_the_text_under_their_names() {
    // Apache POI's WordWithAttachments.docx: an .xlsx and a .doc in `word/embeddings/`. This
    // test binary links the OOXML extractors only, so the .doc adds its name alone.
    let t = run_nested("docx", &document("docx/WordWithAttachments.docx")).unwrap();
    let xlsx = t.find("\n_____Microsoft_Office_Excel1.xlsx\nЛист1\nэто ooxml\nthis is ooxml\n");
    let doc = t.find("\n_________Microsoft_Office_Word_97_-_20031.doc\n");
    assert!(xlsx.is_some() && doc.is_some(), "{t}");
    // POI's bar-chart.pptx: the chart's data is a workbook in `ppt/embeddings/`.
    let t = run_nested("pptx", &document("pptx/bar-chart.pptx")).unwrap();
    assert!(
        t.starts_with("My Bar Chart\n")
            && t.contains("\nMicrosoft_Excel_Worksheet1.xlsx\nSheet1\n")
            && t.contains("\n1st Qtr\t8.2\n2nd Qtr\t3.2\n"),
        "{t}"
    );
    // POI's WithEmbeded.xlsx: an .xls workbook, and a Packager object (`oleObject1.bin`, an
    // OLE compound file) wrapping `c.xls.zip`, shown under its label.
    let t = run_nested("xlsx", &workbook("WithEmbeded.xlsx")).unwrap();
    assert!(t.contains("\nc.xls.zip\n"), "{t}");
    assert!(
        t.contains("\nMicrosoft_Office_Excel_97-2003_Worksheet1.xls\n"),
        "{t}"
    );
    // Without a registry (no nested extractor) only the names are written, then the text the
    // objects' preview pictures (EMF) draw: the Packager icon's caption, the workbook's cells.
    let t = text("xlsx", &workbook("WithEmbeded.xlsx"));
    assert!(
        t.contains("\nc.xls.zip\nMicrosoft_Office_Excel_97-2003_Worksheet1.xls\nimage"),
        "{t}"
    );
    assert!(t.contains("\nimage2.emf\nc.xls.zip\n"), "{t}");
    assert!(t.contains("\nimage1.emf\n1 10 5 25\n2 12 6 36\n"), "{t}");
}

#[test]
fn zero_in_a_time_of_day_format_is_midnight_as_in_xls() {
    // pyexcel-xlsx's date_field.xlsx, last row: 0 in `DD/MM/YY` and in `H:MM:SS;@` (Excel shows
    // `00/01/00` and `0:00:00`); xls/date_field.xls's last row reads `1899-12-31\t00:00:00`.
    let t = text("xlsx", &workbook("date_field.xlsx"));
    assert!(t.contains("\n1899-12-31\t00:00:00\n"), "{t}");
    // The other times of the column are unchanged.
    assert!(t.contains("\n2014-12-25\t11:11:11\n"), "{t}");
}
