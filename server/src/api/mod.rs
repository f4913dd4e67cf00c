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
    serde_json::to_string_pretty(&doc).unwrap_or(raw)
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
