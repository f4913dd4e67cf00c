//! XML (`xml`): text and CDATA nodes in document order, one per line, whitespace collapsed and
//! whitespace-only nodes skipped; a document without text nodes (data held in attributes) gives
//! its attribute values instead, one element per line. Comments and processing instructions are
//! left out.
//! Entities are not expanded from the DTD (no external fetches, no "billion laughs"): the
//! predefined ones and character references are resolved, a few common HTML ones too, and any
//! other is kept raw as `&name;`.

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use quick_xml::{Reader, XmlVersion, escape::resolve_xml_entity, events::Event};

use crate::{decode, html, markup, words::Words};

/// Events read from the head when sniffing.
const SNIFF_EVENTS: usize = 2000;

/// Extracts the text nodes of an XML document.
struct Xml;

impl Extractor for Xml {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        let detected = decode::detect_or_fail(input)?;
        let label = markup::prolog(&detected.head)
            .xml_encoding
            .map(str::to_owned);
        let detected = decode::prefer_declared(input, detected, label.as_deref());
        let text = decode::decode_all(input, &detected);
        let before = sink.chars();
        read(&text, sink, false)?;
        if sink.chars() == before {
            // Data held only in attributes (`<row name="Ann" city="Oslo"/>`): their values.
            read(&text, sink, true)?;
        }
        Ok(())
    }
}

/// Attributes that say how to read the document rather than what it holds.
fn is_plumbing(key: &str) -> bool {
    key == "xmlns"
        || ["xmlns:", "xsi:", "xml:"]
            .iter()
            .any(|p| key.starts_with(p))
}

/// Writes the text nodes of `text`, and with `attributes` each element's attribute values
/// (namespace and schema plumbing aside) on its line.
fn read(text: &str, sink: &mut TextSink, attributes: bool) -> Result<(), ExtractError> {
    let mut reader = Reader::from_str(text);
    let config = reader.config_mut();
    // Read what is there rather than reject sloppy documents.
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    config.allow_dangling_amp = true;
    let mut words = Words::default();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if attributes => {
                words.line_break(sink)?;
                for attribute in e.attributes().flatten() {
                    if is_plumbing(attribute.key.as_ref()) {
                        continue;
                    }
                    let value = attribute
                        .normalized_value(XmlVersion::Implicit1_0)
                        .unwrap_or_else(|_| attribute.value.clone());
                    words.text(sink, &value)?;
                    words.space();
                }
            }
            Ok(Event::Text(t)) => words.text(sink, &t)?,
            Ok(Event::CData(t)) => words.text(sink, &t)?,
            Ok(Event::GeneralRef(r)) => match r.resolve_char_ref() {
                Ok(Some(c)) => words.text(sink, c.encode_utf8(&mut [0; 4]))?,
                _ => match resolve_xml_entity(&r).or_else(|| markup::common_entity(&r)) {
                    Some(s) => words.text(sink, s)?,
                    None => words.text(sink, &format!("&{};", &*r))?,
                },
            },
            Ok(Event::Start(_) | Event::End(_) | Event::Empty(_)) => words.line_break(sink)?,
            Ok(Event::Eof) => return Ok(()),
            Ok(Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_)) => {}
            Err(e) => {
                return Err(ExtractError::Malformed(format!(
                    "{e} at byte {}",
                    reader.error_position()
                )));
            }
        }
    }
}

/// How sure we are that `head` (decoded, leading whitespace trimmed) is XML other than HTML.
fn score(head: &str, complete: bool) -> u8 {
    let prolog = markup::prolog(head);
    if !head.starts_with('<') || html::score(head) > 0 {
        return 0;
    }
    if prolog.root.is_none() && !prolog.xml_decl {
        return 0;
    }
    let parses = parses(head, complete, prolog.xml_decl);
    match (prolog.xml_decl, parses) {
        (true, true) => 85,
        (false, true) => 78,
        (true, false) => 40,
        (false, false) => 0,
    }
}

/// Whether the head reads as well-formed XML with at least one element, attributes included. An
/// error in the last KiB is forgiven: the head may be cut there, or the file truncated. Without
/// an XML declaration, a complete head must also close its root element.
fn parses(head: &str, complete: bool, declared: bool) -> bool {
    let mut reader = Reader::from_str(head);
    let (mut elements, mut depth) = (0usize, 0usize);
    for _ in 0..SNIFF_EVENTS {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                if e.attributes().any(|a| a.is_err()) {
                    return false;
                }
                elements += 1;
                depth += 1;
            }
            Ok(Event::Empty(e)) => {
                if e.attributes().any(|a| a.is_err()) {
                    return false;
                }
                elements += 1;
            }
            Ok(Event::End(_)) => depth = depth.saturating_sub(1),
            Ok(Event::Eof) => return elements > 0 && (declared || !complete || depth == 0),
            Ok(_) => {}
            Err(_) => {
                let near_end = usize::try_from(reader.error_position())
                    .is_ok_and(|at| at.saturating_add(1024) >= head.len());
                return elements > 0 && near_end && (declared || !complete);
            }
        }
    }
    elements > 0
}

fn sniff(probe: &Probe<'_>) -> u8 {
    decode::detect(probe.bytes).map_or(0, |d| score(d.head_trimmed(), d.complete))
}

inventory::submit! {
    ExtractorInfo {
        id: "xml",
        version: 1,
        media_type: "application/xml",
        sniff,
        make: || Box::new(Xml),
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{capped, detect, run, text};
    use inlet_core::extract::ExtractError;

    #[test]
    fn xml_text_nodes_one_per_line() {
        let doc = b"<?xml version=\"1.0\"?>\n<!-- c -->\n<note lang=\"en\">\n  <to>Tove</to>\n  \
            <from>Jani &amp; co&#46;</from>\n  <body><![CDATA[<b>raw</b>]]>   and\n   more</body>\n  \
            <empty/>\n  <x>&custom; &nbsp;</x>\n</note>\n";
        assert_eq!(detect(doc), Some("xml"));
        assert_eq!(
            text("xml", doc),
            "Tove\nJani & co.\n<b>raw</b> and more\n&custom;\n"
        );
    }

    /// Debian iso-codes' ISO 15924 table (extractors/testdata/MANIFEST.tsv) holds its data in
    /// attributes only: their values are the text, one element per line, with no namespace or
    /// schema plumbing; a document with text nodes keeps to them.
    #[test]
    fn data_held_in_attributes_is_read_from_them() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/xml/iso_15924.xml");
        let doc = std::fs::read(path).expect("test document");
        assert_eq!(detect(&doc), Some("xml"));
        let got = text("xml", &doc);
        for line in ["Adlm 166 Adlam", "Cyrl 220 Cyrillic", "Latn 215 Latin"] {
            assert!(got.lines().any(|l| l == line), "{line:?} in {got}");
        }
        assert_eq!(got.lines().filter(|l| !l.is_empty()).count(), 182, "{got}");
        let ns = b"<r xmlns=\"urn:x\" xmlns:xsi=\"urn:y\" xsi:type=\"t\"><e v=\"a &amp; b\"/></r>";
        assert_eq!(text("xml", ns).trim(), "a & b");
        assert_eq!(
            text("xml", b"<r a=\"1\"><e>only text</e></r>").trim(),
            "only text"
        );
    }

    #[test]
    fn entity_bombs_are_not_expanded() {
        let doc = b"<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n \
            <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n \
            <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n]>\n\
            <lolz>&lol3;</lolz>";
        assert_eq!(detect(doc), Some("xml"));
        assert_eq!(text("xml", doc), "&lol3;\n");
    }

    #[test]
    fn xml_without_declaration_and_broken_xml() {
        assert_eq!(
            detect(b"<rss version=\"2.0\"><channel><title>T</title></channel></rss>"),
            Some("xml")
        );
        assert_eq!(detect(b"<note to self> remember milk"), Some("text"));
        let (err, partial) = run(
            "xml",
            b"<?xml version=\"1.0\"?><a><b>kept</b><c attr=\"x></a>",
        )
        .unwrap_err();
        assert!(matches!(err, ExtractError::Malformed(_)));
        assert_eq!(partial, "kept\n");
    }

    #[test]
    fn a_big_document_stops_at_the_cap() {
        let doc = format!("<r>{}</r>", "<i>some text here</i>".repeat(500_000));
        let (out, full) = capped("xml", doc.as_bytes(), 5000);
        assert!(full);
        assert_eq!(out.chars().count(), 5000);
    }
}
