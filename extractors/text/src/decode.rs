//! Bytes to text: deciding whether a file is text at all, which encoding it is in, and decoding it
//! (whole, or chunk by chunk into a [`TextSink`]).
//!
//! A file is text when it has a BOM, is UTF-16 by the look of its NUL bytes, is valid UTF-8, or is
//! in a legacy 8-bit or CJK encoding that `chardetng` guesses and that decodes cleanly and
//! plausibly — and, in every case, when control characters other than tab, CR, LF and FF are
//! under 1% of the decoded head (DESIGN 12). Random bytes fail that last rule by a wide margin.

use std::borrow::Cow;

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE};
use inlet_core::extract::{ExtractError, TextSink};

/// Bytes looked at to decide whether a file is text and in which encoding: 64 KiB.
pub(crate) const HEAD_BYTES: usize = 64 * 1024;

/// Input bytes decoded per step when streaming into a sink.
const CHUNK_BYTES: usize = 64 * 1024;

/// A file that looks like text: its encoding and the decoded head.
#[derive(Debug)]
pub(crate) struct Detected {
    /// The encoding the whole file is decoded with.
    pub encoding: &'static Encoding,
    /// Length of the byte order mark to skip (0 without one).
    pub bom_len: usize,
    /// The first [`HEAD_BYTES`] decoded (a character cut at the end is left out).
    pub head: String,
    /// Whether `head` is the whole file.
    pub complete: bool,
    /// The encoding is chardetng's guess (no BOM; neither UTF-8 nor UTF-16).
    pub guessed: bool,
}

impl Detected {
    /// The head without leading whitespace.
    pub fn head_trimmed(&self) -> &str {
        self.head.trim_start()
    }
}

/// Signatures of binary containers: OLE compound files (doc, xls, ppt, msg) and ZIP (Office
/// Open XML, ODF, EPUB, archives). Every text sniffer asks [`detect`] about every file, and a
/// container's head would be scanned in full before its control characters refuse it.
const CONTAINER_SIGNATURES: [&[u8]; 2] = [b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", b"PK\x03\x04"];

/// Decides whether `bytes` are text and how to decode them; `None` for binary data (a binary
/// container's signature is enough), for empty input and for RTF (plain ASCII, but another
/// crate's format).
pub(crate) fn detect(bytes: &[u8]) -> Option<Detected> {
    if bytes.is_empty() || CONTAINER_SIGNATURES.iter().any(|s| bytes.starts_with(s)) {
        return None;
    }
    let complete = bytes.len() <= HEAD_BYTES;
    let head = &bytes[..bytes.len().min(HEAD_BYTES)];
    let detected = if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        let text = decode_head(encoding, &head[bom_len..], complete);
        accept(encoding, bom_len, text, complete)
    } else if let Some(encoding) = utf16_by_nuls(head) {
        let text = decode_head(encoding, head, complete);
        accept(encoding, 0, text, complete)
    } else if is_utf8_head(head, complete) {
        let text = decode_head(UTF_8, head, complete);
        accept(UTF_8, 0, text, complete)
    } else {
        legacy(head, complete)
    }?;
    if detected.head_trimmed().starts_with("{\\rtf") {
        return None;
    }
    Some(detected)
}

/// Whether `bytes` decode as text (see [`detect`]).
pub(crate) fn is_text(bytes: &[u8]) -> bool {
    detect(bytes).is_some()
}

fn accept(
    encoding: &'static Encoding,
    bom_len: usize,
    head: String,
    complete: bool,
) -> Option<Detected> {
    few_controls(&head).then_some(Detected {
        encoding,
        bom_len,
        head,
        complete,
        guessed: false,
    })
}

fn decode_head(encoding: &'static Encoding, bytes: &[u8], complete: bool) -> String {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut out = String::with_capacity(
        decoder
            .max_utf8_buffer_length(bytes.len())
            .unwrap_or(bytes.len() * 3),
    );
    // With `last == false` a sequence cut at the end of the head is held back, not replaced.
    let _ = decoder.decode_to_string(bytes, &mut out, complete);
    out
}

/// UTF-8 without a BOM: the head is valid, except perhaps for a character cut at its end.
fn is_utf8_head(head: &[u8], complete: bool) -> bool {
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => !complete && e.error_len().is_none(),
    }
}

/// UTF-16 without a BOM is recognised only when it is clearly so: many NUL bytes, nearly all at
/// odd positions (little-endian) or nearly all at even ones (big-endian), as in mostly-Latin text.
fn utf16_by_nuls(head: &[u8]) -> Option<&'static Encoding> {
    let pairs = head.len() / 2;
    if pairs < 2 {
        return None;
    }
    let (mut even, mut odd) = (0usize, 0usize);
    for pair in head.chunks_exact(2) {
        even += usize::from(pair[0] == 0);
        odd += usize::from(pair[1] == 0);
    }
    // At least 30% of the code units have a NUL half, and the other half is almost never NUL.
    if odd * 10 >= pairs * 3 && even * 20 <= odd {
        Some(UTF_16LE)
    } else if even * 10 >= pairs * 3 && odd * 20 <= even {
        Some(UTF_16BE)
    } else {
        None
    }
}

/// A legacy encoding, accepted only when chardetng's guess decodes the head without errors, with
/// few control characters, and with non-ASCII characters that are mostly letters or punctuation.
fn legacy(head: &[u8], complete: bool) -> Option<Detected> {
    // Raw C0 controls (ESC aside: ISO-2022-JP uses it) mean binary in every such encoding; this
    // also spares chardetng the work on binary files.
    let raw_controls = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C | 0x1B))
        .count();
    if raw_controls * 100 >= head.len() {
        return None;
    }
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Allow);
    detector.feed(head, complete);
    let encoding = detector.guess(None, Utf8Detection::Deny);
    let text = decode_head(encoding, head, complete);
    if text.contains('\u{FFFD}') || !plausible_non_ascii(&text) {
        return None;
    }
    accept(encoding, 0, text, complete).map(|d| Detected { guessed: true, ..d })
}

/// Prefers the encoding a document declares (XML declaration, HTML `charset`) to chardetng's
/// guess, when the declared one is a legacy encoding that decodes the head cleanly as text.
pub(crate) fn prefer_declared(bytes: &[u8], detected: Detected, label: Option<&str>) -> Detected {
    if !detected.guessed {
        return detected;
    }
    let Some(encoding) = label.and_then(|l| Encoding::for_label(l.trim().as_bytes())) else {
        return detected;
    };
    if encoding == detected.encoding || [UTF_8, UTF_16LE, UTF_16BE].contains(&encoding) {
        return detected;
    }
    let head = decode_head(
        encoding,
        &bytes[..bytes.len().min(HEAD_BYTES)],
        detected.complete,
    );
    if head.contains('\u{FFFD}') || !few_controls(&head) {
        return detected;
    }
    Detected {
        encoding,
        head,
        ..detected
    }
}

/// Whether at least 80% of the non-ASCII characters are letters, digits or common punctuation
/// and symbols (rather than the box-drawing and odd symbols of a wrong guess).
fn plausible_non_ascii(text: &str) -> bool {
    let (mut total, mut good) = (0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_ascii()) {
        total += 1;
        let plausible = c.is_alphanumeric()
            || c.is_whitespace()
            || matches!(c,
                '\u{A0}'..='\u{BF}'      // Latin-1 punctuation and symbols
                | '\u{D7}' | '\u{F7}'
                | '\u{2000}'..='\u{206F}' // general punctuation
                | '\u{20A0}'..='\u{20CF}' // currency
                | '\u{2100}'..='\u{214F}' // letterlike symbols
                | '\u{3000}'..='\u{303F}' // CJK punctuation
                | '\u{FF00}'..='\u{FFEF}' // full- and half-width forms
            );
        good += usize::from(plausible);
    }
    good * 5 >= total * 4
}

/// Whether a character counts against text-ness: C0/C1 controls other than tab, CR, LF and FF,
/// DEL, and the replacement character of a failed decode.
fn is_bad_char(c: char) -> bool {
    (c < ' ' && !matches!(c, '\t' | '\n' | '\r' | '\x0C'))
        || ('\u{7F}'..='\u{9F}').contains(&c)
        || c == '\u{FFFD}'
}

/// `text` with control characters other than tab, LF and CR (see [`is_bad_char`]; NUL cannot
/// even be stored in PostgreSQL) replaced by spaces.
pub(crate) fn without_controls(text: &str) -> Cow<'_, str> {
    let bad = |c: char| is_bad_char(c) && !matches!(c, '\t' | '\n' | '\r' | '\u{FFFD}');
    if text.contains(bad) {
        text.replace(bad, " ").into()
    } else {
        text.into()
    }
}

/// Control characters (see [`is_bad_char`]) are under 1% of the text.
fn few_controls(text: &str) -> bool {
    let (mut total, mut bad) = (0usize, 0usize);
    for c in text.chars() {
        total += 1;
        bad += usize::from(is_bad_char(c));
    }
    bad * 100 < total.max(1)
}

/// The whole file decoded (borrowed when it is UTF-8 without a BOM); malformed sequences become
/// U+FFFD.
pub(crate) fn decode_all<'a>(bytes: &'a [u8], detected: &Detected) -> Cow<'a, str> {
    let body = &bytes[detected.bom_len.min(bytes.len())..];
    detected.encoding.decode_without_bom_handling(body).0
}

/// Detects the encoding, or fails as not text.
pub(crate) fn detect_or_fail(bytes: &[u8]) -> Result<Detected, ExtractError> {
    detect(bytes).ok_or_else(|| ExtractError::Malformed("not text".into()))
}

/// Detects and decodes the whole file, or fails as not text.
pub(crate) fn decode_text(bytes: &[u8]) -> Result<Cow<'_, str>, ExtractError> {
    Ok(decode_all(bytes, &detect_or_fail(bytes)?))
}

/// Decodes the file chunk by chunk into `sink`, normalising line ends (CRLF and lone CR become LF,
/// FF a line break) and turning other control characters into spaces, so that a huge file stops as soon as
/// the sink is full.
pub(crate) fn stream_into(
    bytes: &[u8],
    detected: &Detected,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    let body = &bytes[detected.bom_len.min(bytes.len())..];
    let mut decoder = detected.encoding.new_decoder_without_bom_handling();
    let mut decoded = String::new();
    let mut clean = String::new();
    let mut after_cr = false;
    let mut chunks = body.chunks(CHUNK_BYTES).peekable();
    if chunks.peek().is_none() {
        return Ok(());
    }
    while let Some(chunk) = chunks.next() {
        // One push per chunk: the sink alone would look at the clock only every 64 chunks.
        sink.check_deadline()?;
        let last = chunks.peek().is_none();
        decoded.clear();
        decoded.reserve(
            decoder
                .max_utf8_buffer_length(chunk.len())
                .unwrap_or(chunk.len() * 3),
        );
        let _ = decoder.decode_to_string(chunk, &mut decoded, last);
        clean.clear();
        for c in decoded.chars() {
            match c {
                '\r' => {
                    clean.push('\n');
                    after_cr = true;
                    continue;
                }
                '\n' if after_cr => {}
                '\n' | '\x0C' => clean.push('\n'),
                // A control character becomes a space, so that the words around it stay apart.
                c if is_bad_char(c) && c != '\u{FFFD}' => {
                    if !clean.ends_with(char::is_whitespace) {
                        clean.push(' ');
                    }
                }
                c => clean.push(c),
            }
            after_cr = false;
        }
        sink.push(&clean)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::noise;
    use inlet_core::extract::Limits;

    fn streamed(bytes: &[u8]) -> String {
        let detected = detect(bytes).unwrap();
        let mut sink = TextSink::new(&Limits::default());
        stream_into(bytes, &detected, &mut sink).unwrap();
        sink.into_text()
    }

    #[test]
    fn random_bytes_are_not_text() {
        for (len, seed) in [(1_000_000, 1), (8192, 2), (65_536, 3), (100, 4)] {
            assert!(!is_text(&noise(len, seed)), "len {len}");
        }
        // Even behind a UTF-8 or UTF-16 BOM.
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend(noise(4096, 5));
        assert!(!is_text(&bytes));
        let mut bytes = b"\xFF\xFE".to_vec();
        bytes.extend(noise(4096, 6));
        assert!(!is_text(&bytes));
    }

    #[test]
    fn binary_signatures_are_not_text() {
        let mut zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00".to_vec();
        zip.extend(noise(2000, 7));
        assert!(!is_text(&zip));
        let mut ole = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
        ole.extend(vec![0u8; 500]);
        assert!(!is_text(&ole));
        assert!(!is_text(b"{\\rtf1\\ansi Hello}"));
        assert!(!is_text(b""));
    }

    #[test]
    fn utf8_with_and_without_bom() {
        assert_eq!(streamed("héllo\r\nwörld\r".as_bytes()), "héllo\nwörld\n");
        assert_eq!(streamed("\u{FEFF}héllo".as_bytes()), "héllo");
    }

    #[test]
    fn utf16_with_and_without_bom() {
        let text = "Stanley Cups,,\nTeam,Location\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(streamed(&le), text);
        assert_eq!(streamed(&be), text);
        let mut with_bom = vec![0xFF, 0xFE];
        with_bom.extend(&le);
        assert_eq!(detect(&with_bom).unwrap().encoding, UTF_16LE);
        assert_eq!(streamed(&with_bom), text);
    }

    #[test]
    fn legacy_encodings_when_confident() {
        let text = "Ceci est un texte français pour tester la détection de langue. \
                    Il contient des mots et des phrases françaises pour vérifier la fonctionnalité. \
                    Où est la bibliothèque? À côté du théâtre, près de l'hôpital.";
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(text);
        assert_eq!(streamed(&bytes), text);
        let russian = "Съешь же ещё этих мягких французских булок, да выпей чаю. \
                       Широкая электрификация южных губерний даст мощный толчок подъёму сельского хозяйства.";
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(russian);
        assert_eq!(streamed(&bytes), russian);
        let japanese =
            "これは日本語の文章です。文字コードの判定を試験しています。今日は良い天気ですね。";
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(japanese);
        assert_eq!(streamed(&bytes), japanese);
    }

    #[test]
    fn control_characters_become_spaces() {
        assert_eq!(without_controls("a\u{0}b\u{85}c\td"), "a b c\td");
        let mut bytes = "a".repeat(500).into_bytes();
        bytes.extend(b"\x00\x01b\x0Cc");
        assert_eq!(streamed(&bytes), format!("{} b\nc", "a".repeat(500)));
        // Over 1% control characters is binary.
        let mut bytes = "a".repeat(90).into_bytes();
        bytes.extend([1u8; 10]);
        assert!(!is_text(&bytes));
    }

    #[test]
    fn a_container_signature_is_not_text() {
        for signature in CONTAINER_SIGNATURES {
            let mut bytes = signature.to_vec();
            bytes.extend("plain words ".repeat(100).as_bytes());
            assert!(!is_text(&bytes), "{signature:?}");
            // Without the signature the same words are text.
            assert!(is_text(&bytes[signature.len()..]));
        }
    }

    #[test]
    fn a_character_cut_at_the_head_boundary_is_still_utf8() {
        let text = "é".repeat(HEAD_BYTES); // 2 bytes each: the head ends on a boundary
        let shifted = format!("x{text}"); // now it ends in the middle of a character
        let detected = detect(shifted.as_bytes()).unwrap();
        assert_eq!(detected.encoding, UTF_8);
        assert!(!detected.complete);
    }
}
