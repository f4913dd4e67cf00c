//! The HTTP API under `/api/v1`: one `#[OpenApi]` impl per area, combined into one
//! [`OpenApiService`] whose document is published as `openapi/openapi.json`.

mod apitokens;
mod clients;
pub mod dto;
mod objects;
mod search;
mod sources;
mod syncs;

use inlet_core::{
    Error,
    record::Scope,
    source::{ObjectType, Source},
    token::Principal,
};
use poem_openapi::{OpenApiService, Tags};
use uuid::Uuid;

use crate::{problem::ApiError, state::AppState};

/// Path prefix of the API.
pub const PREFIX: &str = "/api/v1";

/// Longest accepted externalId, in bytes.
pub const MAX_EXTERNAL_ID_BYTES: usize = 1024;

#[derive(Tags)]
enum ApiTags {
    /// Custom sources and their object types.
    Sources,
    /// Open / push / close sync runs.
    Syncs,
    /// Records: file upload, metadata, touch, read, delete.
    Objects,
    /// OAuth2 client maintenance (workspace ADMINs, HTTP Basic).
    #[oai(rename = "OAuth clients")]
    OAuthClients,
    /// Your own API tokens (HTTP Basic).
    #[oai(rename = "API tokens")]
    ApiTokens,
    /// Search with facets, and the folder trees of HIERARCHICAL tags.
    Search,
}

/// Every operation group of the document.
pub type Apis = (
    sources::SourcesApi,
    syncs::SyncsApi,
    objects::ObjectsApi,
    search::SearchApi,
    clients::ClientsApi,
    apitokens::ApiTokensApi,
    crate::oauth::OAuthApi,
);

/// The API as one OpenAPI service (the document is deterministic: no host-specific data). Paths
/// are absolute (`/api/v1/...`, `/oauth/...`): a client's base URL is the service's origin.
pub fn service() -> OpenApiService<Apis, ()> {
    OpenApiService::new(
        (
            sources::SourcesApi,
            syncs::SyncsApi,
            objects::ObjectsApi,
            search::SearchApi,
            clients::ClientsApi,
            apitokens::ApiTokensApi,
            crate::oauth::OAuthApi,
        ),
        "Inlet",
        env!("CARGO_PKG_VERSION"),
    )
    .description(
        "Push files and records from external systems into a workspace's searchable store. \
         Source and file endpoints take HTTP Basic (e-mail and API token) or an OAuth2 access \
         token (`Authorization: Bearer`); scope `read:*` allows reads only, `default` and `*:*` \
         everything. OAuth client maintenance takes an ADMIN's HTTP Basic credentials. Errors \
         are application/problem+json (RFC 9457); the OAuth2 endpoints answer RFC 6749 error \
         bodies.",
    )
}

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
    serde_json::to_string_pretty(&doc).unwrap_or(raw)
}

/// Rewrites what poem-openapi emits into forms client generators accept and that say what the
/// server does (checked by generating a Python client and by schemathesis in CI):
/// - `allOf: [{$ref: Enum}, {description}]` (poem's way of documenting an enum-typed field)
///   becomes a plain `$ref`: generators refuse `allOf` over a non-object;
/// - the tag header is an optional string, repeated once per value (an array header would be
///   sent comma-joined, which the server does not split);
/// - every operation with a body documents 415 (missing or wrong `Content-Type`);
/// - the OAuth endpoints' 400 and 401 are RFC 6749 JSON bodies, not problem+json.
fn for_generators(doc: &mut serde_json::Value) {
    use serde_json::{Value, json};

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
                    if p.get("name").and_then(Value::as_str) == Some("X-Service-Object-Tag") {
                        p["required"] = json!(false);
                        p["schema"] = json!({"type": "string"});
                        p["description"] = json!(
                            "`<tagExternalId>:<value>`. Optional and repeatable: send the \
                             header once per value (values are not split at commas). The \
                             upload's tags replace the record's."
                        );
                    }
                }
            }
            let has_body = op.get("requestBody").is_some();
            let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
                continue;
            };
            if has_body && !responses.contains_key("415") {
                responses.insert(
                    "415".into(),
                    json!({"description": "The `Content-Type` is missing or not accepted.",
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

/// The source and object type addressed by a request, confined to the caller's workspace.
async fn object_type(
    state: &AppState,
    principal: &Principal,
    source_id: Uuid,
    object_type_id: Uuid,
) -> Result<(Source, ObjectType, Scope), ApiError> {
    let source = state
        .records
        .get_source(principal.workspace_id, source_id)
        .await?;
    let object_type = source.object_type(object_type_id).cloned().ok_or_else(|| {
        ApiError::not_found(format!(
            "object type {object_type_id} not found in source {source_id}"
        ))
    })?;
    let scope = Scope {
        workspace_id: principal.workspace_id,
        source_id,
        object_type_id,
    };
    Ok((source, object_type, scope))
}

/// The current sync number of an object type (open, else latest, else 0).
async fn current_sync_number(state: &AppState, scope: Scope) -> Result<i64, Error> {
    Ok(state
        .records
        .list_syncs(scope)
        .await?
        .first()
        .map_or(0, |r| r.sync_number))
}
