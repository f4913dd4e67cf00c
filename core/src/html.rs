//! HTML escaping, the one helper for every page and snippet the service writes: text for
//! element content and for single- or double-quoted attribute values.

/// Escapes `&`, `<`, `>`, `"` and `'` (as `&#39;`).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_and_both_quotes_are_escaped() {
        assert_eq!(
            super::escape("<a href=\"x\">O'Brien & co</a> é"),
            "&lt;a href=&quot;x&quot;&gt;O&#39;Brien &amp; co&lt;/a&gt; é"
        );
    }
}
