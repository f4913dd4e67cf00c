//! Tags: the `X-Service-Object-Tag` header, typed values and validation against tag configs.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::{
    Error, Result,
    source::{DataType, ObjectType},
    time::{self, Timestamp},
};

/// Name of the repeatable upload header carrying one `<tagExternalId>:<value>` each.
pub const TAG_HEADER: &str = "X-Service-Object-Tag";

/// A tag value, typed by its tag config's dataType.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TagValue {
    /// TEXT (and HIERARCHICAL folder externalIds).
    Text(String),
    /// LONG.
    Long(i64),
    /// DOUBLE.
    Double(f64),
    /// BOOLEAN.
    Boolean(bool),
    /// DATE_TIME, normalized to UTC milliseconds.
    DateTime(Timestamp),
}

impl TagValue {
    /// Parses a raw value as the given data type.
    pub fn parse(raw: &str, data_type: DataType) -> Result<Self, String> {
        match data_type {
            DataType::Text => Ok(Self::Text(raw.to_string())),
            DataType::Long => raw
                .trim()
                .parse()
                .map(Self::Long)
                .map_err(|_| format!("'{raw}' is not an integer")),
            DataType::Double => raw
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .map(Self::Double)
                .ok_or_else(|| format!("'{raw}' is not a finite number")),
            DataType::Boolean => match raw.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(Self::Boolean(true)),
                "false" => Ok(Self::Boolean(false)),
                _ => Err(format!("'{raw}' is not true or false")),
            },
            DataType::DateTime => {
                parse_date_time(raw.trim())
                    .map(Self::DateTime)
                    .ok_or_else(|| {
                        format!("'{raw}' is not an RFC 3339 timestamp or a date (YYYY-MM-DD)")
                    })
            }
        }
    }

    /// The value's canonical text, as records show it.
    pub fn canonical(&self) -> String {
        match self {
            Self::Text(s) => s.clone(),
            Self::Long(v) => v.to_string(),
            Self::Double(v) => v.to_string(),
            Self::Boolean(v) => v.to_string(),
            Self::DateTime(t) => time::format(t),
        }
    }
}

/// Parses RFC 3339 (any offset, normalized to UTC, truncated to milliseconds) or a plain date
/// (midnight UTC).
pub fn parse_date_time(raw: &str) -> Option<Timestamp> {
    use chrono::SubsecRound;
    if let Ok(t) = DateTime::parse_from_rfc3339(raw) {
        return Some(t.with_timezone(&Utc).trunc_subsecs(3));
    }
    NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|dt| dt.and_utc())
}

/// A record's full tag set: tag externalId -> values, in the order they were sent.
pub type Tags = BTreeMap<String, Vec<TagValue>>;

/// Splits one header value at the first `:` and percent-decodes both halves as UTF-8.
pub fn parse_header(raw: &[u8]) -> Result<(String, String)> {
    parse_pair(TAG_HEADER, raw)
}

/// [`parse_header`] for a `<tagExternalId>:<value>` pair sent elsewhere (the search's `tag`
/// query parameter): `what` names where, in every refusal.
pub fn parse_pair(what: &str, raw: &[u8]) -> Result<(String, String)> {
    let text = std::str::from_utf8(raw).map_err(|_| {
        Error::invalid(format!("{what} must be UTF-8 (percent-encode other bytes)"))
    })?;
    let (tag, value) = text.split_once(':').ok_or_else(|| {
        Error::invalid(format!(
            "{what} '{text}' must have the form <tagExternalId>:<value>"
        ))
    })?;
    let field = format!("{what} '{text}'");
    let decode = |s: &str| {
        let decoded = crate::input::percent_decode(&field, s.trim())?;
        crate::input::check_line(&field, &decoded, crate::input::MAX_ID_BYTES)?;
        Ok::<_, Error>(decoded)
    };
    let (tag, value) = (decode(tag)?, decode(value)?);
    if tag.is_empty() {
        return Err(Error::invalid(format!("{what} '{text}' names no tag")));
    }
    if value.is_empty() {
        return Err(Error::invalid(format!(
            "{what} '{text}' has an empty value"
        )));
    }
    Ok((tag, value))
}

/// The elements of one header line in RFC 9110's list syntax (5.6.1): comma-separated, optional
/// whitespace around each, empty elements ignored. A proxy may join repeated header lines into
/// one such line (5.3), so both forms mean the same; a comma inside a value is percent-encoded.
pub fn list_elements(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| *b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|e| !e.is_empty())
}

/// Parses every tag header of one upload (each line a list, [`list_elements`]) and validates
/// it against the object type: an unknown tag
/// is [`Error::NotFound`] (spec 7); a value of the wrong type or several values for a
/// single-valued tag is [`Error::Invalid`]. Repeated identical values count once.
pub fn parse_tags<'a>(
    object_type: &ObjectType,
    headers: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Tags> {
    let mut tags = Tags::new();
    for raw in headers.into_iter().flat_map(list_elements) {
        let (tag_id, raw_value) = parse_header(raw)?;
        let config = object_type
            .tag_config(&tag_id)
            .ok_or_else(|| unknown_tag(object_type, &tag_id))?;
        let value = TagValue::parse(&raw_value, config.data_type)
            .map_err(|m| Error::invalid(format!("tag '{tag_id}': {m}")))?;
        let values = tags.entry(tag_id.clone()).or_default();
        if values.contains(&value) {
            continue;
        }
        if !values.is_empty() && !config.allow_multiple_values {
            return Err(Error::invalid(format!(
                "tag '{tag_id}' allows one value per record, several were sent"
            )));
        }
        values.push(value);
    }
    Ok(tags)
}

/// How many tag ids an unknown-tag message lists at most.
const LISTED_TAGS: usize = 20;

/// The 404 for a tag the object type does not configure: it lists the type's tag ids and, where
/// one is close (another case, a typo, or the tag's display name), says which was meant.
fn unknown_tag(object_type: &ObjectType, tag_id: &str) -> Error {
    let ids: Vec<&String> = object_type
        .tag_configs
        .iter()
        .map(|t| &t.external_id)
        .collect();
    let mut message = format!(
        "tag '{tag_id}' is not configured for object type '{}'",
        object_type.external_id
    );
    if ids.is_empty() {
        message.push_str(", which has no tags");
        return Error::not_found(message);
    }
    // The display name, when it is not just the id in another case (closest finds that).
    let by_name = object_type
        .tag_configs
        .iter()
        .find(|t| {
            t.name.eq_ignore_ascii_case(tag_id) && !t.external_id.eq_ignore_ascii_case(tag_id)
        })
        .map(|t| &t.external_id);
    let meant = by_name.or_else(|| crate::input::closest(tag_id, ids.iter().copied()));
    match meant {
        Some(meant) if by_name.is_some() => message.push_str(&format!(
            "; did you mean '{meant}'? ('{tag_id}' is its display name; headers name a tag by \
             its externalId.)"
        )),
        Some(meant) => message.push_str(&format!("; did you mean '{meant}'?")),
        None => message.push('.'),
    }
    let mut list: Vec<String> = ids
        .iter()
        .take(LISTED_TAGS)
        .map(|i| format!("'{i}'"))
        .collect();
    if ids.len() > LISTED_TAGS {
        list.push(format!("and {} more", ids.len() - LISTED_TAGS));
    }
    message.push_str(&format!(" Its tags are {}.", list.join(", ")));
    Error::not_found(message)
}

/// Checks a record's tags: text values are lines of at most [`crate::input::MAX_ID_BYTES`].
pub fn check_tags(tags: &Tags) -> Result<()> {
    for (tag, values) in tags {
        crate::input::check_line("a tag externalId", tag, crate::input::MAX_ID_BYTES)?;
        for value in values {
            if let TagValue::Text(v) = value {
                crate::input::check_line(
                    &format!("the value of tag '{tag}'"),
                    v,
                    crate::input::MAX_ID_BYTES,
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{TagConfig, TagType};
    use uuid::Uuid;

    fn object_type() -> ObjectType {
        let tag = |ext: &str, data_type, multi| TagConfig {
            id: Uuid::new_v4(),
            tag_type: TagType::Simple,
            name: ext.into(),
            external_id: ext.into(),
            data_type,
            allow_multiple_values: multi,
        };
        ObjectType {
            complete_max_removal: None,
            default_access: Default::default(),
            id: Uuid::new_v4(),
            name: "Files".into(),
            external_id: "files".into(),
            source_data_type: crate::source::SourceDataType::Record,
            data_type: None,
            fields: vec![],
            tag_configs: vec![
                tag("color", DataType::Text, true),
                tag("owner", DataType::Text, false),
                tag("size", DataType::Long, false),
                tag("due", DataType::DateTime, false),
                tag("ratio", DataType::Double, false),
                tag("flag", DataType::Boolean, false),
            ],
            facets: vec![],
            templates: None,
        }
    }

    fn parse(headers: &[&str]) -> Result<Tags> {
        parse_tags(&object_type(), headers.iter().map(|h| h.as_bytes()))
    }

    #[test]
    fn header_splits_at_first_colon_and_decodes() {
        assert_eq!(
            parse_header(b"url:https://x.test/a").unwrap(),
            ("url".into(), "https://x.test/a".into())
        );
        assert_eq!(
            parse_header(b"color:caf%C3%A9%20au%20lait").unwrap(),
            ("color".into(), "café au lait".into())
        );
        assert_eq!(parse_header("c:é".as_bytes()).unwrap().1, "é");
        for bad in [&b"novalue"[..], b":x", b"x:", b"x:%FF", b"\xff:x"] {
            assert!(
                matches!(parse_header(bad), Err(Error::Invalid(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn repeated_values_of_a_multi_tag_accumulate_in_order() {
        let tags = parse(&["color:red", "color:blue", "color:red"]).unwrap();
        assert_eq!(
            tags["color"],
            vec![TagValue::Text("red".into()), TagValue::Text("blue".into())]
        );
    }

    #[test]
    fn header_lines_are_lists_as_rfc_9110_says() {
        // Repeated lines, one comma-separated line (what a proxy may make of them), and both.
        let repeated = parse(&["color:red", "color:blue"]).unwrap();
        assert_eq!(parse(&["color:red,color:blue"]).unwrap(), repeated);
        assert_eq!(
            parse(&[" color:red , ,color:blue ", "color:red"]).unwrap(),
            repeated
        );
        // A comma inside a value is percent-encoded.
        assert_eq!(
            parse(&["color:red%2C%20white"]).unwrap()["color"],
            vec![TagValue::Text("red, white".into())]
        );
        assert!(matches!(
            parse(&["owner:a,owner:b"]),
            Err(Error::Invalid(_))
        ));
    }

    #[test]
    fn unknown_tag_is_not_found_and_names_the_known_ones() {
        let message = |header: &str| match parse(&[header]) {
            Err(Error::NotFound(m)) => m,
            other => panic!("{header}: {other:?}"),
        };
        assert_eq!(
            message("nope:x"),
            "tag 'nope' is not configured for object type 'files'. Its tags are 'color', \
             'owner', 'size', 'due', 'ratio', 'flag'."
        );
        assert!(message("colour:red").contains("; did you mean 'color'? Its tags are"));
        // Another case of the id is a typo, not the display name.
        let owner = message("Owner:me");
        assert!(owner.contains("did you mean 'owner'? Its tags"), "{owner}");
        let mut by_name = object_type();
        by_name.tag_configs[0].name = "Colour of the day".into();
        let Err(Error::NotFound(m)) = parse_tags(&by_name, [&b"colour of the day:red"[..]]) else {
            panic!("display name accepted");
        };
        assert!(
            m.contains("did you mean 'color'? ('colour of the day' is its display name"),
            "{m}"
        );
    }

    #[test]
    fn single_valued_tag_refuses_two_values() {
        assert!(matches!(
            parse(&["owner:a", "owner:b"]),
            Err(Error::Invalid(_))
        ));
        assert!(parse(&["owner:a", "owner:a"]).is_ok());
    }

    #[test]
    fn values_are_validated_by_data_type() {
        let ok = parse(&["size:42", "due:2026-11-22", "ratio:0.5", "flag:TRUE"]).unwrap();
        assert_eq!(ok["size"], vec![TagValue::Long(42)]);
        assert_eq!(ok["due"][0].canonical(), "2026-11-22T00:00:00.000+00:00");
        assert_eq!(ok["flag"], vec![TagValue::Boolean(true)]);
        let due = parse(&["due:2026-11-22T12:00:00.5+02:00"]).unwrap();
        assert_eq!(due["due"][0].canonical(), "2026-11-22T10:00:00.500+00:00");
        for bad in [
            "size:4x",
            "due:tomorrow",
            "ratio:NaN",
            "flag:yes",
            "size:1.5",
        ] {
            assert!(matches!(parse(&[bad]), Err(Error::Invalid(_))), "{bad}");
        }
    }

    #[test]
    fn no_headers_is_an_empty_tag_set() {
        assert!(parse(&[]).unwrap().is_empty());
    }
}
