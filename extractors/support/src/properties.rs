//! Document properties kept in XML parts of a package — OOXML's `docProps/core.xml` and
//! `docProps/app.xml`, ODF's `meta.xml` — as [`DocumentMetadata`]: title, creator, created and
//! modified dates, language, page or slide count. Elements are matched by local name, so the
//! prefixes (`dc:`, `dcterms:`, `cp:`, `meta:`) do not matter.

use inlet_core::extract::{DocumentMetadata, keep, keep_names};
use quick_xml::{Reader, events::Event};

use crate::package::{Package, lenient};

/// Largest property part read (they are a few KiB).
const MAX_PART_BYTES: u64 = 1 << 20;

/// Fills `m` from the property part `name` when the package has it (unset fields only).
/// Damage in the part leaves what was read.
pub fn read(pkg: &mut Package<'_>, name: &str, m: &mut DocumentMetadata) {
    if !pkg.has(name)
        || pkg
            .declared_size(name)
            .map_or(true, |size| size > MAX_PART_BYTES)
    {
        return;
    }
    let Ok(xml) = pkg.read(name) else {
        return;
    };
    parse(&xml, m);
}

/// Fills `m` from a property part's XML.
pub fn parse(xml: &[u8], m: &mut DocumentMetadata) {
    let mut reader = Reader::from_reader(xml);
    lenient(&mut reader);
    let mut current: Option<String> = None;
    let mut text = String::new();
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => {
                current = Some(e.local_name().as_ref().to_string());
                text.clear();
            }
            // ODF: <meta:document-statistic meta:page-count="3" .../>
            Ok(Event::Empty(e))
                if e.local_name().as_ref() == "document-statistic" && m.pages.is_none() =>
            {
                m.pages =
                    crate::package::attr(&e, "page-count").and_then(|v| v.trim().parse().ok());
            }
            Ok(Event::Text(t)) => text.push_str(&t),
            Ok(Event::CData(t)) => text.push_str(&t),
            Ok(Event::GeneralRef(r)) => {
                if let Some(c) = crate::package::resolve_ref(&r) {
                    text.push(c);
                }
            }
            Ok(Event::End(_)) => {
                if let Some(name) = current.take() {
                    apply(&name, text.trim(), m);
                }
                text.clear();
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
        buf.clear();
    }
}

/// One property element's text into its field.
fn apply(name: &str, text: &str, m: &mut DocumentMetadata) {
    match name {
        "title" => keep(&mut m.title, text),
        "creator" | "initial-creator" => keep_names(&mut m.authors, [text]),
        "created" | "creation-date" => keep(&mut m.created, text),
        "modified" | "date" => keep(&mut m.modified, text),
        "language" => keep(&mut m.language, text),
        "Pages" | "Slides" if m.pages.is_none() => m.pages = text.parse().ok(),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ooxml_core_and_app_properties() {
        let core = br#"<?xml version="1.0"?><cp:coreProperties
            xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
            xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/">
            <dc:title>Quarterly report</dc:title><dc:creator>Ada Lovelace</dc:creator>
            <dcterms:created>2024-01-02T03:04:05Z</dcterms:created>
            <dcterms:modified>2024-02-03T04:05:06Z</dcterms:modified>
            <dc:language>en-GB</dc:language></cp:coreProperties>"#;
        let app = br#"<Properties><Pages>7</Pages></Properties>"#;
        let mut m = DocumentMetadata::default();
        parse(core, &mut m);
        parse(app, &mut m);
        assert_eq!(m.title.as_deref(), Some("Quarterly report"));
        assert_eq!(m.authors, ["Ada Lovelace"]);
        assert_eq!(m.created.as_deref(), Some("2024-01-02T03:04:05Z"));
        assert_eq!(m.modified.as_deref(), Some("2024-02-03T04:05:06Z"));
        assert_eq!(m.language.as_deref(), Some("en-GB"));
        assert_eq!(m.pages, Some(7));
    }

    #[test]
    fn odf_meta() {
        let meta = br#"<office:document-meta><office:meta><dc:title>Notes</dc:title>
            <meta:initial-creator>Grace</meta:initial-creator>
            <meta:creation-date>2020-05-06T07:08:09</meta:creation-date>
            <dc:date>2021-01-01T00:00:00</dc:date>
            <meta:document-statistic meta:page-count="3" meta:word-count="10"/>
            </office:meta></office:document-meta>"#;
        let mut m = DocumentMetadata::default();
        parse(meta, &mut m);
        assert_eq!(m.title.as_deref(), Some("Notes"));
        assert_eq!(m.authors, ["Grace"]);
        assert_eq!(m.created.as_deref(), Some("2020-05-06T07:08:09"));
        assert_eq!(m.modified.as_deref(), Some("2021-01-01T00:00:00"));
        assert_eq!(m.pages, Some(3));
    }
}
