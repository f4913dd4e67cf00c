//! Many records per request: metadata, touch and delete batches beside an object type's
//! records, and the paged record listing. The rules are `inlet_core::ingest`'s; each item
//! answers with the status (and problem body) its single call would have.

use inlet_core::{
    Error,
    ingest::{self, Item, TouchRequest},
};
use poem::web::Data;
use poem_openapi::{
    Object, OpenApi,
    param::{Path, Query},
    payload::Json,
};
use uuid::Uuid;

use super::{ApiTags, dto::RecordMetadata, object_type};
use crate::{
    auth::Auth,
    problem::{ApiError, Problem},
    state::AppState,
};

/// Batch endpoints and the record listing.
pub struct BatchApi;

/// The records a metadata or delete batch names.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct BatchIds {
    /// Up to 1,000 externalIds; each item is answered on its own, in this order.
    pub external_ids: Vec<String>,
}

/// One touch of a batch.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct BatchTouchObject {
    /// The record's externalId.
    pub external_id: String,
    /// The expected stored checksum (as `If-Match` of the single touch; quotes optional).
    #[oai(skip_serializing_if_is_none)]
    pub if_match: Option<String>,
}

/// A touch batch.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct BatchTouch {
    /// The open sync every touch joins; without it the touches join the open sync, if any.
    #[oai(skip_serializing_if_is_none, validator(minimum(value = "0")))]
    pub sync_number: Option<i64>,
    /// Up to 1,000 touches, applied in one transaction and answered in this order.
    pub objects: Vec<BatchTouchObject>,
}

/// One item's answer in a batch.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct BatchItem {
    /// The item's externalId, as given.
    pub external_id: String,
    /// What the single call would have answered (204 done, 400, 404, 412).
    pub status: u16,
    /// Why, when `status` is not 2xx.
    #[oai(skip_serializing_if_is_none)]
    pub problem: Option<Problem>,
}

/// One item's answer in a metadata batch.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct BatchMetadataItem {
    /// The item's externalId, as given.
    pub external_id: String,
    /// 200 with `record`, else 400 or 404 with `problem`.
    pub status: u16,
    /// The record's metadata (spec 2.4), as `getMetadata` answers.
    #[oai(skip_serializing_if_is_none)]
    pub record: Option<RecordMetadata>,
    /// Why, when `status` is not 200.
    #[oai(skip_serializing_if_is_none)]
    pub problem: Option<Problem>,
}

/// Answers of a touch or delete batch, one per item in the order given.
#[derive(Debug, Clone, Object)]
pub struct BatchResult {
    /// One answer per item.
    pub items: Vec<BatchItem>,
}

/// Answers of a metadata batch, one per item in the order given.
#[derive(Debug, Clone, Object)]
pub struct BatchMetadataResult {
    /// One answer per item.
    pub items: Vec<BatchMetadataItem>,
}

/// A page of an object type's records.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct RecordPage {
    /// Records in externalId order, metadata only (spec 2.4 shape, plus `removed` on
    /// tombstones).
    pub objects: Vec<RecordMetadata>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[oai(skip_serializing_if_is_none)]
    pub next_cursor: Option<String>,
}

/// Status and problem of an item that failed; a storage error fails the whole call instead.
fn failed(e: Error) -> (u16, Option<Problem>) {
    let e = ApiError::from(e);
    (e.status.as_u16(), Some(e.problem()))
}

/// The externalIds of a write batch the caller may not read (none for a connector).
async fn hidden_of(
    state: &AppState,
    principal: &inlet_core::token::Principal,
    scope: inlet_core::record::Scope,
    ids: &[String],
) -> Result<std::collections::HashSet<String>, ApiError> {
    if principal.reads_everything() {
        return Ok(Default::default());
    }
    let viewer = state.viewers.of(&*state.records, principal).await?;
    Ok(ingest::hidden(&*state.records, scope, ids, &viewer).await?)
}

/// The answers of a batch in the order given: the hidden items answered as missing ones,
/// the others as `items` (the batch run without them) answered them.
fn merge(
    ids: Vec<String>,
    hidden: &std::collections::HashSet<String>,
    items: Vec<Item<()>>,
    missing: fn(&str) -> Error,
) -> Vec<Item<()>> {
    if hidden.is_empty() {
        return items;
    }
    let mut answered = items.into_iter();
    ids.into_iter()
        .filter_map(|id| {
            if hidden.contains(&id) {
                let outcome = Err(missing(&id));
                Some(Item {
                    external_id: id,
                    outcome,
                })
            } else {
                answered.next()
            }
        })
        .collect()
}

/// The answer of a batch whose items answer 204 when done.
pub(super) fn done(items: Vec<Item<()>>) -> Json<BatchResult> {
    Json(BatchResult {
        items: items
            .into_iter()
            .map(|i| {
                let (status, problem) = match i.outcome {
                    Ok(()) => (204, None),
                    Err(e) => failed(e),
                };
                BatchItem {
                    external_id: i.external_id,
                    status,
                    problem,
                }
            })
            .collect(),
    })
}

#[OpenApi(tag = "ApiTags::Objects", prefix_path = "/api/v1")]
impl BatchApi {
    /// Metadata of up to 1,000 records in one request (what `getMetadata` answers for each,
    /// read together): `{"items": [...]}` in the order given, each with `status` 200 and
    /// `record`, or 404/400 and `problem`. Over 1,000 items is 400.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/batch/metadata",
        method = "post",
        operation_id = "batchMetadata"
    )]
    async fn metadata(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        body: Json<BatchIds>,
    ) -> Result<Json<BatchMetadataResult>, ApiError> {
        let principal = auth.reader();
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let viewer = state.viewers.of(&*state.records, principal).await?;
        let items =
            ingest::metadata_batch(&*state.records, scope, body.0.external_ids, &viewer).await?;
        Ok(Json(BatchMetadataResult {
            items: items
                .into_iter()
                .map(|i| match i.outcome {
                    Ok(record) => BatchMetadataItem {
                        external_id: i.external_id,
                        status: 200,
                        record: Some((&record).into()),
                        problem: None,
                    },
                    Err(e) => {
                        let (status, problem) = failed(e);
                        BatchMetadataItem {
                            external_id: i.external_id,
                            status,
                            record: None,
                            problem,
                        }
                    }
                })
                .collect(),
        }))
    }

    /// Touch up to 1,000 records in one transaction, as `touchObject` does each: per item 204,
    /// 404 (no current record), 412 (`ifMatch` differs) or 400 (malformed). A `syncNumber` that
    /// is not the open sync is 409 for the whole batch, which then changes nothing.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/batch/touch",
        method = "post",
        operation_id = "batchTouch"
    )]
    async fn touch(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        body: Json<BatchTouch>,
    ) -> Result<Json<BatchResult>, ApiError> {
        let principal = auth.writer()?;
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let BatchTouch {
            sync_number,
            objects,
        } = body.0;
        let ids: Vec<String> = objects.iter().map(|o| o.external_id.clone()).collect();
        let hidden = hidden_of(&state, principal, scope, &ids).await?;
        let shown: Vec<TouchRequest> = objects
            .into_iter()
            .filter(|o| !hidden.contains(&o.external_id))
            .map(|o| TouchRequest {
                external_id: o.external_id,
                if_match: o.if_match,
            })
            .collect();
        let items = ingest::touch_batch(&*state.records, scope, sync_number, shown).await?;
        Ok(done(merge(ids, &hidden, items, |_| {
            Error::not_found("no current record with this externalId")
        })))
    }

    /// Delete up to 1,000 records, as `deleteObject` does each (tombstones; the next upload
    /// revives one): per item 204, 404 (no current record) or 400.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/batch/delete",
        method = "post",
        operation_id = "batchDelete"
    )]
    async fn delete(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        body: Json<BatchIds>,
    ) -> Result<Json<BatchResult>, ApiError> {
        let principal = auth.writer()?;
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let ids = body.0.external_ids;
        let hidden = hidden_of(&state, principal, scope, &ids).await?;
        let shown = ids
            .iter()
            .filter(|id| !hidden.contains(*id))
            .cloned()
            .collect();
        let items = ingest::delete_batch(&*state.records, scope, shown).await?;
        let items = merge(ids, &hidden, items, ingest::hidden_record);
        let removed = items.iter().filter(|i| i.outcome.is_ok()).count();
        state.metrics.removed("delete", removed as u64);
        Ok(done(items))
    }

    /// List an object type's records, metadata only, in a stable order (externalId), a page at
    /// a time: pass `nextCursor` as `cursor` until it is absent. Reconciles a connector's
    /// listing without knowing every externalId.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/objects",
        method = "get",
        operation_id = "listObjects"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        /// `nextCursor` of the previous page.
        cursor: Query<Option<String>>,
        /// Records per page, 1 to 1,000 (default 100).
        limit: Query<Option<u64>>,
        /// Also list tombstones (deleted records and those a COMPLETE close removed), marked
        /// `removed`.
        #[oai(name = "includeRemoved")]
        include_removed: Query<Option<bool>>,
        /// Only records whose content was stored at or after this RFC 3339 date-time.
        #[oai(name = "modifiedSince")]
        modified_since: Query<Option<String>>,
    ) -> Result<Json<RecordPage>, ApiError> {
        let principal = auth.reader();
        let (_, _, scope) = object_type(&state, principal, source_id.0, object_type_id.0).await?;
        let since = inlet_core::query::parse_time("modifiedSince", modified_since.0.as_deref())?;
        let viewer = state.viewers.of(&*state.records, principal).await?;
        let page = ingest::list(
            &*state.records,
            scope,
            cursor.0.as_deref(),
            limit.0,
            include_removed.0.unwrap_or(false),
            since,
            &viewer,
        )
        .await?;
        Ok(Json(RecordPage {
            objects: page
                .records
                .iter()
                .map(|r| RecordMetadata {
                    removed: r.removed.then_some(true),
                    ..r.into()
                })
                .collect(),
            next_cursor: page.next_cursor,
        }))
    }
}
