//! Generated Word binary files (a FIB, a piece table and text in both encodings) and hostile
//! inputs: empty, random and truncated files, piece tables pointing outside their streams,
//! documents far over the output cap. Every case must finish fast and never panic.

use std::{
    fs,
    io::{Cursor, Write},
    time::Instant,
};

use inlet_core::extract::{ExtractError, Limits};

use crate::testutil::{
    capped, check_damage, check_decompression_cap, check_output_cap, detect, documents,
    documents_in, noise, run, run_with, survives, text,
};

/// Where the generated FIB puts the text in the `WordDocument` stream.
const TEXT_AT: usize = 1024;

/// A piece of generated text: its characters and whether it is stored as 8-bit.
struct Run<'a>(&'a str, bool);

/// Builds a Word 97 binary document whose main text is `runs`, one piece each; `tweak` may
/// alter the FIB and the CLX before they are written.
fn doc_with(runs: &[Run<'_>], tweak: impl FnOnce(&mut Vec<u8>, &mut Vec<u8>)) -> Vec<u8> {
    let mut word = vec![0u8; TEXT_AT];
    word[0..2].copy_from_slice(&0xA5ECu16.to_le_bytes());
    word[2..4].copy_from_slice(&0x00C1u16.to_le_bytes());
    word[0x0A..0x0C].copy_from_slice(&0x0200u16.to_le_bytes()); // 1Table
    let csw = 14usize;
    let cslw = 22usize;
    let cb_rg_fc_lcb = 93usize;
    word[32..34].copy_from_slice(&(csw as u16).to_le_bytes());
    let rg_lw = 34 + csw * 2 + 2;
    word[rg_lw - 2..rg_lw].copy_from_slice(&(cslw as u16).to_le_bytes());
    let rg_fc_lcb = rg_lw + cslw * 4 + 2;
    word[rg_fc_lcb - 2..rg_fc_lcb].copy_from_slice(&(cb_rg_fc_lcb as u16).to_le_bytes());
    let mut cps = vec![0u32];
    let mut fcs = Vec::new();
    for Run(text, compressed) in runs {
        let offset = word.len() as u32;
        let count = if *compressed {
            let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(text);
            word.extend_from_slice(&bytes);
            fcs.push((offset * 2) | 0x4000_0000);
            bytes.len() as u32
        } else {
            let units: Vec<u16> = text.encode_utf16().collect();
            for u in &units {
                word.extend_from_slice(&u.to_le_bytes());
            }
            fcs.push(offset);
            units.len() as u32
        };
        cps.push(cps.last().unwrap() + count);
    }
    let ccp_text = *cps.last().unwrap();
    word[rg_lw + 12..rg_lw + 16].copy_from_slice(&ccp_text.to_le_bytes());
    let mut plc = Vec::new();
    for cp in &cps {
        plc.extend_from_slice(&cp.to_le_bytes());
    }
    for fc in &fcs {
        plc.extend_from_slice(&[0, 0]);
        plc.extend_from_slice(&fc.to_le_bytes());
        plc.extend_from_slice(&[0, 0]);
    }
    let mut clx = vec![0x01, 2, 0, 0xAA, 0xBB, 0x02];
    clx.extend_from_slice(&(plc.len() as u32).to_le_bytes());
    clx.extend_from_slice(&plc);
    let mut table = vec![0u8; 16];
    let clx_at = table.len() as u32;
    table.extend_from_slice(&clx);
    let fc_clx = rg_fc_lcb + 33 * 8;
    word[fc_clx..fc_clx + 4].copy_from_slice(&clx_at.to_le_bytes());
    word[fc_clx + 4..fc_clx + 8].copy_from_slice(&(clx.len() as u32).to_le_bytes());
    tweak(&mut word, &mut table);
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    file.create_stream("WordDocument")
        .unwrap()
        .write_all(&word)
        .unwrap();
    file.create_stream("1Table")
        .unwrap()
        .write_all(&table)
        .unwrap();
    file.flush().unwrap();
    file.into_inner().into_inner()
}

fn doc(runs: &[Run<'_>]) -> Vec<u8> {
    doc_with(runs, |_, _| {})
}

#[test]
fn generated_documents_read_back() {
    let d = doc(&[
        Run("Caf\u{e9} \u{201C}quoted\u{201D}\r", true),
        Run(
            "\u{65e5}\u{672c}\u{8a9e} \u{13} PAGE \u{14}7\u{15}\r",
            false,
        ),
        Run("A\u{7}B\u{7}\u{7}\r", true),
    ]);
    assert_eq!(detect(&d), Some("doc"));
    assert_eq!(text("doc", &d), "Café “quoted”\n日本語 7\nA\tB\t\t\n");
}

#[test]
fn pieces_outside_the_stream_keep_the_text_before_them() {
    let d = doc_with(&[Run("kept\r", true), Run("lost\r", true)], |_, table| {
        // Point the second piece far past the end of the WordDocument stream.
        let n = table.len();
        table[n - 6..n - 2].copy_from_slice(&(0x4000_0000u32 | 0x3FFF_FFF0).to_le_bytes());
    });
    let (err, partial) = run("doc", &d).unwrap_err();
    assert!(matches!(err, ExtractError::Malformed(_)), "{err}");
    assert_eq!(partial, "kept\n");
    // A CLX outside the table stream, and an encrypted file.
    let d = doc_with(&[Run("x", true)], |word, _| {
        let at = 34 + 28 + 2 + 88 + 2 + 33 * 8;
        word[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    });
    assert!(matches!(
        run("doc", &d),
        Err((ExtractError::Malformed(_), _))
    ));
    let d = doc_with(&[Run("secret", true)], |word, _| word[0x0B] |= 0x01);
    assert!(matches!(
        run("doc", &d),
        Err((ExtractError::Unsupported(_), _))
    ));
}

#[test]
fn empty_random_and_truncated_files_fail_fast_without_panic() {
    let ole = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), ole.to_vec()];
    for seed in 1..30u64 {
        inputs.push(noise(4096, seed));
        let mut oleish = ole.to_vec();
        oleish.extend(noise(8192, seed));
        inputs.push(oleish);
    }
    for input in &inputs {
        assert_eq!(detect(input), None);
        assert!(survives("doc", 2.0, || run("doc", input)).is_err());
    }
    let generated = doc(&[Run("some text\r", true)]);
    let mut files: Vec<Vec<u8>> = documents("doc")
        .iter()
        .map(|p| fs::read(p).unwrap())
        .collect();
    files.push(generated);
    files.extend(
        documents_in(&std::path::Path::new(TESTDATA).join("doc"))
            .iter()
            .map(|p| fs::read(p).unwrap()),
    );
    check_damage("doc", &files, 20);
}

/// Apache POI's Word test documents (extractors/testdata/doc).
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

#[test]
fn damaged_word_6_streams_never_panic() {
    // The Word 6/95 test documents' WordDocument streams with bytes overwritten at many
    // places (their FIBs, piece tables and text), each repackaged alone.
    for name in ["Word95.doc", "Bug60942.doc", "Bug49933.doc"] {
        let bytes = fs::read(format!("{TESTDATA}/doc/{name}")).unwrap();
        let mut file = cfb::CompoundFile::open(Cursor::new(bytes)).unwrap();
        let mut word = Vec::new();
        std::io::Read::read_to_end(&mut file.open_stream("WordDocument").unwrap(), &mut word)
            .unwrap();
        for seed in 1..150u64 {
            let mut damaged = word.clone();
            let noise = noise(16, seed);
            // Half in the FIB (the first 0x200 bytes), half anywhere.
            let span = if seed % 2 == 0 { 0x200 } else { damaged.len() };
            let at = (noise[0] as usize * 256 + noise[1] as usize) % span.min(damaged.len());
            let end = (at + 8).min(damaged.len());
            damaged[at..end].copy_from_slice(&noise[8..8 + (end - at)]);
            let mut out = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
            out.create_stream("WordDocument")
                .unwrap()
                .write_all(&damaged)
                .unwrap();
            let input = out.into_inner().into_inner();
            let _ = survives("doc", 2.0, || run("doc", &input));
        }
    }
}

#[test]
fn configured_limits_cut_the_output() {
    let body = "some text\r";
    let d = doc(&[Run(body, true)]);
    // The budget is shared by the streams: the WordDocument stream fits, the table stream after
    // it does not.
    let word_stream = (TEXT_AT + body.len()) as u64;
    let (full, cut) = check_decompression_cap("doc", &d, word_stream + 1);
    assert_eq!(full, "some text\n");
    assert_eq!(cut, "");
    assert_eq!(check_output_cap("doc", &d, 4), "some");
}

#[test]
fn the_output_cap_and_the_deadline_stop_extraction() {
    let body = "A paragraph of generated text for the cap.\r".repeat(50_000);
    let d = doc(&[Run(&body, true), Run(&body, false)]);
    let (out, full) = capped("doc", &d, 1000);
    assert!(full);
    assert_eq!(out.chars().count(), 1000);
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    let (result, _) = run_with("doc", &d, &limits);
    assert!(matches!(result, Err(ExtractError::TimedOut)), "{result:?}");
}
