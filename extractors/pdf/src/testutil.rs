//! Helpers shared by the unit tests: a small PDF writer and the PDF-specific runners (the
//! generic ones, `noise` and the rest are `inlet-extract-testkit`'s).

use std::io::Write;

use inlet_core::extract::{ExtractError, Limits};

/// Writes a PDF whose object `i + 1` has body `objects[i]` (object 1 must be the catalog), with
/// a correct cross-reference table.
pub(crate) fn build_pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        writeln!(out, "{} 0 obj", i + 1).unwrap();
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    write!(out, "xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).unwrap();
    for off in offsets {
        writeln!(out, "{off:010} 00000 n ").unwrap();
    }
    write!(
        out,
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    )
    .unwrap();
    out
}

/// A stream object body with `dict` entries (without `/Length`) and `data`.
pub(crate) fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}

/// zlib-compresses `data`.
pub(crate) fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A one-page PDF showing `content` with Helvetica (WinAnsi) as `/F1`; extra objects from 5 on.
pub(crate) fn one_page(content: &[u8], extra: &[Vec<u8>]) -> Vec<u8> {
    one_page_with("", content, extra)
}

/// [`one_page`] with extra content stream dictionary entries (e.g. a filter).
pub(crate) fn one_page_with(content_dict: &str, content: &[u8], extra: &[Vec<u8>]) -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
          /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica \
          /Encoding /WinAnsiEncoding >> >> /XObject << /X1 5 0 R >> >> >>"
            .to_vec(),
        stream(content_dict, content),
    ];
    objects.extend_from_slice(extra);
    build_pdf(&objects)
}

/// Runs the registered `pdf` extractor under `limits`: the result and the text.
pub(crate) fn run_with(bytes: &[u8], limits: &Limits) -> (Result<(), ExtractError>, String) {
    inlet_extract_testkit::run_with("pdf", bytes, limits)
}

/// Runs the registered `pdf` extractor with default limits: the result and the text.
pub(crate) fn run(bytes: &[u8]) -> (Result<(), ExtractError>, String) {
    inlet_extract_testkit::run_with("pdf", bytes, &Limits::default())
}

/// Default limits but for the decompression cap.
pub(crate) fn with_cap(max_decompressed_bytes: u64) -> Limits {
    Limits {
        max_decompressed_bytes,
        ..Limits::default()
    }
}
