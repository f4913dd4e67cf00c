//! OCR through the registry, as the server runs it, with the `tesseract` command (Debian's
//! tesseract-ocr; .ci/run installs it). Images from OCRmyPDF's test suite (tests/data/MANIFEST.tsv).
//! Without the command the tests check the "not available" answer instead, unless
//! INLET_REQUIRE_OCR=1 (CI) makes that a failure.

use inlet_core::extract::Limits;
use inlet_extract_ocr::{UNAVAILABLE, status};
use inlet_extractors::extract;

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Whether OCR can run here; without it, a file gets the documented reason.
fn ocr_here() -> bool {
    if status().available {
        return true;
    }
    assert!(
        std::env::var("INLET_REQUIRE_OCR").is_err(),
        "INLET_REQUIRE_OCR is set but OCR is off: {:?}",
        status().reason
    );
    let o = extract(&data("crom.png"), &Limits::default());
    assert_eq!(
        o.failure.as_deref(),
        Some(&*format!("unsupported: {UNAVAILABLE}"))
    );
    false
}

/// Whitespace collapsed to single spaces.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// 1 − (character edit distance / reference length), on whitespace-collapsed text.
fn accuracy(ours: &str, reference: &str) -> f64 {
    let a: Vec<char> = squash(ours).chars().collect();
    let b: Vec<char> = squash(reference).chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    1.0 - prev[b.len()] as f64 / b.len().max(1) as f64
}

#[test]
fn a_scanned_two_column_page_reads_at_90_percent_or_better() {
    if !ocr_here() {
        return;
    }
    let o = extract(&data("linn.png"), &Limits::default());
    assert_eq!(o.format, Some("png"));
    assert_eq!(o.failure, None);
    let reference = String::from_utf8(data("linn.txt")).unwrap();
    let acc = accuracy(&o.text, &reference);
    println!("linn.png character accuracy {acc:.3}");
    assert!(acc >= 0.90, "accuracy {acc:.3}:\n{}", o.text);
}

#[test]
fn photographed_typewriting_and_odd_words() {
    if !ocr_here() {
        return;
    }
    let o = extract(&data("typewriter.png"), &Limits::default());
    for word in ["Linzensoep", "Waterman", "linzen", "water", "uien", "boter"] {
        assert!(o.text.contains(word), "{word}: {}", o.text);
    }
    let o = extract(&data("crom.png"), &Limits::default());
    assert_eq!(squash(&o.text), "Covfefe is a perfectly cromulent word.");
}

#[test]
fn limits_stop_ocr() {
    if !ocr_here() {
        return;
    }
    let image = data("linn.png");
    // The output cap.
    let capped = extract(
        &image,
        &Limits {
            max_chars: 40,
            ..Limits::default()
        },
    );
    assert!(capped.truncated);
    assert_eq!(capped.text.chars().count(), 40);
    // A deadline already past: nothing runs.
    let late = extract(
        &image,
        &Limits {
            deadline: Some(std::time::Instant::now()),
            ..Limits::default()
        },
    );
    assert_eq!(late.failure.as_deref(), Some("time budget exceeded"));
}

#[test]
fn what_tesseract_cannot_read_fails_without_text() {
    if !ocr_here() {
        return;
    }
    // A PNG signature over garbage: tesseract refuses it.
    let mut bad = b"\x89PNG\r\n\x1a\n".to_vec();
    bad.extend(inlet_extract_testkit::noise(2000, 7));
    let o = extract(&bad, &Limits::default());
    assert_eq!(o.format, Some("png"));
    assert!(o.text.trim().is_empty(), "{}", o.text);
    assert!(o.failure.is_some());
}

#[test]
fn scanned_pdf_pages_are_read_by_ocr() {
    if !ocr_here() {
        return;
    }
    // CCITT Group 4: the PDF extractor wraps the fax data in a TIFF for OCR.
    let o = extract(&data("ccitt.pdf"), &Limits::default());
    assert_eq!(o.format, Some("pdf"));
    assert_eq!(o.failure, None);
    let reference = String::from_utf8(data("linn.txt")).unwrap();
    let acc = accuracy(&o.text, &reference);
    println!("ccitt.pdf character accuracy {acc:.3}");
    assert!(acc >= 0.90, "accuracy {acc:.3}:\n{}", o.text);
    // JPEG (DCT) scans.
    let o = extract(&data("c03-29.pdf"), &Limits::default());
    for phrase in ["Miss Watson", "fish-line", "every day"] {
        assert!(o.text.contains(phrase), "{phrase}: {}", o.text);
    }
    let o = extract(&data("francais.pdf"), &Limits::default());
    for word in ["whisky", "juge", "blond"] {
        assert!(o.text.contains(word), "{word}: {}", o.text);
    }
}

#[test]
fn pdf_ocr_stops_at_the_deadline_keeping_what_was_read() {
    if !ocr_here() {
        return;
    }
    // A deadline that passes while OCR reads the page (the PDF itself opens in milliseconds, the
    // CCITT page takes seconds): the process is stopped and the PDF is kept, reported cut, not a
    // failure of the whole file.
    let o = extract(
        &data("ccitt.pdf"),
        &Limits {
            deadline: Some(std::time::Instant::now() + std::time::Duration::from_millis(500)),
            ..Limits::default()
        },
    );
    assert_eq!(o.format, Some("pdf"));
    assert!(o.truncated, "{o:?}");
    assert_eq!(o.failure, None);
}
