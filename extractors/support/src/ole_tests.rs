//! Tests of `ole.rs` (a child module of it, so they read its private items).

use super::*;
use inlet_extract_testkit::{noise, truncations};

/// Real presentations from other projects' test suites (extractors/testdata/MANIFEST.tsv).
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

/// A sink whose (empty) nested extractor reads pictures, so bitmaps are collected.
fn sink() -> TextSink {
    fn reads_nothing(_: &[u8], _: &mut TextSink) -> Result<(), ExtractError> {
        Ok(())
    }
    TextSink::new(&inlet_core::extract::Limits::default())
        .with_nested(reads_nothing)
        .with_pictures(|| true)
}

/// An OfficeArt record: version 0, `instance`, `typ`, then `body`.
fn art(instance: u16, typ: u16, body: &[u8]) -> Vec<u8> {
    let mut out = (instance << 4).to_le_bytes().to_vec();
    out.extend_from_slice(&typ.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// A BLIP record of `typ` holding `picture` after its one or two ids and tag byte.
fn blip(instance: u16, typ: u16, picture: &[u8]) -> Vec<u8> {
    let ids = if instance & 1 == 1 { 32 } else { 16 };
    let mut body = vec![7u8; ids];
    body.push(0xFF);
    body.extend_from_slice(picture);
    art(instance, typ, &body)
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\npixels";
const JPEG: &[u8] = b"\xFF\xD8\xFF\xE0pixels";

#[test]
fn pictures_are_found_in_blip_records_and_picture_stores() {
    // PowerPoint's Pictures stream: records end to end; a metafile is skipped.
    let stream = [
        blip(0x6E0, BLIP_PNG, PNG),
        art(0x3D4, 0xF01A, b"emf bytes"),
        blip(0x46B, BLIP_JPEG, JPEG),
    ]
    .concat();
    let found = blip_pictures(&stream, &mut sink());
    assert_eq!(found, vec![("png", PNG.to_vec()), ("jpg", JPEG.to_vec())]);
    // Without a reader (no OCR) bitmaps are not even copied out.
    let mut unread = TextSink::new(&inlet_core::extract::Limits::default());
    assert!(blip_pictures(&stream, &mut unread).is_empty());
    // Excel's drawing group: the store's FBSE entries (36 bytes and a name) hold them.
    let mut fbse = vec![0u8; FBSE_FIXED];
    fbse[FBSE_FIXED - 3] = 4;
    fbse.extend_from_slice(b"n\0a\0");
    fbse.extend_from_slice(&blip(0x6E4, BLIP_TIFF, b"II*\0strips"));
    let group = art(
        0,
        DGG_CONTAINER,
        &art(2, BSTORE_CONTAINER, &art(5, FBSE, &fbse)),
    );
    assert_eq!(
        blip_pictures(&group, &mut sink()),
        vec![("tif", b"II*\0strips".to_vec())]
    );
    // A body that is not the format its record names is no picture.
    assert!(blip_pictures(&blip(0x6E0, BLIP_PNG, JPEG), &mut sink()).is_empty());
    // Word's Data stream: records among other bytes, at any offset.
    let data = [
        b"PICF header and more".to_vec(),
        blip(0x6E2, BLIP_JPEG, JPEG),
        vec![0; 7],
        blip(0x6E1, BLIP_PNG, PNG),
    ]
    .concat();
    assert_eq!(
        scan_blips(&data, &mut sink()),
        vec![("jpg", JPEG.to_vec()), ("png", PNG.to_vec())]
    );
    for cut in truncations(&data) {
        assert!(scan_blips(cut, &mut sink()).len() <= 2);
        assert!(blip_pictures(cut, &mut sink()).len() <= 2);
    }
    for seed in 1..50 {
        let bytes = noise(4096, seed);
        assert!(blip_pictures(&bytes, &mut sink()).is_empty());
        assert!(scan_blips(&bytes, &mut sink()).is_empty());
    }
}

#[test]
fn metafile_pictures_are_inflated_and_give_their_text() {
    use std::io::Write as _;
    // POI's vector_image.emf in a BLIP record, as PowerPoint stores it: zlib-compressed
    // after the metafile header (its size, bounds, then the compressed size and method).
    let emf = std::fs::read(format!("{TESTDATA}/emf/vector_image.emf")).unwrap();
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&emf).unwrap();
    let packed = z.finish().unwrap();
    let record = |data: &[u8], compression: u8| {
        let mut body = vec![3u8; 16];
        body.extend_from_slice(&(emf.len() as u32).to_le_bytes());
        body.extend_from_slice(&[0; 24]);
        body.extend_from_slice(&(data.len() as u32).to_le_bytes());
        body.extend_from_slice(&[compression, 0xFE]);
        body.extend_from_slice(data);
        art(0x3D4, BLIP_EMF, &body)
    };
    let stream = [record(&packed, METAFILE_DEFLATE), record(&emf, 0xFE)].concat();
    assert_eq!(
        blip_pictures(&stream, &mut sink()),
        vec![("emf", emf.clone()), ("emf", emf.clone())]
    );
    assert_eq!(
        scan_blips(&[&[0, 1, 2][..], &stream].concat(), &mut sink()).len(),
        2
    );
    // Written once, under its name, as the lines it draws.
    let mut written = sink();
    let pictures = blip_pictures(&stream, &mut written);
    write_pictures(pictures, &mut written).unwrap();
    let text = written.into_text();
    assert!(
        text.starts_with("image1.emf\nAnalyse\nBehaviour and\n"),
        "{text}"
    );
    assert!(!text.contains("image2.emf"), "{text}");
    // Compressed data cut short gives what inflates before the cut, at most.
    let mut bad = packed.clone();
    bad.truncate(packed.len() / 2);
    for (_, bytes) in blip_pictures(&record(&bad, METAFILE_DEFLATE), &mut sink()) {
        assert!(emf.starts_with(&bytes) && bytes.len() < emf.len());
    }
}

#[test]
fn metafile_inflation_is_charged_and_pictures_are_capped() {
    use std::io::Write as _;
    // A 1 MiB metafile that deflates to a few KiB, 200 times: each inflation counts against
    // the input's decompression total, and collection stops at MAX_PICTURES.
    let mut emf = std::fs::read(format!("{TESTDATA}/emf/vector_image.emf")).unwrap();
    emf.resize(1 << 20, 0);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&emf).unwrap();
    let packed = z.finish().unwrap();
    let mut body = vec![3u8; 16];
    body.extend_from_slice(&(emf.len() as u32).to_le_bytes());
    body.extend_from_slice(&[0; 24]);
    body.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    body.extend_from_slice(&[METAFILE_DEFLATE, 0xFE]);
    body.extend_from_slice(&packed);
    let record = art(0x3D4, BLIP_EMF, &body);
    let stream = record.repeat(200);
    let mut small = TextSink::new(&inlet_core::extract::Limits {
        max_decompressed_bytes: 5 << 20,
        ..inlet_core::extract::Limits::default()
    });
    let found = blip_pictures(&stream, &mut small);
    assert_eq!(found.len(), 5, "five fit in 5 MiB");
    assert_eq!(small.decompressed_room(), 0);
    let mut roomy = sink();
    assert_eq!(blip_pictures(&stream, &mut roomy).len(), MAX_PICTURES);
    assert_eq!(scan_blips(&stream, &mut sink()).len(), MAX_PICTURES);
}

#[test]
fn a_device_independent_bitmap_becomes_a_bmp_file() {
    // A 2×1 8-bit DIB with a 256-colour table: pixels after 14 + 40 + 1,024 bytes.
    let mut dib = vec![0u8; 40];
    dib[0] = 40;
    dib[4] = 2;
    dib[8] = 1;
    dib[12] = 1;
    dib[14] = 8;
    dib.extend_from_slice(&[0; 1024 + 4]);
    let found = blip_pictures(&blip(0x7A8, BLIP_DIB, &dib), &mut sink());
    let [(ending, file)] = &found[..] else {
        panic!("{found:?}");
    };
    assert_eq!(*ending, "bmp");
    assert_eq!(&file[..2], b"BM");
    assert_eq!(u32_le(file, 2), Some(14 + dib.len() as u32));
    assert_eq!(u32_le(file, 10), Some(14 + 40 + 1024));
    assert_eq!(&file[14..], &dib[..]);
    assert!(bmp_file(&dib[..30]).is_none());
    assert!(bmp_file(&[0xFF; 64]).is_none());
}

fn streams(path: &str) -> (Vec<u8>, Vec<u8>) {
    let bytes = std::fs::read(format!("{TESTDATA}/{path}")).unwrap();
    let mut file = cfb::CompoundFile::open(Cursor::new(bytes.as_slice())).unwrap();
    let mut budget = u64::MAX;
    (
        read_stream(&mut file, SUMMARY_INFORMATION, &mut budget).unwrap(),
        read_stream(&mut file, DOCUMENT_SUMMARY_INFORMATION, &mut budget).unwrap(),
    )
}

#[test]
fn summary_of_a_real_presentation() {
    // Checked with python olefile 0.47 (getproperties, convert_time): code page 10008
    // (Mac Simplified Chinese) in SummaryInformation, its title's bytes GB2312 for
    // "PowerPoint 演示文稿", times 2018-08-17 05:37:26.442 and 05:47:32.073 UTC; slide
    // count 1 in DocumentSummaryInformation (code page 65001 there).
    let (summary, document) = streams("ppt/mimetype.ppt");
    assert_eq!(
        Summary::parse(&summary, &document),
        Summary {
            title: Some("PowerPoint 演示文稿".into()),
            author: Some("Microsoft Office User".into()),
            created: Some("2018-08-17T05:37:26Z".into()),
            modified: Some("2018-08-17T05:47:32Z".into()),
            pages: None,
            slides: Some(1),
        }
    );
    // The streams swapped: each section is read only under its own FMTID.
    assert_eq!(Summary::parse(&document, &summary), Summary::default());
}

#[test]
fn damaged_property_sets_yield_less_and_never_panic() {
    let (summary, document) = streams("ppt/mimetype.ppt");
    for stream in [&summary, &document] {
        let full = property_set(stream, &FMTID_SUMMARY).len()
            + property_set(stream, &FMTID_DOCUMENT_SUMMARY).len();
        assert!(full > 0);
        for cut in truncations(stream) {
            let n = property_set(cut, &FMTID_SUMMARY).len()
                + property_set(cut, &FMTID_DOCUMENT_SUMMARY).len();
            assert!(n <= full, "{} bytes", cut.len());
        }
        // Shorter than the header and the first section's offset: nothing.
        assert!(property_set(&stream[..47], &FMTID_SUMMARY).is_empty());
        assert!(property_set(&stream[..47], &FMTID_DOCUMENT_SUMMARY).is_empty());
    }
    for seed in 1..200 {
        let garbage = noise(600, seed);
        assert!(property_set(&garbage, &FMTID_SUMMARY).is_empty());
        assert_eq!(Summary::parse(&garbage, &garbage), Summary::default());
    }
    assert_eq!(Summary::parse(&[], &[]), Summary::default());
}

/// A stream with the summary FMTID whose section is `section`, its size set.
fn with_section(section: &[u8]) -> Vec<u8> {
    let mut s = vec![0xFE, 0xFF, 0, 0, 0, 0, 0, 0];
    s.extend_from_slice(&[0; 16]);
    s.extend_from_slice(&1u32.to_le_bytes());
    s.extend_from_slice(&FMTID_SUMMARY);
    s.extend_from_slice(&48u32.to_le_bytes());
    s.extend_from_slice(&u32::try_from(section.len()).unwrap().to_le_bytes());
    s.extend_from_slice(&section[4..]);
    s
}

#[test]
fn hostile_offsets_counts_and_lengths_are_refused() {
    let le = |n: u32| n.to_le_bytes();
    // A count of 4 billion properties in 24 bytes, offsets past the end, a string
    // claiming 4 GiB, a FILETIME of zero: nothing read, nothing allocated for them.
    let mut section = Vec::new();
    for word in [0, u32::MAX, PIDSI_TITLE, 0xFFFF_FFF0, PIDSI_AUTHOR, 24] {
        section.extend_from_slice(&le(word));
    }
    assert!(property_set(&with_section(&section), &FMTID_SUMMARY).is_empty());
    section.extend_from_slice(&le(u32::from(VT_LPSTR)));
    section.extend_from_slice(&le(u32::MAX));
    assert!(property_set(&with_section(&section), &FMTID_SUMMARY).is_empty());
    let mut section = Vec::new();
    for word in [0, 1, PIDSI_CREATE_DTM, 16, u32::from(VT_FILETIME), 0, 0] {
        section.extend_from_slice(&le(word));
    }
    assert!(property_set(&with_section(&section), &FMTID_SUMMARY).is_empty());
    // A long string is cut to what `keep` would keep anyway.
    let mut section = Vec::new();
    for word in [0, 1, PIDSI_TITLE, 16, u32::from(VT_LPSTR), 100_000] {
        section.extend_from_slice(&le(word));
    }
    section.extend(std::iter::repeat_n(b'a', 100_000));
    let title = Summary::parse(&with_section(&section), &[]).title.unwrap();
    assert_eq!(title.len(), MAX_STRING_BYTES);
}

#[test]
fn filetimes_become_rfc_3339_utc() {
    // 2020-02-03T04:05:06Z, as msg's test writes it.
    let ticks = (1_580_702_706u64 + 11_644_473_600) * 10_000_000 + 4_420_000;
    assert_eq!(filetime(ticks).as_deref(), Some("2020-02-03T04:05:06Z"));
    assert_eq!(filetime(0), None);
    assert_eq!(filetime(u64::MAX), None);
}

/// A Packager stream wrapping `data` as `label`, laid out as Office writes it.
fn packager(label: &str, data: &[u8]) -> Vec<u8> {
    let temp = format!("C:\\Temp\\{label}\0");
    let body = [
        &[2u8, 0][..],
        label.as_bytes(),
        b"\0",
        format!("C:\\{label}\0").as_bytes(),
        &[0, 0, 3, 0],
        &(temp.len() as u32).to_le_bytes(),
        temp.as_bytes(),
        &(data.len() as u32).to_le_bytes(),
        data,
    ]
    .concat();
    [&(body.len() as u32).to_le_bytes()[..], &body].concat()
}

#[test]
fn embedded_objects_give_the_files_they_hold() {
    use std::io::Write;
    let mut c = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    let stream = |c: &mut cfb::CompoundFile<Cursor<Vec<u8>>>, path: &str, data: &[u8]| {
        c.create_stream(path).unwrap().write_all(data).unwrap();
    };
    for storage in [
        "/MBD1",
        "/MBD2",
        "/MBD3",
        "/MBD4",
        "/MBD4/ObjectPool",
        "/MBD5",
    ] {
        c.create_storage(storage).unwrap();
    }
    stream(&mut c, "/MBD1/Package", b"PK\x03\x04 a docx");
    stream(&mut c, "/MBD1/\x01CompObj", b"ignored");
    stream(
        &mut c,
        "/MBD2/\x01Ole10Native",
        &packager("notes.txt", b"hello"),
    );
    stream(&mut c, "/MBD3/CONTENTS", b"%PDF-1.4");
    stream(&mut c, "/MBD4/WordDocument", b"word");
    c.create_storage("/MBD4/ObjectPool/_1").unwrap();
    stream(&mut c, "/MBD4/ObjectPool/_1/Workbook", b"book");
    stream(&mut c, "/MBD5/\x01CompObj", b"a picture");
    let bytes = c.into_inner().into_inner();
    let mut file = cfb::CompoundFile::open(Cursor::new(bytes.as_slice())).unwrap();
    let mut budget = 1 << 20;
    let mut object =
        |storage: &str, budget: &mut u64| embedded_file(&mut file, storage, budget).unwrap();
    let package = object("MBD1", &mut budget).unwrap();
    assert_eq!(
        (package.name.as_str(), &package.bytes[..]),
        ("MBD1", &b"PK\x03\x04 a docx"[..])
    );
    let packaged = object("MBD2", &mut budget).unwrap();
    assert_eq!(
        (packaged.name.as_str(), &packaged.bytes[..]),
        ("notes.txt", &b"hello"[..])
    );
    assert_eq!(object("MBD3", &mut budget).unwrap().bytes, b"%PDF-1.4");
    assert_eq!(object("MBD5", &mut budget), None);
    // A Word document: the storage, and the objects in it, as a file of its own.
    let before = budget;
    let word = object("MBD4", &mut budget).unwrap();
    assert_eq!(before - budget, 8, "both streams charged");
    let mut inner = cfb::CompoundFile::open(Cursor::new(word.bytes.as_slice())).unwrap();
    let mut all = u64::MAX;
    assert_eq!(
        read_stream(&mut inner, "WordDocument", &mut all).unwrap(),
        b"word"
    );
    assert_eq!(
        read_stream(&mut inner, "ObjectPool/_1/Workbook", &mut all).unwrap(),
        b"book"
    );
    // Over the budget: refused.
    let mut small = 4;
    assert!(matches!(
        embedded_file(&mut file, "MBD1", &mut small),
        Err(ExtractError::LimitExceeded(_))
    ));
}

#[test]
fn packager_streams_not_laid_out_as_expected_hold_the_file_after_their_size() {
    let stream = packager("notes.txt", b"hello");
    assert_eq!(
        ole10_native(&stream),
        (Some("notes.txt".into()), &b"hello"[..])
    );
    // Cut anywhere: the bytes after the size, never a panic.
    for cut in truncations(&stream) {
        let (label, data) = ole10_native(cut);
        if label.is_none() {
            assert_eq!(data, cut.get(4..).unwrap_or_default());
        }
    }
    for seed in 1..200 {
        ole10_native(&noise(64, seed));
    }
    // A data size past the end.
    let mut long = stream.clone();
    let at = long.len() - 9;
    long[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(ole10_native(&long), (None, &long[4..]));
}
