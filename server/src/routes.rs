//! The API's operations as the handlers declare them, looked up by request path and method: the
//! source of parameter names and body schemas for refusals in the API's words
//! ([`crate::input`], [`crate::schema`], [`crate::problem`]). Built once at start from
//! poem-openapi's description of the handlers (their `MetaApi`s and schema registry, the same
//! the published document is generated from), with [`crate::rules`] stated over the body
//! schemas, and installed with [`install`]; nothing reads the document back.

use std::{collections::BTreeMap, sync::OnceLock};

use poem::http::Method;
use poem_openapi::registry::{
    MetaApi, MetaOperation, MetaParamIn, MetaSchema, MetaSchemaRef, Registry,
};
use serde_json::Value;

use crate::rules;

/// One path template of the API (`/api/v1/sources/{sourceId}`) with its operations.
pub struct Route {
    /// The template as the document writes it.
    pub template: String,
    /// Its segments: `Some(name)` for a parameter, `None` for a literal (kept in `literals`).
    params: Vec<Option<String>>,
    literals: Vec<String>,
    operations: Vec<MetaOperation>,
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
    pub fn operation(&self, method: &str) -> Option<&MetaOperation> {
        self.operations
            .iter()
            .find(|op| op.method.as_str().eq_ignore_ascii_case(method))
    }

    /// The methods it allows, upper case, in the order GET, PUT, POST, DELETE, PATCH.
    pub fn methods(&self) -> Vec<&'static str> {
        [
            Method::GET,
            Method::PUT,
            Method::POST,
            Method::DELETE,
            Method::PATCH,
        ]
        .iter()
        .filter(|m| self.operations.iter().any(|op| op.method == **m))
        .map(|m| match *m {
            Method::GET => "GET",
            Method::PUT => "PUT",
            Method::POST => "POST",
            Method::DELETE => "DELETE",
            _ => "PATCH",
        })
        .collect()
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

/// The names of an operation's parameters in one place (`query`, `header`, `path`).
pub fn declared(op: &MetaOperation, place: MetaParamIn) -> Vec<String> {
    op.params
        .iter()
        .filter(|p| p.in_type == place)
        .map(|p| p.name.clone())
        .collect()
}

/// The API's routes and the schemas their bodies name.
#[derive(Default)]
pub struct Routes {
    routes: Vec<Route>,
    schemas: BTreeMap<String, MetaSchema>,
}

impl Routes {
    /// The routes of `apis` with the schemas of `registry`, [`crate::rules`] stated over them.
    pub fn new(apis: Vec<MetaApi>, mut registry: Registry) -> Self {
        let mut routes: Vec<Route> = Vec::new();
        for path in apis.into_iter().flat_map(|api| api.paths) {
            if let Some(route) = routes.iter_mut().find(|r| r.template == path.path) {
                route.operations.extend(path.operations);
                continue;
            }
            let (params, literals) = path
                .path
                .split('/')
                .map(|seg| {
                    let name = seg
                        .strip_prefix('{')
                        .and_then(|s| s.strip_suffix('}'))
                        .map(str::to_string);
                    (name, seg.to_string())
                })
                .unzip();
            routes.push(Route {
                template: path.path,
                params,
                literals,
                operations: path.operations,
            });
        }
        // Literal segments win over parameters (`/objects/{id}/metadata` before `/{x}/{y}`).
        routes.sort_by_key(|r| std::cmp::Reverse(r.params.iter().filter(|p| p.is_none()).count()));
        for rule in rules::field_rules() {
            if let Some(schema) = schema_at(&mut registry.schemas, rule.pointer) {
                merge(schema, &rule.keywords);
            }
        }
        for (name, schema) in registry.schemas.iter_mut() {
            for (field, prop) in schema.properties.iter_mut() {
                if let (Some(keywords), MetaSchemaRef::Inline(prop)) =
                    (rules::naming_rule(name, field), prop)
                    && prop.ty == "string"
                    && prop.format.is_none()
                    && prop.enum_items.is_empty()
                {
                    merge(prop, &keywords);
                }
            }
        }
        Routes {
            routes,
            schemas: registry.schemas,
        }
    }

    /// The route a request path matches.
    pub fn find(&self, path: &str) -> Option<&Route> {
        let segments: Vec<&str> = path.split('/').collect();
        self.routes.iter().find(|r| r.matches(&segments))
    }

    /// Where `path` would match a route if one of its parameters held the extra segments: a
    /// value with an unencoded `/`. Gives the route, the parameter's name and the value it
    /// would hold.
    pub fn split_param(&self, path: &str) -> Option<(&Route, &str, String)> {
        let segments: Vec<&str> = path.split('/').collect();
        self.routes.iter().find_map(|r| {
            let extra = segments
                .len()
                .checked_sub(r.params.len())
                .filter(|e| *e > 0)?;
            let literal_ok =
                |t: usize, s: usize| r.params[t].is_some() || r.literals[t] == segments[s];
            (0..r.params.len()).find_map(|i| {
                let name = r.params[i].as_deref()?;
                let before = (0..i).all(|t| literal_ok(t, t));
                let after = (i + 1..r.params.len()).all(|t| literal_ok(t, t + extra));
                (before && after).then(|| (r, name, segments[i..=i + extra].join("/")))
            })
        })
    }

    /// The schema a reference names, or the inline schema.
    pub fn resolve<'a>(&'a self, schema: &'a MetaSchemaRef) -> Option<&'a MetaSchema> {
        match schema {
            MetaSchemaRef::Inline(s) => Some(s),
            MetaSchemaRef::Reference(name) => self.schemas.get(name),
        }
    }

    /// Every named schema, by name.
    pub fn schemas(&self) -> &BTreeMap<String, MetaSchema> {
        &self.schemas
    }
}

/// The schema a component pointer (`/components/schemas/X/properties/y/items`) names, when
/// every step is inline.
fn schema_at<'a>(
    schemas: &'a mut BTreeMap<String, MetaSchema>,
    pointer: &str,
) -> Option<&'a mut MetaSchema> {
    let mut steps = pointer.strip_prefix("/components/schemas/")?.split('/');
    let mut schema = schemas.get_mut(steps.next()?)?;
    while let Some(step) = steps.next() {
        let next = match step {
            "properties" => {
                let field = steps.next()?;
                &mut schema.properties.iter_mut().find(|(n, _)| *n == field)?.1
            }
            "items" => schema.items.as_deref_mut()?,
            _ => return None,
        };
        schema = match next {
            MetaSchemaRef::Inline(s) => s,
            MetaSchemaRef::Reference(_) => return None,
        };
    }
    Some(schema)
}

/// Adds JSON Schema keywords to a schema.
fn merge(schema: &mut MetaSchema, keywords: &Value) {
    let count = |v: &Value| v.as_u64().and_then(|n| usize::try_from(n).ok());
    for (k, v) in keywords.as_object().into_iter().flatten() {
        match k.as_str() {
            "minLength" => schema.min_length = count(v),
            "maxLength" => schema.max_length = count(v),
            "minItems" => schema.min_items = count(v),
            "maxItems" => schema.max_items = count(v),
            "minimum" => schema.minimum = v.as_f64(),
            "maximum" => schema.maximum = v.as_f64(),
            "uniqueItems" => schema.unique_items = v.as_bool(),
            "pattern" => schema.pattern = v.as_str().map(str::to_string),
            "enum" => schema.enum_items = v.as_array().cloned().unwrap_or_default(),
            "format" => {
                schema.format = ["uri", "date-time"]
                    .into_iter()
                    .find(|f| v.as_str() == Some(f))
            }
            _ => {}
        }
    }
}

static ROUTES: OnceLock<Routes> = OnceLock::new();

/// Installs the API's routes for the request checks; the first call wins (every app of a
/// process serves the same API).
pub fn install(routes: impl FnOnce() -> Routes) {
    ROUTES.get_or_init(routes);
}

/// The installed routes; none before [`install`] (nothing matches, nothing is refused).
pub fn get() -> &'static Routes {
    static NONE: OnceLock<Routes> = OnceLock::new();
    ROUTES
        .get()
        .unwrap_or_else(|| NONE.get_or_init(Routes::default))
}

/// The installed route a request path matches.
pub fn find(path: &str) -> Option<&'static Route> {
    get().find(path)
}

/// [`Routes::split_param`] of the installed routes.
pub fn split_param(path: &str) -> Option<(&'static Route, &'static str, String)> {
    get().split_param(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() {
        install(crate::api::routes);
    }

    /// The keywords of `meta` a JSON Schema writes, as the document writes them.
    fn keywords(meta: &MetaSchemaRef) -> Value {
        let schema = match meta {
            MetaSchemaRef::Reference(name) => {
                return serde_json::json!({"$ref": format!("#/components/schemas/{name}")});
            }
            MetaSchemaRef::Inline(s) => s,
        };
        // The document writes a reference wrapped only to carry a description as the reference.
        if let [MetaSchemaRef::Reference(_), MetaSchemaRef::Inline(rest)] = &schema.all_of[..]
            && rest.ty.is_empty()
            && rest.properties.is_empty()
        {
            return keywords(&schema.all_of[0]);
        }
        let mut out = serde_json::Map::new();
        let mut put = |k: &str, v: Value| {
            if !v.is_null() {
                out.insert(k.to_string(), v);
            }
        };
        put(
            "type",
            Value::from(schema.ty)
                .as_str()
                .filter(|t| !t.is_empty())
                .into(),
        );
        put("format", schema.format.into());
        put("maxLength", schema.max_length.into());
        put("minLength", schema.min_length.into());
        put("maxItems", schema.max_items.into());
        put("minItems", schema.min_items.into());
        put("minimum", schema.minimum.into());
        put("maximum", schema.maximum.into());
        put("pattern", schema.pattern.clone().into());
        if !schema.enum_items.is_empty() {
            put("enum", schema.enum_items.clone().into());
        }
        if !schema.required.is_empty() {
            put("required", schema.required.clone().into());
        }
        if let Some(items) = &schema.items {
            put("items", keywords(items));
        }
        if !schema.properties.is_empty() {
            let props: serde_json::Map<String, Value> = schema
                .properties
                .iter()
                .map(|(n, p)| (n.to_string(), keywords(p)))
                .collect();
            put("properties", props.into());
        }
        out.into()
    }

    /// The same keywords of a schema of the published document.
    fn documented(schema: &Value) -> Value {
        let Some(map) = schema.as_object() else {
            return schema.clone();
        };
        let mut out = serde_json::Map::new();
        for (k, v) in map {
            let v = match k.as_str() {
                "$ref" | "type" | "format" | "maxLength" | "minLength" | "maxItems"
                | "minItems" | "pattern" | "enum" | "required" => v.clone(),
                "minimum" | "maximum" => v.as_f64().into(),
                "items" => documented(v),
                "properties" => v
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(n, p)| (n.clone(), documented(p)))
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
                _ => continue,
            };
            out.insert(k.clone(), v);
        }
        out.into()
    }

    #[test]
    fn the_checks_read_what_the_document_publishes() {
        setup();
        let doc: Value = serde_json::from_str(&crate::api::document()).unwrap();
        let routes = get();
        let mut compared = 0;
        for (name, schema) in routes.schemas() {
            let published = &doc["components"]["schemas"][name.as_str()];
            let inline = MetaSchemaRef::Inline(Box::new(schema.clone()));
            assert_eq!(keywords(&inline), documented(published), "schema {name}");
            compared += 1;
        }
        assert!(compared > 40, "only {compared} schemas");
        for (path, item) in doc["paths"].as_object().unwrap() {
            if path == "/oauth/authorize" {
                continue; // a page, documented by hand
            }
            let route = find(&path.replace(['{', '}'], "")).unwrap();
            assert_eq!(&route.template, path);
            for (method, op) in item.as_object().unwrap() {
                let meta = route.operation(method).unwrap();
                let names = |p: &Value| p["name"].as_str().unwrap().to_string();
                let published: Vec<String> = op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(names)
                    .collect();
                let declared: Vec<String> = meta.params.iter().map(|p| p.name.clone()).collect();
                assert_eq!(declared, published, "{method} {path}");
                let media: Vec<&str> = op
                    .pointer("/requestBody/content")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .map(|(m, _)| m.as_str())
                    .collect();
                let declared: Vec<&str> = meta
                    .request
                    .iter()
                    .flat_map(|r| r.content.iter().map(|c| c.content_type))
                    .collect();
                assert_eq!(declared, media, "{method} {path}");
            }
        }
    }

    #[test]
    fn a_value_with_a_slash_is_found_in_its_parameter() {
        setup();
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
        setup();
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
