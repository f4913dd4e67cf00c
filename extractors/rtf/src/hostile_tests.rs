//! Hostile and oversized RTF, generated here: deep group nesting, unbalanced and truncated
//! files, huge `\bin` counts and parameters, empty and random bytes, and documents far over the
//! output cap. Every case must finish fast, never panic, and keep what was readable.

use std::{fs, time::Instant};

use inlet_core::extract::{ExtractError, Limits};

use crate::{
    parser::MAX_DEPTH,
    testutil::{
        capped, check_output_cap, detect, documents, noise, run, run_with, survives, text,
        truncations,
    },
};

#[test]
fn deep_nesting_is_read_flat_and_reported() {
    let depth = 1_000_000;
    let rtf = format!("{{\\rtf1 {}deep{}}}", "{".repeat(depth), "}".repeat(depth));
    let (err, partial) = survives("nested rtf", 2.0, || run("rtf", rtf.as_bytes())).unwrap_err();
    assert!(matches!(err, ExtractError::Malformed(_)), "{err}");
    assert_eq!(partial, "deep\n");
    // Nesting within the limit is fine.
    let depth = MAX_DEPTH - 2;
    let rtf = format!("{{\\rtf1 {}ok{}}}", "{".repeat(depth), "}".repeat(depth));
    assert_eq!(text("rtf", rtf.as_bytes()), "ok\n");
    // Deep nesting inside a skipped destination hides nothing after it.
    let rtf = format!(
        "{{\\rtf1 {{\\*\\x {}junk{}}}after}}",
        "{".repeat(depth),
        "}".repeat(depth)
    );
    assert_eq!(text("rtf", rtf.as_bytes()), "after\n");
}

#[test]
fn truncated_and_unbalanced_files_keep_their_text() {
    let (err, partial) = run("rtf", b"{\\rtf1\\ansi Hello \\'e9t\\'e9 {\\b bold").unwrap_err();
    assert!(matches!(err, ExtractError::Malformed(_)));
    assert_eq!(partial, "Hello été bold\n");
    // Stray closing braces end the document.
    assert_eq!(text("rtf", b"{\\rtf1 a}}} b"), "a\n");
    // Dangling escapes at the end.
    for tail in [
        "\\",
        "\\'",
        "\\'e",
        "\\u",
        "\\u-",
        "\\bin",
        "\\bin99999999999",
    ] {
        let rtf = format!("{{\\rtf1 x{tail}");
        let _ = survives(tail, 1.0, || run("rtf", rtf.as_bytes()));
    }
    for path in documents("rtf") {
        let bytes = fs::read(&path).unwrap();
        for cut in truncations(&bytes) {
            let what = format!("{} cut at {}", path.display(), cut.len());
            let _ = survives(&what, 2.0, || run("rtf", cut));
        }
    }
}

#[test]
fn huge_parameters_and_binary_runs_are_bounded() {
    let rtf = b"{\\rtf1 \\uc999999999 \\u99999999999999999999 a\\bin18446744073709551615 xyz}";
    let _ = survives("params", 1.0, || run("rtf", rtf));
    let rtf = b"{\\rtf1 \\bin-5 ok\\par {\\pict\\bin3 }}}x}y}";
    assert_eq!(text("rtf", rtf), "ok\ny\n");
    let word = "a".repeat(1 << 20);
    let rtf = format!("{{\\rtf1 \\{word}99 text}}");
    assert_eq!(
        survives("long word", 1.0, || text("rtf", rtf.as_bytes())),
        "text\n"
    );
}

#[test]
fn empty_and_random_bytes_fail_fast_without_panic() {
    assert_eq!(detect(b""), None);
    for seed in 1..40u64 {
        let random = noise(16 * 1024, seed);
        assert_eq!(detect(&random), None);
        let mut rtfish = b"{\\rtf1 ".to_vec();
        rtfish.extend(&random);
        assert_eq!(detect(&rtfish), Some("rtf"));
        let _ = survives("random rtf", 1.0, || run("rtf", &rtfish));
        // Random RTF tokens rather than random bytes.
        let tokens = [
            "{",
            "}",
            "\\par ",
            "\\'e9",
            "\\u233?",
            "\\*",
            "\\fonttbl",
            "\\f1 ",
            "x",
            "\\uc0 ",
        ];
        let body: String = random
            .iter()
            .take(4096)
            .map(|b| tokens[*b as usize % tokens.len()])
            .collect();
        let rtf = format!("{{\\rtf1 {body}}}");
        let _ = survives("random tokens", 1.0, || run("rtf", rtf.as_bytes()));
    }
    let _ = survives("empty", 1.0, || run("rtf", b""));
}

#[test]
fn configured_limits_cut_the_output() {
    // RTF holds nothing compressed: the output cap is the limit that applies.
    let rtf = b"{\\rtf1\\ansi First paragraph.\\par Second one.\\par}";
    assert_eq!(check_output_cap("rtf", rtf, 5), "First");
}

#[test]
fn the_output_cap_and_the_deadline_stop_extraction() {
    let rtf = format!(
        "{{\\rtf1\\ansi {}}}",
        "A paragraph of caf\\'e9 text.\\par\n".repeat(100_000)
    );
    let (out, full) = capped("rtf", rtf.as_bytes(), 1000);
    assert!(full);
    assert_eq!(out.chars().count(), 1000);
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    let (result, _) = run_with("rtf", rtf.as_bytes(), &limits);
    assert!(matches!(result, Err(ExtractError::TimedOut)), "{result:?}");
}
