//! The `.msg` extractor on real Outlook messages from other projects' test suites
//! (`extractors/testdata/msg`, origins in its MANIFEST.tsv): the `.eml` layout, recipients,
//! attached files and messages, recall against the peers; and on hostile input: empty, random,
//! truncated and damaged files, attached messages nested without end, limits.

use std::{
    fs,
    io::{Cursor, Write},
    path::Path,
    time::Instant,
};

use inlet_core::extract::{ExtractError, Limits};
use inlet_extract_testkit::{
    check_output_cap, check_peer_recall, detect, documents_in, noise, run, run_nested, run_with,
    survives, truncations,
};

// HTML bodies and attached PDFs are read through the registry: link their extractors.
use inlet_extract_pdf as _;
use inlet_extract_text as _;

/// The test documents shared by the legacy Office extractors.
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata");

fn message(name: &str) -> Vec<u8> {
    let path = format!("{TESTDATA}/msg/{name}");
    fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn text_of(bytes: &[u8]) -> String {
    run_nested("msg", bytes).unwrap_or_else(|(e, t)| panic!("{e} after {t:?}"))
}

#[test]
fn recall_against_the_peers_is_at_least_95_percent() {
    // The peers write dates and addresses their own way: kreuzberg with milliseconds and
    // `+00:00` and a name equal to its address twice, Tika every recipient twice (`To` and
    // `Recipients`) and an attached message's storage name. On these messages the tokens we
    // miss are only those (README).
    let floors = [
        ("msgreader_test.msg", 0.70),
        ("outer.msg", 0.80),
        ("top_level_email.msg", 0.88),
    ];
    let checked = check_peer_recall(Path::new(TESTDATA), "msg", "msg", &[], &floors);
    assert!(checked >= 5, "{checked} messages with a reference");
}

#[test]
fn headers_are_written_as_for_an_eml() {
    // Subject, From, To, Cc, Date lines in the .eml extractor's order and forms (RFC 3339 in
    // UTC, as mail-parser writes a UTC date), then the body.
    let t = text_of(&message("other.msg"));
    assert!(
        t.starts_with(
            "Subject: 投递状态通知 (Failure Notice)\n\
             From: Mail Delivery Subsystem <mailer-daemon@tjdpf.org.cn>\n\
             To: yosipnps@model.com\n\
             Date: 2017-11-27T09:44:30Z\n\
             Hi. This is an automatically generated Delivery Status Notification"
        ),
        "{t}"
    );
    let t = text_of(&message("top_level_email.msg"));
    assert!(
        t.starts_with(
            "Subject: Top level email\n\
             To: someone1@gmail.com, someone2@gmail.com\n\
             Cc: ccsomeoneelse1@gmail.com, ccsomeoneelse2@gmail.com\n\
             Date: 2020-03-26T12:25:31Z\n\
             Top level email text\n"
        ),
        "{t}"
    );
}

#[test]
fn attached_files_and_messages_are_extracted_under_their_names() {
    let t = text_of(&message("other.msg"));
    // An attached message, itself with an attached PDF named in Chinese.
    assert!(
        t.contains("default_attachment.eml") || t.contains("北京"),
        "{t}"
    );
    assert!(
        t.contains("北京 2017年12月02-03日 销售主管 确认n.pdf"),
        "{t}"
    );
    // An attached message with two pictures, then a picture.
    let t = text_of(&message("top_level_email.msg"));
    assert!(
        t.ends_with(
            "Embedded email\nSubject: Embedded email\nTo: receiver@gmail.com\nCc: cc1@gmail.com\n\
             Date: 2020-01-14T07:01:44Z\nEmbedded email text\ndog.jpg\ncat.jpg\npigeon.jpg\n"
        ),
        "{t}"
    );
}

#[test]
fn encrypted_like_and_foreign_files_are_not_messages() {
    for path in documents_in(&Path::new(TESTDATA).join("msg")) {
        assert_eq!(
            detect(&fs::read(&path).unwrap()),
            Some("msg"),
            "{}",
            path.display()
        );
    }
    for folder in ["xls", "ppt"] {
        for path in documents_in(&Path::new(TESTDATA).join(folder)) {
            assert_ne!(
                detect(&fs::read(&path).unwrap()),
                Some("msg"),
                "{}",
                path.display()
            );
        }
    }
}

/// A compound file holding `streams` (path, bytes) and the storages their paths need.
fn compound(streams: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    for (path, data) in streams {
        let mut parent = String::new();
        for part in path
            .split('/')
            .filter(|p| !p.is_empty())
            .rev()
            .skip(1)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            parent.push('/');
            parent.push_str(part);
            if !file.exists(&parent) {
                file.create_storage(&parent).unwrap();
            }
        }
        file.create_stream(path).unwrap().write_all(data).unwrap();
    }
    file.flush().unwrap();
    file.into_inner().into_inner()
}

fn utf16(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// A property stream: `header` bytes, then one entry per (id, type, value).
fn properties(header: usize, entries: &[(u16, u16, u64)]) -> Vec<u8> {
    let mut out = vec![0; header];
    for (id, typ, value) in entries {
        out.extend(((u32::from(*id) << 16) | u32::from(*typ)).to_le_bytes());
        out.extend(6u32.to_le_bytes());
        out.extend(value.to_le_bytes());
    }
    out
}

/// A generated message: subject, a sender, one To and one Cc recipient, a submit time, an 8-bit
/// body in code page 1251, and a text attachment.
fn generated() -> Vec<u8> {
    // 2020-02-03T04:05:06Z as a FILETIME.
    let filetime = (1_580_702_706u64 + 11_644_473_600) * 10_000_000;
    let (body, _, _) = encoding_rs::WINDOWS_1251.encode("Привет, мир");
    compound(&[
        (
            "/__properties_version1.0",
            properties(32, &[(0x0039, 0x0040, filetime), (0x3FFD, 0x0003, 1251)]),
        ),
        ("/__substg1.0_0037001F", utf16("Quarterly report")),
        ("/__substg1.0_0C1A001F", utf16("Ann Smith")),
        ("/__substg1.0_5D01001F", utf16("ann@example.com")),
        ("/__substg1.0_1000001E", body.into_owned()),
        (
            "/__recip_version1.0_#00000000/__properties_version1.0",
            properties(8, &[(0x0C15, 0x0003, 1)]),
        ),
        (
            "/__recip_version1.0_#00000000/__substg1.0_3001001F",
            utf16("Bob"),
        ),
        (
            "/__recip_version1.0_#00000000/__substg1.0_39FE001F",
            utf16("bob@example.com"),
        ),
        (
            "/__recip_version1.0_#00000001/__properties_version1.0",
            properties(8, &[(0x0C15, 0x0003, 2)]),
        ),
        (
            "/__recip_version1.0_#00000001/__substg1.0_3003001E",
            b"carol@example.com".to_vec(),
        ),
        (
            "/__attach_version1.0_#00000000/__properties_version1.0",
            properties(8, &[]),
        ),
        (
            "/__attach_version1.0_#00000000/__substg1.0_3707001F",
            utf16("notes.txt"),
        ),
        (
            "/__attach_version1.0_#00000000/__substg1.0_37010102",
            b"attached words".to_vec(),
        ),
    ])
}

#[test]
fn a_generated_message_reads_back() {
    let d = generated();
    assert_eq!(detect(&d), Some("msg"));
    assert_eq!(
        text_of(&d),
        "Subject: Quarterly report\nFrom: Ann Smith <ann@example.com>\nTo: Bob <bob@example.com>\n\
         Cc: carol@example.com\nDate: 2020-02-03T04:05:06Z\nПривет, мир\nnotes.txt\nattached words\n"
    );
}

#[test]
fn attached_messages_nest_a_bounded_number_of_levels() {
    // A message attached to itself 200 levels deep (storages within storages).
    let mut path = String::new();
    let mut streams = Vec::new();
    for level in 0..200 {
        let header = if level == 0 { 32 } else { 24 };
        streams.push((
            format!("{path}/__properties_version1.0"),
            properties(header, &[]),
        ));
        streams.push((
            format!("{path}/__substg1.0_0037001F"),
            utf16(&format!("Level {level}")),
        ));
        streams.push((
            format!("{path}/__attach_version1.0_#00000000/__properties_version1.0"),
            properties(8, &[]),
        ));
        path = format!("{path}/__attach_version1.0_#00000000/__substg1.0_3701000D");
    }
    let streams: Vec<(&str, Vec<u8>)> = streams
        .iter()
        .map(|(p, d)| (p.as_str(), d.clone()))
        .collect();
    let d = compound(&streams);
    let t = survives("nested messages", 5.0, || text_of(&d));
    assert!(t.contains("Subject: Level 3"), "{t}");
    assert!(!t.contains("Subject: Level 4"), "{t}");
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
        assert_ne!(detect(input), Some("msg"));
        let _ = survives("noise", 2.0, || run("msg", input));
    }
    let mut files: Vec<Vec<u8>> = documents_in(&Path::new(TESTDATA).join("msg"))
        .iter()
        .map(|p| fs::read(p).unwrap())
        .collect();
    files.push(generated());
    for bytes in &files {
        for cut in truncations(bytes) {
            let _ = survives(&format!("cut at {}", cut.len()), 2.0, || {
                run_nested("msg", cut)
            });
        }
        for seed in 0..40u64 {
            let mut damaged = bytes.clone();
            let at = (seed as usize * 997) % damaged.len();
            let patch = noise(64.min(damaged.len() - at), seed + 1);
            damaged[at..at + patch.len()].copy_from_slice(&patch);
            let _ = survives("damaged", 2.0, || run_nested("msg", &damaged));
        }
    }
}

#[test]
fn configured_limits_cut_the_output() {
    let d = generated();
    assert_eq!(check_output_cap("msg", &d, 20), "Subject: Quarterly r");
    // The decompression budget: the streams read count against it; once spent, the text so
    // far is kept and reported cut (`ExtractError::Full`, as an archive does).
    let full = run("msg", &d).unwrap();
    let (result, cut) = run_with(
        "msg",
        &d,
        &Limits {
            max_decompressed_bytes: 200,
            ..Limits::default()
        },
    );
    assert!(matches!(result, Err(ExtractError::Full)), "{result:?}");
    assert!(cut.len() < full.len() && full.starts_with(&cut), "{cut}");
    // The deadline is checked per recipient and attachment.
    let (result, _) = run_with(
        "msg",
        &d,
        &Limits {
            deadline: Some(Instant::now()),
            ..Limits::default()
        },
    );
    assert!(matches!(result, Err(ExtractError::TimedOut)), "{result:?}");
}

/// Writes our text of every test message to `$INLET_DUMP/msg/<file>.txt` (run with
/// `--ignored`).
#[test]
#[ignore = "a tool, not a check"]
fn dump() {
    let Ok(dir) = std::env::var("INLET_DUMP") else {
        return;
    };
    fs::create_dir_all(format!("{dir}/msg")).unwrap();
    for path in documents_in(&Path::new(TESTDATA).join("msg")) {
        let out = run_nested("msg", &fs::read(&path).unwrap())
            .unwrap_or_else(|(e, t)| format!("{t}[{e}]"));
        let name = path.file_name().unwrap().to_string_lossy();
        fs::write(format!("{dir}/msg/{name}.txt"), out).unwrap();
    }
}

#[test]
fn a_sent_message_keeps_its_blind_copies() {
    // POI's example_sent_regular.msg: recipient storages of type To, Cc and Bcc.
    let t = text_of(&message("example_sent_regular.msg"));
    assert!(
        t.contains(
            "\nBcc: 'David Caruana' <dave.caruana@alfresco.com>, 'Vonka Jan' <jan.vonka@alfresco.com>\nDate: 2010-01-11T16:25:07Z\n"
        ),
        "{t}"
    );
    assert!(
        t.contains("\nCc: 'nickb@alfresco.com' <nickb@alfresco.com>, "),
        "{t}"
    );
}
