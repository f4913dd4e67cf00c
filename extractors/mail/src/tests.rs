//! The extractor on real messages from CPython's e-mail test suite (tests/data/README.md), and
//! the sniffer against text that only looks like headers.

use inlet_core::extract::{ExtractError, Extractor, Limits, Probe, TextSink};

use super::{Mail, SCORE, sniff};

fn message(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn text_of(bytes: &[u8]) -> String {
    let mut sink = TextSink::new(&Limits::default());
    Mail.extract(bytes, &mut sink).expect("extracts");
    sink.into_text()
}

fn score(bytes: &[u8]) -> u8 {
    sniff(&Probe {
        bytes,
        entries: &[],
    })
}

#[test]
fn every_part_in_every_transfer_encoding_is_read() {
    let text = text_of(&message("msg_10.txt"));
    assert!(text.starts_with("Subject: Lyrics\n"), "{text}");
    assert!(
        text.contains("From: Barry Warsaw <barry@python.org>"),
        "{text}"
    );
    assert!(
        text.contains("To: Dingus Lovers <cravindogs@cravindogs.com>"),
        "{text}"
    );
    assert!(text.contains("Date: 2001-04-20T19:35:02-04:00"), "{text}");
    for line in [
        "This is a 7bit encoded message.",
        // The multipart/mixed's HTML part, between its text parts.
        "\u{a1}This is a Quoted Printable encoded message!",
        "This is a Base64 encoded message.",
        "This has no Content-Transfer-Encoding: header.",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
}

#[test]
fn a_latin1_alternative_gives_its_text_once() {
    let text = text_of(&message("msg_15.txt"));
    assert!(text.contains("Subject: XX"), "{text}");
    assert!(text.contains("Some removed test."), "{text}");
    // The HTML alternative of the same body is not repeated.
    assert!(!text.contains("Some removed HTML"), "{text}");
}

#[test]
fn attachments_get_a_heading_even_without_a_registry() {
    // No nested extractor in a bare sink: the GIF's name is written, nothing else.
    let text = text_of(&message("msg_07.txt"));
    assert!(text.contains("dingusfish.gif"), "{text}");
    let text = text_of(&message("msg_04.txt"));
    assert!(text.contains("a simple kind of mirror"), "{text}");
}

#[test]
fn messages_are_recognised_and_header_like_text_is_not() {
    for name in ["msg_04.txt", "msg_07.txt", "msg_10.txt", "msg_15.txt"] {
        assert_eq!(score(&message(name)), SCORE, "{name}");
    }
    for text in [
        &b"Title: Notes\nAuthor: Ann\n\nMeeting notes."[..],
        b"hello world",
        b"# Heading\n\nFrom: the start\nTo: the end\n",
        b"From: a\nthis line is not a header\n\nbody",
        b"",
    ] {
        assert_eq!(score(text), 0, "{:?}", String::from_utf8_lossy(text));
    }
    assert_eq!(score(b"From: a@b.test\nSubject: hi\n\nbody"), SCORE);
}

#[test]
fn garbage_after_headers_is_not_a_panic() {
    let mut bytes =
        b"From: a@b.test\nSubject: hi\nContent-Type: multipart/mixed; boundary=x\n\n--x\n".to_vec();
    bytes.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    let mut sink = TextSink::new(&Limits::default());
    let _ = Mail.extract(&bytes, &mut sink);
    assert!(sink.as_str().contains("Subject: hi"), "{}", sink.as_str());
}

#[test]
fn configured_limits_cut_the_output() {
    // A message inflates nothing itself (its attachments run under the same sink, so under the
    // same limits: see the facade's tests), so the output cap is the limit that applies.
    let bytes = message("msg_10.txt");
    let full = text_of(&bytes);
    let mut sink = TextSink::new(&Limits {
        max_chars: 20,
        ..Limits::default()
    });
    let result = Mail.extract(&bytes, &mut sink);
    assert!(matches!(result, Err(ExtractError::Full)), "{result:?}");
    assert_eq!(sink.as_str(), full.chars().take(20).collect::<String>());
}
