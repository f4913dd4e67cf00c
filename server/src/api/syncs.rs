//! Sync runs (DESIGN 5): open, close, read back.

use inlet_core::{
    ingest,
    record::Scope,
    source::ObjectType,
    sync::{CloseOperation, SyncState},
    token::Principal,
    webhook::Event,
};
use poem::web::Data;
use poem_openapi::{ApiResponse, OpenApi, param::Path, payload::Json};
use uuid::Uuid;

use super::{
    ApiTags, current_sync_number,
    dto::{CloseSync, OpenSync, SyncOut},
    object_type,
};
use crate::{auth::Auth, problem::ApiError, state::AppState};

/// Sync endpoints.
pub struct SyncsApi;

#[derive(ApiResponse)]
enum Opened {
    /// The sync is open; pass its `syncNumber` on every upload and touch.
    #[oai(status = 201)]
    Created(Json<SyncOut>),
}

#[OpenApi(tag = "ApiTags::Syncs", prefix_path = "/api/v1")]
impl SyncsApi {
    /// Open a sync: START_INITIAL for the object type's first, START for later ones; 409 while
    /// another is open.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/syncs",
        method = "post",
        operation_id = "openSync"
    )]
    async fn open(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        body: Json<OpenSync>,
    ) -> Result<Opened, ApiError> {
        let principal = auth.writer()?;
        let (_, ot, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        driver(&state, principal, &ot, scope).await?;
        let run = ingest::syncs::open(&*state.records, scope, body.0.operation.into()).await?;
        let n = run.sync_number;
        Ok(Opened::Created(Json(SyncOut::new(run, ot.name, n))))
    }

    /// Close the open sync. COMPLETE removes every record of the object type not uploaded or
    /// touched in it; COMPLETE_INCREMENTAL and FAIL remove nothing.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/syncs/:syncNumber",
        method = "put",
        operation_id = "closeSync"
    )]
    async fn close(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "syncNumber")] sync_number: Path<i64>,
        body: Json<CloseSync>,
    ) -> Result<Json<SyncOut>, ApiError> {
        let principal = auth.writer()?;
        let (_, ot, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        driver(&state, principal, &ot, scope).await?;
        let run = ingest::syncs::close(
            &*state.records,
            &ot,
            scope,
            sync_number.0,
            body.0.operation.into(),
            body.0.allow_mass_removal == Some(true),
            state.settings.complete_max_removal,
        )
        .await?;
        if let Some(op) = run.close_operation {
            let label = match op {
                CloseOperation::Complete => "COMPLETE",
                CloseOperation::CompleteIncremental => "COMPLETE_INCREMENTAL",
                CloseOperation::Fail => "FAIL",
            };
            state.metrics.sync_closed(label, run.counters.removed);
        }
        let current = current_sync_number(&state, scope).await?;
        let event = if run.state == SyncState::Failed {
            Event::SyncFailed
        } else {
            Event::SyncCompleted
        };
        // The sync is closed: a failed look-up tells members' webhooks nothing rather than fail.
        let open_to_readers = ingest::syncs::permissions_in_use(&*state.records, &ot, scope)
            .await
            .is_ok_and(|in_use| !in_use);
        let out = SyncOut::new(run, ot.name, current);
        // The sync as its GET answers it, with the source and object type.
        let mut data = poem_openapi::types::ToJSON::to_json(&out).unwrap_or_default();
        data["sourceId"] = serde_json::json!(scope.source_id);
        data["objectTypeId"] = serde_json::json!(scope.object_type_id);
        let subject = inlet_core::webhook::Subject::Sync { open_to_readers };
        crate::webhooks::emit(&state, scope.workspace_id, event, data, subject).await;
        Ok(Json(out))
    }

    /// Read one sync run with its counters.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/syncs/:syncNumber",
        method = "get",
        operation_id = "getSync"
    )]
    async fn get(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        #[oai(name = "syncNumber")] sync_number: Path<i64>,
    ) -> Result<Json<SyncOut>, ApiError> {
        let principal = auth.reader();
        let (_, ot, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        driver(&state, principal, &ot, scope).await?;
        let run = state.records.get_sync(scope, sync_number.0).await?;
        let current = current_sync_number(&state, scope).await?;
        Ok(Json(SyncOut::new(run, ot.name, current)))
    }

    /// List the object type's sync runs, newest first.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/syncs",
        method = "get",
        operation_id = "listSyncs"
    )]
    async fn list(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
    ) -> Result<Json<Vec<SyncOut>>, ApiError> {
        let principal = auth.reader();
        let (_, ot, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        driver(&state, principal, &ot, scope).await?;
        let runs = state.records.list_syncs(scope).await?;
        let current = runs.first().map_or(0, |r| r.sync_number);
        Ok(Json(
            runs.into_iter()
                .map(|r| SyncOut::new(r, ot.name.clone(), current))
                .collect(),
        ))
    }
}

/// Refuses a caller the object type's sync runs once permissions are in use in it
/// ([`ingest::syncs::check_driver`]).
async fn driver(
    state: &AppState,
    principal: &Principal,
    object_type: &ObjectType,
    scope: Scope,
) -> Result<(), ApiError> {
    let viewer = state.viewers.of(&*state.records, principal).await?;
    ingest::syncs::check_driver(&*state.records, object_type, scope, &viewer).await?;
    Ok(())
}
