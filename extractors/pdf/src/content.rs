//! The content stream interpreter: runs a page's operators (text, graphics state, form
//! XObjects) and records every shown glyph with its position, size and text, in content order,
//! for [`crate::layout`] to turn into lines.

use std::{collections::HashMap, rc::Rc};

use inlet_core::extract::{ExtractError, TextSink};
use memchr::memmem;

use crate::{
    doc::{Document, StreamReader},
    font::Font,
    object::{Dict, Lexer, Object, Stream, Token, is_white},
};

/// Form XObjects nested deeper than this are skipped.
const MAX_FORM_DEPTH: usize = 12;

/// Annotations of a page whose appearance is drawn at most.
const MAX_ANNOTATIONS: usize = 10_000;

/// Annotation flags (`/F`) that keep an annotation off the screen: Hidden and NoView.
const ANNOT_HIDDEN: i64 = 1 << 1;
const ANNOT_NO_VIEW: i64 = 1 << 5;

/// Saved graphics states at most (`q` beyond this is ignored).
const MAX_STATE_STACK: usize = 256;

/// Operands kept before an operator at most (garbage can pile up many).
const MAX_OPERANDS: usize = 64;

/// Content stream parts of a page read at most.
const MAX_CONTENT_PARTS: usize = 10_000;

/// Decoded content bytes read per step.
const CONTENT_CHUNK: usize = 1 << 20;

/// Content is read on when less than this is left unparsed (tokens longer than this that
/// straddle a piece boundary are cut).
const REFILL_MARGIN: usize = 64 * 1024;

/// Operators run between deadline checks.
const DEADLINE_EVERY: u64 = 4096;

/// Operators run per document at most, deadline or not (forms drawing forms ten times each,
/// twelve deep, would otherwise run for ever).
const MAX_OPERATORS: u64 = 200_000_000;

/// An affine matrix `[a b c d e f]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Matrix([f32; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    /// `self × other` (apply `self` first).
    fn then(&self, o: &Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [oa, ob, oc, od, oe, of] = o.0;
        Matrix([
            a * oa + b * oc,
            a * ob + b * od,
            c * oa + d * oc,
            c * ob + d * od,
            e * oa + f * oc + oe,
            e * ob + f * od + of,
        ])
    }

    fn apply(&self, x: f32, y: f32) -> (f32, f32) {
        let [a, b, c, d, e, f] = self.0;
        (x * a + y * c + e, x * b + y * d + f)
    }

    fn vector(&self, x: f32, y: f32) -> (f32, f32) {
        let [a, b, c, d, _, _] = self.0;
        (x * a + y * c, x * b + y * d)
    }

    fn from_operands(ops: &[Object]) -> Option<Matrix> {
        if ops.len() < 6 {
            return None;
        }
        let mut m = [0f32; 6];
        for (slot, o) in m.iter_mut().zip(&ops[ops.len() - 6..]) {
            *slot = o.as_f32().filter(|v| v.is_finite())?;
        }
        Some(Matrix(m))
    }
}

/// A shown glyph, placed in its line's frame (text flows along +x, +y is up).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placed {
    /// Start of the glyph along the line.
    pub(crate) x: f32,
    /// Baseline position across the line.
    pub(crate) y: f32,
    /// End of the glyph's advance along the line.
    pub(crate) end: f32,
    /// Glyph height.
    pub(crate) size: f32,
    /// Text direction in quarter turns.
    pub(crate) rot: u8,
    /// The glyph's text in the page buffer.
    pub(crate) start: u32,
    /// Length in bytes of the glyph's text.
    pub(crate) len: u32,
}

/// The glyphs of one page and their text.
#[derive(Debug, Default)]
pub(crate) struct PageGlyphs {
    /// Text of all glyphs, back to back.
    pub(crate) text: String,
    /// Glyphs in content order.
    pub(crate) glyphs: Vec<Placed>,
}

impl PageGlyphs {
    /// The text of glyph `g`.
    pub(crate) fn text_of(&self, g: &Placed) -> &str {
        let s = g.start as usize;
        self.text.get(s..s + g.len as usize).unwrap_or("")
    }
}

#[derive(Debug, Clone)]
struct GState {
    ctm: Matrix,
    font: Option<Rc<Font>>,
    size: f32,
    char_spacing: f32,
    word_spacing: f32,
    hscale: f32,
    leading: f32,
    rise: f32,
}

impl GState {
    fn new(ctm: Matrix) -> Self {
        Self {
            ctm,
            font: None,
            size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            hscale: 1.0,
            leading: 0.0,
            rise: 0.0,
        }
    }
}

/// Runs content streams and collects glyphs; fonts are cached across pages.
pub(crate) struct Interpreter<'d, 'a> {
    doc: &'d Document<'a>,
    fonts: HashMap<u32, Rc<Font>>,
    /// The glyphs of the page being run.
    pub(crate) page: PageGlyphs,
    /// Stop recording after this many glyphs on a page (the output cap is near).
    pub(crate) max_glyphs: usize,
    /// The largest image drawn on the page being run, with the area it covers (user space).
    pub(crate) largest_image: Option<(Stream, f32)>,
    ops: u64,
}

impl<'d, 'a> Interpreter<'d, 'a> {
    /// An interpreter for `doc`.
    pub(crate) fn new(doc: &'d Document<'a>) -> Self {
        Self {
            doc,
            fonts: HashMap::new(),
            page: PageGlyphs::default(),
            max_glyphs: usize::MAX,
            largest_image: None,
            ops: 0,
        }
    }

    /// Runs one page's content, filling [`Self::page`]. Returns early (with the glyphs so far)
    /// when the glyph cap is reached; fails only when the deadline passes or the decompression
    /// budget runs out.
    pub(crate) fn run_page(&mut self, page: &Dict, sink: &TextSink) -> Result<(), ExtractError> {
        self.page = PageGlyphs::default();
        self.largest_image = None;
        let doc = self.doc;
        let resources = doc
            .get_in(page, b"Resources")
            .and_then(|r| r.as_dict().cloned())
            .unwrap_or_default();
        let r = self.run_contents(page, &resources, sink);
        if !matches!(r, Ok(()) | Err(ExtractError::Full)) {
            return r;
        }
        // Annotations draw on the page too (stamps, free text, form fields): their appearance
        // streams come after the content, as pdftotext shows them. They never count as the
        // page's scanned image.
        let image = self.largest_image.take();
        let r = self.run_annotations(page, &resources, sink);
        self.largest_image = image;
        match r {
            Ok(()) | Err(ExtractError::Full) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Runs the page's content streams.
    fn run_contents(
        &mut self,
        page: &Dict,
        resources: &Dict,
        sink: &TextSink,
    ) -> Result<(), ExtractError> {
        let doc = self.doc;
        let Some(contents) = doc.get_in(page, b"Contents") else {
            return Ok(());
        };
        let mut parts: Vec<Object> = match contents.into_owned() {
            Object::Array(a) => a,
            other => vec![other],
        };
        parts.truncate(MAX_CONTENT_PARTS);
        let streams: Vec<Stream> = parts
            .iter()
            .filter_map(|part| match doc.resolve(part).into_owned() {
                Object::Stream(s) => Some(s),
                _ => None,
            })
            .collect();
        let mut source = Source::new(streams);
        let mut forms = Vec::new();
        self.execute(&mut source, resources, Matrix::IDENTITY, &mut forms, sink)
    }

    /// Runs the normal appearance (`/AP /N`, the `/AS` state of a state dictionary) of every
    /// annotation of the page that is not hidden (`/F` bits Hidden and NoView), mapped to its
    /// `/Rect` as PDF 32000 12.5.5 says: the form's `/BBox` through its `/Matrix`, then scaled
    /// and moved onto the rectangle.
    fn run_annotations(
        &mut self,
        page: &Dict,
        resources: &Dict,
        sink: &TextSink,
    ) -> Result<(), ExtractError> {
        let doc = self.doc;
        let Some(annots) = doc.get_in(page, b"Annots") else {
            return Ok(());
        };
        let Some(annots) = annots.as_array() else {
            return Ok(());
        };
        for entry in annots.iter().take(MAX_ANNOTATIONS) {
            let annot = doc.resolve(entry);
            let Some(annot) = annot.as_dict() else {
                continue;
            };
            let flags = doc
                .get_in(annot, b"F")
                .and_then(|f| f.as_i64())
                .unwrap_or(0);
            if flags & (ANNOT_HIDDEN | ANNOT_NO_VIEW) != 0 {
                continue;
            }
            let Some(ap) = doc.get_in(annot, b"AP") else {
                if let Some(u) = unappeared_text(doc, annot) {
                    self.place_text(&u)?;
                }
                continue;
            };
            let Some(normal) = ap.as_dict().and_then(|d| d.get(b"N")) else {
                continue;
            };
            let mut appearance = doc.resolve(normal).into_owned();
            if let Object::Dict(states) = &appearance {
                let state = doc.get_in(annot, b"AS");
                let Some(Object::Name(state)) = state.as_deref() else {
                    continue;
                };
                let Some(chosen) = states.get(state) else {
                    continue;
                };
                appearance = doc.resolve(chosen).into_owned();
            }
            let Object::Stream(form) = appearance else {
                continue;
            };
            let num = match normal {
                Object::Ref(n, _) => *n,
                _ => u32::MAX,
            };
            let Some(place) = annotation_placement(doc, annot, &form) else {
                continue;
            };
            let mut forms = Vec::new();
            self.draw_form(form, num, resources, &place, &mut forms, sink)?;
        }
        Ok(())
    }

    /// Records the text a viewer draws for an annotation without an appearance stream as
    /// glyphs, a line per line of it, each glyph `size` high and half as wide (Helvetica's
    /// average width).
    fn place_text(&mut self, u: &Unappeared) -> Result<(), ExtractError> {
        let (left, size) = (u.left, u.size);
        let page = &mut self.page;
        for (i, line) in u.text.lines().enumerate() {
            let y = u.baseline - size * i as f32;
            for (k, c) in line.chars().enumerate() {
                if page.glyphs.len() >= self.max_glyphs || page.text.len() > u32::MAX as usize / 2 {
                    return Err(ExtractError::Full);
                }
                let x = left + size * 0.5 * k as f32;
                let start = page.text.len();
                page.text.push(c);
                page.glyphs.push(Placed {
                    x,
                    y,
                    end: x + size * 0.5,
                    size,
                    rot: 0,
                    start: u32::try_from(start).unwrap_or(u32::MAX),
                    len: c.len_utf8() as u32,
                });
            }
        }
        Ok(())
    }

    fn font(&mut self, resources: &Dict, name: &[u8]) -> Option<Rc<Font>> {
        let doc = self.doc;
        let fonts = doc.get_in(resources, b"Font")?;
        let entry = fonts.as_dict()?.get(name)?;
        if let Object::Ref(num, _) = entry {
            if let Some(f) = self.fonts.get(num) {
                return Some(Rc::clone(f));
            }
            let dict = doc.resolve(entry);
            let font = Rc::new(Font::load(doc, dict.as_dict()?));
            self.fonts.insert(*num, Rc::clone(&font));
            return Some(font);
        }
        Some(Rc::new(Font::load(doc, entry.as_dict()?)))
    }

    fn execute(
        &mut self,
        source: &mut Source<'a>,
        resources: &Dict,
        ctm: Matrix,
        forms: &mut Vec<u32>,
        sink: &TextSink,
    ) -> Result<(), ExtractError> {
        // The decoded content is read in pieces: `buf[pos..]` is what is left to interpret.
        let mut buf: Vec<u8> = Vec::new();
        let mut pos = 0usize;
        let mut more = true;
        let mut operands: Vec<Object> = Vec::new();
        let mut gs = GState::new(ctm);
        let mut stack: Vec<GState> = Vec::new();
        let mut tm = Matrix::IDENTITY;
        let mut tlm = Matrix::IDENTITY;
        let mut font_names: HashMap<Vec<u8>, Option<Rc<Font>>> = HashMap::new();
        loop {
            // Resynchronising after an unreadable token may step past the end.
            pos = pos.min(buf.len());
            while more && buf.len() - pos < REFILL_MARGIN {
                buf.drain(..pos);
                pos = 0;
                more = source.fill(&mut buf, self.doc)?;
            }
            let mut lx = Lexer::new(&buf, pos);
            let tok = match lx.token() {
                Ok(Some(t)) => t,
                Ok(None) if more => {
                    // Only white space left in this piece: read on.
                    pos = buf.len();
                    continue;
                }
                Ok(None) => break,
                Err(_) => {
                    // Unreadable operand (e.g. nesting too deep): skip a byte and resynchronise.
                    self.doc.budget.mark_damaged();
                    pos = lx.pos + 1;
                    operands.clear();
                    continue;
                }
            };
            pos = lx.pos;
            let op = match tok {
                Token::Obj(o) => {
                    if operands.len() < MAX_OPERANDS {
                        operands.push(o);
                    }
                    continue;
                }
                Token::Op(op) => op,
            };
            self.ops += 1;
            if self.ops.is_multiple_of(DEADLINE_EVERY) {
                if self.ops > MAX_OPERATORS {
                    return Err(ExtractError::LimitExceeded(format!(
                        "more than {MAX_OPERATORS} content operators"
                    )));
                }
                sink.check_deadline()?;
            }
            let num = |i: usize| -> f32 {
                operands
                    .len()
                    .checked_sub(i)
                    .and_then(|k| operands.get(k))
                    .and_then(Object::as_f32)
                    .filter(|v| v.is_finite())
                    .unwrap_or(0.0)
            };
            match op {
                b"q" if stack.len() < MAX_STATE_STACK => stack.push(gs.clone()),
                b"Q" => {
                    if let Some(s) = stack.pop() {
                        gs = s;
                    }
                }
                b"cm" => {
                    if let Some(m) = Matrix::from_operands(&operands) {
                        gs.ctm = m.then(&gs.ctm);
                    }
                }
                b"BT" => {
                    tm = Matrix::IDENTITY;
                    tlm = Matrix::IDENTITY;
                }
                b"Tf" => {
                    gs.size = num(1);
                    if let Some(Object::Name(name)) =
                        operands.len().checked_sub(2).and_then(|i| operands.get(i))
                    {
                        let font = match font_names.get(name) {
                            Some(f) => f.clone(),
                            None => {
                                let f = self.font(resources, name);
                                font_names.insert(name.clone(), f.clone());
                                f
                            }
                        };
                        gs.font = font;
                    }
                }
                b"Tc" => gs.char_spacing = num(1),
                b"Tw" => gs.word_spacing = num(1),
                b"Tz" => gs.hscale = num(1) / 100.0,
                b"TL" => gs.leading = num(1),
                b"Ts" => gs.rise = num(1),
                b"Td" | b"TD" => {
                    let (tx, ty) = (num(2), num(1));
                    if op == b"TD" {
                        gs.leading = -ty;
                    }
                    tlm = Matrix([1.0, 0.0, 0.0, 1.0, tx, ty]).then(&tlm);
                    tm = tlm;
                }
                b"Tm" => {
                    if let Some(m) = Matrix::from_operands(&operands) {
                        tm = m;
                        tlm = m;
                    }
                }
                b"T*" => {
                    tlm = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, -gs.leading]).then(&tlm);
                    tm = tlm;
                }
                b"Tj" | b"'" | b"\"" => {
                    if op != b"Tj" {
                        if op == b"\"" {
                            gs.word_spacing = num(3);
                            gs.char_spacing = num(2);
                        }
                        tlm = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, -gs.leading]).then(&tlm);
                        tm = tlm;
                    }
                    if let Some(Object::Str(s)) = operands.last() {
                        self.show(&gs, &mut tm, s)?;
                    }
                }
                b"TJ" => {
                    if let Some(Object::Array(items)) = operands.last() {
                        for item in items {
                            match item {
                                Object::Str(s) => self.show(&gs, &mut tm, s)?,
                                other => {
                                    if let Some(n) = other.as_f32().filter(|v| v.is_finite()) {
                                        let tx = -n / 1000.0 * gs.size * gs.hscale;
                                        tm = Matrix([1.0, 0.0, 0.0, 1.0, tx, 0.0]).then(&tm);
                                    }
                                }
                            }
                        }
                    }
                }
                b"Do" => {
                    if let Some(Object::Name(name)) = operands.last() {
                        let name = name.clone();
                        self.form(resources, &name, &gs.ctm, forms, sink)?;
                    }
                }
                b"BI" => {
                    skip_inline_image(&mut lx);
                    pos = lx.pos;
                }
                _ => {}
            }
            operands.clear();
        }
        Ok(())
    }

    fn form(
        &mut self,
        resources: &Dict,
        name: &[u8],
        ctm: &Matrix,
        forms: &mut Vec<u32>,
        sink: &TextSink,
    ) -> Result<(), ExtractError> {
        let doc = self.doc;
        let Some(xobjects) = doc.get_in(resources, b"XObject") else {
            return Ok(());
        };
        let Some(entry) = xobjects.as_dict().and_then(|d| d.get(name)) else {
            return Ok(());
        };
        let num = match entry {
            Object::Ref(n, _) => *n,
            _ => u32::MAX,
        };
        if forms.len() >= MAX_FORM_DEPTH || forms.contains(&num) {
            doc.budget.mark_damaged();
            return Ok(());
        }
        let obj = doc.resolve(entry);
        let Object::Stream(s) = obj.as_ref() else {
            return Ok(());
        };
        if s.dict.name_is(b"Subtype", b"Image") {
            // The unit square, mapped by the CTM: the area the image covers.
            let [a, b, c, d, _, _] = ctm.0;
            let area = (a * d - b * c).abs();
            if area.is_finite()
                && self
                    .largest_image
                    .as_ref()
                    .is_none_or(|(_, big)| area > *big)
            {
                self.largest_image = Some((s.clone(), area));
            }
            return Ok(());
        }
        if !s.dict.name_is(b"Subtype", b"Form") {
            return Ok(());
        }
        let s = s.clone();
        self.draw_form(s, num, resources, ctm, forms, sink)
    }

    /// Runs form XObject `s` (object `num`) under `ctm`, with its own resources or else the
    /// caller's.
    fn draw_form(
        &mut self,
        s: Stream,
        num: u32,
        resources: &Dict,
        ctm: &Matrix,
        forms: &mut Vec<u32>,
        sink: &TextSink,
    ) -> Result<(), ExtractError> {
        let doc = self.doc;
        if forms.len() >= MAX_FORM_DEPTH || forms.contains(&num) {
            doc.budget.mark_damaged();
            return Ok(());
        }
        let matrix = doc
            .get_in(&s.dict, b"Matrix")
            .and_then(|m| m.as_array().and_then(Matrix::from_operands))
            .unwrap_or(Matrix::IDENTITY);
        let form_resources = doc
            .get_in(&s.dict, b"Resources")
            .and_then(|r| r.as_dict().cloned());
        let res = form_resources.as_ref().unwrap_or(resources);
        forms.push(num);
        let mut source = Source::new(vec![s]);
        let r = self.execute(&mut source, res, matrix.then(ctm), forms, sink);
        forms.pop();
        r
    }

    fn show(&mut self, gs: &GState, tm: &mut Matrix, bytes: &[u8]) -> Result<(), ExtractError> {
        // Without a font (none set, or its object is missing from a damaged file) the codes
        // cannot be told apart from garbage: nothing is shown.
        let Some(font) = gs.font.clone() else {
            self.doc.budget.mark_damaged();
            return Ok(());
        };
        let m = tm.then(&gs.ctm);
        let (dx, dy) = m.vector(1.0, 0.0);
        let rot = if dx.abs() >= dy.abs() {
            if dx >= 0.0 { 0 } else { 2 }
        } else if dy > 0.0 {
            1
        } else {
            3
        };
        let (vx, vy) = m.vector(0.0, gs.size);
        let size = (vx * vx + vy * vy).sqrt() * font.size_scale;
        let frame = |(x, y): (f32, f32)| -> (f32, f32) {
            match rot {
                0 => (x, y),
                1 => (y, -x),
                2 => (-x, -y),
                _ => (-y, x),
            }
        };
        let mut advance = 0f32;
        let mut full = false;
        let page = &mut self.page;
        let max_glyphs = self.max_glyphs;
        font.each_glyph(bytes, |g| {
            let w = (g.width * gs.size
                + gs.char_spacing
                + if g.is_space_code {
                    gs.word_spacing
                } else {
                    0.0
                })
                * gs.hscale;
            if !g.text.is_empty() && !full {
                let (x, y) = frame(m.apply(advance, gs.rise));
                // The glyph's own extent: character and word spacing are gaps after it.
                let (end, _) = frame(m.apply(advance + g.width * gs.size * gs.hscale, gs.rise));
                let start = page.text.len();
                page.text.push_str(&g.text);
                page.glyphs.push(Placed {
                    x,
                    y,
                    end: end.max(x),
                    size,
                    rot,
                    start: u32::try_from(start).unwrap_or(u32::MAX),
                    len: u32::try_from(g.text.len()).unwrap_or(0),
                });
                full = page.glyphs.len() >= max_glyphs || page.text.len() > u32::MAX as usize / 2;
            }
            advance += w;
        });
        *tm = Matrix([1.0, 0.0, 0.0, 1.0, advance, 0.0]).then(tm);
        if full {
            Err(ExtractError::Full)
        } else {
            Ok(())
        }
    }
}

/// The content streams of a page (or a form), decoded piece by piece, parts separated by a
/// line break.
struct Source<'a> {
    /// Streams not started yet, last first.
    pending: Vec<Stream>,
    current: Option<StreamReader<'a>>,
}

impl<'a> Source<'a> {
    fn new(mut streams: Vec<Stream>) -> Self {
        streams.reverse();
        Self {
            pending: streams,
            current: None,
        }
    }

    /// Appends the next piece of content to `buf`; `false` once everything was read. Parts
    /// that cannot be decoded are skipped (and the file marked damaged).
    fn fill(&mut self, buf: &mut Vec<u8>, doc: &Document<'a>) -> Result<bool, ExtractError> {
        loop {
            let Some(reader) = self.current.as_mut() else {
                let Some(next) = self.pending.pop() else {
                    return Ok(false);
                };
                match doc.stream_reader(&next) {
                    Ok(r) => self.current = Some(r),
                    Err(e @ (ExtractError::LimitExceeded(_) | ExtractError::TimedOut)) => {
                        return Err(e);
                    }
                    Err(_) => doc.budget.mark_damaged(),
                }
                continue;
            };
            let before = buf.len();
            let more = reader.fill(buf, CONTENT_CHUNK, &doc.budget)?;
            if !more {
                self.current = None;
                buf.push(b'\n');
            }
            if buf.len() > before {
                return Ok(true);
            }
        }
    }
}

/// Skips an inline image: its dictionary up to `ID`, then the binary data up to `EI`.
/// The matrix that puts an annotation's appearance form on the page: the form's `/BBox`,
/// transformed by its `/Matrix`, scaled and moved onto the annotation's `/Rect`. `None` when the
/// rectangle or the box is missing or not finite.
/// The four numbers of the rectangle `dict[key]` (`/Rect`, `/BBox`), if finite.
fn rect_of(doc: &Document<'_>, dict: &Dict, key: &[u8]) -> Option<[f32; 4]> {
    let arr = doc.get_in(dict, key)?;
    let arr = arr.as_array()?;
    if arr.len() < 4 {
        return None;
    }
    let mut r = [0f32; 4];
    for (slot, v) in r.iter_mut().zip(arr) {
        *slot = doc.resolve(v).as_f32().filter(|v| v.is_finite())?;
    }
    Some(r)
}

/// Parents of a form field followed to find an inherited entry, at most.
const MAX_FIELD_DEPTH: usize = 32;

/// Field flag (`/Ff`) of a text field of several lines.
const MULTILINE: i64 = 1 << 12;

/// Font size used when an annotation's default appearance (`/DA`) gives none (or 0, auto).
const DEFAULT_ANNOTATION_SIZE: f32 = 12.0;

/// The text an annotation without an appearance stream shows all the same, as viewers (and
/// pdftotext) draw one for it, where it draws it ([`Unappeared`]): a free-text annotation's
/// `/Contents`; a text or choice field's value (`/V`, inherited from its parent fields). Notes
/// (`/Text`) are pop-ups, not page text; a check box's value is a state name; a button's
/// caption is also drawn on the page in the forms seen.
fn unappeared_text(doc: &Document<'_>, annot: &Dict) -> Option<Unappeared> {
    let name = |o: Option<std::borrow::Cow<'_, Object>>| match o.as_deref() {
        Some(Object::Name(n)) => Some(n.clone()),
        _ => None,
    };
    // An entry of the annotation or, for a field, of its nearest parent that has it.
    let inherited = |key: &[u8]| -> Option<Object> {
        let mut dict = annot.clone();
        for _ in 0..MAX_FIELD_DEPTH {
            if let Some(v) = doc.get_in(&dict, key) {
                return Some(v.into_owned());
            }
            dict = doc.get_in(&dict, b"Parent")?.as_dict()?.clone();
        }
        None
    };
    let string = |o: &Object| match o {
        Object::Str(bytes) => Some(crate::encoding::text_string(bytes)),
        _ => None,
    };
    let subtype = name(doc.get_in(annot, b"Subtype"))?;
    let widget = subtype.as_slice() == b"Widget";
    let text = match subtype.as_slice() {
        b"FreeText" => string(&*doc.get_in(annot, b"Contents")?)?,
        b"Widget" => match name(inherited(b"FT").map(std::borrow::Cow::Owned))?.as_slice() {
            b"Tx" => string(&doc.resolve(&inherited(b"V")?))?,
            b"Ch" => match doc.resolve(&inherited(b"V")?).into_owned() {
                Object::Array(values) => values
                    .iter()
                    .filter_map(|v| string(&doc.resolve(v)))
                    .collect::<Vec<_>>()
                    .join("\n"),
                other => string(&other)?,
            },
            _ => return None,
        },
        _ => return None,
    };
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    if text.trim().is_empty() {
        return None;
    }
    let [x0, y0, x1, y1] = rect_of(doc, annot, b"Rect")?;
    let (left, bottom, top) = (x0.min(x1), y0.min(y1), y0.max(y1));
    // `/DA` ends its font selection with `<font> <size> Tf`.
    let size = inherited(b"DA")
        .and_then(|da| match da {
            Object::Str(bytes) => {
                let da = String::from_utf8_lossy(&bytes).into_owned();
                let words: Vec<&str> = da.split_whitespace().collect();
                let tf = words.iter().position(|w| *w == "Tf")?;
                words.get(tf.checked_sub(1)?)?.parse::<f32>().ok()
            }
            _ => None,
        })
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1000.0)
        .unwrap_or(DEFAULT_ANNOTATION_SIZE);
    // One line centred as poppler centres it; several from the top.
    let flags = inherited(b"Ff").and_then(|f| f.as_i64()).unwrap_or(0);
    let one_line = widget && flags & MULTILINE == 0 && !text.contains('\n');
    let baseline = if one_line {
        bottom + 0.5 * (top - bottom) - 0.4 * size
    } else {
        top - size
    };
    Some(Unappeared {
        text,
        left: left + 2.0,
        baseline,
        size,
    })
}

/// What [`unappeared_text`] finds: the text, where its first line starts, its font size.
struct Unappeared {
    text: String,
    left: f32,
    baseline: f32,
    size: f32,
}

fn annotation_placement(doc: &Document<'_>, annot: &Dict, form: &Stream) -> Option<Matrix> {
    let [rx0, ry0, rx1, ry1] = rect_of(doc, annot, b"Rect")?;
    let [bx0, by0, bx1, by1] = rect_of(doc, &form.dict, b"BBox")?;
    let matrix = doc
        .get_in(&form.dict, b"Matrix")
        .and_then(|m| m.as_array().and_then(Matrix::from_operands))
        .unwrap_or(Matrix::IDENTITY);
    let corners = [(bx0, by0), (bx0, by1), (bx1, by0), (bx1, by1)].map(|(x, y)| matrix.apply(x, y));
    let min_x = corners.iter().map(|c| c.0).fold(f32::INFINITY, f32::min);
    let max_x = corners
        .iter()
        .map(|c| c.0)
        .fold(f32::NEG_INFINITY, f32::max);
    let min_y = corners.iter().map(|c| c.1).fold(f32::INFINITY, f32::min);
    let max_y = corners
        .iter()
        .map(|c| c.1)
        .fold(f32::NEG_INFINITY, f32::max);
    let (left, right) = (rx0.min(rx1), rx0.max(rx1));
    let (bottom, top) = (ry0.min(ry1), ry0.max(ry1));
    let scale = |span: f32, box_span: f32| {
        if box_span.abs() > f32::EPSILON {
            span / box_span
        } else {
            1.0
        }
    };
    let sx = scale(right - left, max_x - min_x);
    let sy = scale(top - bottom, max_y - min_y);
    let m = Matrix([sx, 0.0, 0.0, sy, left - sx * min_x, bottom - sy * min_y]);
    m.0.iter().all(|v| v.is_finite()).then_some(m)
}

fn skip_inline_image(lx: &mut Lexer<'_>) {
    // Dictionary entries up to ID.
    loop {
        match lx.token() {
            Ok(Some(Token::Op(b"ID"))) => break,
            Ok(Some(_)) => {}
            Ok(None) => return,
            Err(_) => lx.pos += 1,
        }
    }
    let data = lx.data;
    let start = lx.pos + 1;
    let mut end = data.len();
    for at in memmem::find_iter(data.get(start..).unwrap_or_default(), b"EI") {
        let at = start + at;
        let before_ok = at > 0 && is_white(data[at - 1]);
        let after_ok = data.get(at + 2).is_none_or(|&b| is_white(b));
        if before_ok && after_ok {
            end = at + 2;
            break;
        }
    }
    lx.pos = end.min(data.len());
}
