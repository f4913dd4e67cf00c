//! The text of a presentation, slide by slide.
//!
//! In presentation order (when the persist directory can be followed): the document's
//! `SlideListWithText` lists the slides (`SlidePersistAtom`s) and holds the text of their
//! placeholders; each slide's own container holds its drawing, whose shapes either carry text
//! (`OfficeArtClientTextbox` with text atoms) or point at a placeholder text of the list
//! (`OutlineTextRefAtom`). A slide's text is written shape by shape, placeholder texts no shape
//! points at after them, comments last; then its notes (the notes slide its `SlideAtom` names).
//!
//! In stream order otherwise (no `Current User` stream, a broken edit chain): every slide and
//! notes container of the stream, then the placeholder texts of the list. Either way, the text
//! masters draw on their slides follows (their shapes other than placeholders, whose text is
//! the layout's "Click to edit" prompts), once per master; and comments are read from the
//! programmable tags' data (`BinaryTagDataBlob`) where PowerPoint 2002 and later keep them.

use std::collections::{HashMap, HashSet};

use inlet_core::extract::{ExtractError, TextSink};

use crate::{
    persist::Directory,
    record::{Children, Damaged, Record, u32_at},
};

const DOCUMENT: u16 = 0x03E8;
const SLIDE: u16 = 0x03EE;
const SLIDE_ATOM: u16 = 0x03EF;
const NOTES: u16 = 0x03F0;
const SLIDE_PERSIST_ATOM: u16 = 0x03F3;
const MAIN_MASTER: u16 = 0x03F8;
const OUTLINE_TEXT_REF: u16 = 0x0F9E;
const TEXT_CHARS: u16 = 0x0FA0;
const TEXT_BYTES: u16 = 0x0FA8;
const CSTRING: u16 = 0x0FBA;
const SLIDE_LIST_WITH_TEXT: u16 = 0x0FF0;
const COMMENT: u16 = 0x2EE0;
/// `BinaryTagDataBlob`: a programmable tag's data, records of PowerPoint 2002 and later
/// (comments among them) although its header is an atom's.
const BINARY_TAG_DATA: u16 = 0x138B;
/// An Office drawing shape (`OfficeArtSpContainer`).
const SHAPE: u16 = 0xF004;
/// A shape's client data (`OfficeArtClientData`), and the placeholder atom it may hold.
const CLIENT_DATA: u16 = 0xF011;
const PLACEHOLDER: u16 = 0x0BC3;

/// `SlideListWithText` instances: the slides' list and the notes' list.
const SLIDES_LIST: u16 = 0;
const NOTES_LIST: u16 = 2;
/// The `CString` instance holding a comment's text.
const COMMENT_TEXT: u16 = 1;
/// `CString` instance of a comment's author.
const COMMENT_AUTHOR: u16 = 0;

/// Records nested deeper than this are not read (group shapes in group shapes...).
pub(crate) const MAX_DEPTH: usize = 32;

/// Records visited between two looks at the clock.
const DEADLINE_EVERY: u32 = 1024;

/// One slide of the slides' list: its persist id, notes id, and its placeholder texts.
struct Listed {
    persist: u32,
    texts: Vec<String>,
}

/// Writes text blocks into the sink, counting records for the deadline and noting damage.
struct Writer<'s> {
    sink: &'s mut TextSink,
    visited: u32,
    damaged: bool,
}

impl Writer<'_> {
    fn visit(&mut self) -> Result<(), ExtractError> {
        self.visited = self.visited.wrapping_add(1);
        if self.visited.is_multiple_of(DEADLINE_EVERY) {
            self.sink.check_deadline()?;
        }
        Ok(())
    }

    /// Writes one text block on its own lines; a field placeholder alone (`*`) is left out.
    fn block(&mut self, text: &str) -> Result<(), ExtractError> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(());
        }
        self.sink.line_break()?;
        self.sink.push(text)?;
        self.sink.line_break()
    }

    fn children<'a>(&mut self, record: &Record<'a>) -> impl Iterator<Item = Record<'a>> + use<'a> {
        let mut damaged = false;
        let kids: Vec<Record<'a>> = record
            .children()
            .filter_map(|r| match r {
                Ok(r) => Some(r),
                Err(Damaged) => {
                    damaged = true;
                    None
                }
            })
            .collect();
        self.damaged |= damaged;
        kids.into_iter()
    }
}

/// The text of a text atom (UTF-16 or Latin-1), if `record` is one; also `CString`.
fn atom_text(record: &Record<'_>) -> Option<String> {
    let raw: String = match record.typ {
        TEXT_CHARS | CSTRING => char::decode_utf16(
            record
                .data
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]])),
        )
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect(),
        TEXT_BYTES => record.data.iter().map(|&b| char::from(b)).collect(),
        _ => return None,
    };
    // Paragraph (CR) and line (VT) breaks end lines, as does CR LF (comments' breaks); other
    // control characters go.
    Some(
        raw.replace("\r\n", "\r")
            .chars()
            .filter_map(|c| match c {
                '\r' | '\u{0B}' | '\n' => Some('\n'),
                '\t' => Some('\t'),
                c if c.is_control() => None,
                c => Some(c),
            })
            .collect(),
    )
}

/// Whether a shape is a placeholder (its client data holds an `OEPlaceholderAtom`).
fn is_placeholder(w: &mut Writer<'_>, shape: &Record<'_>) -> bool {
    let data: Vec<Record<'_>> = w.children(shape).filter(|r| r.typ == CLIENT_DATA).collect();
    data.iter()
        .any(|d| w.children(d).any(|r| r.typ == PLACEHOLDER))
}

/// Writes the text of a slide's, notes' or master's container: shapes in drawing order, with
/// `OutlineTextRefAtom`s resolved against `placeholders` (each written once), comments after.
/// A master's (`master`) placeholder shapes are left out.
fn write_container(
    w: &mut Writer<'_>,
    container: &Record<'_>,
    placeholders: &[String],
    used: &mut HashSet<usize>,
    master: bool,
) -> Result<(), ExtractError> {
    w.sink.check_deadline()?;
    let mut comments = Vec::new();
    // Depth-first, iteratively: a stack of child lists.
    let mut stack = vec![w.children(container).collect::<Vec<_>>().into_iter()];
    while let Some(level) = stack.last_mut() {
        let Some(record) = level.next() else {
            stack.pop();
            continue;
        };
        w.visit()?;
        match record.typ {
            TEXT_CHARS | TEXT_BYTES => {
                if let Some(text) = atom_text(&record) {
                    w.block(&text)?;
                }
            }
            OUTLINE_TEXT_REF => {
                let index = u32_at(record.data, 0).and_then(|i| usize::try_from(i).ok());
                if let Some(i) = index.filter(|&i| i < placeholders.len())
                    && used.insert(i)
                {
                    w.block(&placeholders[i])?;
                }
            }
            COMMENT => {
                let (mut author, mut text) = (None, None);
                for child in w.children(&record) {
                    match (child.typ, child.instance) {
                        (CSTRING, COMMENT_TEXT) => text = atom_text(&child),
                        (CSTRING, COMMENT_AUTHOR) => author = atom_text(&child),
                        _ => {}
                    }
                }
                if let Some(text) = text {
                    comments.push(match author.filter(|a| !a.trim().is_empty()) {
                        Some(author) => format!("{}: {text}", author.trim()),
                        None => text,
                    });
                }
            }
            BINARY_TAG_DATA if stack.len() < MAX_DEPTH => {
                let kids: Vec<_> = Children::of(record.data).filter_map(Result::ok).collect();
                stack.push(kids.into_iter());
            }
            MAIN_MASTER => {}
            // A master's placeholders hold the layout's prompts ("Click to edit").
            SHAPE if master && is_placeholder(w, &record) => {}
            _ if record.container && stack.len() < MAX_DEPTH => {
                let kids: Vec<_> = w.children(&record).collect();
                stack.push(kids.into_iter());
            }
            _ => {}
        }
    }
    for (i, text) in placeholders.iter().enumerate() {
        if used.insert(i) {
            w.block(text)?;
        }
    }
    for text in comments {
        w.block(&text)?;
    }
    Ok(())
}

/// The slides (or notes) of a `SlideListWithText`: each persist atom and the text atoms after it.
fn listed(w: &mut Writer<'_>, list: &Record<'_>) -> Vec<(Listed, u32)> {
    let mut out: Vec<(Listed, u32)> = Vec::new();
    for record in w.children(list) {
        match record.typ {
            SLIDE_PERSIST_ATOM => {
                if let Some(persist) = u32_at(record.data, 0) {
                    let id = u32_at(record.data, 12).unwrap_or(0);
                    out.push((
                        Listed {
                            persist,
                            texts: Vec::new(),
                        },
                        id,
                    ));
                }
            }
            TEXT_CHARS | TEXT_BYTES => {
                if let (Some((slide, _)), Some(text)) = (out.last_mut(), atom_text(&record)) {
                    slide.texts.push(text);
                }
            }
            _ => {}
        }
    }
    out
}

/// The notes id a slide's `SlideAtom` names (0 for none).
fn notes_id(w: &mut Writer<'_>, slide: &Record<'_>) -> u32 {
    w.children(slide)
        .find(|r| r.typ == SLIDE_ATOM)
        .and_then(|a| u32_at(a.data, 16))
        .unwrap_or(0)
}

/// Writes the presentation in slide order through the persist directory; `Ok(false)` when the
/// document or its slide list cannot be found (nothing written then). `Ok(true)` with damage
/// noted in `damaged`.
pub(crate) fn in_order(
    stream: &[u8],
    dir: &Directory,
    sink: &mut TextSink,
    damaged: &mut bool,
) -> Result<bool, ExtractError> {
    let Some(document) = dir
        .object(stream, dir.document)
        .filter(|d| d.typ == DOCUMENT)
    else {
        return Ok(false);
    };
    let mut w = Writer {
        sink,
        visited: 0,
        damaged: false,
    };
    let lists: Vec<Record<'_>> = w
        .children(&document)
        .filter(|r| r.typ == SLIDE_LIST_WITH_TEXT)
        .collect();
    let Some(slides_list) = lists.iter().find(|l| l.instance == SLIDES_LIST) else {
        return Ok(false);
    };
    let slides = listed(&mut w, slides_list);
    let notes: HashMap<u32, u32> = lists
        .iter()
        .filter(|l| l.instance == NOTES_LIST)
        .flat_map(|l| listed(&mut w, l))
        .map(|(n, id)| (id, n.persist))
        .collect();
    let mut done_slides = HashSet::new();
    let mut done_notes = HashSet::new();
    for (slide, _) in &slides {
        w.sink.check_deadline()?;
        if !done_slides.insert(slide.persist) {
            continue;
        }
        let mut used = HashSet::new();
        let container = dir.object(stream, slide.persist).filter(|r| r.typ == SLIDE);
        let Some(container) = container else {
            // The slide itself is missing: its placeholder texts are still known.
            for text in &slide.texts {
                w.block(text)?;
            }
            continue;
        };
        write_container(&mut w, &container, &slide.texts, &mut used, false)?;
        let notes_persist = notes.get(&notes_id(&mut w, &container)).copied();
        if let Some(persist) = notes_persist.filter(|&p| done_notes.insert(p))
            && let Some(notes) = dir.object(stream, persist).filter(|r| r.typ == NOTES)
        {
            write_container(&mut w, &notes, &[], &mut HashSet::new(), false)?;
        }
    }
    write_masters(&mut w, stream)?;
    *damaged |= w.damaged;
    Ok(true)
}

/// Writes the text masters draw on every slide that uses them (a company name, a footer line,
/// not the placeholders' prompts), once per distinct master text, after the slides.
fn write_masters(w: &mut Writer<'_>, stream: &[u8]) -> Result<(), ExtractError> {
    let mut seen = HashSet::new();
    for record in Children::of(stream) {
        let Ok(record) = record else {
            break;
        };
        w.visit()?;
        if record.typ != MAIN_MASTER || !seen.insert(record.data) {
            continue;
        }
        write_container(w, &record, &[], &mut HashSet::new(), true)?;
    }
    Ok(())
}

/// Writes every slide and notes container of the stream in stream order, then the placeholder
/// texts of the slides' lists.
pub(crate) fn in_stream_order(
    stream: &[u8],
    sink: &mut TextSink,
    damaged: &mut bool,
) -> Result<(), ExtractError> {
    let mut w = Writer {
        sink,
        visited: 0,
        damaged: false,
    };
    let mut placeholders = Vec::new();
    for record in Children::of(stream) {
        w.visit()?;
        let Ok(record) = record else {
            w.damaged = true;
            break;
        };
        match record.typ {
            SLIDE | NOTES => write_container(&mut w, &record, &[], &mut HashSet::new(), false)?,
            DOCUMENT => {
                for list in w.children(&record) {
                    if list.typ == SLIDE_LIST_WITH_TEXT && list.instance == SLIDES_LIST {
                        placeholders
                            .extend(listed(&mut w, &list).into_iter().flat_map(|(s, _)| s.texts));
                    }
                }
            }
            _ => {}
        }
    }
    for text in &placeholders {
        w.block(text)?;
    }
    write_masters(&mut w, stream)?;
    *damaged |= w.damaged;
    Ok(())
}
