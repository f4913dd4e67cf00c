//! JSON request bodies checked against the operation's schema before the handler runs, so a
//! refusal names the field by its path (`config.name`), says what was expected in words
//! (`one of COMPLETE, COMPLETE_INCREMENTAL, FAIL`) and catches unknown fields with the field
//! probably meant (`unknown field "trackstatus" in config; did you mean "trackStatus"?`).
//! The schemas are the handlers' own with [`crate::rules`] over them ([`crate::routes`]), the
//! ones the published document is generated from, so what it says and what the server enforces
//! cannot drift apart.

use poem_openapi::registry::{MetaSchema, MetaSchemaRef};
use serde_json::Value;

use crate::routes::{self, Routes};

/// Checks a JSON body of `method path` against the operation's request schema. Operations
/// without a JSON schema (free-form records) accept any JSON.
pub fn check_body(method: &str, path: &str, body: &Value) -> Result<(), String> {
    let Some(schema) = routes::find(path)
        .and_then(|r| r.operation(method))
        .and_then(|op| op.request.as_ref())
        .and_then(|request| {
            request
                .content
                .iter()
                .find(|c| c.content_type.starts_with("application/json"))
        })
        .map(|c| &c.schema)
    else {
        return Ok(());
    };
    check(routes::get(), schema, body, "")
}

/// Checks any value against a schema of the API (references resolved), e.g. an example.
pub fn check_value(schema: &MetaSchemaRef, value: &Value) -> Result<(), String> {
    check(routes::get(), schema, value, "")
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

fn kind(schema: &MetaSchema) -> &'static str {
    match schema.ty {
        "object" => "an object",
        "array" => "an array",
        "string" => "a string",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "true or false",
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

fn check(routes: &Routes, schema: &MetaSchemaRef, value: &Value, at: &str) -> Result<(), String> {
    let Some(schema) = routes.resolve(schema) else {
        return Ok(());
    };
    // A field documented with its own description wraps the type's schema in `allOf`.
    for part in &schema.all_of {
        check(routes, part, value, at)?;
    }
    if !schema.enum_items.is_empty() {
        if schema.enum_items.contains(value) {
            return Ok(());
        }
        let names: Vec<String> = schema
            .enum_items
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
    let fits = match (schema.ty, value) {
        ("", _)
        | ("object", Value::Object(_))
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
        Value::Object(map) if schema.ty == "object" => {
            let props = &schema.properties;
            // An unknown (often misspelled) field first: it is usually why a required one
            // seems missing (`{"opration": "START"}`).
            if !props.is_empty()
                && let Some(name) = map
                    .keys()
                    .find(|name| !props.iter().any(|(p, _)| p == name))
            {
                let place = if at.is_empty() {
                    String::new()
                } else {
                    format!(" in {at}")
                };
                let names = props.iter().map(|(p, _)| *p);
                return Err(match inlet_core::input::closest(name, names.clone()) {
                    Some(meant) => {
                        format!("unknown field \"{name}\"{place}; did you mean \"{meant}\"?")
                    }
                    None => format!(
                        "unknown field \"{name}\"{place}; the fields are {}",
                        names.collect::<Vec<_>>().join(", ")
                    ),
                });
            }
            for name in &schema.required {
                if !map.contains_key(*name) {
                    return Err(format!("{} is required", join(at, name)));
                }
            }
            for (name, item) in map {
                let Some((_, prop)) = props.iter().find(|(p, _)| p == name) else {
                    continue;
                };
                if item.is_null() && !schema.required.contains(&name.as_str()) {
                    continue;
                }
                check(routes, prop, item, &join(at, name))?;
            }
            Ok(())
        }
        Value::Array(items) if schema.ty == "array" => {
            if let Some(max) = schema.max_items
                && items.len() > max
            {
                return Err(format!("{} holds at most {max} items", subject(at)));
            }
            let Some(item_schema) = &schema.items else {
                return Ok(());
            };
            for (i, item) in items.iter().enumerate() {
                check(routes, item_schema, item, &format!("{}[{i}]", subject(at)))?;
            }
            Ok(())
        }
        Value::String(s) if schema.ty == "string" => {
            if let Some(max) = schema.max_length
                && s.chars().count() > max
            {
                return Err(format!("{} is longer than {max} characters", subject(at)));
            }
            Ok(())
        }
        Value::Number(n) if matches!(schema.ty, "number" | "integer") => {
            if let (Some(min), Some(v)) = (schema.minimum, n.as_f64())
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
        routes::install(crate::api::routes);
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
        routes::install(crate::api::routes);
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
        routes::install(crate::api::routes);
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
        routes::install(crate::api::routes);
        check_body(
            "PUT",
            "/api/v1/sources/a/objecttypes/b/objects/c/content",
            &json!({"anything": [1, {"x": null}]}),
        )
        .unwrap();
    }
}
