//! Just enough of an embedded TrueType/OpenType font program to tell the text of its glyphs:
//! the Unicode `cmap` subtables (formats 4, 6 and 12), inverted into glyph id → character. Used
//! for composite fonts that come without a ToUnicode map (codes that are glyph ids).

use std::collections::HashMap;

/// Characters mapped from one font at most.
const MAX_MAPPINGS: usize = 0x11_0000;

fn u16_at(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(d.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

/// Table offsets of a font program by tag.
fn tables(font: &[u8]) -> Option<Vec<([u8; 4], usize, usize)>> {
    let mut base = 0usize;
    if font.starts_with(b"ttcf") {
        base = usize::try_from(u32_at(font, 12)?).ok()?;
    }
    let num_tables = usize::from(u16_at(font, base + 4)?);
    let mut out = Vec::new();
    for i in 0..num_tables.min(256) {
        let rec = base + 12 + i * 16;
        let tag: [u8; 4] = font.get(rec..rec + 4)?.try_into().ok()?;
        let off = usize::try_from(u32_at(font, rec + 8)?).ok()?;
        let len = usize::try_from(u32_at(font, rec + 12)?).ok()?;
        out.push((tag, off, len));
    }
    Some(out)
}

fn table(font: &[u8], tag: &[u8; 4]) -> Option<usize> {
    tables(font)?.into_iter().find(|t| &t.0 == tag).map(|t| t.1)
}

/// The cmap subtables: platform, encoding, offset.
fn subtables(font: &[u8]) -> Option<Vec<(u16, u16, usize)>> {
    let cmap = table(font, b"cmap")?;
    let count = usize::from(u16_at(font, cmap + 2)?);
    let mut out = Vec::new();
    for i in 0..count.min(64) {
        let rec = cmap + 4 + i * 8;
        out.push((
            u16_at(font, rec)?,
            u16_at(font, rec + 2)?,
            cmap + usize::try_from(u32_at(font, rec + 4)?).ok()?,
        ));
    }
    Some(out)
}

/// Calls `add(code, glyph id)` for every mapping of the subtable at `sub` (formats 0, 4, 6, 12).
fn each_mapping(font: &[u8], sub: usize, mut add: impl FnMut(u32, u32)) -> Option<()> {
    match u16_at(font, sub)? {
        0 => {
            for c in 0..256usize {
                add(c as u32, u32::from(*font.get(sub + 6 + c)?));
            }
        }
        4 => {
            let seg_count = usize::from(u16_at(font, sub + 6)? / 2);
            let ends = sub + 14;
            let starts = ends + seg_count * 2 + 2;
            let deltas = starts + seg_count * 2;
            let ranges = deltas + seg_count * 2;
            for s in 0..seg_count {
                let end = u32::from(u16_at(font, ends + s * 2)?);
                let start = u32::from(u16_at(font, starts + s * 2)?);
                let delta = u32::from(u16_at(font, deltas + s * 2)?);
                let range_at = ranges + s * 2;
                let range = usize::from(u16_at(font, range_at)?);
                if start > end || start == 0xFFFF {
                    continue;
                }
                for c in start..=end.min(0xFFFE) {
                    let gid = if range == 0 {
                        (c + delta) & 0xFFFF
                    } else {
                        let at = range_at + range + 2 * (c - start) as usize;
                        match u16_at(font, at) {
                            Some(0) | None => 0,
                            Some(g) => (u32::from(g) + delta) & 0xFFFF,
                        }
                    };
                    add(c, gid);
                }
            }
        }
        6 => {
            let first = u32::from(u16_at(font, sub + 6)?);
            let n = usize::from(u16_at(font, sub + 8)?);
            for i in 0..n {
                add(first + i as u32, u32::from(u16_at(font, sub + 10 + i * 2)?));
            }
        }
        12 => {
            let groups = usize::try_from(u32_at(font, sub + 12)?).ok()?;
            for i in 0..groups.min(100_000) {
                let g = sub + 16 + i * 12;
                let (start, end, gid) =
                    (u32_at(font, g)?, u32_at(font, g + 4)?, u32_at(font, g + 8)?);
                if end < start || end - start > 0x1_0000 {
                    continue;
                }
                for c in start..=end {
                    add(c, gid + (c - start));
                }
            }
        }
        _ => return None,
    }
    Some(())
}

/// Glyph names from a `post` table of format 1 or 2, by glyph id.
fn post_names(font: &[u8]) -> Option<Vec<String>> {
    let post = table(font, b"post")?;
    match u32_at(font, post)? {
        0x0001_0000 => Some(
            crate::generated::MAC_GLYPH_ORDER
                .iter()
                .map(|n| (*n).to_owned())
                .collect(),
        ),
        0x0002_0000 => {
            let n = usize::from(u16_at(font, post + 32)?);
            let indices: Vec<u16> = (0..n)
                .map(|i| u16_at(font, post + 34 + i * 2))
                .collect::<Option<_>>()?;
            // Pascal strings after the index array.
            let mut names = Vec::new();
            let mut at = post + 34 + n * 2;
            while let Some(&len) = font.get(at) {
                let Some(bytes) = font.get(at + 1..at + 1 + usize::from(len)) else {
                    break;
                };
                names.push(String::from_utf8_lossy(bytes).into_owned());
                at += 1 + usize::from(len);
                if names.len() > n {
                    break;
                }
            }
            Some(
                indices
                    .iter()
                    .map(|&i| match usize::from(i) {
                        i if i < 258 => crate::generated::MAC_GLYPH_ORDER[i].to_owned(),
                        i => names.get(i - 258).cloned().unwrap_or_default(),
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

/// The glyph id → character map of a font program: its Unicode cmap inverted, else its `post`
/// glyph names (empty if it has neither).
pub(crate) fn glyph_unicode(font: &[u8]) -> HashMap<u16, char> {
    let mut map = HashMap::new();
    let subs = subtables(font).unwrap_or_default();
    let best = subs
        .iter()
        .filter_map(|&(p, e, off)| {
            let rank = match (p, e) {
                (3, 10) => 4,
                (0, 4 | 6) => 3,
                (3, 1) => 2,
                (0, _) => 1,
                _ => return None,
            };
            Some((rank, off))
        })
        .max_by_key(|&(rank, _)| rank);
    if let Some((_, sub)) = best {
        each_mapping(font, sub, |c, gid| {
            if gid == 0 || map.len() >= MAX_MAPPINGS {
                return;
            }
            if let (Ok(gid), Some(ch)) = (u16::try_from(gid), char::from_u32(c)) {
                map.entry(gid).or_insert(ch);
            }
        });
    }
    if map.is_empty()
        && let Some(names) = post_names(font)
    {
        for (gid, name) in names.iter().enumerate().skip(1) {
            if let Some(text) = crate::encoding::glyph_to_unicode(name.as_bytes())
                && let Some(c) = text.chars().next()
                && let Ok(gid) = u16::try_from(gid)
            {
                map.insert(gid, c);
            }
        }
    }
    map
}

/// The text of each single-byte code of a symbolic simple TrueType font: the code's glyph by
/// the font's (3,0) or (1,0) cmap, named by the Unicode cmap or the `post` table.
pub(crate) fn simple_code_text(font: &[u8]) -> Option<Vec<Option<String>>> {
    let subs = subtables(font)?;
    let (platform, _, sub) = *subs
        .iter()
        .find(|s| (s.0, s.1) == (3, 0))
        .or_else(|| subs.iter().find(|s| (s.0, s.1) == (1, 0)))?;
    let mut code_gid: HashMap<u32, u32> = HashMap::new();
    each_mapping(font, sub, |c, gid| {
        if gid != 0 && code_gid.len() < 1024 {
            code_gid.insert(c, gid);
        }
    });
    let by_gid = glyph_unicode(font);
    let out: Vec<Option<String>> = (0..256u32)
        .map(|code| {
            let gid = if platform == 3 {
                [0xF000, 0xF100, 0xF200, 0]
                    .iter()
                    .find_map(|hi| code_gid.get(&(hi | code)))
            } else {
                code_gid.get(&code)
            }?;
            let c = by_gid.get(&u16::try_from(*gid).ok()?)?;
            (!('\u{E000}'..='\u{F8FF}').contains(c)).then(|| c.to_string())
        })
        .collect();
    out.iter().any(Option::is_some).then_some(out)
}

/// Whether `font` is a TrueType program with neither a `cmap` nor a `post` table.
pub(crate) fn is_truetype_without_cmap(font: &[u8]) -> bool {
    if !(font.starts_with(&[0, 1, 0, 0]) || font.starts_with(b"true")) {
        return false;
    }
    let n = usize::from(u16_at(font, 4).unwrap_or(0));
    !(0..n.min(256)).any(|i| {
        let tag = font.get(12 + i * 16..16 + i * 16);
        tag == Some(b"cmap") || tag == Some(b"post")
    })
}

/// Glyph id → character per the standard Macintosh glyph order.
pub(crate) fn mac_glyph_order_unicode() -> HashMap<u16, char> {
    crate::generated::MAC_GLYPH_ORDER
        .iter()
        .enumerate()
        .skip(3)
        .filter_map(|(gid, name)| {
            let text = crate::encoding::glyph_to_unicode(name.as_bytes())?;
            let mut chars = text.chars();
            let c = chars.next()?;
            (chars.next().is_none()).then_some((u16::try_from(gid).ok()?, c))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A font with one cmap subtable (3,1) format 4 mapping 'A'..='C' to glyphs 10..=12.
    fn tiny_font() -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(&[0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
        f.extend_from_slice(b"cmap");
        f.extend_from_slice(&[0; 4]);
        f.extend_from_slice(&28u32.to_be_bytes());
        f.extend_from_slice(&[0; 4]);
        // cmap header at 28: version 0, one record (3,1) at offset 12.
        f.extend_from_slice(&[0, 0, 0, 1, 0, 3, 0, 1, 0, 0, 0, 12]);
        // format 4 with two segments: 0x41..0x43 delta 10-0x41, and the 0xFFFF terminator.
        let delta = (10i32 - 0x41) as u16;
        let words: [u16; 15] = [
            4, 32, 0, 4, 0, 0, 0, // format, length, language, segCountX2, search fields
            0x43, 0xFFFF, 0, // ends, pad
            0x41, 0xFFFF, // starts
            delta, 1, // deltas
            0, // range offsets follow
        ];
        for w in words {
            f.extend_from_slice(&w.to_be_bytes());
        }
        f.extend_from_slice(&[0, 0]);
        f
    }

    #[test]
    fn inverts_a_format_4_cmap() {
        let map = glyph_unicode(&tiny_font());
        assert_eq!(map.get(&10), Some(&'A'));
        assert_eq!(map.get(&12), Some(&'C'));
        assert_eq!(map.get(&13), None);
    }

    #[test]
    fn garbage_gives_nothing() {
        assert!(glyph_unicode(b"not a font").is_empty());
        assert!(glyph_unicode(&[0, 1, 0, 0, 0xff, 0xff]).is_empty());
    }
}
