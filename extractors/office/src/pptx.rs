//! PowerPoint presentations (`pptx`): slides in the order `presentation.xml` lists them (through
//! its relationships), each slide's text frames and tables followed by its speaker notes.
//! Without a usable slide list, the slide parts are read in the order of their numbers.

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use inlet_extract_support::package::{
    self, DEADLINE_EVERY_EVENTS, Damage, Package, write_package_files,
};
use quick_xml::{events::Event, name::QName};

use crate::ooxml::{self, Flow};

/// The presentation part.
const PRESENTATION: &str = "ppt/presentation.xml";

/// Extracts the text of a presentation.
struct Pptx;

impl Extractor for Pptx {
    fn extract(&self, input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
        extract(input, sink)
    }
}

/// Extracts under the sink's decompression budget.
fn extract(input: &[u8], sink: &mut TextSink) -> Result<(), ExtractError> {
    let mut pkg = Package::open(input, sink.decompressed_room())?;
    if let Some(m) = sink.metadata_mut() {
        inlet_extract_support::properties::read(&mut pkg, "docProps/core.xml", m);
        inlet_extract_support::properties::read(&mut pkg, "docProps/app.xml", m);
    }
    let mut damage = Damage::default();
    let slides = match slide_order(&mut pkg) {
        Ok(slides) if !slides.is_empty() => slides,
        other => {
            damage.note(other.map(|_| ()))?;
            numbered_slides(&pkg)
        }
    };
    for slide in &slides {
        if !pkg.has(slide) {
            damage.note(Err(ExtractError::Malformed(format!(
                "missing slide {slide}"
            ))))?;
            continue;
        }
        damage.note(text_part(&mut pkg, slide, sink))?;
        let notes = match ooxml::relationships(&mut pkg, slide) {
            Ok(rels) => rels
                .into_iter()
                .filter(|r| r.kind == "notesSlide")
                .collect(),
            Err(e) => {
                damage.note(Err(e))?;
                Vec::new()
            }
        };
        for rel in notes {
            if pkg.has(&rel.target) {
                damage.note(text_part(&mut pkg, &rel.target, sink))?;
            }
        }
        sink.line_break()?;
    }
    damage.note(write_package_files(
        &mut pkg,
        Some("ppt/embeddings/"),
        "ppt/media/",
        sink,
    ))?;
    damage.finish()
}

/// Slide part names in presentation order: `p:sldId` relationship ids mapped through the
/// presentation's relationships.
fn slide_order(pkg: &mut Package<'_>) -> Result<Vec<String>, ExtractError> {
    let rels = ooxml::relationships(pkg, PRESENTATION)?;
    let mut reader = pkg.xml(PRESENTATION)?;
    let mut buf = Vec::new();
    let mut order = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == "sldId" => {
                let rid = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.local_name().as_ref() == "id" && a.key.prefix().is_some())
                    .map(|a| package::attr_value(&a));
                if let Some(rel) = rid.and_then(|rid| rels.iter().find(|r| r.id == rid)) {
                    order.push(rel.target.clone());
                }
            }
            Ok(Event::End(e)) if e.local_name().as_ref() == "sldIdLst" => return Ok(order),
            Ok(Event::Eof) => return Ok(order),
            Ok(_) => {}
            Err(e) => return Err(package::xml_error(&e)),
        }
        buf.clear();
    }
}

/// `ppt/slides/slideN.xml` parts sorted by N.
fn numbered_slides(pkg: &Package<'_>) -> Vec<String> {
    let mut slides: Vec<(u32, String)> = pkg
        .names()
        .into_iter()
        .filter_map(|n| {
            let num = n
                .strip_prefix("ppt/slides/slide")?
                .strip_suffix(".xml")?
                .parse()
                .ok()?;
            Some((num, n))
        })
        .collect();
    slides.sort();
    slides.into_iter().map(|(_, n)| n).collect()
}

/// Writes the text of a DrawingML part (slide, notes, spreadsheet drawing): `a:t` runs,
/// paragraphs and table cells.
pub(crate) fn text_part(
    pkg: &mut Package<'_>,
    part: &str,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    let mut reader = pkg.xml(part)?;
    let mut buf = Vec::new();
    let mut skip_buf = Vec::new();
    let mut flow = Flow::default();
    let mut in_text = false;
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
            Event::Start(e) => match e.local_name().as_ref() {
                "t" => in_text = true,
                "tc" => flow.cell_start(),
                "br" => flow.line_break(sink)?,
                // Alternate renderings duplicate the chosen one; slide numbers are not content.
                "Fallback" => skip(&mut reader, e.name(), &mut skip_buf)?,
                "fld" if package::attr(&e, "type").is_some_and(|t| t == "slidenum") => {
                    skip(&mut reader, e.name(), &mut skip_buf)?;
                }
                _ => {}
            },
            Event::Empty(e) if e.local_name().as_ref() == "br" => flow.line_break(sink)?,
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => flow.paragraph_end(sink)?,
                "tc" => flow.cell_end(sink)?,
                "tr" | "tbl" => flow.row_end(sink)?,
                _ => {}
            },
            Event::Text(t) if in_text => flow.push(sink, &t)?,
            Event::CData(t) if in_text => flow.push(sink, &t)?,
            Event::GeneralRef(r) if in_text => {
                if let Some(c) = package::resolve_ref(&r) {
                    flow.push(sink, c.encode_utf8(&mut [0; 4]))?;
                }
            }
            Event::Eof => return flow.finish(sink),
            _ => {}
        }
        buf.clear();
    }
}

/// Skips the rest of the element `name` just opened.
fn skip(
    reader: &mut package::XmlEntry<'_, '_>,
    name: QName<'_>,
    buf: &mut Vec<u8>,
) -> Result<(), ExtractError> {
    let end = name.as_ref().to_owned();
    reader
        .read_to_end_into(QName(&end), buf)
        .map(|_| ())
        .map_err(|e| package::xml_error(&e))
}

fn sniff(probe: &Probe<'_>) -> u8 {
    ooxml::score(probe, PRESENTATION)
}

inventory::submit! {
    ExtractorInfo {
        id: "pptx",
        version: 1,
        media_type: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        sniff,
        make: || Box::new(Pptx),
    }
}
