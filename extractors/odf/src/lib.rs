#![doc = include_str!("../README.md")]

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use inlet_extract_support::{
    package::{self, DEADLINE_EVERY_EVENTS, Damage, Package, XmlEntry, write_package_files},
    words::Words,
};
use quick_xml::{
    events::{BytesStart, Event},
    name::QName,
};

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
use inlet_extract_testkit as testutil;

/// The document body.
const CONTENT: &str = "content.xml";

/// Styles, where page headers and footers live.
const STYLES: &str = "styles.xml";

/// Most spaces one `text:s` element expands to.
const MAX_SPACES: usize = 64;

/// Score when the stored `mimetype` names the format.
const MIMETYPE_SCORE: u8 = 95;

/// Score for a package with `content.xml` and a manifest but no readable `mimetype`.
const MANIFEST_SCORE: u8 = 60;

/// The ODF flavours we register: format id and the media type stored in `mimetype`.
const FLAVOURS: &[(&str, &str)] = &[
    ("odt", "application/vnd.oasis.opendocument.text"),
    ("ods", "application/vnd.oasis.opendocument.spreadsheet"),
    ("odp", "application/vnd.oasis.opendocument.presentation"),
];

/// Extracts the text of an OpenDocument package.
struct Odf;

impl Extractor for Odf {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        extract(input, sink)
    }
}

/// Extracts under the sink's decompression budget: `content.xml`, then the page headers and
/// footers of `styles.xml`, then the words OCR reads in its pictures.
fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut pkg = Package::open(input, sink.decompressed_room())?;
    if let Some(m) = sink.metadata_mut() {
        inlet_extract_support::properties::read(&mut pkg, "meta.xml", m);
    }
    let mut damage = Damage::default();
    damage.note(part(&mut pkg, CONTENT, Scope::Body, sink))?;
    if pkg.has(STYLES) {
        damage.note(part(&mut pkg, STYLES, Scope::MasterPages, sink))?;
    }
    damage.note(write_package_files(&mut pkg, None, "Pictures/", sink))?;
    damage.finish()
}

/// Which text of a part is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Paragraphs anywhere (content.xml).
    Body,
    /// Only paragraphs inside page headers and footers (styles.xml).
    MasterPages,
}

/// Whitespace and layout state while writing a part.
#[derive(Debug, Default)]
struct Flow {
    /// Whitespace runs collapse to one space (ODF's rule inside paragraphs).
    words: Words,
    cell_depth: u32,
}

impl Flow {
    /// Writes text with whitespace runs collapsed.
    fn text(&mut self, sink: &mut TextSink, text: &str) -> Result<(), ExtractError> {
        self.words.text(sink, text)
    }

    /// Writes text as is (spaces from `text:s`, tabs).
    fn literal(&mut self, sink: &mut TextSink, text: &str) -> Result<(), ExtractError> {
        self.words.cancel_space();
        sink.push(text)
    }

    fn paragraph_end(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        if self.cell_depth > 0 {
            self.words.space();
            Ok(())
        } else {
            self.line_break(sink)
        }
    }

    fn line_break(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.words.line_break(sink)
    }

    fn cell_end(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.cell_depth = self.cell_depth.saturating_sub(1);
        self.words.cell(sink)
    }
}

/// Writes the text of one ODF XML part.
fn part(
    pkg: &mut Package<'_>,
    name: &str,
    scope: Scope,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    let mut reader = pkg.xml(name)?;
    let mut buf = Vec::new();
    let mut skip_buf = Vec::new();
    let mut flow = Flow::default();
    // Depth of text containers (paragraphs, headings) we are in; text elsewhere is layout.
    let mut para_depth = 0u32;
    // Depth of page headers and footers (for `Scope::MasterPages`).
    let mut page_depth = 0u32;
    let mut events = 0u32;
    loop {
        events = events.wrapping_add(1);
        if events.is_multiple_of(DEADLINE_EVERY_EVENTS) {
            sink.check_deadline()?;
        }
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| package::xml_error(&e))?;
        let reading = scope == Scope::Body || page_depth > 0;
        match event {
            Event::Start(e) => match e.local_name().as_ref() {
                "p" | "h" => para_depth += 1,
                "table-cell" | "covered-table-cell" => flow.cell_depth += 1,
                "header" | "footer" | "header-left" | "footer-left" | "header-first"
                | "footer-first" => page_depth += 1,
                // Deleted text of tracked changes, annotation authors and dates, forms, and
                // the scripts, styles and settings that carry no text.
                "tracked-changes" | "forms" | "scripts" | "automatic-styles"
                | "font-face-decls" | "sequence-decls" => {
                    skip(&mut reader, e.name(), &mut skip_buf)?;
                }
                _ if matches!(
                    e.name().as_ref(),
                    "dc:creator" | "dc:date" | "meta:date-string"
                ) =>
                {
                    skip(&mut reader, e.name(), &mut skip_buf)?;
                }
                "s" if reading && para_depth > 0 => flow.literal(sink, &spaces(&e))?,
                // A note's citation and body are words of their own.
                "note" | "note-body" => flow.words.space(),
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                "s" if reading && para_depth > 0 => flow.literal(sink, &spaces(&e))?,
                "tab" if reading && para_depth > 0 => flow.literal(sink, "\t")?,
                "line-break" if reading => flow.line_break(sink)?,
                "p" | "h" if reading => flow.paragraph_end(sink)?,
                "table-cell" | "covered-table-cell" if reading => {
                    flow.cell_depth += 1;
                    flow.cell_end(sink)?;
                }
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                "p" | "h" => {
                    para_depth = para_depth.saturating_sub(1);
                    if reading {
                        flow.paragraph_end(sink)?;
                    }
                }
                "table-cell" | "covered-table-cell" => {
                    if reading {
                        flow.cell_end(sink)?;
                    } else {
                        flow.cell_depth = flow.cell_depth.saturating_sub(1);
                    }
                }
                "table-row" | "table" if reading => flow.line_break(sink)?,
                "note" | "note-citation" => flow.words.space(),
                "header" | "footer" | "header-left" | "footer-left" | "header-first"
                | "footer-first" => page_depth = page_depth.saturating_sub(1),
                _ => {}
            },
            Event::Text(t) if reading && para_depth > 0 => flow.text(sink, &t)?,
            Event::CData(t) if reading && para_depth > 0 => flow.text(sink, &t)?,
            Event::GeneralRef(r) if reading && para_depth > 0 => {
                if let Some(c) = package::resolve_ref(&r) {
                    flow.text(sink, c.encode_utf8(&mut [0; 4]))?;
                }
            }
            Event::Eof => return flow.line_break(sink),
            _ => {}
        }
        buf.clear();
    }
}

/// The spaces a `text:s` stands for (`text:c`, default 1, capped).
fn spaces(e: &BytesStart<'_>) -> String {
    let n = package::attr(e, "c")
        .and_then(|c| c.trim().parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, MAX_SPACES);
    " ".repeat(n)
}

/// Skips the rest of the element `name` just opened.
fn skip(
    reader: &mut XmlEntry<'_, '_>,
    name: QName<'_>,
    buf: &mut Vec<u8>,
) -> Result<(), ExtractError> {
    let end = name.as_ref().to_owned();
    reader
        .read_to_end_into(QName(&end), buf)
        .map(|_| ())
        .map_err(|e| package::xml_error(&e))
}

/// Scores a probe as the ODF flavour with media type `media`.
fn score(probe: &Probe<'_>, media: &str) -> u8 {
    if !probe.has_entry(CONTENT) {
        return 0;
    }
    match package::stored_mimetype(probe.bytes) {
        // `-template` and `-master` variants read the same.
        Some(m) if m.starts_with(media) && !m[media.len()..].starts_with("-web") => MIMETYPE_SCORE,
        Some(_) => 0,
        // Without a stored media type, a manifest and content.xml say "ODF": call it text.
        None if media == FLAVOURS[0].1 && probe.has_entry("META-INF/manifest.xml") => {
            MANIFEST_SCORE
        }
        None => 0,
    }
}

inventory::submit! {
    ExtractorInfo { id: FLAVOURS[0].0, version: 1, media_type: FLAVOURS[0].1, sniff: |p| score(p, FLAVOURS[0].1), make: || Box::new(Odf) }
}
inventory::submit! {
    ExtractorInfo { id: FLAVOURS[1].0, version: 1, media_type: FLAVOURS[1].1, sniff: |p| score(p, FLAVOURS[1].1), make: || Box::new(Odf) }
}
inventory::submit! {
    ExtractorInfo { id: FLAVOURS[2].0, version: 1, media_type: FLAVOURS[2].1, sniff: |p| score(p, FLAVOURS[2].1), make: || Box::new(Odf) }
}
