//! `.msg` bodies kept only as compressed RTF (`PR_RTF_COMPRESSED`, MS-OXRTFCP): the real messages
//! of `extractors/testdata/msg` with their plain and HTML bodies taken out (their RTF is the
//! mail client's own: HTML encapsulated in RTF, Word's RTF, RTF made from text, in code pages
//! 1252, 936, 950 and 1251), checked against the plain body written beside it; MS-OXRTFCP's
//! examples; corrupt, truncated and oversized streams.

use std::{
    collections::HashMap,
    fs,
    io::{Cursor, Read},
    path::Path,
};

use inlet_core::extract::{ExtractError, Limits, TextSink};
use inlet_extract_testkit::{documents_in, noise, run_nested, run_with, survives, truncations};

use crate::msg::rtf_body;

// The RTF body is read through the registry: link its extractor.
use inlet_extract_rtf as _;

const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");
const RTF_STREAM: &str = "/__substg1.0_10090102";
/// The plain and HTML body streams a message may have.
const BODIES: [&str; 5] = [
    "/__substg1.0_1000001F",
    "/__substg1.0_1000001E",
    "/__substg1.0_10130102",
    "/__substg1.0_1013001F",
    "/__substg1.0_1013001E",
];

/// MS-OXRTFCP 3.1.1, "Example 1: Simple Compressed RTF".
const SIMPLE: &[u8] = &[
    0x2d, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xf1, 0xc5, 0xc7, 0xa7,
    0x03, 0x00, 0x0a, 0x00, 0x72, 0x63, 0x70, 0x67, 0x31, 0x32, 0x35, 0x42, 0x32, 0x0a, 0xf3, 0x20,
    0x68, 0x65, 0x6c, 0x09, 0x00, 0x20, 0x62, 0x77, 0x05, 0xb0, 0x6c, 0x64, 0x7d, 0x0a, 0x80, 0x0f,
    0xa0,
];
/// MS-OXRTFCP 3.1.2, "Example 2: Reading a Token from the Dictionary that Crosses WritePosition".
const CROSSING: &[u8] = &[
    0x1a, 0x00, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xe2, 0xd4, 0x4b, 0x51,
    0x41, 0x00, 0x04, 0x20, 0x57, 0x58, 0x59, 0x5a, 0x0d, 0x6e, 0x7d, 0x01, 0x0e, 0xb0,
];

fn stream(file: &mut cfb::CompoundFile<Cursor<Vec<u8>>>, path: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    file.open_stream(path).ok()?.read_to_end(&mut out).ok()?;
    Some(out)
}

/// A real message with its plain and HTML bodies removed (only the compressed RTF is left),
/// and the plain body it had.
fn rtf_only(bytes: &[u8]) -> (Vec<u8>, String) {
    let mut file = cfb::CompoundFile::open(Cursor::new(bytes.to_vec())).unwrap();
    assert!(file.is_stream(RTF_STREAM));
    let mut plain = String::new();
    if let Some(data) = stream(&mut file, BODIES[0]) {
        let units = data
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]));
        plain = char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect();
    } else if let Some(data) = stream(&mut file, BODIES[1]) {
        // 8-bit: in the message's code page (PR_MESSAGE_CODEPAGE, else PR_INTERNET_CPID).
        let props = stream(&mut file, "/__properties_version1.0").unwrap_or_default();
        let mut pages = props
            .get(32..)
            .unwrap_or_default()
            .chunks_exact(16)
            .filter_map(|e| {
                let id = u16::from_le_bytes([e[2], e[3]]);
                let page = u16::from_le_bytes([e[8], e[9]]);
                (e[0..2] == [3, 0]).then_some((id, page))
            })
            .collect::<Vec<_>>();
        pages.sort_by_key(|&(id, _)| std::cmp::Reverse(id));
        let encoding = pages
            .iter()
            .find(|(id, _)| *id == 0x3FFD || *id == 0x3FDE)
            .and_then(|&(_, page)| codepage::to_encoding(page))
            .unwrap_or(encoding_rs::WINDOWS_1252);
        plain = encoding.decode_without_bom_handling(&data).0.into_owned();
    }
    for body in BODIES {
        if file.is_stream(body) {
            file.remove_stream(body).unwrap();
        }
    }
    file.flush().unwrap();
    (file.into_inner().into_inner(), plain)
}

/// `text` without the `<http…>` and `<mailto:…>` link targets Outlook writes into plain bodies.
fn without_link_targets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let link = tail.starts_with("<http") || tail.starts_with("<mailto:");
        match tail.find('>') {
            Some(end) if link => rest = &tail[end + 1..],
            _ => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Lower-cased words of at least three letters or digits.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect()
}

fn text_of(bytes: &[u8]) -> String {
    run_nested("msg", bytes).unwrap_or_else(|(e, t)| panic!("{e} after {t:?}"))
}

#[test]
fn a_body_only_in_compressed_rtf_is_read_on_real_messages() {
    // Four messages' RTF is HTML encapsulated in RTF (`\fromhtml1`, `{\*\htmltag …}` groups),
    // outlook_30_msg.msg's Word's RTF (style sheet, themes), cyrillic_message.msg's made from text
    // (`\fromtext`), chinese-traditional.msg's Big5 (`\ansicpg950`); the visible text must
    // match the plain body written from the same message, and no tag, style or the RTF's own
    // words may show.
    let mut checked = 0;
    for path in documents_in(&Path::new(TESTDATA).join("msg")) {
        let (bytes, plain) = rtf_only(&fs::read(&path).unwrap());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let with_rtf = text_of(&bytes);
        // A symbol font's bytes are its characters, not damage (chinese-traditional.msg's
        // bullets are `\'b7` in a `\fcharset2` font inside Big5 text).
        assert!(!with_rtf.contains('\u{FFFD}'), "{name}: {with_rtf}");
        let mut without = bytes.clone();
        {
            let mut file = cfb::CompoundFile::open(Cursor::new(&mut without)).unwrap();
            file.remove_stream(RTF_STREAM).unwrap();
            file.flush().unwrap();
        }
        // Each body word must appear in our text as many times more than in the text without
        // the RTF (headers, attachments) as the plain body holds it.
        let counts = |text: &str| {
            let mut map: HashMap<String, usize> = HashMap::new();
            for w in words(text) {
                *map.entry(w).or_default() += 1;
            }
            map
        };
        // Outlook's plain body writes each link's target after its text (`Sign up
        // <http://bit.ly/Cloud-Trial>`); the HTML the RTF holds keeps it in the link.
        let (ours, without, expected) = (
            counts(&with_rtf),
            counts(&text_of(&without)),
            counts(&without_link_targets(&plain)),
        );
        if expected.is_empty() {
            // msgreader_test.msg: its body is a blank line.
            continue;
        }
        let total: usize = expected.values().sum();
        let mut missed = Vec::new();
        for (w, n) in &expected {
            let have = ours
                .get(w)
                .copied()
                .unwrap_or(0)
                .saturating_sub(without.get(w).copied().unwrap_or(0));
            if have < *n {
                missed.push((w.clone(), n - have));
            }
        }
        let found = total - missed.iter().map(|(_, n)| n).sum::<usize>();
        let recall = found as f64 / total as f64;
        println!("{name}: body recall {recall:.3} ({found}/{total}) missed {missed:?}");
        assert!(
            recall >= 0.95,
            "{name}: {recall:.3}, missed {missed:?}\n{with_rtf}"
        );
        // In the body: the header lines hold addresses in angle brackets (`<paul.hh@…>`).
        let body = with_rtf
            .split_once("\n\n")
            .map_or(with_rtf.as_str(), |(_, body)| body)
            .to_lowercase();
        for leak in [
            "htmltag", "fromhtml", "mso", "<p", "</", "&nbsp", "fonttbl", "arial",
        ] {
            assert!(!body.contains(leak), "{name}: {leak}\n{with_rtf}");
        }
        checked += 1;
    }
    assert!(checked >= 6, "{checked}");
}

#[test]
fn top_level_email_reads_its_rtf_body_in_place() {
    // The body of `Top level email.msg` and of its attached message, from RTF alone.
    let (bytes, _) = rtf_only(&fs::read(format!("{TESTDATA}/msg/top_level_email.msg")).unwrap());
    let t = text_of(&bytes);
    assert!(
        t.starts_with(
            "Subject: Top level email\n\
             To: someone1@gmail.com, someone2@gmail.com\n\
             Cc: ccsomeoneelse1@gmail.com, ccsomeoneelse2@gmail.com\n\
             Date: 2020-03-26T12:25:31Z\n"
        ),
        "{t}"
    );
    let body = t.split("Date: 2020-03-26T12:25:31Z\n").nth(1).unwrap();
    assert!(body.trim_start().starts_with("Top level email text"), "{t}");
}

#[test]
fn the_specification_examples_decompress() {
    let mut sink = TextSink::new(&Limits::default());
    assert_eq!(
        rtf_body(SIMPLE, &mut sink).unwrap().unwrap(),
        b"{\\rtf1\\ansi\\ansicpg1252\\pard hello world}\r\n"
    );
    assert_eq!(
        rtf_body(CROSSING, &mut sink).unwrap().unwrap(),
        b"{\\rtf1 WXYZWXYZWXYZWXYZWXYZ}"
    );
    // An uncompressed ("MELA") stream is its RTF after the header.
    let mut mela = Vec::new();
    let rtf = b"{\\rtf1 plain words}";
    mela.extend((rtf.len() as u32 + 12).to_le_bytes());
    mela.extend((rtf.len() as u32).to_le_bytes());
    mela.extend(b"MELA");
    mela.extend(0u32.to_le_bytes());
    mela.extend(rtf);
    assert_eq!(rtf_body(&mela, &mut sink).unwrap().unwrap(), rtf);
}

#[test]
fn a_generated_rtf_only_message_reads_back() {
    let rtf = "{\\rtf1\\ansi\\ansicpg1252{\\fonttbl{\\f0 Arial;}}\\f0 Dear Ann,\\par \
               Caf\\'e9 at {\\b noon}.\\par}";
    let compressed = compressed_rtf::compress_rtf(rtf).unwrap();
    let d = message_with_rtf(compressed);
    assert_eq!(text_of(&d), "Subject: Lunch\nDear Ann,\nCafé at noon.\n");
}

/// A message with a subject and `data` as its `PR_RTF_COMPRESSED` stream.
fn message_with_rtf(data: Vec<u8>) -> Vec<u8> {
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    let props = vec![0u8; 32];
    std::io::Write::write_all(
        &mut file.create_stream("/__properties_version1.0").unwrap(),
        &props,
    )
    .unwrap();
    let subject: Vec<u8> = "Lunch".encode_utf16().flat_map(u16::to_le_bytes).collect();
    std::io::Write::write_all(
        &mut file.create_stream("/__substg1.0_0037001F").unwrap(),
        &subject,
    )
    .unwrap();
    std::io::Write::write_all(&mut file.create_stream(RTF_STREAM).unwrap(), &data).unwrap();
    file.flush().unwrap();
    file.into_inner().into_inner()
}

/// MS-OXRTFCP's CRC (CRC-32's table, no inversions), to make damaged streams pass the check.
fn crc(data: &[u8]) -> u32 {
    let mut crc = 0u32;
    for &b in data {
        let mut c = (crc ^ u32::from(b)) & 0xFF;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
        crc = c ^ (crc >> 8);
    }
    crc
}

/// An `LZFu` stream with `body` as its compressed bytes and a correct size and CRC.
fn lzfu(raw_size: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend((body.len() as u32 + 12).to_le_bytes());
    out.extend(raw_size.to_le_bytes());
    out.extend(b"LZFu");
    out.extend(crc(body).to_le_bytes());
    out.extend(body);
    out
}

#[test]
fn corrupt_and_truncated_streams_give_no_body_and_no_panic() {
    assert_eq!(crc(&SIMPLE[16..]).to_le_bytes(), SIMPLE[12..16]);
    let real = {
        let mut file = cfb::CompoundFile::open(Cursor::new(
            fs::read(format!("{TESTDATA}/msg/outer.msg")).unwrap(),
        ))
        .unwrap();
        stream(&mut file, RTF_STREAM).unwrap()
    };
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), SIMPLE[..15].to_vec(), SIMPLE[..16].to_vec()];
    for cut in truncations(&real) {
        inputs.push(cut.to_vec());
    }
    // A wrong CRC, size, type; RAWSIZE far beyond what the data can give.
    for (at, byte) in [(12, 0x00), (0, 0x2c), (0, 0xff), (8, b'X'), (7, 0x7f)] {
        let mut bad = SIMPLE.to_vec();
        bad[at] = byte;
        inputs.push(bad);
    }
    // A MELA stream claiming more bytes than it holds.
    let mut mela = Vec::new();
    mela.extend(16u32.to_le_bytes());
    mela.extend(1000u32.to_le_bytes());
    mela.extend(b"MELA");
    mela.extend([0; 8]);
    inputs.push(mela);
    for input in &inputs {
        if input.len() != real.len() && input.as_slice() != SIMPLE {
            let mut sink = TextSink::new(&Limits::default());
            assert_eq!(rtf_body(input, &mut sink).unwrap(), None, "{input:?}");
        }
    }
    // Garbage that passes the CRC: references anywhere in the dictionary, control bytes at the
    // end; the decoder stops or errs, never panics, and its output is charged.
    for seed in 1..200u64 {
        let body = noise(64 + seed as usize * 7, seed);
        inputs.push(lzfu((body.len() * 8) as u32, &body));
        let mut damaged = real.clone();
        let at = 16 + (seed as usize * 31) % (real.len() - 16);
        damaged[at] ^= 0x5A;
        let fixed = lzfu(
            u32::from_le_bytes([real[4], real[5], real[6], real[7]]),
            &damaged[16..],
        );
        inputs.push(fixed);
    }
    for input in &inputs {
        survives("rtf stream", 2.0, || {
            let mut sink = TextSink::new(&Limits::default());
            let _ = rtf_body(input, &mut sink);
            let _ = run_nested("msg", &message_with_rtf(input.clone()));
        });
    }
}

#[test]
fn the_decompressed_size_is_charged_to_the_budget() {
    let (bytes, _) = rtf_only(&fs::read(format!("{TESTDATA}/msg/outer.msg")).unwrap());
    let full = run_with("msg", &bytes, &Limits::default());
    assert!(full.0.is_ok(), "{full:?}");
    // outer.msg's RTF is 40,303 bytes from 8,253: a budget that holds the streams but not the
    // decompressed RTF stops there, with the headers kept.
    let (result, cut) = run_with(
        "msg",
        &bytes,
        &Limits {
            max_decompressed_bytes: 30_000,
            ..Limits::default()
        },
    );
    assert!(matches!(result, Err(ExtractError::Full)), "{result:?}");
    assert!(cut.starts_with("Subject: "), "{cut}");
    // A RAWSIZE beyond any budget is refused before anything is decompressed.
    let mut sink = TextSink::new(&Limits {
        max_decompressed_bytes: 100,
        ..Limits::default()
    });
    assert!(matches!(rtf_body(SIMPLE, &mut sink), Ok(Some(_))));
    let big = lzfu(u32::MAX, &[0xFF; 1000]);
    let mut sink = TextSink::new(&Limits::default());
    assert_eq!(rtf_body(&big, &mut sink).unwrap(), None);
}
