//! The operations of the published API document, looked up by request path and method: the
//! source of parameter names and body schemas for refusals in the API's words
//! ([`crate::input`], [`crate::schema`], [`crate::problem`]).

use std::sync::OnceLock;

use serde_json::Value;

/// One path template of the document (`/api/v1/sources/{sourceId}`).
pub struct Route {
    /// The template as the document writes it.
    pub template: String,
    /// Its segments: `Some(name)` for a parameter, `None` for a literal (kept in `literals`).
    params: Vec<Option<String>>,
    literals: Vec<String>,
    /// The path item: operations by lower-case method.
    item: Value,
}

impl Route {
    /// The names of the path parameters, in order (`["sourceId", "objectTypeId"]`).
    pub fn param_names(&self) -> impl Iterator<Item = &str> {
        self.params.iter().flatten().map(String::as_str)
    }

    /// The parameter name of segment `index`, when it is a parameter.
    pub fn param_at(&self, index: usize) -> Option<&str> {
        self.params.get(index).and_then(|p| p.as_deref())
    }

    /// The operation for `method` (any case).
    pub fn operation(&self, method: &str) -> Option<&Value> {
        self.item.get(method.to_ascii_lowercase())
    }

    fn matches(&self, segments: &[&str]) -> bool {
        self.params.len() == segments.len()
            && self
                .params
                .iter()
                .zip(&self.literals)
                .zip(segments)
                .all(|((param, literal), raw)| param.is_some() || literal == raw)
    }
}

/// The published document, parsed once.
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(&crate::api::document()).unwrap_or_default())
}

fn all() -> &'static [Route] {
    static ROUTES: OnceLock<Vec<Route>> = OnceLock::new();
    ROUTES.get_or_init(|| {
        let Some(paths) = document().get("paths").and_then(Value::as_object) else {
            return Vec::new();
        };
        let mut routes: Vec<Route> = paths
            .iter()
            .map(|(template, item)| {
                let (params, literals) = template
                    .split('/')
                    .map(|seg| {
                        let name = seg
                            .strip_prefix('{')
                            .and_then(|s| s.strip_suffix('}'))
                            .map(str::to_string);
                        (name, seg.to_string())
                    })
                    .unzip();
                Route {
                    template: template.clone(),
                    params,
                    literals,
                    item: item.clone(),
                }
            })
            .collect();
        // Literal segments win over parameters (`/objects/{id}/metadata` before `/{x}/{y}`).
        routes.sort_by_key(|r| std::cmp::Reverse(r.params.iter().filter(|p| p.is_none()).count()));
        routes
    })
}

/// The route of the document a request path matches.
pub fn find(path: &str) -> Option<&'static Route> {
    let segments: Vec<&str> = path.split('/').collect();
    all().iter().find(|r| r.matches(&segments))
}

/// Where `path` would match a route if one of its parameters held the extra segments: a value
/// with an unencoded `/`. Gives the route, the parameter's name and the value it would hold.
pub fn split_param(path: &str) -> Option<(&'static Route, &'static str, String)> {
    let segments: Vec<&str> = path.split('/').collect();
    all().iter().find_map(|r| {
        let extra = segments
            .len()
            .checked_sub(r.params.len())
            .filter(|e| *e > 0)?;
        let literal_ok = |t: usize, s: usize| r.params[t].is_some() || r.literals[t] == segments[s];
        (0..r.params.len()).find_map(|i| {
            let name = r.params[i].as_deref()?;
            let before = (0..i).all(|t| literal_ok(t, t));
            let after = (i + 1..r.params.len()).all(|t| literal_ok(t, t + extra));
            (before && after).then(|| (r, name, segments[i..=i + extra].join("/")))
        })
    })
}

/// Follows a `$ref` into the document's components.
pub fn resolve(schema: &Value) -> &Value {
    let mut schema = schema;
    for _ in 0..16 {
        let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
        else {
            break;
        };
        match document().pointer(&format!("/components/schemas/{name}")) {
            Some(s) => schema = s,
            None => break,
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_with_a_slash_is_found_in_its_parameter() {
        let (route, name, value) =
            split_param("/api/v1/sources/s/objecttypes/o/objects/a/b/c/metadata").unwrap();
        assert_eq!(
            route.template,
            "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}/metadata"
        );
        assert_eq!((name, value.as_str()), ("externalId", "a/b/c"));
        assert!(split_param("/api/v1/nothing/here/at/all").is_none());
    }

    #[test]
    fn paths_find_their_templates_and_parameter_names() {
        let r = find("/api/v1/sources/s/objecttypes/o/objects/x/metadata").unwrap();
        assert_eq!(
            r.template,
            "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}/metadata"
        );
        assert_eq!(
            r.param_names().collect::<Vec<_>>(),
            ["sourceId", "objectTypeId", "externalId"]
        );
        assert!(r.operation("GET").is_some());
        assert!(find("/api/v1/nowhere").is_none());
    }
}
