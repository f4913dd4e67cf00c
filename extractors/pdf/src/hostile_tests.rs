//! Hostile and damaged input: every case must end quickly, without a panic, with what could be
//! read (and `Malformed` when the file is damaged), inside the decompression and output caps.

use std::time::{Duration, Instant};

use inlet_core::extract::{ExtractError, Limits};
use inlet_extract_testkit::{CORPUS, check_decompression_cap, check_output_cap, noise, survives};

use crate::testutil::{
    build_pdf, deflate, one_page, one_page_with, run, run_with, stream, with_cap,
};

/// Generous bound in seconds for each hostile case (they take milliseconds).
const QUICK: f64 = 5.0;

#[test]
fn empty_and_header_only_inputs_fail_cleanly() {
    for bytes in [&b""[..], b"%PDF-", b"%PDF-1.7\n", b"%PDF-1.7\n%%EOF"] {
        let (r, t) = survives(&String::from_utf8_lossy(bytes), QUICK, || run(bytes));
        assert!(t.is_empty());
        assert!(r.is_err() || t.is_empty(), "{bytes:?}");
    }
    assert!(matches!(
        run(b"no header here").0,
        Err(ExtractError::Malformed(_))
    ));
}

#[test]
fn random_bytes_after_a_header_never_panic() {
    for seed in 1..200u64 {
        let mut bytes = b"%PDF-1.4\n".to_vec();
        bytes.extend_from_slice(&noise(200 + (seed as usize * 37) % 5000, seed));
        let _ = survives(&format!("noise seed {seed}"), QUICK, || run(&bytes));
    }
}

#[test]
fn every_prefix_of_a_file_is_survivable_and_keeps_early_pages() {
    let page = |n: usize| {
        let content = format!("BT /F1 12 Tf 72 700 Td (Page number {n}) Tj ET");
        stream("/Filter /FlateDecode", &deflate(content.as_bytes()))
    };
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 /Resources << /Font << /F1 << /Type /Font \
          /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
            .to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>".to_vec(),
        page(1),
        b"<< /Type /Page /Parent 2 0 R /Contents 6 0 R >>".to_vec(),
        page(2),
    ]);
    let (r, t) = run(&pdf);
    assert!(r.is_ok());
    assert_eq!(t, "Page number 1\nPage number 2\n");
    for cut in (0..pdf.len()).step_by(7) {
        let _ = survives(&format!("cut at {cut}"), QUICK, || run(&pdf[..cut]));
    }
    // Cut inside the second page's objects: the first page is still there, and the damage is
    // reported.
    let second = pdf.windows(7).position(|w| w == b"5 0 obj").unwrap();
    let (r, t) = run(&pdf[..second + 20]);
    assert!(matches!(r, Err(ExtractError::Malformed(_))), "{r:?}");
    assert!(t.contains("Page number 1"), "{t:?}");
}

#[test]
fn cyclic_page_trees_references_and_forms_terminate() {
    // Pages whose kids include the tree itself; a page whose resources reference themselves; a
    // form that draws itself; a /Length that points at itself; a reference chain loop (7↔8).
    let self_form = stream(
        "/Type /XObject /Subtype /Form /Resources << /XObject << /X1 5 0 R >> \
         /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>",
        b"/X1 Do BT /F1 12 Tf 72 600 Td (inside) Tj ET",
    );
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R /Outlines 7 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R 2 0 R 3 0 R] /Count 3 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 << /Type /Font \
          /Subtype /Type1 /BaseFont /Helvetica >> >> /XObject << /X1 5 0 R >> >> >>"
            .to_vec(),
        stream("", b"BT /F1 12 Tf 72 700 Td (outside) Tj ET /X1 Do"),
        self_form,
        b"<< /Length 6 0 R >>\nstream\nabc\nendstream".to_vec(),
        b"8 0 R".to_vec(),
        b"7 0 R".to_vec(),
    ]);
    let (_, t) = survives("cycles", QUICK, || run(&pdf));
    assert!(t.starts_with("outside\ninside"), "{t:?}");
}

#[test]
fn deeply_nested_objects_are_refused_without_overflow() {
    let deep = "[".repeat(200_000);
    let deep_dict = "<< /A ".repeat(100_000);
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R /Deep 5 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 << /Type /Font \
          /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
            .to_vec(),
        stream(
            "",
            format!("{deep} BT /F1 12 Tf 72 700 Td (survived) Tj ET {deep_dict}").as_bytes(),
        ),
        deep.clone().into_bytes(),
    ]);
    let (_, t) = survives("deep objects", QUICK, || run(&pdf));
    assert!(t.contains("survived"), "{t:?}");
    // Deep page trees.
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] >>".to_vec(),
    ];
    for i in 3..5000 {
        objects.push(format!("<< /Type /Pages /Kids [{} 0 R] >>", i + 1).into_bytes());
    }
    let _ = survives("deep page tree", QUICK, || run(&build_pdf(&objects)));
}

#[test]
fn a_flate_bomb_stops_at_the_decompression_cap() {
    let bomb = deflate(&vec![b' '; 64 << 20]);
    let pdf = one_page_with("/Filter /FlateDecode", &bomb, &[]);
    let (r, _) = survives("flate bomb", QUICK, || run_with(&pdf, &with_cap(16 << 20)));
    assert!(matches!(r, Err(ExtractError::LimitExceeded(_))), "{r:?}");
    // A cap above the bomb's size lets it through: the cap is what stopped it.
    let (r, _) = run_with(&pdf, &with_cap(128 << 20));
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn configured_limits_cut_the_output() {
    let font = "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica \
                /Encoding /WinAnsiEncoding >> >> >>";
    let first = b"BT /F1 12 Tf 72 700 Td (first page) Tj ET";
    let second = b"BT /F1 12 Tf 72 700 Td (second page) Tj ET";
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>".to_vec(),
        format!("<< /Type /Page /Parent 2 0 R /Contents 4 0 R {font} >>").into_bytes(),
        stream("/Filter /FlateDecode", &deflate(first)),
        format!("<< /Type /Page /Parent 2 0 R /Contents 6 0 R {font} >>").into_bytes(),
        stream("/Filter /FlateDecode", &deflate(second)),
    ]);
    // Room for the first page's content stream, not for the second's.
    let cap = (first.len() + second.len() / 2) as u64;
    let (full, cut) = check_decompression_cap("pdf", &pdf, cap);
    assert_eq!(full, "first page\nsecond page\n");
    assert_eq!(cut, "first page\n");
    assert_eq!(check_output_cap("pdf", &pdf, 5), "first");
}

#[test]
fn a_huge_content_stream_stops_at_the_output_cap() {
    let mut content = b"BT /F1 10 Tf 72 700 Td ".to_vec();
    for _ in 0..300_000 {
        content.extend_from_slice(b"(word word word ) Tj ");
    }
    content.extend_from_slice(b"ET");
    let pdf = one_page_with("/Filter /FlateDecode", &deflate(&content), &[]);
    let limits = Limits {
        max_chars: 10_000,
        ..Limits::default()
    };
    let (r, t) = survives("huge content", QUICK, || run_with(&pdf, &limits));
    assert!(matches!(r, Err(ExtractError::Full)), "{r:?}");
    assert_eq!(t.chars().count(), 10_000);
    assert!(t.starts_with("word word word word"));
}

#[test]
fn a_passed_deadline_times_out() {
    let mut content = Vec::new();
    for _ in 0..50_000 {
        content.extend_from_slice(b"q 1 0 0 1 0 0 cm Q ");
    }
    let pdf = one_page(&content, &[]);
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    let (r, _) = run_with(&pdf, &limits);
    assert!(matches!(r, Err(ExtractError::TimedOut)), "{r:?}");
}

#[test]
fn broken_xref_offsets_are_recovered_by_scanning() {
    let pdf = one_page(b"BT /F1 12 Tf 72 700 Td (Recovered) Tj ET", &[]);
    let find = |what: &[u8]| pdf.windows(what.len()).position(|w| w == what).unwrap();
    let at = find(b"startxref\n") + "startxref\n".len();
    let mut broken = pdf[..at].to_vec();
    broken.extend_from_slice(b"99999\n%%EOF\n");
    let (r, t) = run(&broken);
    assert_eq!(t, "Recovered\n");
    assert!(matches!(r, Err(ExtractError::Malformed(_))), "{r:?}");
    // No xref or trailer at all.
    let end = find(b"xref\n");
    let (_, t) = run(&pdf[..end]);
    assert_eq!(t, "Recovered\n");
}

#[test]
fn corpus_bad_pdfs_yield_no_text_and_report_damage() {
    // The corpus README: files in bad/ give empty content. truncated.pdf keeps a page and its
    // content stream but lost its fonts, so its codes cannot be read as text.
    for name in ["truncated.pdf", "garbage_after_pdf_header.pdf"] {
        let bytes = std::fs::read(format!("{CORPUS}/bad/{name}")).unwrap();
        let (r, t) = survives(name, QUICK, || run(&bytes));
        assert_eq!(t, "", "{name}");
        assert!(
            matches!(r, Err(ExtractError::Malformed(_))),
            "{name}: {r:?}"
        );
    }
}

#[test]
fn text_in_a_missing_font_is_not_guessed() {
    let pdf = one_page(b"BT /F9 12 Tf 72 700 Td (\x01\x02\x03) Tj ET", &[]);
    let (r, t) = run(&pdf);
    assert_eq!(t, "");
    assert!(matches!(r, Err(ExtractError::Malformed(_))), "{r:?}");
}

#[test]
fn fuzz_regressions_do_not_panic() {
    // Inputs the fuzzer once crashed on (see README, "Fuzzing"), run as the fuzz target does.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let limits = Limits {
            max_chars: 100_000,
            max_decompressed_bytes: 16 << 20,
            deadline: Some(Instant::now() + Duration::from_secs(2)),
        };
        let what = path.display().to_string();
        let _ = survives(&what, QUICK, || run_with(&bytes, &limits));
        let mut with_header = b"%PDF-1.7\n".to_vec();
        with_header.extend_from_slice(&bytes);
        let _ = survives(&format!("{what} after a header"), QUICK, || {
            run_with(&with_header, &limits)
        });
        seen += 1;
    }
    assert!(seen > 0);
}

#[test]
fn forms_fanning_out_stop_at_the_deadline() {
    // Form n draws form n + 1 ten times, twelve levels deep: 10^12 form runs.
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /XObject << /X 5 0 R >> >> >>"
            .to_vec(),
        stream("", b"/X Do"),
    ];
    for level in 0..12 {
        let next = 5 + level + 1;
        objects.push(stream(
            &format!("/Type /XObject /Subtype /Form /Resources << /XObject << /X {next} 0 R >> >>"),
            &b"q /X Do Q ".repeat(10),
        ));
    }
    let pdf = build_pdf(&objects);
    let limits = Limits {
        deadline: Some(Instant::now() + Duration::from_millis(500)),
        ..Limits::default()
    };
    let (r, _) = survives("fanning forms", QUICK, || run_with(&pdf, &limits));
    assert!(matches!(r, Err(ExtractError::TimedOut)), "{r:?}");
}
