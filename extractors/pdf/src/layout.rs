//! Turns a page's placed glyphs (in content order) into lines of words: a glyph off the current
//! baseline starts a new line, a gap wider than a fraction of the font size becomes a space, a
//! glyph drawn twice in place (fake bold) is kept once, right-to-left lines are put in logical
//! order, and ligatures are spelled out.

use crate::{
    content::{PageGlyphs, Placed},
    encoding::expand_ligature,
};

/// A gap between glyphs wider than this share of the font size separates words.
const WORD_GAP: f32 = 0.15;

/// Baselines closer than this share of the larger font size are one line (sub/superscripts).
const SAME_LINE: f32 = 0.5;

/// A glyph repeated within this share of the font size is a duplicate (fake bold).
const DUPLICATE: f32 = 0.2;

/// One line being assembled: its glyph indices.
struct Line {
    glyphs: Vec<usize>,
}

/// The page's text: lines separated by `\n`.
pub(crate) fn page_text(page: &PageGlyphs) -> String {
    let lines = split_lines(page);
    let mut out = String::with_capacity(page.text.len() + lines.len() * 2);
    for line in &lines {
        write_line(page, line, &mut out);
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

fn split_lines(page: &PageGlyphs) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let mut prev: Option<&Placed> = None;
    for (i, g) in page.glyphs.iter().enumerate() {
        let new_line = match prev {
            None => true,
            Some(p) => {
                let tol = SAME_LINE * p.size.max(g.size).max(0.01);
                g.rot != p.rot || (g.y - p.y).abs() > tol
            }
        };
        if new_line || lines.is_empty() {
            lines.push(Line { glyphs: vec![i] });
        } else if let Some(line) = lines.last_mut() {
            line.glyphs.push(i);
        }
        prev = Some(g);
    }
    lines
}

fn is_rtl(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF)
}

/// A word being assembled: where it starts along the line and its glyphs' text.
#[derive(Default)]
struct Word<'p> {
    x: f32,
    parts: Vec<&'p str>,
    /// Glyphs of a right-to-left script in it.
    rtl: bool,
    /// Whether its glyphs advance left to right (visual order for right-to-left text).
    ascending: bool,
    last_x: f32,
}

impl Word<'_> {
    fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

fn write_line(page: &PageGlyphs, line: &Line, out: &mut String) {
    let mut words: Vec<Word<'_>> = Vec::new();
    let mut word = Word::default();
    let mut prev: Option<&Placed> = None;
    let mut rtl = 0usize;
    let mut ltr = 0usize;
    for &i in &line.glyphs {
        let g = &page.glyphs[i];
        let text = page.text_of(g);
        if let Some(p) = prev {
            let size = p.size.max(g.size).max(0.01);
            if text == page.text_of(p)
                && (g.x - p.x).abs() < DUPLICATE * size
                && (g.y - p.y).abs() < DUPLICATE * size
            {
                continue;
            }
            let gap = g.x - p.end;
            // Glyphs drawn right to left touch their predecessor's start instead.
            let back_gap = p.x - g.end;
            let leftwards = g.x < p.x && back_gap > -0.2 * size && back_gap <= WORD_GAP * size;
            if !leftwards && (gap > WORD_GAP * size || gap < -size * 0.5 || g.x < p.x - size * 0.5)
            {
                words.push(std::mem::take(&mut word));
            }
        }
        prev = Some(g);
        let mut piece_start = None;
        for (at, c) in text.char_indices() {
            let skip = c.is_whitespace()
                || c.is_control()
                || c == '\u{FFFD}'
                || c == '\u{FEFF}'
                || expand_ligature(c).is_some();
            if skip {
                if let Some(s) = piece_start.take() {
                    push_part(&mut word, &text[s..at], g.x);
                }
                if c.is_whitespace() {
                    if !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                } else if let Some(l) = expand_ligature(c) {
                    push_part(&mut word, l, g.x);
                }
                continue;
            }
            if is_rtl(c) {
                rtl += 1;
                word.rtl = true;
            } else if c.is_alphabetic() {
                ltr += 1;
            }
            piece_start.get_or_insert(at);
        }
        if let Some(s) = piece_start {
            push_part(&mut word, &text[s..], g.x);
        }
    }
    words.push(word);
    words.retain(|w| !w.is_empty());
    if rtl > ltr {
        // Right-to-left lines read from the right; most producers draw their glyphs in visual
        // order (left to right), so such words are reversed glyph by glyph.
        words.sort_by(|a, b| b.x.total_cmp(&a.x));
        for w in &mut words {
            if w.rtl && w.ascending {
                w.parts.reverse();
            }
        }
    }
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        for p in &w.parts {
            out.push_str(p);
        }
    }
}

fn push_part<'p>(word: &mut Word<'p>, part: &'p str, x: f32) {
    if word.parts.is_empty() {
        word.x = x;
        word.ascending = true;
    } else if x < word.last_x {
        word.ascending = false;
    }
    word.last_x = x;
    word.parts.push(part);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(glyphs: &[(&str, f32, f32, f32)]) -> PageGlyphs {
        let mut p = PageGlyphs::default();
        for &(t, x, y, w) in glyphs {
            let start = p.text.len() as u32;
            p.text.push_str(t);
            p.glyphs.push(Placed {
                x,
                y,
                end: x + w,
                size: 10.0,
                rot: 0,
                start,
                len: t.len() as u32,
            });
        }
        p
    }

    #[test]
    fn gaps_make_spaces_and_baselines_make_lines() {
        let p = page(&[
            ("H", 0.0, 100.0, 6.0),
            ("i", 6.2, 100.0, 3.0),
            ("y", 12.0, 100.0, 5.0),
            ("o", 0.0, 88.0, 5.0),
            ("ﬁ", 5.0, 91.0, 5.0),
        ]);
        assert_eq!(page_text(&p), "Hi y\nofi\n");
    }

    #[test]
    fn fake_bold_is_kept_once() {
        let p = page(&[
            ("A", 0.0, 0.0, 6.0),
            ("A", 0.3, 0.0, 6.0),
            ("B", 6.0, 0.0, 6.0),
        ]);
        assert_eq!(page_text(&p), "AB\n");
    }
}
