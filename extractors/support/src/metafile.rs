//! Text drawn by Windows metafiles, the vector pictures of Office documents (a diagram drawn in
//! Visio or PowerPoint and pasted into a memo, a chart kept as a picture, clip art): the strings
//! of their text-output records, in drawing order, the pieces drawn on one baseline joined into
//! a line. EMF (`EMR_EXTTEXTOUTW`, `EMR_EXTTEXTOUTA`, `EMR_SMALLTEXTOUT`; MS-EMF) and WMF
//! (`META_TEXTOUT`, `META_EXTTEXTOUT` in the character set of the font selected; MS-WMF).
//! Glyph-index strings (`ETO_GLYPH_INDEX`) name glyphs, not characters, and are left out; a
//! symbol font's digits and punctuation are read as such, its letters as the Greek letters it
//! draws, its other pictures left out. Every offset and count is checked against the record, and a
//! damaged metafile yields the text before the damage.

use encoding_rs::{
    BIG5, EUC_KR, Encoding, GBK, SHIFT_JIS, WINDOWS_874, WINDOWS_1250, WINDOWS_1251, WINDOWS_1252,
    WINDOWS_1253, WINDOWS_1254, WINDOWS_1255, WINDOWS_1256, WINDOWS_1257, WINDOWS_1258,
};

/// Records read at most from one metafile (a hostile one cannot keep us busy).
const MAX_RECORDS: usize = 1_000_000;
/// Characters of text kept at most from one metafile.
const MAX_CHARS: usize = 200_000;

const EMR_HEADER: u32 = 1;
const EMR_EOF: u32 = 14;
const EMR_EXTTEXTOUTA: u32 = 83;
const EMR_EXTTEXTOUTW: u32 = 84;
const EMR_SMALLTEXTOUT: u32 = 108;
/// `" EMF"`, at offset 40 of an EMF header record.
const EMF_SIGNATURE: u32 = 0x464D_4520;

const ETO_OPAQUE: u32 = 0x0002;
const ETO_CLIPPED: u32 = 0x0004;
const ETO_GLYPH_INDEX: u32 = 0x0010;
const ETO_PDY: u32 = 0x2000;
const ETO_NO_RECT: u32 = 0x0100;
const ETO_SMALL_CHARS: u32 = 0x0200;

/// The key a placeable WMF starts with (MS-WMF 2.3.2.3).
const WMF_PLACEABLE_KEY: u32 = 0x9AC6_CDD7;
const META_EOF: u16 = 0x0000;
const META_TEXTOUT: u16 = 0x0521;
const META_EXTTEXTOUT: u16 = 0x0A32;
const META_SELECTOBJECT: u16 = 0x012D;
const META_DELETEOBJECT: u16 = 0x01F0;
const META_CREATEFONTINDIRECT: u16 = 0x02FB;
/// Records that create a graphics object, each taking the lowest free slot of the object table.
const META_CREATE: [u16; 6] = [0x00F7, 0x01F9, 0x0142, 0x02FA, 0x02FC, 0x06FF];
/// `SYMBOL_CHARSET`: the font draws symbols, not letters.
const SYMBOL_CHARSET: u8 = 2;

/// Whether `bytes` start like an EMF or a WMF.
pub fn is_metafile(bytes: &[u8]) -> bool {
    is_emf(bytes) || is_wmf(bytes)
}

/// Whether `bytes` start like a WMF (a placeable header, or a standard one: type 1 or 2, nine
/// words, version 1 or 3).
pub fn is_wmf(bytes: &[u8]) -> bool {
    wmf_start(bytes).is_some()
}

/// The text a metafile draws, `None` when it draws none (or is not a metafile).
pub fn text(bytes: &[u8]) -> Option<String> {
    let mut lines = Lines::default();
    if is_emf(bytes) {
        emf(bytes, &mut lines);
    } else if let Some(start) = wmf_start(bytes) {
        wmf(bytes, start, &mut lines);
    }
    lines.finish()
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn i16_at(b: &[u8], at: usize) -> Option<i16> {
    u16_at(b, at).map(|v| v as i16)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn i32_at(b: &[u8], at: usize) -> Option<i32> {
    u32_at(b, at).map(|v| v as i32)
}

/// Whether `bytes` start like an EMF (an `EMR_HEADER` record with the `" EMF"` signature).
pub fn is_emf(bytes: &[u8]) -> bool {
    u32_at(bytes, 0) == Some(EMR_HEADER) && u32_at(bytes, 40) == Some(EMF_SIGNATURE)
}

/// Where a WMF's records start (after its placeable header and its header), if it is one.
fn wmf_start(bytes: &[u8]) -> Option<usize> {
    let header = if u32_at(bytes, 0) == Some(WMF_PLACEABLE_KEY) {
        22
    } else {
        0
    };
    let typ = u16_at(bytes, header)?;
    let size = u16_at(bytes, header + 2)?;
    let version = u16_at(bytes, header + 4)?;
    (matches!(typ, 1 | 2) && size == 9 && matches!(version, 0x0100 | 0x0300)).then_some(header + 18)
}

/// Text pieces in drawing order, joined into lines by their baselines.
#[derive(Default)]
struct Lines {
    text: String,
    /// The baseline of the current line and where its last piece ended (when its advance
    /// widths were given), in the metafile's logical units.
    at: Option<(i32, Option<i32>)>,
    /// The last piece's mean advance per character, when given.
    advance: Option<i32>,
    chars: usize,
}

impl Lines {
    /// Adds a piece drawn at (`x`, `y`) that is `width` wide when known. Programs that place
    /// each character themselves draw a word in many pieces: one that starts about where the
    /// previous ended (within half a character, by the previous piece's advances)
    /// continues its word; a blank piece is a space.
    fn piece(&mut self, x: i32, y: i32, s: &str, width: Option<i32>) {
        let s = s.trim_end_matches('\0');
        if self.chars >= MAX_CHARS || s.is_empty() {
            return;
        }
        let count = i32::try_from(s.chars().count()).unwrap_or(i32::MAX);
        let end = width.map(|w| x.saturating_add(w));
        let same_line = matches!(self.at, Some((line, _)) if line == y);
        if s.trim().is_empty() {
            if same_line && !self.text.ends_with(' ') {
                self.text.push(' ');
                self.at = Some((y, end));
            }
            return;
        }
        match self.at {
            Some((_, previous)) if same_line => {
                let adjoining = previous
                    .zip(self.advance)
                    .is_some_and(|(prev_end, advance)| {
                        let gap = i64::from(x) - i64::from(prev_end);
                        let advance = i64::from(advance.max(1));
                        -advance / 2 <= gap && gap * 2 <= advance
                    });
                if !adjoining && !self.text.ends_with(' ') && !s.starts_with(' ') {
                    self.text.push(' ');
                }
            }
            Some(_) => self.text.push('\n'),
            None => {}
        }
        let s: String = s
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(MAX_CHARS - self.chars)
            .collect();
        self.chars += s.chars().count();
        self.text.push_str(&s);
        self.at = Some((y, end));
        self.advance = width.map(|w| w / count.max(1));
    }

    fn finish(self) -> Option<String> {
        let text: Vec<&str> = self
            .text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        (!text.is_empty()).then(|| text.join("\n"))
    }
}

/// The sum of a text record's advance widths (`count` of them at `at`, pairs with `ETO_PDY`).
fn advance(record: &[u8], at: usize, count: usize, pairs: bool) -> Option<i32> {
    if at == 0 {
        return None;
    }
    let step = if pairs { 8 } else { 4 };
    let mut sum = 0i32;
    for k in 0..count {
        sum = sum.saturating_add(i32_at(record, at.checked_add(k.checked_mul(step)?)?)?);
    }
    Some(sum)
}

fn utf16(bytes: &[u8]) -> String {
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16_lossy(&units)
}

fn emf(bytes: &[u8], lines: &mut Lines) {
    let mut at = 0usize;
    for _ in 0..MAX_RECORDS {
        let (Some(typ), Some(size)) = (u32_at(bytes, at), u32_at(bytes, at + 4)) else {
            return;
        };
        let size = size as usize;
        let Some(record) = at
            .checked_add(size)
            .and_then(|end| bytes.get(at..end))
            .filter(|_| size >= 8)
        else {
            return;
        };
        match typ {
            EMR_EOF => return,
            EMR_EXTTEXTOUTW | EMR_EXTTEXTOUTA => {
                let _ = ext_text_out(record, typ == EMR_EXTTEXTOUTW, lines);
            }
            EMR_SMALLTEXTOUT => {
                let _ = small_text_out(record, lines);
            }
            _ => {}
        }
        at += size;
    }
}

/// `EMR_EXTTEXTOUTW`/`A`: bounds, graphics mode, scales, then an `EmrText` object (reference
/// point, character count, string offset, options, rectangle, advances offset).
fn ext_text_out(record: &[u8], wide: bool, lines: &mut Lines) -> Option<()> {
    let (x, y) = (i32_at(record, 36)?, i32_at(record, 40)?);
    let count = u32_at(record, 44)? as usize;
    let offset = u32_at(record, 48)? as usize;
    let options = u32_at(record, 52)?;
    if options & ETO_GLYPH_INDEX != 0 {
        return None;
    }
    let len = if wide { count.checked_mul(2)? } else { count };
    let raw = record.get(offset..offset.checked_add(len)?)?;
    let s = if wide {
        utf16(raw)
    } else {
        WINDOWS_1252.decode_without_bom_handling(raw).0.into_owned()
    };
    let dx = u32_at(record, 72)? as usize;
    let width = advance(record, dx, count, options & ETO_PDY != 0);
    lines.piece(x, y, &s, width);
    Some(())
}

/// `EMR_SMALLTEXTOUT`: reference point, count, options, graphics mode, scales, a clipping
/// rectangle unless `ETO_NO_RECT`, then the string (8-bit with `ETO_SMALL_CHARS`).
fn small_text_out(record: &[u8], lines: &mut Lines) -> Option<()> {
    let (x, y) = (i32_at(record, 8)?, i32_at(record, 12)?);
    let count = u32_at(record, 16)? as usize;
    let options = u32_at(record, 20)?;
    if options & ETO_GLYPH_INDEX != 0 {
        return None;
    }
    let start: usize = if options & ETO_NO_RECT != 0 { 36 } else { 52 };
    let s = if options & ETO_SMALL_CHARS != 0 {
        let raw = record.get(start..start.checked_add(count)?)?;
        WINDOWS_1252.decode_without_bom_handling(raw).0.into_owned()
    } else {
        utf16(record.get(start..start.checked_add(count.checked_mul(2)?)?)?)
    };
    lines.piece(x, y, &s, None);
    Some(())
}

/// Greek letters the Symbol font draws for `A`–`Z` and `a`–`z` (Adobe's Symbol encoding).
const SYMBOL_UPPER: &str = "ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ";
const SYMBOL_LOWER: &str = "αβχδεφγηιϕκλμνοπθρστυϖωξψζ";

/// 8-bit text in a WMF font's `charset`: a symbol font's as [`symbol_text`], others in the
/// character set's code page.
fn decode(raw: &[u8], charset: u8) -> String {
    if charset == SYMBOL_CHARSET {
        return symbol_text(raw);
    }
    charset_encoding(charset)
        .decode_without_bom_handling(raw)
        .0
        .into_owned()
}

/// Text drawn in the Symbol font: digits, spaces and ASCII punctuation as themselves, letters
/// as the Greek letters drawn, other codes (arrows, operators, pictures) left out.
fn symbol_text(raw: &[u8]) -> String {
    raw.iter()
        .filter_map(|&b| match b {
            b'A'..=b'Z' => SYMBOL_UPPER.chars().nth(usize::from(b - b'A')),
            b'a'..=b'z' => SYMBOL_LOWER.chars().nth(usize::from(b - b'a')),
            0x20..=0x7E => Some(char::from(b)),
            _ => None,
        })
        .collect()
}

/// The code page of a WMF font's character set (Windows-1252 for those without one).
fn charset_encoding(charset: u8) -> &'static Encoding {
    match charset {
        128 => SHIFT_JIS,
        129 => EUC_KR,
        134 => GBK,
        136 => BIG5,
        161 => WINDOWS_1253,
        162 => WINDOWS_1254,
        163 => WINDOWS_1258,
        177 => WINDOWS_1255,
        178 => WINDOWS_1256,
        186 => WINDOWS_1257,
        204 => WINDOWS_1251,
        222 => WINDOWS_874,
        238 => WINDOWS_1250,
        _ => WINDOWS_1252,
    }
}

fn wmf(bytes: &[u8], start: usize, lines: &mut Lines) {
    // The object table: a font's character set, or `None` for another object; empty slots.
    let mut objects: Vec<Option<Option<u8>>> = Vec::new();
    let mut charset = 0u8;
    let mut at = start;
    for _ in 0..MAX_RECORDS {
        let (Some(words), Some(function)) = (u32_at(bytes, at), u16_at(bytes, at + 4)) else {
            return;
        };
        let Some(record) = (words as usize)
            .checked_mul(2)
            .filter(|&size| size >= 6)
            .and_then(|size| bytes.get(at..at.checked_add(size)?))
        else {
            return;
        };
        let params = &record[6..];
        match function {
            META_EOF => return,
            META_CREATEFONTINDIRECT => {
                // `Font`: height, width, escapement, orientation, weight, italic, underline,
                // strike-out, then the character set.
                let font = params.get(13).copied();
                create(&mut objects, Some(font.unwrap_or(0)));
            }
            f if META_CREATE.contains(&f) => create(&mut objects, None),
            META_SELECTOBJECT => {
                let slot = u16_at(params, 0).map(usize::from);
                if let Some(Some(Some(font))) = slot.and_then(|s| objects.get(s)) {
                    charset = *font;
                }
            }
            META_DELETEOBJECT => {
                if let Some(slot) = u16_at(params, 0).and_then(|s| objects.get_mut(usize::from(s)))
                {
                    *slot = None;
                }
            }
            META_TEXTOUT => {
                let _ = text_out(params, charset, lines);
            }
            META_EXTTEXTOUT => {
                let _ = ext_text_out_wmf(params, charset, lines);
            }
            _ => {}
        }
        at += record.len();
    }
}

/// Puts a new object in the lowest free slot of the table.
fn create(objects: &mut Vec<Option<Option<u8>>>, object: Option<u8>) {
    if let Some(slot) = objects.iter_mut().find(|slot| slot.is_none()) {
        *slot = Some(object);
    } else if objects.len() < usize::from(u16::MAX) {
        objects.push(Some(object));
    }
}

/// `META_TEXTOUT`: the string's length, the string (padded to a whole word), y, then x.
fn text_out(params: &[u8], charset: u8, lines: &mut Lines) -> Option<()> {
    let len = usize::from(u16_at(params, 0)?);
    let raw = params.get(2..2 + len)?;
    let padded = 2 + len + len % 2;
    let (y, x) = (i16_at(params, padded)?, i16_at(params, padded + 2)?);
    let s = decode(raw, charset);
    lines.piece(i32::from(x), i32::from(y), &s, None);
    Some(())
}

/// `META_EXTTEXTOUT`: y, x, the string's length, options, a rectangle when the options ask
/// for one, the string, then its advance widths.
fn ext_text_out_wmf(params: &[u8], charset: u8, lines: &mut Lines) -> Option<()> {
    let (y, x) = (i16_at(params, 0)?, i16_at(params, 2)?);
    let len = usize::try_from(i16_at(params, 4)?).ok()?;
    let options = u32::from(u16_at(params, 6)?);
    let start = if options & (ETO_OPAQUE | ETO_CLIPPED) != 0 {
        16
    } else {
        8
    };
    if options & ETO_GLYPH_INDEX != 0 {
        return None;
    }
    let raw = params.get(start..start + len)?;
    let s = decode(raw, charset);
    let dx = start + len + len % 2;
    let width = (0..len)
        .map(|k| i16_at(params, dx + 2 * k).map(i32::from))
        .sum::<Option<i32>>();
    lines.piece(i32::from(x), i32::from(y), &s, width);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An EMF record of `typ` with `body` after its type and size.
    fn emr(typ: u32, body: &[u8]) -> Vec<u8> {
        let mut out = typ.to_le_bytes().to_vec();
        out.extend_from_slice(&((body.len() + 8) as u32).to_le_bytes());
        out.extend_from_slice(body);
        out
    }

    fn emf_header() -> Vec<u8> {
        let mut body = vec![0u8; 80];
        body[32..36].copy_from_slice(&EMF_SIGNATURE.to_le_bytes());
        emr(EMR_HEADER, &body)
    }

    /// `EMR_EXTTEXTOUTW` drawing `s` at (`x`, `y`), each character `advance` wide.
    fn ext_text_out_w(x: i32, y: i32, s: &str, advance: i32, options: u32) -> Vec<u8> {
        let units: Vec<u16> = s.encode_utf16().collect();
        let mut body = vec![0u8; 68];
        body[28..32].copy_from_slice(&x.to_le_bytes());
        body[32..36].copy_from_slice(&y.to_le_bytes());
        body[36..40].copy_from_slice(&(units.len() as u32).to_le_bytes());
        body[40..44].copy_from_slice(&76u32.to_le_bytes());
        body[44..48].copy_from_slice(&options.to_le_bytes());
        let dx = 76 + units.len() * 2;
        let dx = dx + dx % 4;
        body[64..68].copy_from_slice(&(dx as u32).to_le_bytes());
        for u in &units {
            body.extend_from_slice(&u.to_le_bytes());
        }
        body.resize(dx - 8, 0);
        for _ in &units {
            body.extend_from_slice(&advance.to_le_bytes());
        }
        emr(EMR_EXTTEXTOUTW, &body)
    }

    #[test]
    fn emf_pieces_on_one_baseline_make_a_line() {
        let emf = [
            emf_header(),
            ext_text_out_w(100, 50, "Anal", 10, 0),
            // Starts where "Anal" ended: the same word.
            ext_text_out_w(140, 50, "yse", 10, 0),
            ext_text_out_w(200, 50, "emails", 10, 0),
            ext_text_out_w(100, 80, "Frequency", 10, 0),
            // Glyph indices are not characters.
            ext_text_out_w(100, 110, "\u{3}\u{4}", 10, ETO_GLYPH_INDEX),
            emr(EMR_EOF, &[0; 12]),
            ext_text_out_w(100, 140, "after the end", 10, 0),
        ]
        .concat();
        assert!(is_metafile(&emf));
        assert_eq!(text(&emf).as_deref(), Some("Analyse emails\nFrequency"));
        // Cut anywhere, or noise: the text before the damage, never a panic.
        for cut in inlet_extract_testkit::truncations(&emf) {
            let _ = text(cut);
        }
        for seed in 1..40 {
            let mut noisy = emf.clone();
            noisy.extend(inlet_extract_testkit::noise(2000, seed));
            assert_eq!(text(&noisy).as_deref(), Some("Analyse emails\nFrequency"));
            let mut bytes = emf_header();
            bytes.extend(inlet_extract_testkit::noise(4000, seed));
            let _ = text(&bytes);
        }
        assert_eq!(text(b"not a metafile"), None);
    }

    /// A WMF record of `function` with `params`.
    fn meta(function: u16, params: &[u8]) -> Vec<u8> {
        let mut out = (((params.len() + 6) / 2) as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&function.to_le_bytes());
        out.extend_from_slice(params);
        out
    }

    fn font(charset: u8) -> Vec<u8> {
        let mut params = vec![0u8; 18];
        params[13] = charset;
        params.extend_from_slice(b"Arial\0");
        meta(META_CREATEFONTINDIRECT, &params)
    }

    fn text_out(x: i16, y: i16, s: &[u8]) -> Vec<u8> {
        let mut params = (s.len() as u16).to_le_bytes().to_vec();
        params.extend_from_slice(s);
        if s.len() % 2 == 1 {
            params.push(0);
        }
        params.extend_from_slice(&y.to_le_bytes());
        params.extend_from_slice(&x.to_le_bytes());
        meta(META_TEXTOUT, &params)
    }

    #[test]
    fn wmf_text_is_read_in_the_selected_fonts_character_set() {
        let mut wmf = WMF_PLACEABLE_KEY.to_le_bytes().to_vec();
        wmf.extend_from_slice(&[0; 18]);
        // Header: type 1, 9 words, version 0x0300, sizes.
        wmf.extend_from_slice(&[1, 0, 9, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let body = [
            meta(0x02FA, &[0; 10]), // a pen: slot 0
            font(204),              // Cyrillic: slot 1
            font(SYMBOL_CHARSET),   // slot 2
            meta(META_SELECTOBJECT, &1u16.to_le_bytes()),
            text_out(10, 20, b"\xcb\xe0\xe1"),
            meta(META_SELECTOBJECT, &2u16.to_le_bytes()),
            text_out(10, 40, b"\xb7 1. a+b"),
            meta(META_DELETEOBJECT, &0u16.to_le_bytes()),
            font(0), // takes the freed slot 0
            meta(META_SELECTOBJECT, &0u16.to_le_bytes()),
            text_out(10, 60, b"Base Unit"),
            meta(META_EOF, &[]),
        ]
        .concat();
        wmf.extend_from_slice(&body);
        assert!(is_metafile(&wmf));
        assert_eq!(text(&wmf).as_deref(), Some("Лаб\n1. α+β\nBase Unit"));
        for cut in inlet_extract_testkit::truncations(&wmf) {
            let _ = text(cut);
        }
        for seed in 1..40 {
            let mut bytes = wmf[..40].to_vec();
            bytes.extend(inlet_extract_testkit::noise(4000, seed));
            let _ = text(&bytes);
        }
    }
}
