//! Real workbooks from other projects' test suites kept in `extractors/testdata/xlsx` (origins
//! and licences in its MANIFEST.tsv), for what the shared corpus does not hold.

use std::fs;

use inlet_extract_office as _;
use inlet_extract_testkit::text;

/// The test documents shared by the extractors.
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

fn workbook(name: &str) -> Vec<u8> {
    let path = format!("{TESTDATA}/xlsx/{name}");
    fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
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
