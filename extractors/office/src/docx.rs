//! Word documents (`docx`): the body, then headers and footers, footnotes, endnotes and comments,
//! each read from its part as a stream of XML events. Paragraphs end lines; table cells are
//! separated by tabs and rows end lines; text boxes are read where they are anchored. Deleted
//! text (tracked changes), field codes and the VML fallback copies of drawings are skipped.

use inlet_core::extract::{ExtractError, Extractor, ExtractorInfo, Probe, TextSink};
use inlet_extract_support::package::{
    self, DEADLINE_EVERY_EVENTS, Damage, Package, write_package_files,
};
use quick_xml::{events::Event, name::QName};

use crate::ooxml::{self, Flow};

/// The main document part.
const DOCUMENT: &str = "word/document.xml";

/// Relationship types of the parts read after the body, in this order.
const SECONDARY: &[&str] = &["header", "footer", "footnotes", "endnotes", "comments"];

/// Extracts the text of a Word document.
struct Docx;

impl Extractor for Docx {
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
    let rels = ooxml::relationships(&mut pkg, DOCUMENT);
    damage.note(story(&mut pkg, DOCUMENT, sink))?;
    let rels = match rels {
        Ok(rels) => rels,
        Err(e) => {
            damage.note(Err(e))?;
            Vec::new()
        }
    };
    for kind in SECONDARY {
        for rel in rels.iter().filter(|r| r.kind == *kind) {
            if pkg.has(&rel.target) {
                sink.line_break()?;
                damage.note(story(&mut pkg, &rel.target, sink))?;
            }
        }
    }
    damage.note(write_package_files(
        &mut pkg,
        Some("word/embeddings/"),
        "word/media/",
        sink,
    ))?;
    damage.finish()
}

/// Writes the text of one WordprocessingML part.
fn story(pkg: &mut Package<'_>, part: &str, sink: &mut TextSink) -> Result<(), ExtractError> {
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
                // Deleted text, field instructions, VML copies of drawings and tab stops.
                "delText" | "instrText" | "Fallback" | "tabs" | "delInstrText" => {
                    let end = e.name().as_ref().to_owned();
                    reader
                        .read_to_end_into(QName(&end), &mut skip_buf)
                        .map_err(|e| package::xml_error(&e))?;
                }
                "tc" => flow.cell_start(),
                "br" | "cr" => flow.line_break(sink)?,
                "docPr" => alt_text(&e, &mut flow, sink)?,
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                "docPr" => alt_text(&e, &mut flow, sink)?,
                "tab" | "ptab" => flow.push(sink, "\t")?,
                "br" | "cr" => flow.line_break(sink)?,
                "noBreakHyphen" => flow.push(sink, "-")?,
                "sym" => {
                    if let Some(c) = package::attr(&e, "char").and_then(|h| symbol(&h)) {
                        flow.push(sink, c.encode_utf8(&mut [0; 4]))?;
                    }
                }
                _ => {}
            },
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

/// The description (alt text) of a drawing, on its own line.
fn alt_text(
    e: &quick_xml::events::BytesStart<'_>,
    flow: &mut Flow,
    sink: &mut TextSink,
) -> Result<(), ExtractError> {
    if let Some(descr) = package::attr(e, "descr").filter(|d| !d.trim().is_empty()) {
        flow.line_break(sink)?;
        flow.push(sink, descr.trim())?;
        flow.line_break(sink)?;
    }
    Ok(())
}

/// A `w:sym` character: hex code, with the private-use offset of symbol fonts removed.
fn symbol(hex: &str) -> Option<char> {
    let code = u32::from_str_radix(hex, 16).ok()?;
    let code = if (0xF020..=0xF0FF).contains(&code) {
        code - 0xF000
    } else {
        code
    };
    char::from_u32(code).filter(|c| !c.is_control())
}

fn sniff(probe: &Probe<'_>) -> u8 {
    ooxml::score(probe, DOCUMENT)
}

inventory::submit! {
    ExtractorInfo {
        id: "docx",
        version: 1,
        media_type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        sniff,
        make: || Box::new(Docx),
    }
}
