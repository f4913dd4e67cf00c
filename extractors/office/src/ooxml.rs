//! What the OOXML formats share: detection by the main part's name among the ZIP entries, OPC
//! relationships, and the [`Flow`] that turns paragraph, cell and row boundaries into line breaks
//! and tabs.

use inlet_core::extract::{ExtractError, Probe, TextSink};
use inlet_extract_support::package::{self, Package};
use quick_xml::events::Event;

/// Detection score when the package has the format's main part.
const MAIN_PART_SCORE: u8 = 95;

/// Scores a probe by whether its ZIP entries include `main_part`.
pub(crate) fn score(probe: &Probe<'_>, main_part: &str) -> u8 {
    if probe.bytes.starts_with(b"PK") && probe.has_entry(main_part) {
        MAIN_PART_SCORE
    } else {
        0
    }
}

/// One `Relationship` of an OPC `.rels` part.
#[derive(Debug, Clone)]
pub(crate) struct Relationship {
    /// `Id`, e.g. `rId3`.
    pub(crate) id: String,
    /// The last segment of `Type`, e.g. `header`, `slide`, `notesSlide`.
    pub(crate) kind: String,
    /// The target part name, resolved against the source part's folder.
    pub(crate) target: String,
}

/// The relationships of `part` (read from `<folder>/_rels/<name>.rels`); empty when there are
/// none. External targets (hyperlinks) are left out.
pub(crate) fn relationships(
    pkg: &mut Package<'_>,
    part: &str,
) -> Result<Vec<Relationship>, ExtractError> {
    let base = package::folder(part);
    let name = &part[base.len()..];
    let rels_name = format!("{base}_rels/{name}.rels");
    if !pkg.has(&rels_name) {
        return Ok(Vec::new());
    }
    let mut reader = pkg.xml(&rels_name)?;
    let mut buf = Vec::new();
    let mut out = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == "Relationship" => {
                if package::attr(&e, "TargetMode")
                    .is_some_and(|m| m.eq_ignore_ascii_case("External"))
                {
                    continue;
                }
                let (Some(id), Some(kind), Some(target)) = (
                    package::attr(&e, "Id"),
                    package::attr(&e, "Type"),
                    package::attr(&e, "Target"),
                ) else {
                    continue;
                };
                let kind = kind.rsplit('/').next().unwrap_or_default().to_owned();
                out.push(Relationship {
                    id,
                    kind,
                    target: package::resolve(base, &target),
                });
            }
            Ok(Event::Eof) => return Ok(out),
            Ok(_) => {}
            Err(e) => return Err(package::xml_error(&e)),
        }
        buf.clear();
    }
}

/// Layout state while writing a part: paragraphs end lines, except inside table cells where they
/// are joined by spaces; cells are separated by tabs and rows end lines.
#[derive(Debug, Default)]
pub(crate) struct Flow {
    pending_space: bool,
    cell_depth: u32,
}

impl Flow {
    /// Writes a run of text.
    pub(crate) fn push(&mut self, sink: &mut TextSink, s: &str) -> Result<(), ExtractError> {
        if s.is_empty() {
            return Ok(());
        }
        if self.pending_space {
            self.pending_space = false;
            sink.space()?;
        }
        sink.push(s)
    }

    /// Ends a paragraph.
    pub(crate) fn paragraph_end(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        if self.cell_depth > 0 {
            self.pending_space = true;
            Ok(())
        } else {
            sink.line_break()
        }
    }

    /// A hard line break.
    pub(crate) fn line_break(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.pending_space = false;
        sink.line_break()
    }

    /// A table cell starts.
    pub(crate) fn cell_start(&mut self) {
        self.cell_depth = self.cell_depth.saturating_add(1);
    }

    /// A table cell ends: a tab unless the line is still empty.
    pub(crate) fn cell_end(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.cell_depth = self.cell_depth.saturating_sub(1);
        self.pending_space = false;
        let text = sink.as_str();
        if text.is_empty() || text.ends_with(['\n', '\t']) {
            return Ok(());
        }
        sink.push("\t")
    }

    /// A table row (or table) ends.
    pub(crate) fn row_end(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.pending_space = false;
        sink.line_break()
    }

    /// The part ends.
    pub(crate) fn finish(&mut self, sink: &mut TextSink) -> Result<(), ExtractError> {
        self.pending_space = false;
        self.cell_depth = 0;
        sink.line_break()
    }
}
