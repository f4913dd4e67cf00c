//! The published OpenAPI document: what poem-openapi generates, post-processed into what the
//! server really does and what readers and generators need — per-operation OAuth2 scopes, forms
//! client generators accept, unknown request fields refused, operations grouped in the order a
//! user meets them, an example request and response on every operation, the browser-facing
//! `/oauth/authorize`, the constraints the server enforces, and links between operations.

use serde_json::{Value, json};

use super::service;
use crate::rules::{self, Operations, TAG_PAIR};

/// The published document: the generated one with each operation's OAuth2 scopes filled in
/// (reads need `read:*`, writes `default`), which poem-openapi cannot express per scheme.
pub fn document() -> String {
    let raw = service().spec();
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(&raw) else {
        return raw;
    };
    if let Some(paths) = doc.get_mut("paths").and_then(|p| p.as_object_mut()) {
        for item in paths.values_mut() {
            let Some(item) = item.as_object_mut() else {
                continue;
            };
            for (method, op) in item.iter_mut() {
                let scope = if method == "get" { "read:*" } else { "default" };
                let Some(security) = op.get_mut("security").and_then(|s| s.as_array_mut()) else {
                    continue;
                };
                for requirement in security.iter_mut() {
                    if let Some(scopes) = requirement.get_mut("oauth2") {
                        *scopes = serde_json::json!([scope]);
                    }
                }
            }
        }
    }
    for_generators(&mut doc);
    document_authorize(&mut doc);
    group_operations(&mut doc);
    add_examples(&mut doc);
    add_constraints(&mut doc);
    add_links(&mut doc);
    any_media_type(&mut doc);
    serde_json::to_string_pretty(&doc).unwrap_or(raw)
}

/// A downloaded original is sent with its format's media type (`application/pdf`), so the
/// download's 200 and 206 document `*/*` beside `application/octet-stream` (listed first, for
/// client generators that take only that).
fn any_media_type(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for op in paths.values_mut().filter_map(|item| item.get_mut("get")) {
        if op["operationId"] != "downloadFile" {
            continue;
        }
        for status in ["200", "206"] {
            if let Some(content) = op
                .pointer_mut(&format!("/responses/{status}/content"))
                .and_then(Value::as_object_mut)
                && let Some(binary) = content.get("application/octet-stream").cloned()
            {
                content.insert("*/*".into(), binary);
            }
        }
    }
}

/// Rewrites what poem-openapi emits into forms client generators accept and that say what the
/// server does (checked by generating a Python client and by schemathesis in CI):
/// - `allOf: [{$ref: Enum}, {description}]` (poem's way of documenting an enum-typed field)
///   becomes a plain `$ref`: generators refuse `allOf` over a non-object;
/// - the tag header is an optional string, repeated once per value (an array header would be
///   sent comma-joined, which the server does not split);
/// - a repeatable query parameter (`tag`) is optional, as the server takes it, and the access
///   header is an optional string (a comma-separated list);
/// - every operation with a query documents 414 (the HTTP layer refuses over-long request lines),
///   and every operation 431 (a request head over `conn::MAX_HEAD_BYTES`: a long query or many
///   headers; HTTP/1 answers it before any route is known, with no body);
/// - every operation with a body documents 415 (missing or wrong `Content-Type`);
/// - the OAuth endpoints' 400 and 401 are RFC 6749 JSON bodies, not problem+json.
fn for_generators(doc: &mut Value) {
    fn plain_refs(v: &mut Value) {
        match v {
            Value::Object(map) => {
                let replacement = map.get("allOf").and_then(Value::as_array).and_then(|all| {
                    let r = all.iter().find_map(|x| x.get("$ref"))?.clone();
                    let only_docs = all.iter().all(|x| {
                        x.get("$ref").is_some()
                            || x.as_object()
                                .is_some_and(|o| o.keys().all(|k| k == "description"))
                    });
                    only_docs.then_some(r)
                });
                if let Some(r) = replacement {
                    map.remove("allOf");
                    map.insert("$ref".into(), r);
                }
                map.values_mut().for_each(plain_refs);
            }
            Value::Array(items) => items.iter_mut().for_each(plain_refs),
            _ => {}
        }
    }
    plain_refs(doc);

    deny_unknown_request_fields(doc);

    let problem = json!({"application/problem+json":
        {"schema": {"$ref": "#/components/schemas/Problem"}}});
    let oauth_error = json!({"application/json; charset=utf-8":
        {"schema": {"$ref": "#/components/schemas/OAuthErrorBody"}}});
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for op in item.values_mut() {
            if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
                for p in params.iter_mut() {
                    // poem-openapi marks a repeatable (`Vec`) query parameter required; the
                    // server takes zero or more.
                    if p["in"] == "query" && p.pointer("/schema/type") == Some(&json!("array")) {
                        p["required"] = json!(false);
                    }
                    // Generators refuse array headers: the access list is one string, a
                    // comma-separated list of percent-encoded entries (the server also takes
                    // the header repeated).
                    if p.get("name").and_then(Value::as_str) == Some("X-Service-Object-Access") {
                        p["required"] = json!(false);
                        p["schema"] = json!({"type": "string"});
                    }
                    if p.get("name").and_then(Value::as_str) == Some("X-Service-Object-Tag") {
                        p["required"] = json!(false);
                        p["schema"] = json!({"type": "string", "pattern": TAG_PAIR});
                        p["description"] = json!(
                            "`<tagExternalId>:<value>`, each half percent-encoded UTF-8 (a \
                             literal `%` is `%25`). Optional and repeatable: send the header \
                             once per value (values are not split at commas). The upload's tags \
                             replace the record's; the tag must be one of the object type's."
                        );
                    }
                }
            }
            let has_query = op
                .get("parameters")
                .and_then(Value::as_array)
                .is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));
            let has_body = op.get("requestBody").is_some();
            let is_feed = op.get("operationId").and_then(Value::as_str) == Some("listChanges");
            let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
                continue;
            };
            if has_query && !responses.contains_key("414") {
                responses.insert(
                    "414".into(),
                    json!({"description": "The request line is longer than 65,534 bytes (escapes \
                                           included): send less in the query."}),
                );
            }
            if !responses.contains_key("431") {
                responses.insert(
                    "431".into(),
                    json!({"description": "The request head (request line and headers) is over \
                                           64 KiB, or carries over 100 headers: send less. \
                                           Answered by the HTTP layer, without a body."}),
                );
            }
            if has_body && !responses.contains_key("415") {
                responses.insert(
                    "415".into(),
                    json!({"description": "The `Content-Type` is missing or not accepted.",
                           "content": problem.clone()}),
                );
            }
            if is_feed {
                responses.insert(
                    "410".into(),
                    json!({"description": "The cursor is older than the feed's retention \
                                           (`--change-retention`): start again from \
                                           `earliestCursor` (a walk from the snapshot).",
                           "content": problem.clone()}),
                );
            }
            if path.starts_with("/oauth/") {
                for code in ["400", "401"] {
                    if let Some(r) = responses.get_mut(code) {
                        r["content"] = oauth_error.clone();
                    }
                }
            }
        }
    }
}

/// Marks every object schema a JSON request body reaches `additionalProperties: false`: the
/// server refuses unknown fields (400 naming the field, `crate::schema`), and the document says so.
fn deny_unknown_request_fields(doc: &mut Value) {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if let Some(name) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix("#/components/schemas/"))
                {
                    out.push(name.to_string());
                }
                map.values().for_each(|x| refs(x, out));
            }
            Value::Array(items) => items.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    let mut pending = Vec::new();
    if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
        for op in paths
            .values()
            .filter_map(Value::as_object)
            .flat_map(|i| i.values())
        {
            if let Some(content) = op
                .pointer("/requestBody/content")
                .and_then(Value::as_object)
            {
                for (media, c) in content {
                    if media.starts_with("application/json") {
                        refs(c, &mut pending);
                    }
                }
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = doc.pointer(&format!("/components/schemas/{name}")) {
            refs(schema, &mut pending);
        }
    }
    for name in seen {
        if let Some(schema) = doc.pointer_mut(&format!("/components/schemas/{name}"))
            && schema.get("type").and_then(Value::as_str) == Some("object")
        {
            schema["additionalProperties"] = Value::Bool(false);
        }
    }
}

/// The tag groups in the order a user meets them, with their descriptions.
const GROUPS: &[(&str, &str)] = &[
    (
        "Sources",
        "Custom sources, their object types, tag configs and facets; corrections.",
    ),
    (
        "Syncs",
        "Open / push / close sync runs that keep an object type in step.",
    ),
    (
        "Objects",
        "Records: file upload, JSON push, metadata, touch, read, delete.",
    ),
    (
        "Folders",
        "The folder trees of HIERARCHICAL tags, and their counts.",
    ),
    ("Search", "Search the workspace's records, with facets."),
    (
        "Changes",
        "The change feed: the workspace's record changes in commit order, resumable by cursor.",
    ),
    (
        "Webhooks",
        "Endpoints told about closed syncs, failed extractions and new sources (workspace \
         ADMINs, HTTP Basic); signed deliveries, retried for 24 hours.",
    ),
    (
        "Re-extraction",
        "Records read again from their originals when extractors improve (workspace ADMINs, \
         HTTP Basic); jobs run in the background below uploads and resume after restarts.",
    ),
    (
        "OAuth clients",
        "OAuth2 client maintenance (workspace ADMINs, HTTP Basic).",
    ),
    ("API tokens", "Your own API tokens (HTTP Basic)."),
    (
        "OAuth2",
        "The OAuth2 authorization server: the browser's authorize page, tokens, revocation, \
         introspection, metadata.",
    ),
];

/// Operations of the Search area that are about folders.
const FOLDER_OPERATIONS: &[&str] = &[
    "putFolder",
    "deleteFolder",
    "listRootFolders",
    "listChildFolders",
];

/// Orders tags and paths as [`GROUPS`] does (poem-openapi sorts tags by name) and moves the
/// folder operations into their own group.
fn group_operations(doc: &mut Value) {
    doc["tags"] = GROUPS
        .iter()
        .map(|(name, description)| json!({"name": name, "description": description}))
        .collect();
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for op in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
    {
        let id = op.get("operationId").and_then(Value::as_str).unwrap_or("");
        if FOLDER_OPERATIONS.contains(&id) {
            op["tags"] = json!(["Folders"]);
        }
    }
    let rank = |item: &Value| {
        let tag = item
            .as_object()
            .and_then(|ops| ops.values().next())
            .and_then(|op| op.pointer("/tags/0"))
            .and_then(Value::as_str)
            .unwrap_or("");
        GROUPS
            .iter()
            .position(|(name, _)| *name == tag)
            .unwrap_or(GROUPS.len())
    };
    let mut items: Vec<(String, Value)> = std::mem::take(paths).into_iter().collect();
    // Stable: within a group, paths keep the order the handlers declare them in.
    items.sort_by_key(|(_, item)| rank(item));
    paths.extend(items);
}

/// The examples recorded from a real server by `tests/python/integrators/record_examples.py`:
/// per operationId, the request body, the success status and body, and parameter values.
const EXAMPLES: &str = include_str!("examples.json");

/// Puts an example request and response on every operation (parameters, JSON and form bodies;
/// multipart bodies are files and have none).
fn add_examples(doc: &mut Value) {
    let Ok(Value::Object(examples)) = serde_json::from_str::<Value>(EXAMPLES) else {
        return;
    };
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for op in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
    {
        let Some(example) = op
            .get("operationId")
            .and_then(Value::as_str)
            .and_then(|id| examples.get(id))
        else {
            continue;
        };
        if let (Some(params), Some(values)) = (
            op.get_mut("parameters").and_then(Value::as_array_mut),
            example.get("parameters").and_then(Value::as_object),
        ) {
            for p in params.iter_mut() {
                if let Some(v) = p
                    .get("name")
                    .and_then(Value::as_str)
                    .and_then(|n| values.get(n))
                {
                    p["example"] = v.clone();
                }
            }
        }
        if let (Some(content), Some(request)) = (
            op.pointer_mut("/requestBody/content")
                .and_then(Value::as_object_mut),
            example.get("request"),
        ) {
            for (media, c) in content.iter_mut() {
                if !media.starts_with("multipart/") {
                    c["example"] = request.clone();
                }
            }
        }
        if let (Some(status), Some(response)) = (
            example.get("status").and_then(Value::as_str),
            example.get("response"),
        ) && let Some(content) = op
            .pointer_mut(&format!("/responses/{status}/content"))
            .and_then(Value::as_object_mut)
        {
            for c in content.values_mut() {
                c["example"] = response.clone();
            }
        }
    }
}

/// Documents `GET /oauth/authorize`, the page an application sends the user's browser to. It is
/// served outside the OpenAPI service (it answers HTML pages and redirects), so the document
/// describes it by hand.
fn document_authorize(doc: &mut Value) {
    let query = |name: &str, required: bool, description: &str, schema: Value| {
        json!({"name": name, "in": "query", "required": required, "description": description,
               "schema": schema})
    };
    let string = json!({"type": "string"});
    let html = |description: &str| {
        json!({"description": description,
               "content": {"text/html; charset=utf-8": {"schema": {"type": "string"}}}})
    };
    let item = json!({"get": {
        "tags": ["OAuth2"],
        "operationId": "authorize",
        "summary": "Send the user's browser here to sign in and approve the application \
                    (authorization-code flow with PKCE).",
        "description": "Answers the sign-in page, or the consent page for a user already \
            signed in. The page's own forms post back to this address (`step=login`, \
            `step=consent`). On approval the browser is redirected (303) to `redirect_uri` with \
            `code` and `state`; on denial or a bad request that names a valid client and \
            redirect URI, with `error` and `state` (RFC 6749 4.1.2.1). An unknown client or a \
            redirect URI that is not registered gets an error page instead (400), never a \
            redirect. Exchange the code at `POST /oauth/token` within 10 minutes.",
        "parameters": [
            query("response_type", true, "Always `code`.", json!({"type": "string", "enum": ["code"]})),
            query("client_id", true, "The client's id from the create-client answer.", string.clone()),
            query("redirect_uri", true, "One of the client's registered redirect URIs, exactly.", string.clone()),
            query("scope", false, "Space-separated: `default`, `*:*` or `read:*` (default `default`).", string.clone()),
            query("state", false, "Echoed on the redirect; use it against CSRF.", string.clone()),
            query("code_challenge", false, "PKCE: BASE64URL(SHA-256(code_verifier)).", string.clone()),
            query("code_challenge_method", false, "PKCE: `S256` (plain is refused).", json!({"type": "string", "enum": ["S256"]})),
        ],
        "responses": {
            "200": html("The sign-in page, or the consent page for a signed-in user."),
            "303": {"description": "Back to `redirect_uri` with `code` and `state`, or with \
                                    `error` (`invalid_request`, `unsupported_response_type`, \
                                    `invalid_scope`, `access_denied`).",
                    "headers": {"Location": {"schema": {"type": "string"}}}},
            "400": {"description": "An error page (unknown client, unregistered redirect URI), \
                                    or a malformed query (a problem+json body).",
                    "content": {
                        "text/html; charset=utf-8": {"schema": {"type": "string"}},
                        "application/problem+json":
                            {"schema": {"$ref": "#/components/schemas/Problem"}}}},
            "429": html("Too many attempts; wait and try again."),
            "503": {"description": "Storage is unavailable; retry later.",
                    "content": {"application/problem+json":
                        {"schema": {"$ref": "#/components/schemas/Problem"}}}}
        }
    }});
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        paths.insert("/oauth/authorize".into(), item);
    }
}

/// States in the document the rules the server enforces beyond the handlers' types
/// ([`crate::rules`]), so generated data and clients follow them.
fn add_constraints(doc: &mut Value) {
    fn merge(schema: &mut Value, keywords: &Value) {
        for (k, v) in keywords.as_object().into_iter().flatten() {
            schema[k.as_str()] = v.clone();
        }
    }
    fn plain_string(schema: &Value) -> bool {
        schema.get("type").and_then(Value::as_str) == Some("string")
            && schema.get("format").is_none()
            && schema.get("enum").is_none()
    }
    let parameter_rules = rules::parameter_rules();
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for op in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
    {
        let id = op["operationId"].as_str().unwrap_or_default().to_string();
        for p in op
            .get_mut("parameters")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            for rule in &parameter_rules {
                if p["name"] != rule.name || rule.location.is_some_and(|l| p["in"] != l) {
                    continue;
                }
                match rule.operations {
                    Operations::Every => {
                        if let Some(schema) = p.get_mut("schema").filter(|s| plain_string(s)) {
                            merge(schema, &rule.keywords);
                        }
                    }
                    Operations::One(target) if target == id => {
                        let schema = if p.pointer("/schema/items").is_some() {
                            &mut p["schema"]["items"]
                        } else {
                            &mut p["schema"]
                        };
                        merge(schema, &rule.keywords);
                    }
                    Operations::One(_) => {}
                }
            }
        }
        if rules::BODY_REQUIRED.contains(&id.as_str())
            && let Some(body) = op.get_mut("requestBody")
        {
            body["required"] = json!(true);
        }
    }
    for rule in rules::field_rules() {
        if let Some(schema) = doc.pointer_mut(rule.pointer) {
            merge(schema, &rule.keywords);
        }
    }
    if let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        for (name, schema) in schemas.iter_mut() {
            for (field, prop) in schema
                .get_mut("properties")
                .and_then(Value::as_object_mut)
                .into_iter()
                .flatten()
            {
                if let Some(keywords) = rules::naming_rule(name, field)
                    && plain_string(prop)
                {
                    merge(prop, &keywords);
                }
            }
        }
    }
}

/// A link's target operation and its parameters (runtime expressions or constants).
type Link = (String, Value);

/// OpenAPI links: how an answer's ids feed the next operations (create a source, then its object
/// types' syncs and uploads; upload, then read, touch and delete the record; create a client,
/// then read, change, give it a logo and delete it; make a folder, then delete it). Generated
/// clients and schemathesis's stateful phase follow them.
fn add_links(doc: &mut Value) {
    let source = "$request.path.sourceId";
    let object_type = "$request.path.objectTypeId";
    let record = json!({"sourceId": source, "objectTypeId": object_type,
                        "externalId": "$request.path.externalId"});
    let from_created_source = |op: &str, extra: Value| {
        let mut params = json!({"sourceId": "$response.body#/id"});
        for (k, v) in extra.as_object().into_iter().flatten() {
            params[k.as_str()] = v.clone();
        }
        (op.to_string(), params)
    };
    let first_type = json!({"objectTypeId": "$response.body#/sourceObjectTypes/0/id"});
    let links: Vec<(&str, &str, Vec<Link>)> = vec![
        (
            "createSource",
            "201",
            vec![
                from_created_source("getSource", json!({})),
                from_created_source("updateSource", json!({})),
                from_created_source("addObjectType", json!({})),
                from_created_source("deleteSource", json!({})),
                from_created_source("addTagConfig", first_type.clone()),
                from_created_source("addFacet", first_type.clone()),
                from_created_source("openSync", first_type.clone()),
                from_created_source("listSyncs", first_type.clone()),
                from_created_source(
                    "uploadFile",
                    json!({
                "objectTypeId": "$response.body#/sourceObjectTypes/0/id", "externalId": "doc-1"}),
                ),
            ],
        ),
        (
            "addObjectType",
            "201",
            vec![
                (
                    "openSync".into(),
                    json!({"sourceId": source, "objectTypeId": "$response.body#/id"}),
                ),
                (
                    "uploadFile".into(),
                    json!({"sourceId": source, "objectTypeId": "$response.body#/id",
                                         "externalId": "doc-1"}),
                ),
                (
                    "addTagConfig".into(),
                    json!({"sourceId": source, "objectTypeId": "$response.body#/id"}),
                ),
            ],
        ),
        (
            "openSync",
            "201",
            vec![
                (
                    "closeSync".into(),
                    json!({"sourceId": source, "objectTypeId": object_type,
                                        "syncNumber": "$response.body#/syncNumber"}),
                ),
                (
                    "getSync".into(),
                    json!({"sourceId": source, "objectTypeId": object_type,
                                      "syncNumber": "$response.body#/syncNumber"}),
                ),
                (
                    "uploadFile".into(),
                    json!({"sourceId": source, "objectTypeId": object_type,
                                         "externalId": "doc-1",
                                         "syncNumber": "$response.body#/syncNumber"}),
                ),
            ],
        ),
        (
            "uploadFile",
            "201",
            ["getMetadata", "touchObject", "getObject", "deleteObject"]
                .iter()
                .map(|op| (op.to_string(), record.clone()))
                .collect(),
        ),
        (
            "pushContent",
            "201",
            ["getMetadata", "getObject", "deleteObject"]
                .iter()
                .map(|op| (op.to_string(), record.clone()))
                .collect(),
        ),
        (
            "createOAuthClient",
            "201",
            [
                "getOAuthClient",
                "updateOAuthClient",
                "uploadOAuthClientLogo",
                "deleteOAuthClient",
            ]
            .iter()
            .map(|op| {
                (
                    op.to_string(),
                    json!({"clientId": "$response.body#/clientId"}),
                )
            })
            .collect(),
        ),
        (
            "putFolder",
            "201",
            vec![(
                "deleteFolder".into(),
                json!({"sourceId": source,
                                           "tagConfigId": "$request.path.tagConfigId",
                                           "externalId": "$request.path.externalId"}),
            )],
        ),
    ];
    let ids: std::collections::HashMap<String, (String, String)> = operation_ids(doc);
    for (from, status, targets) in links {
        let Some((path, method)) = ids.get(from) else {
            continue;
        };
        let pointer = format!(
            "/paths/{}/{method}/responses/{status}",
            path.replace('~', "~0").replace('/', "~1")
        );
        let Some(response) = doc.pointer_mut(&pointer) else {
            continue;
        };
        let mut out = serde_json::Map::new();
        for (to, params) in targets {
            let name = format!("{}{}", to[..1].to_uppercase(), &to[1..]);
            out.insert(name, json!({"operationId": to, "parameters": params}));
        }
        response["links"] = Value::Object(out);
    }
}

/// operationId → (path, method) of every operation.
fn operation_ids(doc: &Value) -> std::collections::HashMap<String, (String, String)> {
    let mut ids = std::collections::HashMap::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            if let Some(id) = op["operationId"].as_str() {
                ids.insert(id.to_string(), (path.clone(), method.clone()));
            }
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operations(doc: &Value) -> Vec<(String, String, Value)> {
        let mut out = Vec::new();
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            for (method, op) in item.as_object().into_iter().flatten() {
                out.push((method.clone(), path.clone(), op.clone()));
            }
        }
        out
    }

    #[test]
    fn every_operation_has_a_group_a_summary_and_examples() {
        crate::routes::install(crate::api::routes);
        let doc: Value = serde_json::from_str(&document()).unwrap();
        let groups: Vec<&str> = GROUPS.iter().map(|(name, _)| *name).collect();
        let tags: Vec<&str> = doc["tags"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(tags, groups);
        let mut last_group = 0;
        let examples: Value = serde_json::from_str(EXAMPLES).unwrap();
        let mut seen = Vec::new();
        for (method, path, op) in operations(&doc) {
            let id = op["operationId"].as_str().unwrap().to_string();
            let group = groups
                .iter()
                .position(|g| op["tags"][0] == *g)
                .unwrap_or_else(|| panic!("{id}: tag {} is not a group", op["tags"]));
            assert!(group >= last_group, "{id} is out of its group's order");
            last_group = group;
            assert!(
                op["summary"].as_str().is_some_and(|s| s.len() > 10),
                "{id} has no summary"
            );
            let example = &examples[&id];
            assert!(example.is_object(), "{id} has no recorded example");
            seen.push(id.clone());
            for p in op["parameters"].as_array().into_iter().flatten() {
                if p["required"] == true {
                    assert!(
                        !p["example"].is_null(),
                        "{id}: required parameter {} has no example",
                        p["name"]
                    );
                }
            }
            if let Some(content) = op
                .pointer("/requestBody/content")
                .and_then(Value::as_object)
            {
                for (media, c) in content {
                    if media.starts_with("multipart/") {
                        continue;
                    }
                    let body = &c["example"];
                    assert!(!body.is_null(), "{id}: no request example");
                    if media.starts_with("application/json") {
                        let concrete = path.replace(['{', '}'], "");
                        crate::schema::check_body(&method.to_uppercase(), &concrete, body)
                            .unwrap_or_else(|e| panic!("{id}: request example: {e}"));
                    }
                }
            }
            let status = example["status"].as_str().unwrap_or("200");
            let response = op
                .pointer(&format!("/responses/{status}"))
                .unwrap_or_else(|| panic!("{id}: the example's status {status} is undocumented"));
            let declared = crate::routes::find(&path.replace(['{', '}'], ""))
                .and_then(|r| r.operation(&method))
                .and_then(|op| {
                    op.responses
                        .responses
                        .iter()
                        .find(|r| r.status.is_some_and(|s| s.to_string() == status))
                });
            if let Some(content) = response["content"].as_object() {
                for (media, c) in content {
                    let body = &c["example"];
                    assert!(!body.is_null(), "{id}: no response example");
                    if id == "authorize" || media == "*/*" {
                        continue; // documented by hand (a page; the range of a download's types)
                    }
                    let schema = declared
                        .and_then(|r| r.content.iter().find(|m| m.content_type == media))
                        .unwrap_or_else(|| panic!("{id}: {status} {media} is not declared"));
                    crate::schema::check_value(&schema.schema, body)
                        .unwrap_or_else(|e| panic!("{id}: response example: {e}"));
                }
            }
        }
        for id in examples.as_object().unwrap().keys() {
            assert!(
                seen.contains(id),
                "examples.json holds {id}, which is not an operation"
            );
        }
    }

    #[test]
    fn links_name_real_operations_and_parameters() {
        let doc: Value = serde_json::from_str(&document()).unwrap();
        let ids = operation_ids(&doc);
        let mut count = 0;
        for (_, _, op) in operations(&doc) {
            for response in op["responses"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|r| r.1)
            {
                for link in response["links"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|l| l.1)
                {
                    let target = link["operationId"].as_str().unwrap();
                    let (path, method) = ids.get(target).unwrap_or_else(|| panic!("{target}"));
                    let names: Vec<&str> = doc["paths"][path][method]["parameters"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| p["name"].as_str())
                        .collect();
                    for param in link["parameters"].as_object().unwrap().keys() {
                        assert!(names.contains(&param.as_str()), "{target} has no {param}");
                    }
                    count += 1;
                }
            }
        }
        assert!(count >= 20, "only {count} links");
    }
}
