//! The configured output cap, not the default one, cuts the text of every format of the crate
//! (none of them decompresses anything, so the output cap is the limit that applies).

use crate::testutil::{check_output_cap, detect};

#[test]
fn configured_limits_cut_the_output() {
    for (id, doc) in [
        ("text", "plain words on a line\nand another line\n"),
        (
            "markdown",
            "# Title\n\nSome *text* here.\n\n- one item\n- another\n",
        ),
        (
            "html",
            "<!doctype html><html><body><p>Some text</p><p>more text</p></body></html>",
        ),
        (
            "json",
            "{\"greeting\": \"some text\", \"more\": [\"other text\"]}",
        ),
        (
            "xml",
            "<?xml version=\"1.0\"?><r><i>some text</i><i>more text</i></r>",
        ),
        (
            "csv",
            "a,b,c\nsome,text,here\nmore,rows,too\nand,one,more\n",
        ),
    ] {
        assert_eq!(detect(doc.as_bytes()), Some(id), "{doc}");
        check_output_cap(id, doc.as_bytes(), 7);
    }
}
