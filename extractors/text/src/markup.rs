//! The start of a markup document — XML declaration, comments, DOCTYPE and the root element's
//! name — which tells HTML from other XML when sniffing.

/// What precedes the first element of a markup document.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Prolog<'a> {
    /// The document starts with an `<?xml ...?>` declaration.
    pub xml_decl: bool,
    /// The `encoding` of the XML declaration, if any.
    pub xml_encoding: Option<&'a str>,
    /// The DOCTYPE's content after `<!DOCTYPE`, trimmed (e.g. `html`).
    pub doctype: Option<&'a str>,
    /// The name of the first element (e.g. `html`, `rss`), if the prolog is followed by one.
    pub root: Option<&'a str>,
}

impl Prolog<'_> {
    /// The DOCTYPE says HTML (`<!DOCTYPE html ...>`, any case).
    pub fn doctype_is_html(&self) -> bool {
        self.doctype.is_some_and(|d| {
            d.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("html"))
                && d[4..].chars().next().is_none_or(|c| !is_name_char(c))
        })
    }

    /// The root element is `html`, any case.
    pub fn root_is_html(&self) -> bool {
        self.root.is_some_and(|r| r.eq_ignore_ascii_case("html"))
    }
}

/// Reads the prolog at the start of `text` (leading whitespace allowed). Returns a default
/// (all empty) prolog when `text` does not start with markup.
pub(crate) fn prolog(text: &str) -> Prolog<'_> {
    let mut out = Prolog::default();
    let mut s = text.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix("<?") {
            let Some(end) = rest.find("?>") else {
                return out;
            };
            let pi = &rest[..end];
            if pi.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("xml"))
                && pi[3..].starts_with(char::is_whitespace)
            {
                out.xml_decl = true;
                out.xml_encoding = pseudo_attribute(pi, "encoding");
            }
            s = rest[end + 2..].trim_start();
        } else if let Some(rest) = s.strip_prefix("<!--") {
            let Some(end) = rest.find("-->") else {
                return out;
            };
            s = rest[end + 3..].trim_start();
        } else if s
            .get(..9)
            .is_some_and(|p| p.eq_ignore_ascii_case("<!doctype"))
        {
            let rest = &s[9..];
            // An internal subset `[...]` may hold `>` characters.
            let end = match (rest.find('['), rest.find('>')) {
                (Some(open), Some(gt)) if open < gt => rest[open..]
                    .find("]")
                    .and_then(|close| rest[open + close..].find('>').map(|g| open + close + g)),
                (_, gt) => gt,
            };
            let Some(end) = end else {
                out.doctype = Some(rest.trim());
                return out;
            };
            out.doctype = Some(rest[..end].trim());
            s = rest[end + 1..].trim_start();
        } else if let Some(rest) = s.strip_prefix('<') {
            if rest.starts_with(is_name_start) {
                let len = rest.find(|c| !is_name_char(c)).unwrap_or(rest.len());
                out.root = Some(&rest[..len]);
            }
            return out;
        } else {
            return out;
        }
    }
}

/// HTML entities common in documents written by hand (XHTML fragments, JATS, tag soup).
pub(crate) fn common_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "nbsp" => "\u{A0}",
        "ndash" => "–",
        "mdash" => "—",
        "hellip" => "…",
        "lsquo" => "‘",
        "rsquo" => "’",
        "ldquo" => "“",
        "rdquo" => "”",
        "copy" => "©",
        "reg" => "®",
        "trade" => "™",
        "deg" => "°",
        "middot" => "·",
        "bull" => "•",
        "eacute" => "é",
        "egrave" => "è",
        "aacute" => "á",
        "agrave" => "à",
        "uuml" => "ü",
        "ouml" => "ö",
        "auml" => "ä",
        "szlig" => "ß",
        _ => return None,
    })
}

/// `text` with character references and the predefined and [common](common_entity) named
/// entities decoded; unknown entities stay as they are.
pub(crate) fn decode_entities(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('&') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let name_end = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
            .map_or(rest.len(), |i| i + 1);
        let name = &rest[1..name_end];
        let decoded = if let Some(num) = name.strip_prefix('#') {
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => num.parse().ok(),
            };
            code.and_then(char::from_u32).map(String::from)
        } else {
            match name {
                "amp" => Some("&"),
                "lt" => Some("<"),
                "gt" => Some(">"),
                "quot" => Some("\""),
                "apos" => Some("'"),
                _ => common_entity(name),
            }
            .map(String::from)
        };
        match decoded {
            Some(s) if !name.is_empty() => {
                out.push_str(&s);
                rest = rest[name_end..]
                    .strip_prefix(';')
                    .unwrap_or(&rest[name_end..]);
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

/// `name="value"` or `name='value'` inside a processing instruction.
fn pseudo_attribute<'a>(pi: &'a str, name: &str) -> Option<&'a str> {
    let at = pi.find(name)?;
    let rest = pi[at + name.len()..].trim_start().strip_prefix('=')?;
    let rest = rest.trim_start();
    let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let value = &rest[1..];
    value.find(quote).map(|end| &value[..end])
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_declaration_comments_doctype_and_root() {
        let p = prolog(
            "\n<?xml version=\"1.0\" encoding='ISO-8859-1' ?>\n<!-- hi -->\n\
             <!DOCTYPE note [<!ENTITY x \"<y>\">]>\n<note a=\"1\">",
        );
        assert!(p.xml_decl);
        assert_eq!(p.xml_encoding, Some("ISO-8859-1"));
        assert_eq!(p.doctype, Some("note [<!ENTITY x \"<y>\">]"));
        assert_eq!(p.root, Some("note"));
        assert!(!p.doctype_is_html());

        let p = prolog("<!doctype html>\n<html\n class=x>");
        assert!(p.doctype_is_html());
        assert!(p.root_is_html());
        assert!(!p.xml_decl);

        assert_eq!(prolog("hello <b>"), Prolog::default());
        assert_eq!(prolog("<<< notes").root, None);
        assert!(!prolog("<!DOCTYPE htmlx>").doctype_is_html());
    }

    #[test]
    fn decodes_common_entities() {
        assert_eq!(
            decode_entities("a &amp; b &lt;&#65;&#x42;&eacute; &unknown; & c &amp"),
            "a & b <ABé &unknown; & c &"
        );
    }
}
