//! STRUCTURED records: reading fields out of the record JSON by their contentSelector (JSON
//! pointer), placing an attached file's text at a field, and building title, url and search text
//! from the object type's templates.

use serde_json::Value;

use crate::{
    Error, Result,
    source::{ObjectType, SourceDataType},
    template,
};

/// What a STRUCTURED record stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// Rendered titleTemplate (empty without one).
    pub title: String,
    /// Rendered externalUrlTemplate, if the object type has one.
    pub url: Option<String>,
    /// Rendered searchTemplate; without one, every field's value, one per line.
    pub content: String,
}

/// The text of a JSON value: strings as they are, numbers and booleans printed, arrays their
/// elements' texts separated by a space, objects as JSON; `null` is no value.
pub fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(value_text)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        Value::Object(_) => Some(value.to_string()),
    }
}

/// Puts `text` at the JSON pointer `pointer` in `record`, creating objects along the way and
/// replacing whatever was there.
pub fn place_text(record: &mut Value, pointer: &str, text: String) -> Result<()> {
    if pointer.is_empty() {
        *record = Value::String(text);
        return Ok(());
    }
    let tokens: Vec<String> = pointer
        .strip_prefix('/')
        .ok_or_else(|| Error::invalid(format!("'{pointer}' is not a JSON pointer")))?
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let mut node = record;
    for token in &tokens {
        if !node.is_object() && !node.is_array() {
            *node = Value::Object(Default::default());
        }
        node = match node {
            Value::Array(items) => {
                let i: usize = token.parse().map_err(|_| {
                    Error::invalid(format!("'{pointer}' indexes an array with '{token}'"))
                })?;
                if i >= items.len() {
                    items.resize(i + 1, Value::Null);
                }
                &mut items[i]
            }
            Value::Object(map) => map.entry(token.clone()).or_insert(Value::Null),
            _ => unreachable!("made an object above"),
        };
    }
    *node = Value::String(text);
    Ok(())
}

/// Builds a STRUCTURED record from its JSON: each field is read at its contentSelector; a missing
/// required template field is [`Error::Invalid`] naming it.
pub fn build(object_type: &ObjectType, record: &Value) -> Result<Built> {
    if object_type.source_data_type != SourceDataType::Structured {
        return Err(Error::invalid(format!(
            "object type '{}' is not STRUCTURED",
            object_type.external_id
        )));
    }
    if !record.is_object() {
        return Err(Error::invalid("the record must be a JSON object"));
    }
    let lookup = |name: &str| {
        object_type
            .fields
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| record.pointer(&f.content_selector))
            .and_then(value_text)
    };
    let templates = object_type.templates.clone().unwrap_or_default();
    let render = |what: &str, t: &Option<String>, max: usize| {
        t.as_deref()
            .map(|t| template::render(what, t, max, lookup))
            .transpose()
    };
    let title = render(
        "titleTemplate",
        &templates.title_template,
        template::MAX_TITLE_BYTES,
    )?
    .unwrap_or_default();
    let url = render(
        "externalUrlTemplate",
        &templates.external_url_template,
        template::MAX_URL_BYTES,
    )?
    .filter(|u| !u.is_empty());
    let content = match render(
        "searchTemplate",
        &templates.search_template,
        template::MAX_SEARCH_TEXT_BYTES,
    )? {
        Some(c) => c,
        None => object_type
            .fields
            .iter()
            .filter_map(|f| lookup(&f.name))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    Ok(Built {
        title,
        url,
        content,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{DataType, Field, Templates};
    use serde_json::json;
    use uuid::Uuid;

    fn tickets(templates: Option<Templates>) -> ObjectType {
        let field = |name: &str, sel: &str| Field {
            id: Uuid::new_v4(),
            name: name.into(),
            content_selector: sel.into(),
            data_type: DataType::Text,
        };
        ObjectType {
            complete_max_removal: None,
            default_access: Default::default(),
            id: Uuid::new_v4(),
            name: "Tickets".into(),
            external_id: "tickets".into(),
            source_data_type: SourceDataType::Structured,
            data_type: None,
            fields: vec![
                field("id", "/id"),
                field("title", "/title"),
                field("body", "/detail/body"),
            ],
            tag_configs: vec![],
            facets: vec![],
            templates,
        }
    }

    fn templates(title: &str, url: &str, search: &str) -> Option<Templates> {
        Some(Templates {
            title_template: Some(title.into()),
            external_url_template: Some(url.into()),
            search_template: Some(search.into()),
        })
    }

    #[test]
    fn renders_templates_from_fields_at_their_pointers() {
        let ot = tickets(templates(
            "#${f_id} ${f_title}",
            "https://t.test/${f_id}",
            "${f_title}\n${f_body!}",
        ));
        let built = build(
            &ot,
            &json!({"id": 42, "title": "Printer", "detail": {"body": "jammed"}}),
        )
        .unwrap();
        assert_eq!(built.title, "#42 Printer");
        assert_eq!(built.url.as_deref(), Some("https://t.test/42"));
        assert_eq!(built.content, "Printer\njammed");
        let built = build(&ot, &json!({"id": 1, "title": "T"})).unwrap();
        assert_eq!(built.content, "T\n", "optional field renders empty");
    }

    #[test]
    fn missing_required_field_names_it() {
        let ot = tickets(templates("${f_title}", "", ""));
        let err = build(&ot, &json!({"id": 1})).unwrap_err();
        assert!(
            matches!(&err, Error::Invalid(m) if m.contains("'title'")),
            "{err}"
        );
        assert!(build(&ot, &json!([1, 2])).is_err());
    }

    #[test]
    fn without_search_template_content_is_every_field() {
        let ot = tickets(None);
        let built = build(
            &ot,
            &json!({"id": "a", "title": "b", "detail": {"body": ["c", 1, true]}}),
        )
        .unwrap();
        assert_eq!(built.title, "");
        assert_eq!(built.url, None);
        assert_eq!(built.content, "a\nb\nc 1 true");
    }

    #[test]
    fn places_text_creating_the_path() {
        let mut v = json!({"title": "x"});
        place_text(&mut v, "/detail/body", "text".into()).unwrap();
        assert_eq!(v, json!({"title": "x", "detail": {"body": "text"}}));
        place_text(&mut v, "/title", "y".into()).unwrap();
        assert_eq!(v["title"], "y");
        let mut v = json!({"a": [1]});
        place_text(&mut v, "/a/2", "z".into()).unwrap();
        assert_eq!(v, json!({"a": [1, null, "z"]}));
        place_text(&mut v, "/a~1b", "s".into()).unwrap();
        assert_eq!(v["a/b"], "s");
        assert!(place_text(&mut v, "nope", "t".into()).is_err());
    }
}
