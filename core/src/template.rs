//! Templates of STRUCTURED object types: `${f_name}` (required field) and `${f_name!}` (optional).

use crate::{Error, Result};

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

/// Checks that a template parses and names only declared fields.
pub fn validate(template: &str, declared: &[&str]) -> Result<()> {
    for piece in parse(template)? {
        if let Piece::Field { name, .. } = piece
            && !declared.contains(&name)
        {
            return Err(Error::invalid(format!(
                "template '{template}' names field '{name}', which the object type does not declare"
            )));
        }
    }
    Ok(())
}

/// Renders a template, looking field values up with `value`; a missing required field is an error
/// naming it.
pub fn render(template: &str, value: impl Fn(&str) -> Option<String>) -> Result<String> {
    let mut out = String::new();
    for piece in parse(template)? {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Field { name, optional } => match value(name) {
                Some(v) => out.push_str(&v),
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
        assert!(validate("${f_a} ${f_b!}", &["a", "b"]).is_ok());
        let err = validate("${f_a} ${f_c}", &["a", "b"]).unwrap_err();
        assert!(err.to_string().contains("'c'"), "{err}");
    }

    #[test]
    fn render_fills_fields_and_names_missing_required_one() {
        let lookup = |n: &str| (n == "a").then(|| "A".to_string());
        assert_eq!(render("x${f_a}y${f_b!}z", lookup).unwrap(), "xAyz");
        let err = render("${f_b}", lookup).unwrap_err();
        assert!(err.to_string().contains("'b'"), "{err}");
    }
}
