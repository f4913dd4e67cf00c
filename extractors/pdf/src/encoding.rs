//! Simple-font encodings and glyph names: the standard Latin encodings as glyph-name tables,
//! glyph name to Unicode (Adobe Glyph List, `uniXXXX`, `uXXXX`, suffixes and ligature names),
//! and the standard 14 fonts' widths.

use crate::generated::{GLYPH_LIST, MAC_ROMAN, PDF_DOC, STANDARD, STD14_WIDTHS, WIN_ANSI};

/// A named base encoding of a simple font.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BaseEncoding {
    /// Adobe StandardEncoding.
    Standard,
    /// WinAnsiEncoding (Windows-1252).
    WinAnsi,
    /// MacRomanEncoding.
    MacRoman,
}

impl BaseEncoding {
    /// The encoding a `/Encoding` or `/BaseEncoding` name stands for.
    pub(crate) fn from_name(name: &[u8]) -> Option<Self> {
        match name {
            b"WinAnsiEncoding" => Some(Self::WinAnsi),
            b"MacRomanEncoding" => Some(Self::MacRoman),
            b"StandardEncoding" => Some(Self::Standard),
            // Expert sets are small caps and old-style figures: letters and digits of Standard.
            b"MacExpertEncoding" => Some(Self::Standard),
            _ => None,
        }
    }

    /// Glyph name per code.
    pub(crate) fn names(self) -> &'static [&'static str; 256] {
        match self {
            Self::Standard => &STANDARD,
            Self::WinAnsi => &WIN_ANSI,
            Self::MacRoman => &MAC_ROMAN,
        }
    }
}

/// Decodes a text string (outline titles, metadata): UTF-16 with a BOM, UTF-8 with a BOM, or
/// PDFDocEncoding.
pub(crate) fn text_string(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xfe, 0xff]) {
        return utf16be(rest);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    bytes
        .iter()
        .map(|&b| {
            let name = PDF_DOC[usize::from(b)];
            glyph_to_unicode(name.as_bytes())
                .and_then(|s| s.chars().next())
                .unwrap_or(char::from(b))
        })
        .collect()
}

/// Decodes UTF-16BE text (a lone odd byte is taken as a code unit by itself).
pub(crate) fn utf16be(bytes: &[u8]) -> String {
    let units: Vec<u16> = if bytes.len() % 2 == 1 && bytes.len() == 1 {
        vec![u16::from(bytes[0])]
    } else {
        bytes
            .chunks(2)
            .map(|c| u16::from(c[0]) << 8 | u16::from(c.get(1).copied().unwrap_or(0)))
            .collect()
    };
    char::decode_utf16(units)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

fn hex_units(hex: &[u8]) -> Option<Vec<u32>> {
    if hex.is_empty() || !hex.len().is_multiple_of(4) {
        return None;
    }
    hex.chunks(4)
        .map(|c| u32::from_str_radix(std::str::from_utf8(c).ok()?, 16).ok())
        .collect()
}

/// The Unicode text of a glyph name, if it can be told.
pub(crate) fn glyph_to_unicode(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    if name.is_empty() || name == ".notdef" {
        return None;
    }
    if let Ok(i) = GLYPH_LIST.binary_search_by(|(n, _)| n.as_bytes().cmp(name.as_bytes())) {
        return Some(GLYPH_LIST[i].1.to_owned());
    }
    // A suffix (`a.sc`, `one.oldstyle`) names a variant of the base glyph.
    if let Some((base, _)) = name.split_once('.')
        && !base.is_empty()
    {
        return glyph_to_unicode(base.as_bytes());
    }
    // Ligatures named by their parts: `f_f_i`.
    if name.contains('_') {
        let parts: Option<String> = name
            .split('_')
            .map(|p| glyph_to_unicode(p.as_bytes()))
            .collect();
        return parts;
    }
    if let Some(hex) = name.strip_prefix("uni") {
        let units = hex_units(hex.as_bytes())?;
        let s: String = char::decode_utf16(units.iter().map(|&u| u as u16))
            .filter_map(Result::ok)
            .collect();
        return (!s.is_empty()).then_some(s);
    }
    if let Some(hex) = name.strip_prefix('u')
        && (4..=6).contains(&hex.len())
        && let Ok(v) = u32::from_str_radix(hex, 16)
    {
        return char::from_u32(v).map(String::from);
    }
    None
}

/// The standard-14 metrics that fit a `/BaseFont` name (subset prefix and style spellings
/// tolerated), as (character, width per 1000 em) sorted by character.
pub(crate) fn std14_widths(base_font: &[u8]) -> Option<&'static [(char, u16)]> {
    let name = String::from_utf8_lossy(base_font);
    let name = match name.split_once('+') {
        Some((prefix, rest)) if prefix.len() == 6 => rest.to_owned(),
        _ => name.into_owned(),
    };
    if let Some((_, w)) = STD14_WIDTHS.iter().find(|(n, _)| *n == name) {
        return Some(w);
    }
    let lower = name.to_ascii_lowercase();
    let bold = lower.contains("bold") || lower.contains("black") || lower.contains("heavy");
    let italic = lower.contains("italic") || lower.contains("oblique");
    let family = if lower.contains("courier") || lower.contains("mono") {
        "Courier"
    } else if lower.contains("times") || lower.contains("serif") && !lower.contains("sans") {
        "Times"
    } else if lower.contains("helvetica") || lower.contains("arial") {
        "Helvetica"
    } else {
        return None;
    };
    let full = match (family, bold, italic) {
        ("Times", false, false) => "Times-Roman".to_owned(),
        ("Times", true, false) => "Times-Bold".to_owned(),
        ("Times", false, true) => "Times-Italic".to_owned(),
        ("Times", true, true) => "Times-BoldItalic".to_owned(),
        (f, false, false) => f.to_owned(),
        (f, true, false) => format!("{f}-Bold"),
        (f, false, true) => format!("{f}-Oblique"),
        (f, true, true) => format!("{f}-BoldOblique"),
    };
    STD14_WIDTHS
        .iter()
        .find(|(n, _)| *n == full)
        .map(|(_, w)| *w)
}

/// Width per 1000 em of `c` in standard-14 metrics.
pub(crate) fn std14_width(widths: &[(char, u16)], c: char) -> Option<u16> {
    widths
        .binary_search_by_key(&c, |&(ch, _)| ch)
        .ok()
        .map(|i| widths[i].1)
}

/// Expands presentation-form Latin ligatures (U+FB00–U+FB06) into their letters.
pub(crate) fn expand_ligature(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{FB00}' => "ff",
        '\u{FB01}' => "fi",
        '\u{FB02}' => "fl",
        '\u{FB03}' => "ffi",
        '\u{FB04}' => "ffl",
        '\u{FB05}' | '\u{FB06}' => "st",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyph_names_resolve() {
        assert_eq!(glyph_to_unicode(b"A").as_deref(), Some("A"));
        assert_eq!(glyph_to_unicode(b"fi").as_deref(), Some("\u{FB01}"));
        assert_eq!(glyph_to_unicode(b"adieresis").as_deref(), Some("ä"));
        assert_eq!(glyph_to_unicode(b"uni00E9").as_deref(), Some("é"));
        assert_eq!(glyph_to_unicode(b"u1F600").as_deref(), Some("😀"));
        assert_eq!(glyph_to_unicode(b"a.sc").as_deref(), Some("a"));
        assert_eq!(glyph_to_unicode(b"f_f_i").as_deref(), Some("ffi"));
        assert_eq!(glyph_to_unicode(b"g123"), None);
    }

    #[test]
    fn encodings_name_the_right_glyphs() {
        assert_eq!(BaseEncoding::WinAnsi.names()[0x80], "Euro");
        assert_eq!(BaseEncoding::MacRoman.names()[0x8A], "adieresis");
        assert_eq!(BaseEncoding::Standard.names()[0xAE], "fi");
        assert_eq!(text_string(b"\xfe\xff\x00A\x00\xe9"), "Aé");
    }

    #[test]
    fn standard_fonts_have_widths() {
        let w = std14_widths(b"ABCDEF+Arial,Bold").unwrap();
        assert!(std14_width(w, 'a').is_some());
        assert_eq!(
            std14_width(std14_widths(b"Courier").unwrap(), 'x'),
            Some(600)
        );
    }
}
