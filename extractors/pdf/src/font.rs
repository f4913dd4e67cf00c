//! Fonts as far as text extraction needs them: how a string splits into character codes, the
//! text of each code (ToUnicode CMap, else the encoding with `/Differences` and glyph names,
//! else the embedded Type 1 program's built-in encoding) and its advance width.

use std::collections::HashMap;

use memchr::memmem;

use crate::{
    cmap::{self, CMap},
    doc::Document,
    encoding::{self, BaseEncoding, glyph_to_unicode},
    object::{Dict, Object},
};

/// Width (in em) assumed for glyphs whose width the file does not give.
const DEFAULT_WIDTH: f32 = 0.5;

/// Character codes read from one font program's encoding at most.
const MAX_BUILTIN_ENTRIES: usize = 512;

/// A loaded font.
#[derive(Debug)]
pub(crate) struct Font {
    composite: bool,
    /// Code space of a composite font's encoding CMap.
    codespace: Vec<(u8, u32, u32)>,
    /// Code to CID for embedded encoding CMaps that are not the identity.
    cid_map: Option<CMap>,
    to_unicode: Option<CMap>,
    /// Text per code of a simple font, from its encoding.
    simple: Vec<Option<Box<str>>>,
    /// Whether composite codes are Unicode themselves (`Uni…-UCS2-H`, `…-UTF16-H`).
    codes_are_unicode: bool,
    /// Composite fonts without ToUnicode: glyph id to text from the embedded font's cmap.
    gid_unicode: HashMap<u16, char>,
    /// CID to glyph id (`/CIDToGIDMap` stream); identity when empty.
    cid_to_gid: Vec<u16>,
    /// Simple fonts: width in text space per code.
    widths: Vec<f32>,
    /// Composite fonts: width in text space per CID.
    cid_widths: HashMap<u32, f32>,
    default_width: f32,
    /// Glyph height relative to a normal 1000-unit font (Type 3 fonts scale by their matrix).
    pub(crate) size_scale: f32,
}

/// A Type 3 font's glyph size relative to the font size. Its glyph space is the font's own, so
/// the size of an em is unknown without drawing the glyphs; as pdftotext does, it is guessed from
/// an advance: an `m` is about [`M_WIDTH`] em wide, another letter or any glyph about 0.5 em. Word gaps
/// and the overlap that marks a glyph drawn twice are measured against this size, so a guess
/// from the matrix alone (a glyph assumed 1000 units tall) ran words together and dropped
/// doubled letters where the glyph space is not 1000 units to the em. `widths` are in text space (NaN where the font gives none); `matrix_x` and
/// `matrix_y` are the FontMatrix's scales.
fn type3_size_scale(
    names: &[Option<Vec<u8>>],
    text: &[Option<Box<str>>],
    widths: &[f32],
    matrix_x: f32,
    matrix_y: f32,
) -> f32 {
    let width = |code: usize| {
        widths
            .get(code)
            .copied()
            .filter(|w| w.is_finite() && *w > 0.0)
    };
    let one_char = |code: usize| -> Option<char> {
        let name = names.get(code)?.as_deref();
        let from_name = name.filter(|n| n.len() == 1).map(|n| char::from(n[0]));
        from_name.or_else(|| {
            let t = text.get(code)?.as_deref()?;
            let mut chars = t.chars();
            chars.next().filter(|_| chars.next().is_none())
        })
    };
    let codes = 0..widths.len().min(names.len());
    let em = codes
        .clone()
        .find(|&c| one_char(c) == Some('m'))
        .and_then(|c| width(c).map(|w| w / M_WIDTH))
        .or_else(|| {
            codes
                .clone()
                .filter(|&c| one_char(c).is_some_and(|ch| ch.is_ascii_alphabetic()))
                .find_map(|c| width(c).map(|w| w / 0.5))
        })
        .or_else(|| {
            codes
                .clone()
                .filter(|&c| names[c].is_some() || text.get(c).is_some_and(Option::is_some))
                .find_map(|c| width(c).map(|w| w / 0.5))
        });
    // Most Type 3 fonts (matplotlib's, TeX's through dvips) draw in a 1000-unit em like other
    // fonts; the matrix alone is right for them and stays unless the advances disagree by more
    // than twice (a glyph space of pixels or of ems, as cairo's and some report writers' are).
    let from_matrix = matrix_y.abs() * 1000.0;
    let scale = match em.map(|em| em * (matrix_y / matrix_x).abs()) {
        Some(from_advance) if !(0.5..=2.0).contains(&(from_advance / from_matrix)) => from_advance,
        _ => from_matrix,
    };
    scale.clamp(0.01, 100.0)
}

/// The width of an `m` in ems that a Type 3 font's em is guessed from: 0.78–0.83 in Times,
/// Helvetica and Computer Modern. (pdftotext takes 0.6, which made TeX's bitmap fonts' glyphs
/// a third too tall, so their word gaps fell under the threshold.)
const M_WIDTH: f32 = 0.8;

/// One character code of a shown string.
pub(crate) struct Glyph<'f> {
    /// Its text (empty when unknown).
    pub(crate) text: std::borrow::Cow<'f, str>,
    /// Advance width in text space units (before font size and scaling).
    pub(crate) width: f32,
    /// Whether word spacing applies (a single-byte code 32).
    pub(crate) is_space_code: bool,
}

impl Font {
    /// Loads a font from its dictionary; never fails (unknowns fall back to defaults).
    pub(crate) fn load(doc: &Document<'_>, dict: &Dict) -> Font {
        let subtype = dict
            .get(b"Subtype")
            .and_then(Object::as_name)
            .unwrap_or(b"");
        if subtype == b"Type0" {
            return Self::load_composite(doc, dict);
        }
        let to_unicode = load_to_unicode(doc, dict);
        let base_font = dict
            .get(b"BaseFont")
            .and_then(Object::as_name)
            .unwrap_or(b"");
        let descriptor = doc.get_in(dict, b"FontDescriptor");
        let descriptor = descriptor.as_deref().and_then(Object::as_dict);
        // Encoding: a base table, then /Differences.
        let encoding = doc.get_in(dict, b"Encoding");
        let (base_name, differences) = match encoding.as_deref() {
            Some(Object::Name(n)) => (Some(n.as_slice()), None),
            Some(Object::Dict(d)) => (
                d.get(b"BaseEncoding").and_then(Object::as_name),
                doc.get_in(d, b"Differences")
                    .map(std::borrow::Cow::into_owned),
            ),
            _ => (None, None),
        };
        let symbolic = descriptor
            .and_then(|d| d.get(b"Flags"))
            .and_then(Object::as_i64)
            .is_some_and(|f| f & 4 != 0 && f & 32 == 0);
        let mut names: Vec<Option<Vec<u8>>> = vec![None; 256];
        let base = base_name.and_then(BaseEncoding::from_name);
        let builtin = if base.is_none() {
            descriptor.and_then(|d| builtin_encoding(doc, d))
        } else {
            None
        };
        if let Some(builtin) = builtin {
            names = builtin;
        } else {
            let table = base.unwrap_or(if subtype == b"TrueType" && !symbolic {
                BaseEncoding::WinAnsi
            } else {
                BaseEncoding::Standard
            });
            for (code, name) in table.names().iter().enumerate() {
                if !name.is_empty() {
                    names[code] = Some(name.as_bytes().to_vec());
                }
            }
        }
        let mut differs = vec![false; 256];
        if let Some(Object::Array(diffs)) = differences.as_ref() {
            let mut code = 0usize;
            for item in diffs {
                match item {
                    Object::Int(i) => code = usize::try_from(*i).unwrap_or(256),
                    Object::Name(n) => {
                        if let Some(slot) = names.get_mut(code) {
                            *slot = Some(n.clone());
                            differs[code] = true;
                        }
                        code += 1;
                    }
                    _ => {}
                }
            }
        }
        // Symbolic TrueType without an encoding: codes select glyphs through the font's own
        // (3,0) or (1,0) cmap; the program tells their text.
        let program_text = if subtype == b"TrueType" && base.is_none() && symbolic {
            descriptor
                .and_then(|d| doc.get_in(d, b"FontFile2"))
                .and_then(|f| match f.as_ref() {
                    Object::Stream(s) => doc.stream_data(s).ok(),
                    _ => None,
                })
                .and_then(|data| crate::truetype::simple_code_text(&data))
        } else {
            None
        };
        let is_type3 = subtype == b"Type3";
        // Unnamed codes of symbolic and TrueType fonts, and any code of a Type 3 font whose
        // glyph name says nothing (`/square`, `/g12`): the code itself, taken as Latin-1, as
        // pdftotext does; a Type 3 font's names are its own.
        let fallback_identity = (symbolic || subtype == b"TrueType") && base.is_none();
        let simple: Vec<Option<Box<str>>> = names
            .iter()
            .enumerate()
            .map(|(code, name)| {
                let from_program = program_text
                    .as_ref()
                    .filter(|_| !differs[code])
                    .and_then(|t| t[code].clone());
                let text = from_program.or_else(|| name.as_deref().and_then(glyph_to_unicode));
                let text = text.or_else(|| {
                    (fallback_identity || name.is_none() || is_type3)
                        .then(|| char::from(code as u8))
                        .filter(|c| !c.is_control())
                        .map(String::from)
                });
                text.map(String::into_boxed_str)
            })
            .collect();
        // Widths.
        let font_matrix_x = doc
            .get_in(dict, b"FontMatrix")
            .and_then(|m| {
                m.as_array()
                    .and_then(|a| a.first().and_then(Object::as_f32))
            })
            .filter(|v| v.is_finite() && *v != 0.0);
        let scale = if is_type3 {
            font_matrix_x.unwrap_or(0.001)
        } else {
            0.001
        };
        let missing = descriptor
            .and_then(|d| d.get(b"MissingWidth"))
            .and_then(Object::as_f32)
            .filter(|w| *w > 0.0)
            .map(|w| w * scale);
        let std14 = encoding::std14_widths(base_font);
        let mut widths = vec![f32::NAN; 256];
        let first = doc
            .get_in(dict, b"FirstChar")
            .and_then(|f| f.as_i64())
            .unwrap_or(0)
            .clamp(0, 255) as usize;
        if let Some(w) = doc.get_in(dict, b"Widths")
            && let Some(arr) = w.as_array()
        {
            for (i, item) in arr.iter().enumerate() {
                let Some(slot) = widths.get_mut(first + i) else {
                    break;
                };
                if let Some(v) = doc.resolve(item).as_f32().filter(|v| v.is_finite()) {
                    *slot = v * scale;
                }
            }
        }
        let size_scale = if is_type3 {
            let matrix_y = doc
                .get_in(dict, b"FontMatrix")
                .and_then(|m| m.as_array().and_then(|a| a.get(3).and_then(Object::as_f32)))
                .filter(|v| v.is_finite() && *v != 0.0)
                .unwrap_or(scale);
            type3_size_scale(&names, &simple, &widths, scale, matrix_y)
        } else {
            1.0
        };
        for (code, slot) in widths.iter_mut().enumerate() {
            if slot.is_nan() || (*slot == 0.0 && std14.is_some()) {
                let from_std = std14.and_then(|table| {
                    let c = simple[code].as_deref()?.chars().next()?;
                    encoding::std14_width(table, c).map(|w| f32::from(w) * 0.001)
                });
                *slot = from_std.or(missing).unwrap_or(DEFAULT_WIDTH);
            }
        }
        Font {
            composite: false,
            codespace: Vec::new(),
            cid_map: None,
            to_unicode,
            simple,
            codes_are_unicode: false,
            gid_unicode: HashMap::new(),
            cid_to_gid: Vec::new(),
            widths,
            cid_widths: HashMap::new(),
            default_width: DEFAULT_WIDTH,
            size_scale,
        }
    }

    fn load_composite(doc: &Document<'_>, dict: &Dict) -> Font {
        let to_unicode = load_to_unicode(doc, dict);
        let encoding = doc.get_in(dict, b"Encoding");
        let mut codespace = vec![(2u8, 0u32, 0xffffu32)];
        let mut cid_map = None;
        let mut codes_are_unicode = false;
        match encoding.as_deref() {
            Some(Object::Name(n)) => {
                let n = String::from_utf8_lossy(n);
                codes_are_unicode =
                    n.starts_with("Uni") && (n.contains("UCS2") || n.contains("UTF16"));
            }
            Some(Object::Stream(s)) => {
                if let Ok(data) = doc.stream_data(s) {
                    let m = CMap::parse(&data);
                    if !m.codespace.is_empty() {
                        codespace = m.codespace.clone();
                    }
                    cid_map = Some(m);
                }
            }
            _ => {
                if let Some(tu) = &to_unicode
                    && !tu.codespace.is_empty()
                {
                    codespace = tu.codespace.clone();
                }
            }
        }
        let descendant = doc
            .get_in(dict, b"DescendantFonts")
            .and_then(|d| match d.as_ref() {
                Object::Array(a) => a.first().map(|f| doc.resolve(f).into_owned()),
                other => Some(other.clone()),
            });
        let descendant = descendant.as_ref().and_then(Object::as_dict);
        let mut cid_widths = HashMap::new();
        let mut default_width = 1.0;
        if let Some(desc) = descendant {
            if let Some(dw) = doc.get_in(desc, b"DW").and_then(|v| v.as_f32()) {
                default_width = dw * 0.001;
            }
            if let Some(w) = doc.get_in(desc, b"W")
                && let Some(items) = w.as_array()
            {
                let mut i = 0;
                while i < items.len() && cid_widths.len() < 200_000 {
                    let Some(start) = doc.resolve(&items[i]).as_i64() else {
                        break;
                    };
                    let Ok(start) = u32::try_from(start) else {
                        break;
                    };
                    let next = doc
                        .resolve(items.get(i + 1).unwrap_or(&Object::Null))
                        .into_owned();
                    match next {
                        Object::Array(ws) => {
                            for (k, w) in ws.iter().enumerate() {
                                if let Some(w) = doc.resolve(w).as_f32() {
                                    cid_widths.insert(start.saturating_add(k as u32), w * 0.001);
                                }
                            }
                            i += 2;
                        }
                        other => {
                            let end = other.as_i64().and_then(|e| u32::try_from(e).ok());
                            let w = items
                                .get(i + 2)
                                .map(|w| doc.resolve(w))
                                .and_then(|w| w.as_f32());
                            if let (Some(end), Some(w)) = (end, w) {
                                for cid in start..=end.min(start.saturating_add(65_535)) {
                                    cid_widths.insert(cid, w * 0.001);
                                }
                            }
                            i += 3;
                        }
                    }
                }
            }
        }
        let mut gid_unicode = HashMap::new();
        let mut cid_to_gid = Vec::new();
        if to_unicode.is_none()
            && !codes_are_unicode
            && let Some(desc) = descendant
        {
            if let Some(Object::Stream(map)) = doc.get_in(desc, b"CIDToGIDMap").as_deref()
                && let Ok(data) = doc.stream_data(map)
            {
                cid_to_gid = data
                    .chunks_exact(2)
                    .map(|c| u16::from_be_bytes([c[0], c[1]]))
                    .collect();
            }
            let descriptor = doc.get_in(desc, b"FontDescriptor");
            let file = descriptor
                .as_deref()
                .and_then(Object::as_dict)
                .and_then(|d| {
                    doc.get_in(d, b"FontFile2")
                        .or_else(|| doc.get_in(d, b"FontFile3"))
                        .map(std::borrow::Cow::into_owned)
                });
            if let Some(Object::Stream(file)) = file
                && let Ok(data) = doc.stream_data(&file)
            {
                gid_unicode = crate::truetype::glyph_unicode(&data);
                if gid_unicode.is_empty() && crate::truetype::is_truetype_without_cmap(&data) {
                    // Subset TrueType fonts stripped of their cmap (common from Office) mostly
                    // keep the standard Macintosh glyph order of their first 258 glyphs, as
                    // Arial, Times New Roman and Segoe UI have it.
                    gid_unicode = crate::truetype::mac_glyph_order_unicode();
                }
            }
        }
        Font {
            composite: true,
            codespace,
            cid_map,
            to_unicode,
            simple: Vec::new(),
            codes_are_unicode,
            gid_unicode,
            cid_to_gid,
            widths: Vec::new(),
            cid_widths,
            default_width,
            size_scale: 1.0,
        }
    }

    /// Calls `f` with each character code of `bytes`.
    pub(crate) fn each_glyph<'f>(&'f self, bytes: &[u8], mut f: impl FnMut(Glyph<'f>)) {
        let mut i = 0;
        while i < bytes.len() {
            let (code, len) = if self.composite {
                cmap::next_code(&self.codespace, &bytes[i..], 2)
            } else {
                (u32::from(bytes[i]), 1)
            };
            i += len;
            let mapped = self
                .to_unicode
                .as_ref()
                .and_then(|m| m.lookup(code))
                // An empty or unusable mapping: the encoding may know better.
                .filter(|t| t.chars().any(|c| !c.is_control() && c != '\u{FFFD}'));
            let text = match mapped {
                Some(t) => t,
                None if self.composite => {
                    let c = if self.codes_are_unicode {
                        char::from_u32(code)
                    } else if self.gid_unicode.is_empty() {
                        None
                    } else {
                        let cid = self
                            .cid_map
                            .as_ref()
                            .and_then(|m| m.cid(code))
                            .unwrap_or(code);
                        let gid = if self.cid_to_gid.is_empty() {
                            u16::try_from(cid).ok()
                        } else {
                            usize::try_from(cid)
                                .ok()
                                .and_then(|i| self.cid_to_gid.get(i).copied())
                        };
                        gid.and_then(|g| self.gid_unicode.get(&g).copied())
                    };
                    std::borrow::Cow::Owned(c.map(String::from).unwrap_or_default())
                }
                None => std::borrow::Cow::Borrowed(
                    self.simple
                        .get(code as usize)
                        .and_then(|s| s.as_deref())
                        .unwrap_or(""),
                ),
            };
            let width = if self.composite {
                let cid = self
                    .cid_map
                    .as_ref()
                    .and_then(|m| m.cid(code))
                    .unwrap_or(code);
                self.cid_widths
                    .get(&cid)
                    .copied()
                    .unwrap_or(self.default_width)
            } else {
                self.widths
                    .get(code as usize)
                    .copied()
                    .unwrap_or(DEFAULT_WIDTH)
            };
            f(Glyph {
                text,
                width,
                is_space_code: len == 1 && code == 32,
            });
        }
    }
}

fn load_to_unicode(doc: &Document<'_>, dict: &Dict) -> Option<CMap> {
    let tu = doc.get_in(dict, b"ToUnicode")?;
    let Object::Stream(s) = tu.as_ref() else {
        return None;
    };
    let data = doc.stream_data(s).ok()?;
    let m = CMap::parse(&data);
    (!m.is_empty()).then_some(m)
}

/// The built-in encoding of an embedded Type 1 font program (`dup 65 /A put` lines), as glyph
/// names per code; `None` if the program uses StandardEncoding or cannot be read.
fn builtin_encoding(doc: &Document<'_>, descriptor: &Dict) -> Option<Vec<Option<Vec<u8>>>> {
    let file = doc.get_in(descriptor, b"FontFile")?;
    let Object::Stream(s) = file.as_ref() else {
        return None;
    };
    let data = doc.stream_data(s).ok()?;
    let clear_end = memmem::find(&data, b"eexec").unwrap_or(data.len());
    let clear = &data[..clear_end];
    let at = memmem::find(clear, b"/Encoding")?;
    let rest = &clear[at + b"/Encoding".len()..];
    let head = &rest[..rest.len().min(64)];
    if memmem::find(head, b"StandardEncoding").is_some() {
        return None;
    }
    let mut names: Vec<Option<Vec<u8>>> = vec![None; 256];
    let mut found = 0;
    for pos in memmem::find_iter(rest, b"dup ").take(MAX_BUILTIN_ENTRIES) {
        let mut lx = crate::object::Lexer::new(rest, pos + 4);
        let Some(code) = lx.uint() else { continue };
        let Ok(Object::Name(name)) = lx.object() else {
            continue;
        };
        if let Some(slot) = names.get_mut(usize::try_from(code).unwrap_or(256)) {
            *slot = Some(name);
            found += 1;
        }
    }
    (found > 0).then_some(names)
}
