//! The HTTP API under `/api/v1`: one `#[OpenApi]` impl per area, combined into one
//! [`OpenApiService`] whose document is published as `openapi/openapi.json`.

pub(crate) mod access;
mod apitokens;
mod batch;
mod changes;
mod clients;
mod document;
pub mod dto;
mod folders;
mod objects;
mod reextractions;
mod search;
mod sources;
mod syncs;
mod webhooks;

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
    /// The change feed: record changes in commit order.
    Changes,
    /// Webhooks: endpoints told about syncs, failed extractions and new sources.
    Webhooks,
    /// Re-extraction: records read again from their originals (workspace ADMINs).
    #[oai(rename = "Re-extraction")]
    Reextractions,
}

/// Every operation group of the document.
pub type Apis = (
    sources::SourcesApi,
    syncs::SyncsApi,
    objects::ObjectsApi,
    batch::BatchApi,
    access::AccessApi,
    search::SearchApi,
    folders::FoldersApi,
    changes::ChangesApi,
    webhooks::WebhooksApi,
    reextractions::ReextractionsApi,
    clients::ClientsApi,
    apitokens::ApiTokensApi,
    inlet_oauth::OAuthApi,
);

/// The API as one OpenAPI service (the document is deterministic: no host-specific data). Paths
/// are absolute (`/api/v1/...`, `/oauth/...`): a client's base URL is the service's origin.
pub fn service() -> OpenApiService<Apis, ()> {
    OpenApiService::new(
        (
            sources::SourcesApi,
            syncs::SyncsApi,
            objects::ObjectsApi,
            batch::BatchApi,
            access::AccessApi,
            search::SearchApi,
            folders::FoldersApi,
            changes::ChangesApi,
            webhooks::WebhooksApi,
            reextractions::ReextractionsApi,
            clients::ClientsApi,
            apitokens::ApiTokensApi,
            inlet_oauth::OAuthApi,
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
         bodies.\n\nInput rules (400 naming the field otherwise): path and query parameters, \
         form fields and the tag header are strictly percent-encoded UTF-8 (write a literal `%` \
         as `%25`) without control characters (U+0000-U+001F, U+007F). Record externalIds, tag \
         values and checksums are at most 1,024 bytes, URLs 8,192. JSON bodies may hold any \
         character but U+0000 and are stored as sent; NUL bytes are dropped from extracted \
         text.",
    )
}

pub use document::document;

/// The API's routes for the request checks ([`crate::routes`]): the operations and schemas the
/// document is generated from, read from the handlers' types.
pub fn routes() -> crate::routes::Routes {
    let mut registry = poem_openapi::registry::Registry::new();
    <Apis as poem_openapi::OpenApi>::register(&mut registry);
    crate::routes::Routes::new(<Apis as poem_openapi::OpenApi>::meta(), registry)
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

/// Refuses a write by a caller who may not read the record, as a write to a record that does
/// not exist is refused (`missing` phrases it as the operation does): a reader changes only
/// what they may read (DESIGN 7a).
async fn refuse_hidden(
    state: &AppState,
    principal: &Principal,
    scope: Scope,
    external_id: &str,
    missing: fn(&str) -> Error,
) -> Result<(), ApiError> {
    if principal.reads_everything() {
        return Ok(());
    }
    let viewer = state.viewers.of(&*state.records, principal).await?;
    let ids = [external_id.to_string()];
    if inlet_core::ingest::hidden(&*state.records, scope, &ids, &viewer)
        .await?
        .contains(external_id)
    {
        return Err(missing(external_id).into());
    }
    Ok(())
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
