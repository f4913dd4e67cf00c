//! Real presentations from other projects' test suites (`extractors/testdata/ppt`, origins in
//! its MANIFEST.tsv): token recall against the peers' outputs kept in
//! `extractors/testdata/reference`, and text we can see in the files.

use std::{fs, path::Path};

use inlet_core::extract::ExtractError;
use inlet_extract_testkit::{check_peer_recall, documents_in, run, text};

/// The test documents shared by the legacy Office extractors.
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

fn presentation(name: &str) -> Vec<u8> {
    let path = format!("{TESTDATA}/ppt/{name}");
    fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn recall_against_the_peers_is_at_least_95_percent() {
    let checked = check_peer_recall(Path::new(TESTDATA), "ppt", "ppt", &["encrypted.ppt"], &[]);
    assert!(checked >= 2, "{checked} presentations with a reference");
}

#[test]
fn slides_give_their_titles_and_bodies_in_order() {
    let t = text("ppt", &presentation("embedded-simple-2007.ppt"));
    assert_eq!(
        t,
        "Embedded Objects\nThis slide contains an embedded object\nIt is a simple harmless ASCII text file\n"
    );
    assert_eq!(text("ppt", &presentation("mimetype.ppt")), "zZZZZZZ\n");
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
