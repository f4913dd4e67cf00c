//! A forgiving HTML tag scanner (no tree): splits markup into text, start tags and end tags, and
//! skips comments, declarations and the raw content of `script`, `style` and `noscript`. Used to estimate how
//! deeply a document nests before handing it to html5ever (whose tree building slows down
//! quadratically with nesting depth), and to read such documents without building a tree.

/// One piece of an HTML document.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Text between tags, entities not decoded.
    Text(&'a str),
    /// A start tag's name, lowercased only when compared; `true` when self-closing (`<br/>`).
    Start(&'a str, bool),
    /// An end tag's name.
    End(&'a str),
}

/// Elements that never have content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen",
];

/// Elements whose end tag may be left out (and so do not count towards nesting).
const OPTIONAL_END: &[&str] = &[
    "p", "li", "td", "th", "tr", "option", "optgroup", "dt", "dd", "thead", "tbody", "tfoot",
    "colgroup", "caption", "rb", "rt", "rp", "html", "head", "body",
];

/// Elements whose raw content, up to their end tag, is skipped (not text for a reader).
const RAW_TEXT: &[&str] = &["script", "style", "noscript"];

/// Iterates over the pieces of `html`.
pub(crate) struct Tags<'a> {
    rest: &'a str,
}

impl<'a> Tags<'a> {
    pub fn new(html: &'a str) -> Self {
        Self { rest: html }
    }

    /// Skips past `end` (ASCII, compared case-insensitively), or to the end of input.
    fn skip_past(&mut self, end: &str) {
        let at = find_ascii_ci(self.rest, end).map_or(self.rest.len(), |i| i + end.len());
        self.rest = &self.rest[at..];
    }
}

impl<'a> Iterator for Tags<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        loop {
            if self.rest.is_empty() {
                return None;
            }
            let Some(lt) = self.rest.find('<') else {
                let text = self.rest;
                self.rest = "";
                return Some(Piece::Text(text));
            };
            if lt > 0 {
                let text = &self.rest[..lt];
                self.rest = &self.rest[lt..];
                return Some(Piece::Text(text));
            }
            let after = &self.rest[1..];
            if after.starts_with("!--") {
                self.skip_past("-->");
                continue;
            }
            if after.starts_with(['!', '?']) {
                self.skip_past(">");
                continue;
            }
            let (closing, name_start) = match after.strip_prefix('/') {
                Some(n) => (true, n),
                None => (false, after),
            };
            if !name_start.starts_with(|c: char| c.is_ascii_alphabetic()) {
                // A lone `<` is text.
                let text = &self.rest[..1];
                self.rest = after;
                return Some(Piece::Text(text));
            }
            let name_len = name_start
                .find(|c: char| c.is_whitespace() || c == '/' || c == '>')
                .unwrap_or(name_start.len());
            let name = &name_start[..name_len];
            let tag_end = tag_end(&name_start[name_len..]);
            let attrs = &name_start[name_len..name_len + tag_end];
            let consumed = (self.rest.len() - name_start.len()) + name_len + tag_end;
            self.rest = &self.rest[(consumed + 1).min(self.rest.len())..];
            if closing {
                return Some(Piece::End(name));
            }
            let self_closing = attrs.trim_end().ends_with('/');
            if let Some(raw) = RAW_TEXT.iter().find(|r| r.eq_ignore_ascii_case(name)) {
                let end = format!("</{raw}");
                let at = find_ascii_ci(self.rest, &end).unwrap_or(self.rest.len());
                self.rest = &self.rest[at..];
            }
            return Some(Piece::Start(name, self_closing));
        }
    }
}

/// Offset of the `>` closing a tag whose attributes start `s`, minding quoted values.
fn tag_end(s: &str) -> usize {
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return i,
            _ => {}
        }
    }
    s.len()
}

/// Byte offset of `needle` (ASCII) in `haystack`, ignoring ASCII case.
fn find_ascii_ci(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    if n.is_empty() || h.len() < n.len() {
        return None;
    }
    (0..=h.len() - n.len()).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// How deeply the elements of `html` nest, estimated from its tags (elements with optional end
/// tags and void elements do not count). Stops counting once `limit` is passed.
pub(crate) fn depth_exceeds(html: &str, limit: usize) -> bool {
    let mut depth = 0usize;
    for piece in Tags::new(html) {
        match piece {
            Piece::Start(name, self_closing) => {
                let counted = !self_closing
                    && !VOID.iter().any(|v| v.eq_ignore_ascii_case(name))
                    && !OPTIONAL_END.iter().any(|v| v.eq_ignore_ascii_case(name))
                    && !RAW_TEXT.iter().any(|v| v.eq_ignore_ascii_case(name));
                if counted {
                    depth += 1;
                    if depth > limit {
                        return true;
                    }
                }
            }
            Piece::End(name) => {
                if !OPTIONAL_END.iter().any(|v| v.eq_ignore_ascii_case(name)) {
                    depth = depth.saturating_sub(1);
                }
            }
            Piece::Text(_) => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_tags_and_text() {
        let pieces: Vec<_> = Tags::new(
            "<!DOCTYPE html><!-- c --><p class=\"a>b\">x &lt; y<br/>z</P>\
             <script>if (a<b) {}</script>2 < 3",
        )
        .collect();
        assert_eq!(
            pieces,
            [
                Piece::Start("p", false),
                Piece::Text("x &lt; y"),
                Piece::Start("br", true),
                Piece::Text("z"),
                Piece::End("P"),
                Piece::Start("script", false),
                Piece::End("script"),
                Piece::Text("2 "),
                Piece::Text("<"),
                Piece::Text(" 3"),
            ]
        );
    }

    #[test]
    fn estimates_depth() {
        let deep = format!("{}x{}", "<div>".repeat(50), "</div>".repeat(50));
        assert!(depth_exceeds(&deep, 40));
        assert!(!depth_exceeds(&deep, 50));
        let flat = "<p>a<p>b<li>c<br><img src=x>".repeat(1000);
        assert!(!depth_exceeds(&flat, 10));
    }
}
