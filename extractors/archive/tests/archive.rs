//! The archive extractors through the registry, as the server runs them: real archives from
//! Go's archive/zip and archive/tar test suites (tests/data/MANIFEST.tsv), archives of real
//! documents from the shared corpus (built at test time), and hostile archives.

use std::{io::Write, path::Path};

use inlet_core::extract::Limits;
use inlet_extract_testkit::{self as kit, CORPUS};
use inlet_extractors::{Outcome, extract};

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn read(name: &str) -> Outcome {
    extract(&data(name), &Limits::default())
}

fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, name, *bytes).unwrap();
    }
    builder.into_inner().unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[test]
fn zips_from_gos_test_suite() {
    let test = read("test.zip");
    assert_eq!(test.format, Some("zip"));
    assert!(
        test.text.contains("test.txt\nThis is a test text file."),
        "{}",
        test.text
    );
    // The PNG beside it adds its name only.
    assert!(test.text.contains("gophercolor16x16.png"), "{}", test.text);
    assert_eq!(test.failure, None);
    for name in ["winxp.zip", "unix.zip"] {
        let o = read(name);
        for line in ["hello\nfoo bar", "dir/bar\nfoo bar", "readonly\nimportant"] {
            let (path, body) = line.split_once('\n').unwrap();
            assert!(o.text.contains(path), "{name}: {}", o.text);
            assert!(
                o.text.contains(body.split(' ').next().unwrap()),
                "{name}: {}",
                o.text
            );
        }
    }
    assert!(read("readme.zip").text.contains("golang.org"));
    assert!(
        read("zip64.zip")
            .text
            .contains("This small file is in ZIP64 format.")
    );
    assert!(read("dd.zip").text.contains("This is a test textfile."));
    let crc = read("crc32-not-streamed.zip").text;
    assert!(crc.contains("foo.txt") && crc.contains("bar.txt"), "{crc}");
    // A ZIP after a prefix or before trailing junk is still read.
    assert!(
        read("test-trailing-junk.zip")
            .text
            .contains("This is a test text file.")
    );
    // Directories alone give no text; names in UTF-8 are kept.
    assert_eq!(read("subdir.zip").text.trim(), "a/b/c");
    assert!(read("utf8-infozip.zip").text.contains("世界"));
}

#[test]
fn tars_from_gos_test_suite() {
    for name in [
        "gnu.tar",
        "ustar.tar",
        "v7.tar",
        "star.tar",
        "pax.tar",
        "writer.tar",
    ] {
        let o = read(name);
        assert_eq!(o.format, Some("tar"), "{name}");
        assert_eq!(o.failure, None, "{name}: {o:?}");
    }
    for name in ["gnu.tar", "v7.tar", "star.tar", "writer.tar"] {
        let text = read(name).text;
        assert!(text.contains("small.txt\nKilts"), "{name}: {text}");
        assert!(text.contains("small2.txt\nGoogle.com"), "{name}: {text}");
    }
    assert!(read("ustar.tar").text.contains("longname/longname/"));
    // Long pax names are kept whole.
    assert!(
        read("pax.tar")
            .text
            .contains("a/123456789101112131415161718192021")
    );
}

#[test]
fn damaged_tars_keep_what_was_read_and_never_fail_hard() {
    for name in [
        "neg-size.tar",
        "issue10968.tar",
        "issue11169.tar",
        "issue12435.tar",
        "pax-bad-hdr-file.tar",
        "gnu-utf8.tar",
    ] {
        let o = kit::survives(name, 5.0, || read(name));
        if let Some(f) = &o.failure {
            assert!(
                f.starts_with("malformed input") || f == "unrecognized format",
                "{name}: {f}"
            );
        }
    }
}

/// Real documents from the corpus, zipped, tarred and gzipped at test time: each member's text
/// is found with the recall its own extractor has against Tika's text.
#[test]
fn archives_of_real_documents_hold_their_text() {
    let corpus = Path::new(CORPUS);
    let picks = ["docx", "pdf", "odt", "pptx", "doc"];
    let mut files: Vec<(String, Vec<u8>, String)> = Vec::new();
    for folder in picks {
        let doc = kit::documents(folder)
            .into_iter()
            .find(|p| kit::oracle(p).is_some())
            .unwrap_or_else(|| panic!("no {folder} with an oracle in {}", corpus.display()));
        let name = format!("{folder}/{}", doc.file_name().unwrap().to_string_lossy());
        files.push((
            name,
            std::fs::read(&doc).unwrap(),
            kit::oracle(&doc).unwrap(),
        ));
    }
    let members: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b, _)| (n.as_str(), b.as_slice()))
        .collect();
    let expected: String = files
        .iter()
        .map(|(_, _, t)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let alone: String = files
        .iter()
        .map(|(_, b, _)| extract(b, &Limits::default()).text)
        .collect::<Vec<_>>()
        .join("\n");
    let zip = kit::zip_of(&members);
    let tar = tar_of(&members);
    for (kind, bytes, format) in [
        ("zip", zip, "zip"),
        ("tar", tar.clone(), "tar"),
        ("tar.gz", gzip(&tar), "gzip"),
    ] {
        let o = extract(&bytes, &Limits::default());
        assert_eq!(o.format, Some(format), "{kind}");
        for (name, _, _) in &files {
            assert!(o.text.contains(name.as_str()), "{kind}: heading {name}");
        }
        let ours = kit::recall(&o.text, &expected);
        let theirs = kit::recall(&alone, &expected);
        assert!(
            ours >= theirs - 0.001,
            "{kind}: recall {ours:.3} < {theirs:.3} of the members alone"
        );
        assert!(ours >= 0.95, "{kind}: recall {ours:.3} against Tika");
    }
    // A bare .gz of one document is that document.
    let (name, bytes, want) = &files[0];
    let o = extract(&gzip(bytes), &Limits::default());
    assert_eq!(o.format, Some("gzip"), "{name}");
    assert!(kit::recall(&o.text, want) >= 0.95, "{name}");
}

#[test]
fn packages_stay_with_their_extractors() {
    // An Office package is a ZIP too: its own extractor scores higher.
    for folder in ["docx", "xlsx", "pptx", "odt", "epub"] {
        for doc in kit::documents(folder).into_iter().take(3) {
            let bytes = std::fs::read(&doc).unwrap();
            let detected = kit::detect(&bytes);
            assert_ne!(detected, Some("zip"), "{}", doc.display());
        }
    }
}

#[test]
fn bombs_and_quines_stop_at_the_limits_and_say_so() {
    // 64 MiB of zeros compresses to ~64 KiB; with a 1 MiB budget the archive is cut.
    let zeros = vec![0u8; 64 << 20];
    let bomb = kit::zip_of(&[
        ("note.txt", b"before the bomb".as_slice()),
        ("zeros.txt", &zeros),
    ]);
    let limits = Limits {
        max_decompressed_bytes: 1 << 20,
        ..Limits::default()
    };
    let o = kit::survives("zip bomb", 10.0, || extract(&bomb, &limits));
    assert!(o.truncated, "{o:?}");
    assert_eq!(o.failure, None);
    assert!(o.text.contains("before the bomb"));
    let gz = gzip(&zeros);
    let o = kit::survives("gzip bomb", 10.0, || extract(&gz, &limits));
    assert!(o.truncated && o.failure.is_none(), "{:?}", o.failure);

    // Nested archives share one budget: ten levels of zips in zips stop at the nesting bound
    // and never decompress more than the budget.
    let mut nested = kit::zip_of(&[("leaf.txt", b"deepest words".as_slice())]);
    for level in 0..10 {
        nested = kit::zip_of(&[(&format!("level{level}.zip"), nested.as_slice())]);
    }
    let o = kit::survives("nested zips", 10.0, || extract(&nested, &Limits::default()));
    assert_eq!(o.failure, None);
    assert!(
        !o.text.contains("deepest words"),
        "followed past the nesting bound"
    );

    // Many members: the entry cap cuts the archive.
    let many: Vec<(String, Vec<u8>)> = (0..inlet_extract_archive::MAX_ENTRIES + 5)
        .map(|i| (format!("f{i}.txt"), format!("word{i}").into_bytes()))
        .collect();
    let refs: Vec<(&str, &[u8])> = many
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let tar = tar_of(&refs);
    let o = kit::survives("many members", 30.0, || extract(&tar, &Limits::default()));
    assert!(o.truncated, "entry cap");
    assert!(o.text.contains("word9999") && !o.text.contains("word10000"));
}

#[test]
fn hostile_archives_never_panic_or_hang() {
    let tar = data("gnu.tar");
    let zip = data("test.zip");
    let gz = gzip(&tar);
    for bytes in [&tar, &zip, &gz] {
        for cut in kit::truncations(bytes) {
            kit::survives("truncated archive", 5.0, || {
                extract(cut, &Limits::default())
            });
        }
    }
    for seed in 0..50 {
        let mut noisy = zip.clone();
        let noise = kit::noise(noisy.len(), seed);
        for (i, b) in noise.iter().enumerate().skip(30) {
            if i % 7 == 0 {
                noisy[i] ^= b;
            }
        }
        kit::survives("noisy zip", 5.0, || extract(&noisy, &Limits::default()));
    }
}

#[test]
fn configured_limits_cut_the_output() {
    let members: Vec<(String, Vec<u8>)> = (0..50)
        .map(|i| {
            (
                format!("f{i}.txt"),
                format!("some words in file {i}\n").repeat(20).into_bytes(),
            )
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    kit::check_output_cap("tar", &tar_of(&refs), 300);
}
