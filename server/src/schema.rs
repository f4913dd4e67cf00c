//! JSON request bodies checked against the published document's schema before the handler runs,
//! so a refusal names the field by its path (`config.name`), says what was expected in words
//! (`one of COMPLETE, COMPLETE_INCREMENTAL, FAIL`) and catches unknown fields with the field
//! probably meant (`unknown field "trackstatus" in config; did you mean "trackStatus"?`).
//! The document is the one clients are generated from, so what it says and what the server
//! enforces cannot drift apart.

use serde_json::Value;

use crate::routes;

/// Checks a JSON body of `method path` against the operation's request schema. Operations
/// without a JSON schema (free-form records) accept any JSON.
pub fn check_body(method: &str, path: &str, body: &Value) -> Result<(), String> {
    let Some(schema) = routes::find(path)
        .and_then(|r| r.operation(method))
        .and_then(|op| op.get("requestBody"))
        .and_then(|b| b.get("content"))
        .and_then(Value::as_object)
        .and_then(|content| {
            content
                .iter()
                .find(|(media, _)| media.starts_with("application/json"))
        })
        .and_then(|(_, c)| c.get("schema"))
    else {
        return Ok(());
    };
    check(schema, body, "")
}

/// Checks any value against a schema of the document (`$ref`s resolved), e.g. an example.
pub fn check_value(schema: &Value, value: &Value) -> Result<(), String> {
    check(schema, value, "")
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_string()
    } else {
        format!("{at}.{name}")
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() <= 60 => format!("\"{s}\""),
        Value::String(_) => "a long string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn kind(schema: &Value) -> &'static str {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => "an object",
        Some("array") => "an array",
        Some("string") => "a string",
        Some("integer") => "an integer",
        Some("number") => "a number",
        Some("boolean") => "true or false",
        _ => "a value",
    }
}

fn subject(at: &str) -> &str {
    if at.is_empty() {
        "the request body"
    } else {
        at
    }
}

fn check(schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let schema = routes::resolve(schema);
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if allowed.contains(value) {
            return Ok(());
        }
        let names: Vec<String> = allowed
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        return Err(format!(
            "{} must be one of {}; found {}",
            subject(at),
            names.join(", "),
            describe(value)
        ));
    }
    let Some(ty) = schema.get("type").and_then(Value::as_str) else {
        return Ok(());
    };
    let fits = match (ty, value) {
        ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    };
    if !fits {
        return Err(format!(
            "{} must be {}; found {}",
            subject(at),
            kind(schema),
            describe(value)
        ));
    }
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            // An unknown (often misspelled) field first: it is usually why a required one
            // seems missing (`{"opration": "START"}`).
            if let Some(props) = props
                && let Some(name) = map.keys().find(|name| !props.contains_key(*name))
            {
                let place = if at.is_empty() {
                    String::new()
                } else {
                    format!(" in {at}")
                };
                return Err(match inlet_core::input::closest(name, props.keys()) {
                    Some(meant) => {
                        format!("unknown field \"{name}\"{place}; did you mean \"{meant}\"?")
                    }
                    None => format!(
                        "unknown field \"{name}\"{place}; the fields are {}",
                        props.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                });
            }
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for name in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(name) {
                        return Err(format!("{} is required", join(at, name)));
                    }
                }
            }
            let Some(props) = props else {
                return Ok(());
            };
            for (name, item) in map {
                let Some(prop) = props.get(name) else {
                    continue;
                };
                let required = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|n| n == name));
                if item.is_null() && !required {
                    continue;
                }
                check(prop, item, &join(at, name))?;
            }
            Ok(())
        }
        Value::Array(items) => {
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                return Err(format!("{} holds at most {max} items", subject(at)));
            }
            let Some(item_schema) = schema.get("items") else {
                return Ok(());
            };
            for (i, item) in items.iter().enumerate() {
                check(item_schema, item, &format!("{}[{i}]", subject(at)))?;
            }
            Ok(())
        }
        Value::String(s) => {
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && s.chars().count() as u64 > max
            {
                return Err(format!("{} is longer than {max} characters", subject(at)));
            }
            Ok(())
        }
        Value::Number(n) => {
            if let (Some(min), Some(v)) =
                (schema.get("minimum").and_then(Value::as_f64), n.as_f64())
                && v < min
            {
                return Err(format!("{} must be at least {min}", subject(at)));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SOURCES: &str = "/api/v1/sources";

    fn source() -> Value {
        json!({"definition": {"type": "CUSTOM"}, "externalId": "x",
               "config": {"type": "CUSTOM", "name": "X", "trackStatus": true,
                          "specification": {"application": {"objectTypes": []}}}})
    }

    #[test]
    fn fields_are_named_by_their_path() {
        check_body("POST", SOURCES, &source()).unwrap();
        let mut b = source();
        b["config"]["name"] = Value::Null;
        assert_eq!(
            check_body("POST", SOURCES, &b).unwrap_err(),
            "config.name must be a string; found null"
        );
        let mut b = source();
        b["config"].as_object_mut().unwrap().remove("name");
        assert_eq!(
            check_body("POST", SOURCES, &b).unwrap_err(),
            "config.name is required"
        );
    }

    #[test]
    fn unknown_fields_suggest_the_field_meant() {
        let mut b = source();
        b["config"]["trackstatus"] = json!(true);
        assert_eq!(
            check_body("POST", SOURCES, &b).unwrap_err(),
            "unknown field \"trackstatus\" in config; did you mean \"trackStatus\"?"
        );
        let mut b = source();
        b["zzzzzzzz"] = json!(1);
        let e = check_body("POST", SOURCES, &b).unwrap_err();
        assert!(
            e.starts_with("unknown field \"zzzzzzzz\"; the fields are"),
            "{e}"
        );
    }

    #[test]
    fn enums_list_their_values() {
        let e = check_body(
            "PUT",
            "/api/v1/sources/a/objecttypes/b/syncs/1",
            &json!({"operation": "DONE"}),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "operation must be one of COMPLETE, COMPLETE_INCREMENTAL, FAIL; found \"DONE\""
        );
    }

    #[test]
    fn free_form_bodies_are_not_checked() {
        check_body(
            "PUT",
            "/api/v1/sources/a/objecttypes/b/objects/c/content",
            &json!({"anything": [1, {"x": null}]}),
        )
        .unwrap();
    }
}
