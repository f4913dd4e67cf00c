//! JSON (`json`): string values in document order, one per line. Keys, numbers, booleans and
//! nulls are left out. Values are streamed to the sink while parsing (no `Value` tree), several
//! top-level values (JSON Lines) are read in turn, and nesting deeper than serde_json's limit of
//! 128 is reported as malformed after the text read so far.

use std::fmt;

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::decode;

/// Extracts the string values of JSON documents.
struct Json;

impl Extractor for Json {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let text = decode::decode_text(input)?;
        let mut state = State {
            sink,
            stopped: None,
        };
        let mut de = serde_json::Deserializer::from_str(&text);
        loop {
            if let Err(e) = Strings(&mut state).deserialize(&mut de) {
                return Err(state
                    .stopped
                    .take()
                    .unwrap_or_else(|| ExtractError::malformed(e)));
            }
            // `end` fails when more than whitespace follows: then another value comes.
            if de.end().is_ok() {
                return Ok(());
            }
        }
    }
}

/// Where string values go, and why the walk stopped early (the sink's error).
struct State<'a> {
    sink: &'a mut TextSink,
    stopped: Option<ExtractError>,
}

impl State<'_> {
    fn string<E: de::Error>(&mut self, s: &str) -> Result<(), E> {
        let s = decode::without_controls(s.trim());
        if s.is_empty() {
            return Ok(());
        }
        match self.sink.push(&s).and_then(|()| self.sink.line_break()) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.stopped = Some(e);
                Err(E::custom("extraction stopped"))
            }
        }
    }
}

/// Deserializes any JSON value, writing its string values to the state's sink.
struct Strings<'s, 'a>(&'s mut State<'a>);

impl<'de> DeserializeSeed<'de> for Strings<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strings<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.string(v)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Strings(&mut *self.0))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(Strings(&mut *self.0))?;
        }
        Ok(())
    }
}

/// How sure we are that `head` (decoded, leading whitespace trimmed) is JSON.
fn score(head: &str, complete: bool) -> u8 {
    if !head.starts_with(['{', '[']) {
        return 0;
    }
    let mut de = serde_json::Deserializer::from_str(head);
    match de::Deserialize::deserialize(&mut de) {
        Ok(IgnoredAny) => 90,
        // The head ends inside the document: JSON so far.
        Err(e) if e.is_eof() && !complete => 90,
        // A truncated file, or one nested too deep to check: still JSON by the look of it.
        Err(e) if e.is_eof() || e.to_string().starts_with("recursion limit") => 60,
        Err(_) => 0,
    }
}

fn sniff(probe: &Probe<'_>) -> u8 {
    decode::detect(probe.bytes).map_or(0, |d| score(d.head_trimmed(), d.complete))
}

inventory::submit! {
    ExtractorInfo {
        id: "json",
        version: 1,
        media_type: "application/json",
        sniff,
        make: || Box::new(Json),
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{capped, detect, run, text};
    use inlet_core::extract::ExtractError;

    #[test]
    fn json_string_values_in_order() {
        let doc = br#"{"name": "Alice", "age": 30, "tags": ["a", "b\n", ""], "nested": {"x": {"y": "deep \u00e9\u0000x"}}, "ok": true, "none": null, "n": 1.5}"#;
        assert_eq!(detect(doc), Some("json"));
        assert_eq!(text("json", doc), "Alice\na\nb\ndeep é x\n");
    }

    #[test]
    fn json_lines_are_read_in_turn() {
        let doc = b"{\"a\": \"one\"}\n{\"a\": \"two\"}\n[\"three\"]\n";
        assert_eq!(detect(doc), Some("json"));
        assert_eq!(text("json", doc), "one\ntwo\nthree\n");
    }

    #[test]
    fn json_is_not_claimed_for_lookalikes() {
        assert_eq!(detect(b"[link](http://example.com) and more"), Some("text"));
        assert_eq!(detect(b"{not json at all}"), Some("text"));
    }

    #[test]
    fn deep_nesting_is_malformed_not_a_crash() {
        let doc = format!(
            "[\"before\", {}{}]",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(detect(doc.as_bytes()), Some("json"));
        let (err, partial) = run("json", doc.as_bytes()).unwrap_err();
        assert!(matches!(err, ExtractError::Malformed(_)), "{err}");
        assert_eq!(partial, "before\n");
    }

    #[test]
    fn truncated_json_keeps_what_was_read() {
        let (err, partial) = run("json", br#"{"a": "one", "b": ["two", "thr"#).unwrap_err();
        assert!(matches!(err, ExtractError::Malformed(_)));
        assert_eq!(partial, "one\ntwo\n");
    }

    #[test]
    fn a_big_array_stops_at_the_cap() {
        let doc = format!("[{}\"end\"]", "\"0123456789\",".repeat(200_000));
        let (out, full) = capped("json", doc.as_bytes(), 1000);
        assert!(full);
        assert_eq!(out.chars().count(), 1000);
    }
}
