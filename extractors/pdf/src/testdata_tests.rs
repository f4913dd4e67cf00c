//! Real PDFs that draw text with Type 3 fonts, from other projects' test suites
//! and cairo (`extractors/testdata/pdf`, origins and licences in its MANIFEST.tsv): token recall against
//! pdftotext's text of them (poppler 22.12.0, kept in `extractors/testdata/reference/pdftotext`,
//! so no pdftotext is needed here) is at least 0.98, and text each file visibly holds is there.

use std::{fs, path::Path};

use inlet_extract_testkit::{documents_in, peer_output, recall, run};

const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

fn text_of(name: &str) -> String {
    let path = format!("{TESTDATA}/pdf/{name}");
    let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    run("pdf", &bytes).unwrap_or_else(|(e, _)| panic!("{path}: {e}"))
}

#[test]
fn type3_test_pdfs_reach_98_percent_recall_against_pdftotext() {
    let dir = Path::new(TESTDATA);
    let files = documents_in(&dir.join("pdf"));
    assert!(files.len() >= 3, "test PDFs missing");
    for path in files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let expected = peer_output(dir, "pdftotext", "pdf", &name)
            .unwrap_or_else(|| panic!("no pdftotext reference for {name}"));
        let ours = text_of(&name);
        let r = recall(&ours, &expected);
        println!("pdf/{name}: recall {r:.3} against pdftotext");
        assert!(r >= 0.98, "pdf/{name}: recall {r:.3} against pdftotext");
    }
}

/// matplotlib's Type 3 fonts: glyph names through `/Differences` (`uni01F4`, `u1F600`) with a
/// ToUnicode map, four fonts on one line.
#[test]
fn matplotlib_type3_fonts_give_their_characters() {
    let text = text_of("multi_font_type3.pdf");
    for line in [
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz",
        "ÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞß",
        "ǠǡǢǣǤǥǦǧǨǩǪǫǬǭǮǯǰǱǲǳǴǵǶǷǸǹǺǻǼǽǾǿ",
        "😀😁😂",
        "in between!",
    ] {
        assert!(text.contains(line), "{line:?} missing from {text:?}");
    }
}

/// A Type 3 font without ToUnicode: the characters come from the glyph names alone.
#[test]
fn type3_glyph_names_alone_give_the_text() {
    let text = text_of("scaled_lines.pdf");
    for label in ["0.0", "0.5", "1.5", "2.5", "3.0", "25", "30"] {
        assert!(text.contains(label), "{label:?} missing from {text:?}");
    }
}

/// A stamp annotation's appearance stream holds text (drawn on the page, as pdftotext shows it);
/// the Type 3 icon fonts map to private-use characters through their ToUnicode maps.
#[test]
fn annotation_appearances_are_read() {
    let text = text_of("pypdf-example.pdf");
    assert!(text.contains("A PDF with a JPEG image."), "{text:?}");
    assert!(text.contains("Beautiful is better than ugly."), "{text:?}");
    assert!(text.contains('\u{F03D9}'), "{text:?}");
}

/// A form filled in Evince: the field's value has no appearance stream (the form asks viewers to
/// draw one, `/NeedAppearances`), and pdftotext shows it.
#[test]
fn form_values_without_appearances_are_read() {
    let text = text_of("pypdf-form_evince.pdf");
    assert!(text.starts_with("foo\n"), "{text:?}");
    assert!(text.contains("\nbar\n"), "{text:?}");
}

/// cairo's Type 3 fonts draw in pixels (FontMatrix [1 0 0 -1 0 0]): word gaps and the overlap
/// that marks a glyph drawn twice are measured against an em guessed from the advances, so
/// doubled letters and spaces survive (`installation`, not `instalation`; `X11 Window`, not
/// `X1 Window`) and each line stays a line.
#[test]
fn type3_fonts_in_pixels_keep_doubled_letters_and_word_gaps() {
    let text = text_of("cairo-type3-bitmap.pdf");
    for expected in [
        "generating and installing Terminus",
        "Font for Linux console, X11 Window System and Microsoft Windows.",
        "The character set covers about 120 language sets and supports",
        "The commands:",
        "$ make -j8",
    ] {
        assert!(
            text.lines()
                .any(|l| l.trim() == expected || l.contains(expected)),
            "{expected:?} not in {text}"
        );
    }
    assert!(!text.contains("instaling"), "{text}");
}

/// pdf.js's Type3WordSpacing.pdf names its Type 3 glyphs `/square` and `/triangle` and has no
/// ToUnicode: as pdftotext does, the codes give the text ("ab ba abba" on each of six lines,
/// spread by word spacing from 50 down to 0), where the names alone gave nothing.
#[test]
fn type3_glyph_names_that_say_nothing_give_the_codes() {
    let path = format!("{TESTDATA}/pdfjs/Type3WordSpacing.pdf");
    let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let text = run("pdf", &bytes).unwrap_or_else(|(e, _)| panic!("{path}: {e}"));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines, ["ab ba abba"; 6], "{text}");
}

/// pdfTeX's bitmap (PK) fonts are Type 3 fonts named `/a45`, `/a65`… in a glyph space of
/// 0.00753 per unit: the codes give the text, and the em guessed from the `m` keeps TJ's word
/// gaps (0.182 em) apart. The corpus book's dedication and contents were missing, then run
/// together (`Formystudentsandteachers.`).
#[test]
fn tex_bitmap_fonts_give_their_words() {
    let path = format!(
        "{}/pdf/a_course_in_machine_learning_ciml_v0_9_all.pdf",
        inlet_extract_testkit::CORPUS
    );
    let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let text = run("pdf", &bytes).unwrap_or_else(|(e, _)| panic!("{path}: {e}"));
    for line in [
        "Copyright © 2015 Hal Daumé III",
        "For my students and teachers.",
        "1 Decision Trees 8",
        "2 Geometry and Nearest Neighbors 26",
    ] {
        assert!(text.lines().any(|l| l.trim() == line), "{line:?} missing");
    }
}
