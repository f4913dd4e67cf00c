//! Templates of STRUCTURED object types: `${f_name}` (required field) and `${f_name!}` (optional).
//!
//! Bounded by construction (docs/security.md): a template is at most [`MAX_TEMPLATE_CHARS`]
//! long with at most [`MAX_PLACEHOLDERS`] references, checked when the object type is defined,
//! and rendering stops with an error before its output passes the caller's limit, so a
//! template repeating a large field cannot build a huge record in memory.

use crate::{Error, Result};

/// Longest template, in characters.
pub const MAX_TEMPLATE_CHARS: usize = 10_000;
/// Most field references in one template.
pub const MAX_PLACEHOLDERS: usize = 100;
/// Longest rendered title, in bytes.
pub const MAX_TITLE_BYTES: usize = 4_096;
/// Longest rendered URL, in bytes: a record url's limit.
pub const MAX_URL_BYTES: usize = crate::input::MAX_URL_BYTES;
/// Longest rendered searchable text, in bytes (extracted file text keeps 1,000,000 characters).
pub const MAX_SEARCH_TEXT_BYTES: usize = 4_000_000;

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Literal text, copied as is.
    Text(&'a str),
    /// A field reference.
    Field {
        /// The field's name (without the `f_` prefix).
        name: &'a str,
        /// `true` for `${f_name!}`: renders empty when the field is missing.
        optional: bool,
    },
}

/// Parses a template into pieces; an unterminated `${` or a reference without `f_` is an error.
pub fn parse(template: &str) -> Result<Vec<Piece<'_>>> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        if start > 0 {
            pieces.push(Piece::Text(&rest[..start]));
        }
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| {
            Error::invalid(format!("unterminated '${{' in template '{template}'"))
        })?;
        let inner = &after[..end];
        let (inner, optional) = match inner.strip_suffix('!') {
            Some(s) => (s, true),
            None => (inner, false),
        };
        let name = inner
            .strip_prefix("f_")
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "template reference '${{{}}}' must have the form ${{f_<fieldName>}} or ${{f_<fieldName>!}}",
                    &after[..end]
                ))
            })?;
        pieces.push(Piece::Field { name, optional });
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(pieces)
}

/// Checks that a template is within the limits, parses, and names only declared fields. `what`
/// names the template in errors (`searchTemplate`).
pub fn validate(what: &str, template: &str, declared: &[&str]) -> Result<()> {
    let chars = template.chars().count();
    if chars > MAX_TEMPLATE_CHARS {
        return Err(Error::invalid(format!(
            "{what} is {chars} characters long; at most {MAX_TEMPLATE_CHARS} are allowed"
        )));
    }
    let pieces = parse(template)?;
    let references = pieces
        .iter()
        .filter(|p| matches!(p, Piece::Field { .. }))
        .count();
    if references > MAX_PLACEHOLDERS {
        return Err(Error::invalid(format!(
            "{what} references fields {references} times; at most {MAX_PLACEHOLDERS} references are allowed"
        )));
    }
    // A URL template that names its scheme must name a web one (a template starting with a
    // field is checked when it renders).
    if what == "externalUrlTemplate"
        && let Some(Piece::Text(head)) = pieces.first()
        && head.contains(':')
        && !crate::input::is_web_url(template)
    {
        return Err(Error::invalid(format!(
            "{what} must build an http:// or https:// URL"
        )));
    }
    for piece in pieces {
        if let Piece::Field { name, .. } = piece
            && !declared.contains(&name)
        {
            return Err(Error::invalid(format!(
                "{what} '{template}' names field '{name}', which the object type does not declare"
            )));
        }
    }
    Ok(())
}

/// Renders a template, looking field values up with `value`; a missing required field is an
/// error naming it, and so is output that would pass `max_bytes` (`what` names the template):
/// rendering stops before building it.
pub fn render(
    what: &str,
    template: &str,
    max_bytes: usize,
    value: impl Fn(&str) -> Option<String>,
) -> Result<String> {
    let mut out = String::new();
    let too_long = || {
        Error::invalid(format!(
            "{what} renders more than {max_bytes} bytes for this record; shorten the fields it \
             references or the template"
        ))
    };
    for piece in parse(template)? {
        match piece {
            Piece::Text(t) => {
                if out.len() + t.len() > max_bytes {
                    return Err(too_long());
                }
                out.push_str(t);
            }
            Piece::Field { name, optional } => match value(name) {
                Some(v) => {
                    if out.len() + v.len() > max_bytes {
                        return Err(too_long());
                    }
                    out.push_str(&v);
                }
                None if optional => {}
                None => {
                    return Err(Error::invalid(format!(
                        "required field '{name}' is missing from the record"
                    )));
                }
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_required_and_optional_references() {
        assert_eq!(
            parse("Ticket ${f_id}: ${f_title!}").unwrap(),
            vec![
                Piece::Text("Ticket "),
                Piece::Field {
                    name: "id",
                    optional: false
                },
                Piece::Text(": "),
                Piece::Field {
                    name: "title",
                    optional: true
                },
            ]
        );
        assert_eq!(parse("").unwrap(), vec![]);
        assert_eq!(parse("plain").unwrap(), vec![Piece::Text("plain")]);
    }

    #[test]
    fn rejects_malformed_references() {
        assert!(parse("${f_id").is_err());
        assert!(parse("${id}").is_err());
        assert!(parse("${f_}").is_err());
        assert!(parse("${f_!}").is_err());
    }

    #[test]
    fn validate_names_undeclared_field() {
        assert!(validate("t", "${f_a} ${f_b!}", &["a", "b"]).is_ok());
        let err = validate("searchTemplate", "${f_a} ${f_c}", &["a", "b"]).unwrap_err();
        assert!(err.to_string().contains("'c'"), "{err}");
        assert!(err.to_string().starts_with("searchTemplate"), "{err}");
    }

    #[test]
    fn validate_bounds_length_and_references() {
        let at_limit = "${f_a}".repeat(MAX_PLACEHOLDERS);
        assert!(validate("t", &at_limit, &["a"]).is_ok());
        let err = validate("searchTemplate", &format!("{at_limit}${{f_a}}"), &["a"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "searchTemplate references fields 101 times; at most 100 references are allowed"
        );
        let long = "x".repeat(MAX_TEMPLATE_CHARS + 1);
        let err = validate("titleTemplate", &long, &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "titleTemplate is 10001 characters long; at most 10000 are allowed"
        );
    }

    #[test]
    fn url_templates_that_name_a_scheme_name_a_web_one() {
        assert!(validate("externalUrlTemplate", "HTTPS://t.test/${f_a}", &["a"]).is_ok());
        assert!(validate("externalUrlTemplate", "${f_a}", &["a"]).is_ok());
        let err = validate("externalUrlTemplate", "javascript:${f_a}", &["a"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "externalUrlTemplate must build an http:// or https:// URL"
        );
        // Other templates may hold colons.
        assert!(validate("titleTemplate", "Ticket: ${f_a}", &["a"]).is_ok());
    }

    #[test]
    fn render_fills_fields_and_names_missing_required_one() {
        let lookup = |n: &str| (n == "a").then(|| "A".to_string());
        assert_eq!(
            render("t", "x${f_a}y${f_b!}z", 100, lookup).unwrap(),
            "xAyz"
        );
        let err = render("t", "${f_b}", 100, lookup).unwrap_err();
        assert!(err.to_string().contains("'b'"), "{err}");
    }

    #[test]
    fn render_stops_before_passing_its_limit() {
        let big = |_: &str| Some("x".repeat(1000));
        assert_eq!(render("t", "${f_a}${f_a}", 2000, big).unwrap().len(), 2000);
        let err = render("searchTemplate", "${f_a}${f_a}${f_a}", 2000, big).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("searchTemplate renders more than 2000 bytes"),
            "{err}"
        );
        let err = render("titleTemplate", "${f_a}and more text", 1005, big).unwrap_err();
        assert!(err.to_string().starts_with("titleTemplate"), "{err}");
    }
}
