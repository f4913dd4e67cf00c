//! The input policy: which characters the strings Inlet accepts may hold, and strict
//! percent-decoding. The server checks every request against it at the edge (naming the field),
//! and every store checks each write again, so all backends give the same answer to the same
//! input (docs/decisions.md, "Input policy").
//!
//! - A **line** (identifiers, tag values, URLs, checksums, names, file names, query parameters)
//!   holds no control character: nothing in U+0000–U+001F and no U+007F.
//! - **Text** (STRUCTURED record values, descriptions, extracted content, titles rendered from
//!   them) keeps every character except U+0000 (NUL), which no SQL store can hold in text; it is
//!   refused, except in extracted text, where it is dropped ([`strip_nul`]).
//! - Percent-encoding: `%` starts exactly two hex digits, and what they decode to is UTF-8.
//!
//! Lone surrogates and invalid UTF-8 cannot reach a Rust `String`: where bytes are decoded (path,
//! query, headers, JSON, multipart names) they are refused with the field named.

use crate::{Error, Result};

/// How a string is used, which decides what it may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// One line: no control characters at all.
    Line,
    /// Free text: anything but NUL.
    Text,
    /// Typed text (a search query): tab, line feed and carriage return, no other control
    /// character.
    Typed,
}

/// The first character `class` does not allow, with its char index.
pub fn first_refused(value: &str, class: Class) -> Option<(usize, char)> {
    value.chars().enumerate().find(|(_, c)| match class {
        Class::Line => c.is_ascii_control(),
        Class::Text => *c == '\0',
        Class::Typed => c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r'),
    })
}

/// Checks `value` against `class`; the error names `field`, the character and where it is.
pub fn check(field: &str, value: &str, class: Class) -> Result<()> {
    let Some((at, c)) = first_refused(value, class) else {
        return Ok(());
    };
    let code = format!("U+{:04X}", u32::from(c));
    Err(Error::invalid(match class {
        Class::Line => format!(
            "{field} contains the control character {code} at character {at}; identifiers, \
             tag values, names, URLs and checksums may not hold control characters"
        ),
        Class::Text => format!(
            "{field} contains {code} (NUL) at character {at}; text may hold any character but \
             NUL: remove it"
        ),
        Class::Typed => format!(
            "{field} contains the control character {code} at character {at}; typed text may \
             hold tabs and line breaks but no other control character"
        ),
    }))
}

/// Removes NUL characters (extracted text of binary-ish files keeps everything else).
pub fn strip_nul(text: String) -> String {
    if text.contains('\0') {
        text.replace('\0', "")
    } else {
        text
    }
}

/// Decodes strict percent-encoding: `%` must be followed by two hex digits and the bytes must
/// be UTF-8; the error names `field` and says how to write a literal `%`.
pub fn percent_decode(field: &str, raw: &str) -> Result<String> {
    let bytes = raw.as_bytes();
    if !bytes.contains(&b'%') {
        return Ok(raw.to_string());
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let hex = bytes.get(i + 1..i + 3).and_then(|h| {
            let h = std::str::from_utf8(h).ok()?;
            h.chars()
                .all(|c| c.is_ascii_hexdigit())
                .then(|| u8::from_str_radix(h, 16).ok())?
        });
        let Some(byte) = hex else {
            return Err(Error::invalid(format!(
                "{field} has a malformed percent-escape at byte {i}: '%' must be followed by two \
                 hex digits; write a literal % as %25"
            )));
        };
        out.push(byte);
        i += 3;
    }
    String::from_utf8(out).map_err(|_| {
        Error::invalid(format!(
            "{field} is not percent-encoded UTF-8: its escapes decode to bytes that are not UTF-8"
        ))
    })
}

/// Checks every string of a JSON document (keys included) against [`Class::Text`]; the error
/// names the JSON pointer (`/items/0/body`) under `field`.
pub fn check_json(field: &str, value: &serde_json::Value) -> Result<()> {
    fn walk(value: &serde_json::Value, pointer: &mut String, field: &str) -> Result<()> {
        let at = |pointer: &str| {
            if pointer.is_empty() {
                format!("{field} (at the top level)")
            } else {
                format!("{field} at {pointer}")
            }
        };
        match value {
            serde_json::Value::String(s) => check(&at(pointer), s, Class::Text),
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let len = pointer.len();
                    pointer.push_str(&format!("/{i}"));
                    walk(item, pointer, field)?;
                    pointer.truncate(len);
                }
                Ok(())
            }
            serde_json::Value::Object(map) => {
                for (key, item) in map {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    check(
                        &format!("a key of {}", at(&pointer[..len])),
                        key,
                        Class::Text,
                    )?;
                    walk(item, pointer, field)?;
                    pointer.truncate(len);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    walk(value, &mut String::new(), field)
}

/// Longest externalId, tag value or externalChecksum, in bytes.
pub const MAX_ID_BYTES: usize = 1024;
/// Longest record url (`externalUrl` or a rendered URL template), in bytes.
pub const MAX_URL_BYTES: usize = 8192;

/// Checks a line and its length in bytes.
pub fn check_line(field: &str, value: &str, max_bytes: usize) -> Result<()> {
    if value.len() > max_bytes {
        return Err(Error::invalid(format!(
            "{field} is longer than {max_bytes} bytes ({} bytes)",
            value.len()
        )));
    }
    check(field, value, Class::Line)
}

/// Checks a record's externalId.
pub fn check_external_id(value: &str) -> Result<()> {
    check_line("externalId", value, MAX_ID_BYTES)
}

/// Checks an `externalChecksum` (also what `If-Match` compares with).
pub fn check_checksum(field: &str, value: &str) -> Result<()> {
    check_line(field, value, MAX_ID_BYTES)
}

/// Checks a record url: a line of at most [`MAX_URL_BYTES`] that is an `http` or `https` link
/// (a `javascript:` or `data:` url shown as a link would run in the reader's browser).
pub fn check_url(field: &str, value: &str) -> Result<()> {
    check_line(field, value, MAX_URL_BYTES)?;
    if !is_web_url(value) {
        return Err(Error::invalid(format!(
            "{field} must be an http:// or https:// URL"
        )));
    }
    Ok(())
}

/// Whether `value` is an `http` or `https` URL: the scheme compared case-insensitively, after
/// trimming surrounding whitespace.
pub fn is_web_url(value: &str) -> bool {
    let v = value.trim().as_bytes();
    let starts =
        |scheme: &[u8]| v.len() > scheme.len() && v[..scheme.len()].eq_ignore_ascii_case(scheme);
    starts(b"http://") || starts(b"https://")
}

/// Edit distance, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The known name an unknown one was probably meant to be: the same name in another case, or
/// one within an edit distance of max(2, a quarter of its length); for "did you mean".
pub fn closest<'a, S: AsRef<str> + ?Sized + 'a>(
    unknown: &str,
    known: impl Iterator<Item = &'a S>,
) -> Option<&'a S> {
    let lower = unknown.to_lowercase();
    known
        .map(|k| {
            let d = if k.as_ref().to_lowercase() == lower {
                0
            } else {
                distance(&lower, &k.as_ref().to_lowercase())
            };
            (d, k)
        })
        .filter(|(d, k)| *d <= 2.max(k.as_ref().chars().count() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_refuse_every_control_character() {
        for c in (0u8..0x20).chain([0x7f]) {
            let s = format!("a{}b", c as char);
            let e = check("externalId", &s, Class::Line)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("externalId contains"), "{e}");
            assert!(e.contains(&format!("U+{c:04X} at character 1")), "{e}");
        }
        for ok in ["plain", "emoji 🙂", "日本語", "a b", "ü\u{80}\u{9f}"] {
            check("externalId", ok, Class::Line).unwrap();
        }
    }

    #[test]
    fn text_refuses_only_nul() {
        check("body", "tab\tnew\nline\r\u{1}\u{1f}\u{7f}", Class::Text).unwrap();
        let e = check("body", "a\0", Class::Text).unwrap_err().to_string();
        assert!(e.contains("U+0000 (NUL) at character 1"), "{e}");
    }

    #[test]
    fn nul_is_stripped_from_extracted_text() {
        assert_eq!(strip_nul("a\0b\0".into()), "ab");
        assert_eq!(strip_nul("ab".into()), "ab");
    }

    #[test]
    fn percent_decoding_is_strict() {
        let ok = [
            ("plain", "plain"),
            ("a%20b", "a b"),
            ("%E6%9D%B1", "東"),
            ("%25", "%"),
            ("%2f%2F", "//"),
        ];
        for (raw, want) in ok {
            assert_eq!(percent_decode("f", raw).unwrap(), want);
        }
        for raw in ["%ZZ%", "a%", "a%2", "%G0", "%%", "100%"] {
            let e = percent_decode("tag header", raw).unwrap_err().to_string();
            assert!(e.contains("write a literal % as %25"), "{raw}: {e}");
        }
        for raw in ["%FF", "%C3", "%ED%A0%80"] {
            let e = percent_decode("f", raw).unwrap_err().to_string();
            assert!(e.contains("not percent-encoded UTF-8"), "{raw}: {e}");
        }
    }

    #[test]
    fn json_nul_is_found_by_pointer() {
        let v = serde_json::json!({"a": [1, {"b/c": "x\u{0}"}], "tab": "\t"});
        let e = check_json("the record", &v).unwrap_err().to_string();
        assert!(
            e.starts_with("the record at /a/1/b~1c contains U+0000"),
            "{e}"
        );
        let v = serde_json::json!({"k\u{0}": 1});
        let e = check_json("the record", &v).unwrap_err().to_string();
        assert!(
            e.starts_with("a key of the record (at the top level) contains U+0000"),
            "{e}"
        );
        check_json("r", &serde_json::json!({"ctl": "\u{1}\u{8}", "n": null})).unwrap();
    }
}
