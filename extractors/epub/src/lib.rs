#![doc = include_str!("../README.md")]

mod xhtml;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
use inlet_extract_testkit as testutil;

use std::collections::HashMap;

use inlet_core::extract::{
    DocumentMetadata, ExtractError, Extractor, ExtractorInfo, MAX_METADATA_CHARS, Probe, TextSink,
    keep, keep_names,
};
use inlet_extract_support::package::{self, Damage, Package};
use quick_xml::events::{BytesEnd, BytesStart, Event};

/// Where an EPUB names its package document.
const CONTAINER: &str = "META-INF/container.xml";

/// The media type an EPUB stores first.
const MEDIA_TYPE: &str = "application/epub+zip";

/// Score when the stored `mimetype` says EPUB.
const MIMETYPE_SCORE: u8 = 95;

/// Score when there is a `mimetype` entry (compressed, or not first) and a container.
const ENTRY_SCORE: u8 = 70;

/// Extracts the text of an EPUB.
struct Epub;

impl Extractor for Epub {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        extract(input, sink)
    }
}

/// Extracts under the sink's decompression budget: the package document's metadata, then the
/// spine's documents in reading order.
fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut pkg = Package::open(input, sink.max_decompressed_bytes())?;
    let mut damage = Damage::default();
    let mut metadata = Metadata::default();
    let order = reading_order(&mut pkg, &mut metadata);
    if let Some(m) = sink.metadata_mut() {
        metadata.fill(m);
    }
    let documents = match order {
        Ok(docs) if !docs.is_empty() => docs,
        other => {
            damage.note(other.map(|_| ()))?;
            // No usable package document: every (X)HTML entry, in name order.
            let mut names: Vec<String> = pkg
                .names()
                .into_iter()
                .filter(|n| {
                    let n = n.to_ascii_lowercase();
                    n.ends_with(".xhtml") || n.ends_with(".html") || n.ends_with(".htm")
                })
                .collect();
            names.sort();
            names
        }
    };
    for doc in documents {
        if !pkg.has(&doc) {
            damage.note(Err(ExtractError::Malformed(format!("missing {doc}"))))?;
            continue;
        }
        let result = pkg.xml(&doc).and_then(|reader| xhtml::write(reader, sink));
        damage.note(result)?;
        sink.line_break()?;
    }
    damage.finish()
}

/// The package document's path, from `META-INF/container.xml`.
fn rootfile(pkg: &mut Package<'_>) -> Result<Option<String>, ExtractError> {
    let mut reader = pkg.xml(CONTAINER)?;
    let mut buf = Vec::new();
    let mut first = None;
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == "rootfile" => {
                let path = package::attr(&e, "full-path");
                let media = package::attr(&e, "media-type");
                if media.as_deref() == Some("application/oebps-package+xml") && path.is_some() {
                    return Ok(path);
                }
                if first.is_none() {
                    first = path;
                }
            }
            Ok(Event::Eof) => return Ok(first),
            Ok(_) => {}
            Err(e) => return Err(package::xml_error(&e)),
        }
        buf.clear();
    }
}

/// The package document's `<metadata>` (Dublin Core elements and EPUB 3's `meta`), read as
/// the reading order is.
#[derive(Default)]
struct Metadata {
    inside: bool,
    /// The element whose text is being read.
    field: Option<Field>,
    text: String,
    title: Option<String>,
    creators: Vec<String>,
    created: Option<String>,
    modified: Option<String>,
    language: Option<String>,
}

/// A metadata element we report.
#[derive(Clone, Copy)]
enum Field {
    Title,
    Creator,
    Created,
    Modified,
    Language,
}

/// Bytes of one metadata element's text kept (more than [`keep`] keeps).
const MAX_FIELD_BYTES: usize = 4 * MAX_METADATA_CHARS;

impl Metadata {
    fn start(&mut self, e: &BytesStart<'_>) {
        let name = e.local_name();
        if name.as_ref() == "metadata" {
            self.inside = true;
        }
        if !self.inside {
            return;
        }
        self.text.clear();
        self.field = match name.as_ref() {
            "title" => Some(Field::Title),
            "creator" => Some(Field::Creator),
            "language" => Some(Field::Language),
            // EPUB 2 says which date it is (`opf:event`); EPUB 3's `dc:date` is the publication.
            "date" => match package::attr(e, "event").as_deref() {
                None | Some("publication" | "creation" | "original-publication") => {
                    Some(Field::Created)
                }
                Some("modification") => Some(Field::Modified),
                Some(_) => None,
            },
            "meta" if package::attr(e, "property").as_deref() == Some("dcterms:modified") => {
                Some(Field::Modified)
            }
            _ => None,
        };
    }

    fn text(&mut self, text: &str) {
        if self.field.is_some() && self.text.len() < MAX_FIELD_BYTES {
            self.text.push_str(text);
        }
    }

    fn end(&mut self, e: &BytesEnd<'_>) {
        if e.local_name().as_ref() == "metadata" {
            self.inside = false;
        }
        let Some(field) = self.field.take() else {
            return;
        };
        let text = std::mem::take(&mut self.text);
        let text = text.trim();
        match field {
            Field::Title => keep(&mut self.title, text),
            Field::Creator if !text.is_empty() => self.creators.push(text.to_owned()),
            Field::Creator => {}
            Field::Created => keep(&mut self.created, text),
            Field::Modified => keep(&mut self.modified, text),
            Field::Language => keep(&mut self.language, text),
        }
    }

    /// Fills the unset fields of `m`.
    fn fill(&self, m: &mut DocumentMetadata) {
        keep(&mut m.title, self.title.as_deref().unwrap_or_default());
        keep_names(&mut m.authors, self.creators.iter().map(String::as_str));
        keep(&mut m.created, self.created.as_deref().unwrap_or_default());
        keep(
            &mut m.modified,
            self.modified.as_deref().unwrap_or_default(),
        );
        keep(
            &mut m.language,
            self.language.as_deref().unwrap_or_default(),
        );
    }
}

/// Content documents in spine order (manifest order when the spine is empty); the package
/// document's metadata into `metadata` on the way.
fn reading_order(
    pkg: &mut Package<'_>,
    metadata: &mut Metadata,
) -> Result<Vec<String>, ExtractError> {
    let Some(opf) = rootfile(pkg)? else {
        return Ok(Vec::new());
    };
    let opf = package::resolve("", &opf);
    let base = package::folder(&opf).to_owned();
    let mut reader = pkg.xml(&opf)?;
    let mut buf = Vec::new();
    let mut manifest: HashMap<String, (String, String)> = HashMap::new();
    let mut manifest_order: Vec<String> = Vec::new();
    let mut spine: Vec<String> = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf);
        match &event {
            Ok(Event::Start(e)) => metadata.start(e),
            Ok(Event::End(e)) => metadata.end(e),
            Ok(Event::Text(t)) => metadata.text(t),
            Ok(Event::CData(t)) => metadata.text(t),
            Ok(Event::GeneralRef(r)) => {
                if let Some(c) = package::resolve_ref(r) {
                    metadata.text(c.encode_utf8(&mut [0; 4]));
                }
            }
            _ => {}
        }
        match event {
            Ok(Event::Start(e) | Event::Empty(e)) => match e.local_name().as_ref() {
                "item" => {
                    if let (Some(id), Some(href)) =
                        (package::attr(&e, "id"), package::attr(&e, "href"))
                    {
                        let media = package::attr(&e, "media-type").unwrap_or_default();
                        manifest_order.push(id.clone());
                        manifest.insert(id, (package::resolve(&base, &href), media));
                    }
                }
                "itemref" => {
                    if let Some(id) = package::attr(&e, "idref") {
                        spine.push(id);
                    }
                }
                _ => {}
            },
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => return Err(package::xml_error(&e)),
        }
        buf.clear();
    }
    let ids = if spine.is_empty() {
        manifest_order
    } else {
        spine
    };
    Ok(ids
        .iter()
        .filter_map(|id| manifest.get(id))
        .filter(|(_, media)| is_content(media))
        .map(|(href, _)| href.clone())
        .collect())
}

/// Whether a manifest media type is a content document we read.
fn is_content(media: &str) -> bool {
    matches!(
        media,
        "application/xhtml+xml"
            | "text/html"
            | "application/xml"
            | "text/xml"
            | ""
            | "text/x-oeb1-document"
    )
}

fn sniff(probe: &Probe<'_>) -> u8 {
    if !probe.has_entry(CONTAINER) {
        return 0;
    }
    match package::stored_mimetype(probe.bytes) {
        Some(m) if m == MEDIA_TYPE => MIMETYPE_SCORE,
        Some(_) => 0,
        None if probe.has_entry("mimetype") => ENTRY_SCORE,
        None => 0,
    }
}

inventory::submit! {
    ExtractorInfo {
        id: "epub",
        version: 1,
        media_type: "application/epub+zip",
        sniff,
        make: || Box::new(Epub),
    }
}
