//! Peak memory on a generated 100 MB PDF (ignored; meant for release builds):
//! `cargo test --release -p inlet-extract-pdf huge_pdf -- --ignored --nocapture`.
//! The file is written next to the build output (`target/huge-test.pdf`) so that it can also be
//! measured from outside: `/usr/bin/time -v target/release/examples/pdftext target/huge-test.pdf`.

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::{Path, PathBuf},
    time::Instant,
};

use inlet_core::extract::Limits;
use inlet_extract_testkit::noise;

use crate::testutil::{deflate, run_with};

/// Size of the generated file.
const TARGET_BYTES: usize = 100 << 20;

/// Pages in the generated file; each has a compressed text stream and an image.
const PAGES: usize = 2_000;

/// Writes a PDF of about [`TARGET_BYTES`]: [`PAGES`] pages, each with about 1,500 characters of
/// compressed text and an incompressible image XObject that makes up the bulk, like a scanned
/// book with a text layer. Memory use while writing is one page.
pub(crate) fn write_huge_pdf(path: &Path) -> std::io::Result<u64> {
    let mut out = BufWriter::new(File::create(path)?);
    let mut pos: u64 = 0;
    let mut offsets: Vec<u64> = Vec::new();
    let put = |out: &mut BufWriter<File>, bytes: &[u8], pos: &mut u64| -> std::io::Result<()> {
        out.write_all(bytes)?;
        *pos += bytes.len() as u64;
        Ok(())
    };
    put(&mut out, b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", &mut pos)?;
    // Objects: 1 catalog, 2 pages, 3 font, then per page i: page, content, image.
    let obj = |n: usize, body: &[u8]| {
        let mut v = format!("{n} 0 obj\n").into_bytes();
        v.extend_from_slice(body);
        v.extend_from_slice(b"\nendobj\n");
        v
    };
    let kids: Vec<String> = (0..PAGES).map(|i| format!("{} 0 R", 4 + i * 3)).collect();
    let fixed = [
        obj(1, b"<< /Type /Catalog /Pages 2 0 R >>"),
        obj(
            2,
            format!(
                "<< /Type /Pages /Count {PAGES} /Kids [{}] >>",
                kids.join(" ")
            )
            .as_bytes(),
        ),
        obj(
            3,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        ),
    ];
    for (i, body) in fixed.iter().enumerate() {
        offsets.push(pos);
        let _ = i;
        put(&mut out, body, &mut pos)?;
    }
    let image_len = TARGET_BYTES / PAGES;
    for p in 0..PAGES {
        let page = 4 + p * 3;
        let mut content = b"BT /F1 10 Tf 12 TL 72 750 Td ".to_vec();
        for line in 0..25 {
            content.extend_from_slice(
                format!("(Page {p} line {line}: the quick brown fox jumps over a lazy dog.) '\n")
                    .as_bytes(),
            );
        }
        content.extend_from_slice(b"ET q 200 0 0 200 72 72 cm /Im1 Do Q");
        let content = deflate(&content);
        let bodies = [
            obj(
                page,
                format!(
                    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {} 0 R \
                     /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 {} 0 R >> >> >>",
                    page + 1,
                    page + 2
                )
                .as_bytes(),
            ),
            {
                let mut s = format!(
                    "<< /Filter /FlateDecode /Length {} >>\nstream\n",
                    content.len()
                )
                .into_bytes();
                s.extend_from_slice(&content);
                s.extend_from_slice(b"\nendstream");
                obj(page + 1, &s)
            },
            {
                let mut s = format!(
                    "<< /Type /XObject /Subtype /Image /Width 1000 /Height {} /ColorSpace \
                     /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode /Length {image_len} >>\nstream\n",
                    image_len / 1000
                )
                .into_bytes();
                s.extend_from_slice(&noise(image_len, p as u64 + 1));
                s.extend_from_slice(b"\nendstream");
                obj(page + 2, &s)
            },
        ];
        for body in bodies {
            offsets.push(pos);
            put(&mut out, &body, &mut pos)?;
        }
    }
    let xref = pos;
    let mut tail = format!("xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1);
    for off in &offsets {
        tail.push_str(&format!("{off:010} 00000 n \n"));
    }
    tail.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        offsets.len() + 1
    ));
    put(&mut out, tail.as_bytes(), &mut pos)?;
    out.flush()?;
    Ok(pos)
}

/// Writes a one-page PDF of about [`TARGET_BYTES`] whose single content stream is a
/// Flate-compressed run of text operators (random letters, so it compresses only about 1.6×):
/// the case where decoding a whole stream before interpreting it would cost memory.
pub(crate) fn write_one_huge_stream_pdf(path: &Path) -> std::io::Result<u64> {
    struct Counting<W: Write> {
        inner: W,
        written: u64,
    }
    impl<W: Write> Write for Counting<W> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = self.inner.write(buf)?;
            self.written += n as u64;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.inner.flush()
        }
    }
    let mut out = Counting {
        inner: BufWriter::new(File::create(path)?),
        written: 0,
    };
    let mut offsets = Vec::new();
    out.write_all(b"%PDF-1.7\n")?;
    for body in [
        &b"<< /Type /Catalog /Pages 2 0 R >>"[..],
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 << /Type /Font \
          /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
    ] {
        offsets.push(out.written);
        writeln!(out, "{} 0 obj", offsets.len())?;
        out.write_all(body)?;
        out.write_all(b"\nendobj\n")?;
    }
    offsets.push(out.written);
    out.write_all(b"4 0 obj\n<< /Filter /FlateDecode /Length 5 0 R >>\nstream\n")?;
    let start = out.written;
    let mut z = flate2::write::ZlibEncoder::new(&mut out, flate2::Compression::fast());
    z.write_all(b"BT /F1 10 Tf 12 TL 72 750 Td\n")?;
    let mut seed = 7u64;
    let mut line = Vec::with_capacity(128);
    while z.total_out() < TARGET_BYTES as u64 {
        for chunk in noise(60 * 1024, seed).chunks(60) {
            line.clear();
            line.push(b'(');
            line.extend(
                chunk
                    .iter()
                    .map(|b| if b % 7 == 0 { b' ' } else { b'a' + b % 26 }),
            );
            line.extend_from_slice(b") '\n");
            z.write_all(&line)?;
        }
        seed += 1;
    }
    z.write_all(b"ET")?;
    z.finish()?;
    let length = out.written - start;
    out.write_all(b"\nendstream\nendobj\n")?;
    offsets.push(out.written);
    write!(out, "5 0 obj\n{length}\nendobj\n")?;
    let xref = out.written;
    write!(out, "xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1)?;
    for off in &offsets {
        writeln!(out, "{off:010} 00000 n ")?;
    }
    write!(
        out,
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        offsets.len() + 1
    )?;
    out.flush()?;
    Ok(out.written)
}

/// Peak resident memory of this process so far, in bytes (Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Extracts the file at `path` with default limits and checks peak memory against its size.
fn measure(path: &Path, size: u64, expect: &str) {
    let bytes = std::fs::read(path).unwrap();
    let start = Instant::now();
    let (r, text) = run_with(&bytes, &Limits::default());
    let elapsed = start.elapsed();
    let peak = peak_rss().unwrap_or(0);
    println!(
        "{}: {size} bytes, result {r:?}, {} chars in {elapsed:?}; peak RSS {} MiB, {:.2}× the file",
        path.display(),
        text.chars().count(),
        peak >> 20,
        peak as f64 / size as f64
    );
    assert!(text.contains(expect), "{:?}", &text[..text.len().min(200)]);
    assert!(peak < 4 * size, "peak {peak} for a {size}-byte file");
}

fn target_file(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")).join(name)
}

#[test]
#[ignore = "writes 100 MB; run in release"]
fn huge_pdf_peak_memory_stays_under_four_times_the_file() {
    let path = target_file("huge-test.pdf");
    let size = write_huge_pdf(&path).unwrap();
    measure(&path, size, "Page 0 line 0: the quick brown fox");
}

#[test]
#[ignore = "writes 100 MB; run in release"]
fn huge_content_stream_peak_memory_stays_under_four_times_the_file() {
    let path = target_file("huge-stream-test.pdf");
    let size = write_one_huge_stream_pdf(&path).unwrap();
    measure(&path, size, " ");
}
