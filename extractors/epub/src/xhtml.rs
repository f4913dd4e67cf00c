//! XHTML content documents to text, streamed: the `<head>`, scripts and styles are skipped, block
//! elements start and end lines, table cells are separated by tabs, whitespace runs collapse to
//! one space. Entities: the XML ones, numeric references and the common HTML ones (EPUB 2
//! documents use them without declaring them); any other is dropped.

use inlet_core::extract::{ExtractError, TextSink};
use inlet_extract_support::{
    package::{self, DEADLINE_EVERY_EVENTS, XmlEntry},
    words::Words,
};
use quick_xml::{events::Event, name::QName};

/// Elements whose content is not text.
const SKIPPED: &[&str] = &["head", "script", "style", "template", "title"];

/// Elements that start and end a line.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tr",
    "ul",
];

/// Writes the text of one content document.
pub(crate) fn write(mut reader: XmlEntry<'_, '_>, sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut buf = Vec::new();
    let mut skip_buf = Vec::new();
    let mut words = Words::default();
    let mut events = 0u32;
    loop {
        events = events.wrapping_add(1);
        if events.is_multiple_of(DEADLINE_EVERY_EVENTS) {
            sink.check_deadline()?;
        }
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| package::xml_error(&e))?;
        match event {
            Event::Start(e) => {
                let name = e.local_name();
                let name = name.as_ref();
                if SKIPPED.iter().any(|s| s.eq_ignore_ascii_case(name)) {
                    let end = e.name().as_ref().to_owned();
                    reader
                        .read_to_end_into(QName(&end), &mut skip_buf)
                        .map_err(|e| package::xml_error(&e))?;
                } else if is_block(name) || name.eq_ignore_ascii_case("br") {
                    words.line_break(sink)?;
                }
            }
            Event::Empty(e) => {
                let name = e.local_name();
                let name = name.as_ref();
                if name.eq_ignore_ascii_case("br") || is_block(name) {
                    words.line_break(sink)?;
                } else if name.eq_ignore_ascii_case("td") || name.eq_ignore_ascii_case("th") {
                    words.cell(sink)?;
                }
            }
            Event::End(e) => {
                let name = e.local_name();
                let name = name.as_ref();
                if is_block(name) {
                    words.line_break(sink)?;
                } else if name.eq_ignore_ascii_case("td") || name.eq_ignore_ascii_case("th") {
                    words.cell(sink)?;
                }
            }
            Event::Text(t) => words.text(sink, &t)?,
            Event::CData(t) => words.text(sink, &t)?,
            Event::GeneralRef(r) => {
                let resolved = package::resolve_ref(&r)
                    .map(|c| c.to_string())
                    .or_else(|| html_entity(&r).map(str::to_owned));
                if let Some(s) = resolved {
                    if s.chars().all(char::is_whitespace) {
                        words.space();
                    } else {
                        words.text(sink, &s)?;
                    }
                }
            }
            Event::Eof => return words.line_break(sink),
            _ => {}
        }
        buf.clear();
    }
}

fn is_block(name: &str) -> bool {
    BLOCKS.iter().any(|b| b.eq_ignore_ascii_case(name))
}

/// The common HTML entities that EPUB 2 documents use undeclared.
fn html_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "nbsp" | "ensp" | "emsp" | "thinsp" => " ",
        "shy" | "zwnj" | "zwj" | "lrm" | "rlm" => "",
        "mdash" => "\u{2014}",
        "ndash" => "\u{2013}",
        "hellip" => "\u{2026}",
        "lsquo" => "\u{2018}",
        "rsquo" => "\u{2019}",
        "sbquo" => "\u{201A}",
        "ldquo" => "\u{201C}",
        "rdquo" => "\u{201D}",
        "bdquo" => "\u{201E}",
        "laquo" => "\u{AB}",
        "raquo" => "\u{BB}",
        "lsaquo" => "\u{2039}",
        "rsaquo" => "\u{203A}",
        "bull" => "\u{2022}",
        "middot" => "\u{B7}",
        "copy" => "\u{A9}",
        "reg" => "\u{AE}",
        "trade" => "\u{2122}",
        "deg" => "\u{B0}",
        "plusmn" => "\u{B1}",
        "times" => "\u{D7}",
        "divide" => "\u{F7}",
        "sect" => "\u{A7}",
        "para" => "\u{B6}",
        "dagger" => "\u{2020}",
        "Dagger" => "\u{2021}",
        "prime" => "\u{2032}",
        "Prime" => "\u{2033}",
        "frac12" => "\u{BD}",
        "frac14" => "\u{BC}",
        "frac34" => "\u{BE}",
        "sup1" => "\u{B9}",
        "sup2" => "\u{B2}",
        "sup3" => "\u{B3}",
        "pound" => "\u{A3}",
        "euro" => "\u{20AC}",
        "cent" => "\u{A2}",
        "yen" => "\u{A5}",
        "iexcl" => "\u{A1}",
        "iquest" => "\u{BF}",
        "szlig" => "\u{DF}",
        "aelig" => "\u{E6}",
        "AElig" => "\u{C6}",
        "oelig" => "\u{153}",
        "OElig" => "\u{152}",
        "oslash" => "\u{F8}",
        "Oslash" => "\u{D8}",
        "aring" => "\u{E5}",
        "Aring" => "\u{C5}",
        "ccedil" => "\u{E7}",
        "Ccedil" => "\u{C7}",
        "ntilde" => "\u{F1}",
        "Ntilde" => "\u{D1}",
        "eth" => "\u{F0}",
        "thorn" => "\u{FE}",
        _ => return accented(name),
    })
}

/// `&eacute;`-style entities: a base letter and an accent name.
fn accented(name: &str) -> Option<&'static str> {
    const TABLE: &[(&str, &str)] = &[
        ("acute", "aáeéiíoóuúyýAÁEÉIÍOÓUÚYÝ"),
        ("grave", "aàeèiìoòuùAÀEÈIÌOÒUÙ"),
        ("circ", "aâeêiîoôuûAÂEÊIÎOÔUÛ"),
        ("uml", "aäeëiïoöuüyÿAÄEËIÏOÖUÜ"),
        ("tilde", "aãoõAÃOÕ"),
    ];
    let (base, accent) = name.split_at(name.char_indices().nth(1)?.0);
    let base = base.chars().next()?;
    let (_, pairs) = TABLE.iter().find(|(a, _)| *a == accent)?;
    let mut chars = pairs.char_indices();
    while let Some((_, b)) = chars.next() {
        let (i, c) = chars.next()?;
        if b == base {
            return Some(&pairs[i..i + c.len_utf8()]);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_entities_resolve() {
        assert_eq!(html_entity("eacute"), Some("é"));
        assert_eq!(html_entity("Uuml"), Some("Ü"));
        assert_eq!(html_entity("mdash"), Some("\u{2014}"));
        assert_eq!(html_entity("bogus"), None);
        assert_eq!(html_entity("xacute"), None);
    }
}
