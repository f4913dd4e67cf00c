//! The change feed, `GET /api/v1/changes`: the workspace's record changes in commit order, read
//! from the write log the search index follows (`inlet_core::changes` holds the rules). A read
//! with `wait` long-polls: it answers as soon as a change is there, or empty when the wait ends.

use std::time::Duration;

use inlet_core::{
    changes::{self, Cursor, FeedChange},
    index::LogScope,
};
use poem::web::Data;
use poem_openapi::{Enum, Object, OpenApi, param::Query, payload::Json};
use uuid::Uuid;

use super::{ApiTags, dto::RecordMetadata};
use crate::{
    auth::Auth, config::MAX_FEED_WAITS_PER_USER, cursors::CursorKey, problem::ApiError,
    rules::MAX_WAIT_SECONDS, state::AppState,
};

/// The change feed.
pub struct ChangesApi;

/// What happened to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChangeType {
    /// Created, stored again or revived: `record` is its metadata now.
    Upsert,
    /// Deleted, or removed by a COMPLETE close.
    Remove,
    /// The source was deleted with all its records (only `sourceId` is set).
    SourceDeleted,
}

/// One change.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct Change {
    /// What happened.
    #[oai(rename = "type")]
    pub change_type: ChangeType,
    /// The record's source.
    pub source_id: Uuid,
    /// The record's object type (absent on SOURCE_DELETED).
    #[oai(skip_serializing_if_is_none)]
    pub object_type_id: Option<Uuid>,
    /// The record's externalId (absent on SOURCE_DELETED).
    #[oai(skip_serializing_if_is_none)]
    pub external_id: Option<String>,
    /// The sync the record was last uploaded or touched in (absent on SOURCE_DELETED).
    #[oai(skip_serializing_if_is_none)]
    pub sync_number: Option<i64>,
    /// On UPSERT: the record's metadata (spec 2.4 shape).
    #[oai(skip_serializing_if_is_none)]
    pub record: Option<RecordMetadata>,
    /// On UPSERT: where the record with its content is read (`getObject`).
    #[oai(skip_serializing_if_is_none)]
    pub content_url: Option<String>,
}

/// A page of the change feed.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ChangePage {
    /// Changes in commit order (the opening snapshot in record id order).
    pub changes: Vec<Change>,
    /// Pass as `cursor` to read on; always present, also when `changes` is empty.
    pub cursor: String,
}

/// `/api/v1/sources/{s}/objecttypes/{o}/objects/{externalId}`, the externalId percent-encoded.
fn object_path(source_id: Uuid, object_type_id: Uuid, external_id: &str) -> String {
    format!(
        "{}/sources/{source_id}/objecttypes/{object_type_id}/objects/{}",
        super::PREFIX,
        crate::input::encode_path_segment(external_id)
    )
}

impl From<FeedChange> for Change {
    fn from(change: FeedChange) -> Self {
        match change {
            FeedChange::Upsert(r) => Change {
                change_type: ChangeType::Upsert,
                source_id: r.source_id,
                object_type_id: Some(r.object_type.id),
                external_id: Some(r.external_id.clone()),
                sync_number: Some(r.sync_number),
                content_url: Some(object_path(r.source_id, r.object_type.id, &r.external_id)),
                record: Some((&*r).into()),
            },
            FeedChange::Remove(r) => Change {
                change_type: ChangeType::Remove,
                source_id: r.source_id,
                object_type_id: Some(r.object_type_id),
                external_id: Some(r.external_id),
                sync_number: Some(r.sync_number),
                record: None,
                content_url: None,
            },
            FeedChange::SourceDeleted { source_id } => Change {
                change_type: ChangeType::SourceDeleted,
                source_id,
                object_type_id: None,
                external_id: None,
                sync_number: None,
                record: None,
                content_url: None,
            },
        }
    }
}

#[OpenApi(tag = "ApiTags::Changes", prefix_path = "/api/v1")]
impl ChangesApi {
    /// The workspace's record changes in commit order. Without `cursor` the walk opens with
    /// every live record as an UPSERT (a snapshot), then gives each later write: an upload or
    /// JSON push is an UPSERT, a DELETE a REMOVE, a COMPLETE close one REMOVE per record it
    /// removed, a source deletion one SOURCE_DELETED. A record shows once per walk at its last
    /// write, with its state now. Resume from the answer's `cursor`; with `wait` (seconds, up
    /// to 30) an empty read waits for the next change. A cursor older than the retention
    /// (`--change-retention`, 7 days by default) is 410 with `earliestCursor`: start again.
    #[oai(path = "/changes", method = "get", operation_id = "listChanges")]
    async fn list(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        /// `cursor` of the previous answer; absent to start with the snapshot.
        cursor: Query<Option<String>>,
        /// Changes per page, 1 to 1,000 (default 100).
        limit: Query<Option<u64>>,
        /// Only this source's records.
        #[oai(name = "sourceId")]
        source_id: Query<Option<Uuid>>,
        /// Seconds to wait for a change when there is none yet, 0 to 30 (default 0).
        wait: Query<Option<u64>>,
    ) -> Result<Json<ChangePage>, ApiError> {
        let principal = auth.reader();
        let wait = match wait.0 {
            Some(w) if w > MAX_WAIT_SECONDS => {
                return Err(ApiError::bad_request(format!(
                    "wait is at most {MAX_WAIT_SECONDS} seconds; got {w}"
                )));
            }
            w => Duration::from_secs(w.unwrap_or(0)),
        };
        let key = state
            .feed_key
            .get_or_try_init(|| CursorKey::load(state.tokens.as_ref()))
            .await?;
        let mut cursor = match cursor.0.as_deref() {
            None => Cursor::Start,
            Some(c) => key.open(principal.workspace_id, c)?,
        };
        let scope = LogScope {
            workspace_id: principal.workspace_id,
            source_id: source_id.0,
        };
        let deadline = tokio::time::Instant::now() + wait;
        let _waiting = if wait.is_zero() {
            None
        } else {
            Some(state.feed_waits.enter(principal.user_id).ok_or_else(|| {
                ApiError::new(
                    poem::http::StatusCode::TOO_MANY_REQUESTS,
                    format!(
                        "at most {MAX_FEED_WAITS_PER_USER} change-feed reads with wait may be open at \
                         once per user; wait for one to answer, or read without wait"
                    ),
                )
            })?)
        };
        let viewer = state.viewers.of(&*state.records, principal).await?;
        let mut heads = state.indexer.feed(principal.workspace_id, source_id.0);
        loop {
            heads.borrow_and_update();
            let page = changes::read(&*state.records, &scope, cursor, limit.0)
                .await
                .map_err(|e| {
                    let mut e = ApiError::from(e);
                    if e.status == poem::http::StatusCode::GONE {
                        e.earliest_cursor = key.seal(principal.workspace_id, &Cursor::Start).ok();
                    }
                    e
                })?;
            // Only what the caller may read; the cursor moves past the rest all the same.
            let changes: Vec<Change> = page
                .changes
                .into_iter()
                .filter(|c| c.readable_by(&viewer))
                .map(Change::from)
                .collect();
            if !changes.is_empty() || tokio::time::Instant::now() >= deadline {
                return Ok(Json(ChangePage {
                    changes,
                    cursor: key.seal(principal.workspace_id, &page.cursor)?,
                }));
            }
            cursor = page.cursor;
            // Woken when this replica's follower applies a write of this workspace (and source)
            // (within its tick, for writes through any replica); the timeout ends the wait.
            let _ = tokio::time::timeout_at(deadline, heads.changed()).await;
        }
    }
}
