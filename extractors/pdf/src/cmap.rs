//! CMaps: `/ToUnicode` maps (codes to text) and embedded encoding CMaps (codes to CIDs), with
//! their code space ranges that say how many bytes make one character code.

use std::collections::HashMap;

use crate::{
    encoding::{glyph_to_unicode, utf16be},
    object::{Lexer, Object, Token},
};

/// Entries read from one CMap at most (a hostile CMap could list millions).
const MAX_ENTRIES: usize = 200_000;

/// A parsed CMap.
#[derive(Debug, Default, Clone)]
pub(crate) struct CMap {
    /// Code space ranges: byte length, low and high code.
    pub(crate) codespace: Vec<(u8, u32, u32)>,
    chars: HashMap<u32, Box<str>>,
    /// `bfrange` entries with an incrementing destination: low, high, destination of `low`.
    ranges: Vec<(u32, u32, Vec<u16>)>,
    /// `cidrange`/`cidchar` entries: low, high, CID of `low`.
    cids: Vec<(u32, u32, u32)>,
}

fn code_of(bytes: &[u8]) -> Option<(u8, u32)> {
    if bytes.is_empty() || bytes.len() > 4 {
        return None;
    }
    let v = bytes.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b));
    Some((bytes.len() as u8, v))
}

fn units_of(bytes: &[u8]) -> Vec<u16> {
    if bytes.len() == 1 {
        return vec![u16::from(bytes[0])];
    }
    bytes
        .chunks(2)
        .map(|c| u16::from(c[0]) << 8 | u16::from(c.get(1).copied().unwrap_or(0)))
        .collect()
}

impl CMap {
    /// Parses CMap program text. Anything it cannot read is skipped.
    pub(crate) fn parse(data: &[u8]) -> Self {
        let mut cmap = CMap::default();
        let mut lx = Lexer::new(data, 0);
        let mut operands: Vec<Object> = Vec::new();
        let mut entries = 0usize;
        loop {
            let tok = match lx.token() {
                Ok(Some(t)) => t,
                Ok(None) => break,
                Err(_) => {
                    // Skip one byte and go on: CMaps are often sloppy PostScript.
                    lx.pos += 1;
                    continue;
                }
            };
            match tok {
                Token::Obj(o) => {
                    if operands.len() < 3 * 100 + 3 {
                        operands.push(o);
                    }
                }
                Token::Op(op) => {
                    entries += operands.len();
                    if entries > MAX_ENTRIES {
                        break;
                    }
                    match op {
                        b"endcodespacerange" => {
                            for pair in operands.chunks_exact(2) {
                                if let (Object::Str(lo), Object::Str(hi)) = (&pair[0], &pair[1])
                                    && let (Some((n, lo)), Some((_, hi))) =
                                        (code_of(lo), code_of(hi))
                                {
                                    cmap.codespace.push((n, lo, hi));
                                }
                            }
                        }
                        b"endbfchar" => {
                            for pair in operands.chunks_exact(2) {
                                let Object::Str(src) = &pair[0] else { continue };
                                let Some((_, code)) = code_of(src) else {
                                    continue;
                                };
                                let text = match &pair[1] {
                                    Object::Str(dst) => utf16be(dst),
                                    Object::Name(n) => glyph_to_unicode(n).unwrap_or_default(),
                                    _ => continue,
                                };
                                cmap.chars.insert(code, text.into_boxed_str());
                            }
                        }
                        b"endbfrange" => {
                            for triple in operands.chunks_exact(3) {
                                let (Object::Str(lo), Object::Str(hi)) = (&triple[0], &triple[1])
                                else {
                                    continue;
                                };
                                let (Some((_, lo)), Some((_, hi))) = (code_of(lo), code_of(hi))
                                else {
                                    continue;
                                };
                                if hi < lo {
                                    continue;
                                }
                                match &triple[2] {
                                    Object::Str(dst) if !dst.is_empty() => {
                                        cmap.ranges.push((lo, hi, units_of(dst)));
                                    }
                                    Object::Array(items) => {
                                        for (i, item) in items.iter().enumerate() {
                                            let code = lo.saturating_add(i as u32);
                                            if code > hi {
                                                break;
                                            }
                                            if let Object::Str(dst) = item {
                                                cmap.chars
                                                    .insert(code, utf16be(dst).into_boxed_str());
                                            }
                                        }
                                    }
                                    _ => {}
                                }
                            }
                        }
                        b"endcidrange" => {
                            for triple in operands.chunks_exact(3) {
                                if let (Object::Str(lo), Object::Str(hi), Some(cid)) =
                                    (&triple[0], &triple[1], triple[2].as_i64())
                                    && let (Some((_, lo)), Some((_, hi))) =
                                        (code_of(lo), code_of(hi))
                                {
                                    cmap.cids.push((lo, hi, u32::try_from(cid).unwrap_or(0)));
                                }
                            }
                        }
                        b"endcidchar" => {
                            for pair in operands.chunks_exact(2) {
                                if let (Object::Str(c), Some(cid)) = (&pair[0], pair[1].as_i64())
                                    && let Some((_, c)) = code_of(c)
                                {
                                    cmap.cids.push((c, c, u32::try_from(cid).unwrap_or(0)));
                                }
                            }
                        }
                        _ => {}
                    }
                    operands.clear();
                }
            }
        }
        cmap.ranges.sort_by_key(|r| r.0);
        cmap.cids.sort_by_key(|r| r.0);
        cmap
    }

    /// Whether the map has no text mappings.
    pub(crate) fn is_empty(&self) -> bool {
        self.chars.is_empty() && self.ranges.is_empty()
    }

    /// The text for `code`, if mapped.
    pub(crate) fn lookup(&self, code: u32) -> Option<std::borrow::Cow<'_, str>> {
        if let Some(s) = self.chars.get(&code) {
            return Some(std::borrow::Cow::Borrowed(s));
        }
        let i = self.ranges.partition_point(|r| r.0 <= code);
        // Ranges may overlap: look back a little for one that contains the code.
        for r in self.ranges[..i].iter().rev().take(8) {
            if code >= r.0 && code <= r.1 {
                let mut units = r.2.clone();
                if let Some(last) = units.last_mut() {
                    *last = last.wrapping_add((code - r.0) as u16);
                }
                let s: String = char::decode_utf16(units)
                    .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                    .collect();
                return Some(std::borrow::Cow::Owned(s));
            }
        }
        None
    }

    /// The CID for `code` from `cidrange`/`cidchar` entries.
    pub(crate) fn cid(&self, code: u32) -> Option<u32> {
        let i = self.cids.partition_point(|r| r.0 <= code);
        self.cids[..i]
            .iter()
            .rev()
            .take(8)
            .find(|r| code <= r.1)
            .map(|r| r.2 + (code - r.0))
    }
}

/// Splits off the next code per `codespace` (`default_len` bytes when there is none or no range
/// matches).
pub(crate) fn next_code(
    codespace: &[(u8, u32, u32)],
    bytes: &[u8],
    default_len: usize,
) -> (u32, usize) {
    let mut value = 0u32;
    for len in 1..=4usize.min(bytes.len()) {
        value = value << 8 | u32::from(bytes[len - 1]);
        if codespace
            .iter()
            .any(|&(n, lo, hi)| usize::from(n) == len && value >= lo && value <= hi)
        {
            return (value, len);
        }
    }
    let len = codespace
        .iter()
        .map(|&(n, _, _)| usize::from(n))
        .min()
        .unwrap_or(default_len)
        .clamp(1, 4)
        .min(bytes.len());
    let value = bytes[..len]
        .iter()
        .fold(0u32, |acc, &b| acc << 8 | u32::from(b));
    (value, len.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &[u8] = b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap
1 begincodespacerange <0000> <FFFF> endcodespacerange
2 beginbfchar <0003> <0020> <0010> <00660069> endbfchar
1 beginbfrange <0024> <0026> <0041> endbfrange
1 beginbfrange <0030> <0031> [<0078> <D835DC00>] endbfrange
endcmap CMapName currentdict /CMap defineresource pop end end";

    #[test]
    fn reads_chars_ranges_and_code_space() {
        let m = CMap::parse(SAMPLE);
        assert_eq!(m.lookup(3).as_deref(), Some(" "));
        assert_eq!(m.lookup(0x10).as_deref(), Some("fi"));
        assert_eq!(m.lookup(0x25).as_deref(), Some("B"));
        assert_eq!(m.lookup(0x31).as_deref(), Some("\u{1D400}"));
        assert_eq!(m.lookup(0x27), None);
        assert_eq!(next_code(&m.codespace, &[0, 0x25, 7], 1), (0x25, 2));
    }

    #[test]
    fn single_byte_code_space_splits_bytes() {
        let cs = [(1u8, 0u32, 0xffu32)];
        assert_eq!(next_code(&cs, b"AB", 2), (0x41, 1));
        assert_eq!(next_code(&[], b"AB", 2), (0x4142, 2));
        assert_eq!(next_code(&[], b"A", 2), (0x41, 1));
    }
}
