#![doc = include_str!("../README.md")]

mod xhtml;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
use inlet_extract_testkit as testutil;

use std::collections::HashMap;

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use inlet_extract_support::package::{self, Damage, Package};
use quick_xml::events::Event;

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

/// Extracts under the sink's decompression budget: the spine's documents in reading order.
fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut pkg = Package::open(input, sink.max_decompressed_bytes())?;
    let mut damage = Damage::default();
    let documents = match reading_order(&mut pkg) {
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

/// Content documents in spine order (manifest order when the spine is empty).
fn reading_order(pkg: &mut Package<'_>) -> Result<Vec<String>, ExtractError> {
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
        match reader.read_event_into(&mut buf) {
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
        sniff,
        make: || Box::new(Epub),
    }
}
