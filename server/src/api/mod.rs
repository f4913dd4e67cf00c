//! The HTTP API under `/api/v1`: one `#[OpenApi]` impl per area, combined into one
//! [`OpenApiService`] whose document is published as `openapi/openapi.json`.

pub mod dto;
mod objects;
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
}

/// The API as one OpenAPI service (the document is deterministic: no host-specific data).
pub fn service() -> OpenApiService<(sources::SourcesApi, syncs::SyncsApi, objects::ObjectsApi), ()>
{
    OpenApiService::new(
        (sources::SourcesApi, syncs::SyncsApi, objects::ObjectsApi),
        "Inlet",
        env!("CARGO_PKG_VERSION"),
    )
    .description(
        "Push files and records from external systems into a workspace's searchable store. \
         Errors are application/problem+json (RFC 9457).",
    )
    .server(PREFIX)
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
