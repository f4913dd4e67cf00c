//! [`RecordStore`] over SQL.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use inlet_core::{
    Error, RecordStore, Result, WorkspaceId,
    folder::Folder,
    index::{LogPage, LogScope, Position, Removed},
    record::{
        self, Extraction, ListQuery, ObjectTypeRef, PutOutcome, Record, RecordKey, RecordWrite,
        Scope, Touch, TouchItem,
    },
    search,
    source::Source,
    sync::{self, CloseOperation, OpenOperation, SyncCounters, SyncEvent, SyncRun, SyncState},
    tag::Tags,
    time::{self, Timestamp},
};
use sea_orm::{ConnectionTrait, QueryResult, TransactionTrait, Value};
use uuid::Uuid;

use crate::{SeaOrmStore, all, db_error, exec, get, json_error, one};

pub(crate) fn millis(t: &Timestamp) -> i64 {
    t.timestamp_millis()
}

fn from_millis(ms: i64) -> Result<Timestamp> {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .ok_or_else(|| Error::backend(std::io::Error::other(format!("bad timestamp {ms}"))))
}

pub(crate) fn uuid(row: &QueryResult, col: &str) -> Result<Uuid> {
    let s: String = get(row, col)?;
    Uuid::parse_str(&s).map_err(Error::backend)
}

fn enum_text<T: serde::Serialize>(v: &T) -> Result<String> {
    match serde_json::to_value(v).map_err(json_error)? {
        serde_json::Value::String(s) => Ok(s),
        other => Ok(other.to_string()),
    }
}

fn enum_parse<T: serde::de::DeserializeOwned>(s: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).map_err(json_error)
}

/// The object type's row: its name, current and open sync, checked against the scope.
pub(crate) struct ObjectTypeState {
    pub(crate) name: String,
    current_sync: i64,
    pub(crate) open_sync: Option<i64>,
    /// The last COMPLETE sync: a record whose sync number is below it was removed by it.
    pub(crate) complete_floor: i64,
}

/// Counter shards per sync (see the `sync_counters` table).
const COUNTER_SHARDS: u64 = 16;

/// A sync run with its summed counters; append a WHERE on `s.` columns, then [`SYNC_GROUP`].
const SYNC_SELECT: &str = "SELECT s.object_type_id, s.sync_number, s.operation, s.state, \
    s.close_operation, s.started_at, s.closed_at, s.removed, s.kept, \
    CAST(COALESCE(SUM(c.uploaded), 0) AS BIGINT) AS uploaded, \
    CAST(COALESCE(SUM(c.touched), 0) AS BIGINT) AS touched, \
    CAST(COALESCE(SUM(c.unchanged), 0) AS BIGINT) AS unchanged, \
    CAST(COALESCE(SUM(c.extraction_failures), 0) AS BIGINT) AS extraction_failures \
    FROM sync_runs s LEFT JOIN sync_counters c \
    ON c.object_type_id = s.object_type_id AND c.sync_number = s.sync_number";

const SYNC_GROUP: &str = " GROUP BY s.object_type_id, s.sync_number, s.operation, s.state, \
    s.close_operation, s.started_at, s.closed_at, s.removed, s.kept";

/// The counter shard of a write: spread by externalId.
pub(crate) fn counter_shard(external_id: &str) -> i64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    external_id.hash(&mut h);
    (h.finish() % COUNTER_SHARDS) as i64
}

/// The columns [`record_from_row`] reads (over `records r JOIN object_types o`), with the
/// expressions given for `content` and `removed`.
macro_rules! record_columns {
    (content: $content:literal, removed: $removed:literal) => {
        concat!(
            "r.id, r.external_id, r.source_id, r.object_type_id, r.version, r.title, ",
            "r.file_name, r.url, ",
            $content,
            ", r.tags, r.external_checksum, r.created_date, r.modified_date, r.modified_by, ",
            "r.sync_number, ",
            $removed,
            ", r.extraction, o.name AS ot_name, o.current_sync AS ot_current_sync"
        )
    };
}
pub(crate) use record_columns;

/// A record with its content; `removed` also when a COMPLETE close removed it.
pub(crate) const RECORD_COLUMNS: &str = record_columns!(
    content: "r.content",
    removed: "(r.removed OR r.sync_number < o.complete_floor) AS removed"
);

pub(crate) fn record_from_row(row: &QueryResult) -> Result<Record> {
    let tags: String = get(row, "tags")?;
    let extraction: String = get(row, "extraction")?;
    Ok(Record {
        id: uuid(row, "id")?,
        source_id: uuid(row, "source_id")?,
        object_type: ObjectTypeRef {
            id: uuid(row, "object_type_id")?,
            name: get(row, "ot_name")?,
            current_sync_number: get(row, "ot_current_sync")?,
        },
        external_id: get(row, "external_id")?,
        version: get(row, "version")?,
        title: get(row, "title")?,
        file_name: get(row, "file_name")?,
        url: get(row, "url")?,
        content: get(row, "content")?,
        tags: serde_json::from_str::<Tags>(&tags).map_err(json_error)?,
        external_checksum: get(row, "external_checksum")?,
        created_date: from_millis(get(row, "created_date")?)?,
        modified_date: from_millis(get(row, "modified_date")?)?,
        modified_by: get(row, "modified_by")?,
        sync_number: get(row, "sync_number")?,
        removed: get(row, "removed")?,
        extraction: serde_json::from_str::<Extraction>(&extraction).map_err(json_error)?,
    })
}

fn sync_from_row(row: &QueryResult) -> Result<SyncRun> {
    let count = |col: &str| -> Result<u64> { Ok(get::<i64>(row, col)?.max(0) as u64) };
    let close: Option<String> = get(row, "close_operation")?;
    let closed_at: Option<i64> = get(row, "closed_at")?;
    let kept: Option<i64> = get(row, "kept")?;
    Ok(SyncRun {
        object_type_id: uuid(row, "object_type_id")?,
        sync_number: get(row, "sync_number")?,
        operation: enum_parse(&get::<String>(row, "operation")?)?,
        state: enum_parse(&get::<String>(row, "state")?)?,
        close_operation: close.as_deref().map(enum_parse).transpose()?,
        started_at: from_millis(get(row, "started_at")?)?,
        closed_at: closed_at.map(from_millis).transpose()?,
        counters: SyncCounters {
            uploaded: count("uploaded")?,
            touched: count("touched")?,
            unchanged: count("unchanged")?,
            extraction_failures: count("extraction_failures")?,
            removed: count("removed")?,
        },
        kept: kept.map(|k| k.max(0) as u64),
    })
}

impl SeaOrmStore {
    /// The id of the workspace's source with `source`'s externalId, if any.
    async fn source_with_external_id(&self, source: &Source) -> Result<Option<Uuid>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT id FROM sources WHERE workspace_id = $1 AND external_id = $2",
                vec![
                    source.workspace_id.to_string().into(),
                    source.external_id.clone().into(),
                ],
            ),
        )
        .await?;
        row.as_ref().map(|r| uuid(r, "id")).transpose()
    }

    /// Inserts the rows of new object types of `source`.
    async fn insert_object_types(
        &self,
        db: &impl ConnectionTrait,
        source: &Source,
        object_types: &[inlet_core::source::ObjectType],
    ) -> Result<()> {
        for ot in object_types {
            exec(
                db,
                self.stmt(
                    "INSERT INTO object_types (id, source_id, workspace_id, name) VALUES ($1, $2, $3, $4)",
                    vec![
                        ot.id.to_string().into(),
                        source.id.to_string().into(),
                        source.workspace_id.to_string().into(),
                        ot.name.clone().into(),
                    ],
                ),
            )
            .await?;
        }
        Ok(())
    }

    /// Drops a source from this process's cache (it changed or went).
    fn forget_source(&self, source_id: Uuid) {
        if let Ok(mut cache) = self.sources.write() {
            cache.remove(&source_id);
        }
    }

    /// Reads (and with `lock`, locks) the object type's row, confined to the scope.
    pub(crate) async fn object_type_state(
        &self,
        db: &impl ConnectionTrait,
        scope: Scope,
        lock: &str,
    ) -> Result<ObjectTypeState> {
        let sql = format!(
            "SELECT name, current_sync, open_sync, complete_floor FROM object_types \
             WHERE id = $1 AND source_id = $2 AND workspace_id = $3{lock}"
        );
        let row = one(
            db,
            self.stmt(
                &sql,
                vec![
                    scope.object_type_id.to_string().into(),
                    scope.source_id.to_string().into(),
                    scope.workspace_id.to_string().into(),
                ],
            ),
        )
        .await?
        .ok_or_else(|| {
            Error::not_found(format!(
                "object type {} not found in source {}",
                scope.object_type_id, scope.source_id
            ))
        })?;
        Ok(ObjectTypeState {
            name: get(&row, "name")?,
            current_sync: get(&row, "current_sync")?,
            open_sync: get(&row, "open_sync")?,
            complete_floor: get(&row, "complete_floor")?,
        })
    }

    async fn sync_row(
        &self,
        db: &impl ConnectionTrait,
        object_type_id: Uuid,
        sync_number: i64,
    ) -> Result<Option<SyncRun>> {
        let row = one(
            db,
            self.stmt(
                &format!(
                    "{SYNC_SELECT} WHERE s.object_type_id = $1 AND s.sync_number = $2{SYNC_GROUP}"
                ),
                vec![object_type_id.to_string().into(), sync_number.into()],
            ),
        )
        .await?;
        row.as_ref().map(sync_from_row).transpose()
    }

    /// Adds one write to its sync's counters (on a shard chosen by `external_id`).
    async fn count_event(
        &self,
        db: &impl ConnectionTrait,
        object_type_id: Uuid,
        sync_number: Option<i64>,
        external_id: &str,
        event: SyncEvent,
    ) -> Result<()> {
        let Some(n) = sync_number else {
            return Ok(());
        };
        let mut c = SyncCounters::default();
        c.count(event);
        let shard = counter_shard(external_id);
        let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        exec(
            db,
            self.stmt(
                "INSERT INTO sync_counters (object_type_id, sync_number, shard, uploaded, touched, \
                     unchanged, extraction_failures) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (object_type_id, sync_number, shard) DO UPDATE SET \
                     uploaded = sync_counters.uploaded + excluded.uploaded, \
                     touched = sync_counters.touched + excluded.touched, \
                     unchanged = sync_counters.unchanged + excluded.unchanged, \
                     extraction_failures = sync_counters.extraction_failures + excluded.extraction_failures",
                vec![
                    object_type_id.to_string().into(),
                    n.into(),
                    shard.into(),
                    as_i64(c.uploaded).into(),
                    as_i64(c.touched).into(),
                    as_i64(c.unchanged).into(),
                    as_i64(c.extraction_failures).into(),
                ],
            ),
        )
        .await?;
        Ok(())
    }

    /// PostgreSQL's touch in one statement. It holds the object type's row `FOR SHARE` like every
    /// write, so a racing COMPLETE (which takes it `FOR UPDATE`) counts it exactly.
    /// `None` when it did not apply; the caller then takes the checking path for the exact error.
    async fn touch_in_one_statement(
        &self,
        key: &RecordKey,
        sync_number: i64,
        if_match: Option<&str>,
        event: SyncEvent,
    ) -> Result<Option<Record>> {
        let if_match = if_match.filter(|m| *m != "*").map(str::to_string);
        let row = one(
            &self.db,
            self.stmt(
                "WITH o AS (SELECT id, name, current_sync, complete_floor FROM object_types \
                     WHERE id = $1 AND source_id = $4 AND workspace_id = $5 AND open_sync = $3 \
                     FOR SHARE), \
                 t AS (UPDATE records AS r SET sync_number = $3 FROM o \
                     WHERE r.object_type_id = o.id AND r.external_id = $2 AND NOT r.removed \
                       AND r.sync_number >= o.complete_floor \
                       AND (CAST($6 AS TEXT) IS NULL OR r.external_checksum = $6) \
                     RETURNING r.id, r.external_id, r.source_id, r.object_type_id, r.version, r.title, \
                       r.file_name, r.url, r.content, r.tags, r.external_checksum, r.created_date, r.modified_date, \
                       r.modified_by, r.sync_number, r.removed, r.extraction, o.name AS ot_name, \
                       o.current_sync AS ot_current_sync), \
                 c AS (INSERT INTO sync_counters (object_type_id, sync_number, shard, uploaded, \
                       touched, unchanged, extraction_failures) \
                     SELECT $1, $3, $7, 0, $8, $9, 0 FROM t \
                     ON CONFLICT (object_type_id, sync_number, shard) DO UPDATE SET \
                       touched = sync_counters.touched + excluded.touched, \
                       unchanged = sync_counters.unchanged + excluded.unchanged) \
                 SELECT * FROM t",
                vec![
                    key.scope.object_type_id.to_string().into(),
                    key.external_id.clone().into(),
                    sync_number.into(),
                    key.scope.source_id.to_string().into(),
                    key.scope.workspace_id.to_string().into(),
                    if_match.into(),
                    counter_shard(&key.external_id).into(),
                    i64::from(event == SyncEvent::Touched).into(),
                    i64::from(event == SyncEvent::Unchanged).into(),
                ],
            ),
        )
        .await?;
        row.as_ref().map(record_from_row).transpose()
    }

    /// SQLite's touch: one conditional UPDATE and the counter, in one transaction (the caller
    /// holds the writer lock). `None` when it did not apply.
    async fn touch_sqlite(
        &self,
        key: &RecordKey,
        sync_number: i64,
        touch: &Touch,
    ) -> Result<Option<Record>> {
        let if_match = touch
            .if_match
            .as_deref()
            .filter(|m| *m != "*")
            .map(str::to_string);
        let txn = self.db.begin().await.map_err(db_error)?;
        let row = one(
            &txn,
            self.stmt(
                "UPDATE records SET sync_number = $3 \
                 WHERE object_type_id = $1 AND external_id = $2 AND NOT removed \
                   AND (CAST($6 AS TEXT) IS NULL OR external_checksum = $6) \
                   AND sync_number >= (SELECT complete_floor FROM object_types \
                       WHERE id = $1 AND source_id = $4 AND workspace_id = $5 AND open_sync = $3) \
                 RETURNING id, external_id, source_id, object_type_id, version, title, url, content, \
                   tags, external_checksum, created_date, modified_date, modified_by, sync_number, \
                   removed, extraction, \
                   (SELECT name FROM object_types WHERE id = $1) AS ot_name, \
                   (SELECT current_sync FROM object_types WHERE id = $1) AS ot_current_sync",
                vec![
                    key.scope.object_type_id.to_string().into(),
                    key.external_id.clone().into(),
                    sync_number.into(),
                    key.scope.source_id.to_string().into(),
                    key.scope.workspace_id.to_string().into(),
                    if_match.into(),
                ],
            ),
        )
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let record = record_from_row(&row)?;
        self.count_event(
            &txn,
            key.scope.object_type_id,
            Some(sync_number),
            &key.external_id,
            touch.event,
        )
        .await?;
        txn.commit().await.map_err(db_error)?;
        Ok(Some(record))
    }

    /// Reads a record; with `lock` (PostgreSQL) its row stays locked until the transaction ends.
    async fn read_record(
        &self,
        db: &impl ConnectionTrait,
        key: &RecordKey,
        lock: bool,
    ) -> Result<Option<Record>> {
        let lock = match (lock, self.backend()) {
            (true, sea_orm::DbBackend::Postgres) => " FOR UPDATE OF r",
            _ => "",
        };
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM records r JOIN object_types o ON o.id = r.object_type_id \
             WHERE r.object_type_id = $1 AND r.external_id = $2 AND o.source_id = $3 \
               AND o.workspace_id = $4{lock}"
        );
        let row = one(
            db,
            self.stmt(
                &sql,
                vec![
                    key.scope.object_type_id.to_string().into(),
                    key.external_id.clone().into(),
                    key.scope.source_id.to_string().into(),
                    key.scope.workspace_id.to_string().into(),
                ],
            ),
        )
        .await?;
        row.as_ref().map(record_from_row).transpose()
    }
}

#[async_trait]
impl RecordStore for SeaOrmStore {
    async fn ping(&self) -> Result<()> {
        self.db.ping().await.map_err(db_error)
    }

    async fn create_source(&self, source: &Source) -> Result<()> {
        let _w = self.write_guard().await;
        if let Some(existing) = self.source_with_external_id(source).await? {
            return Err(record::duplicate_source(&source.external_id, existing));
        }
        let body = serde_json::to_string(source).map_err(json_error)?;
        let txn = self.db.begin().await.map_err(db_error)?;
        let inserted = exec(
            &txn,
            self.stmt(
                "INSERT INTO sources (id, workspace_id, seq, body, external_id) \
                 VALUES ($1, $2, $3, $4, $5)",
                vec![
                    source.id.to_string().into(),
                    source.workspace_id.to_string().into(),
                    millis(&source.created_date).into(),
                    body.into(),
                    source.external_id.clone().into(),
                ],
            ),
        )
        .await;
        if let Err(e) = inserted {
            drop(txn);
            // Another replica created the same externalId a moment ago.
            if matches!(e, Error::Conflict(_))
                && let Some(existing) = self.source_with_external_id(source).await?
            {
                return Err(record::duplicate_source(&source.external_id, existing));
            }
            return Err(e);
        }
        self.insert_object_types(&txn, source, &source.object_types)
            .await?;
        txn.commit().await.map_err(db_error)
    }

    async fn update_source(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        edit: record::SourceEdit,
    ) -> Result<Source> {
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        let lock = match self.backend() {
            sea_orm::DbBackend::Postgres => " FOR UPDATE",
            _ => "",
        };
        let row = one(
            &txn,
            self.stmt(
                &format!("SELECT body FROM sources WHERE id = $1 AND workspace_id = $2{lock}"),
                vec![
                    source_id.to_string().into(),
                    workspace_id.to_string().into(),
                ],
            ),
        )
        .await?
        .ok_or_else(|| Error::not_found(format!("source {source_id} not found")))?;
        let mut source: Source =
            serde_json::from_str(&get::<String>(&row, "body")?).map_err(json_error)?;
        let before: Vec<Uuid> = source.object_types.iter().map(|o| o.id).collect();
        edit(&mut source)?;
        let added: Vec<_> = source
            .object_types
            .iter()
            .filter(|o| !before.contains(&o.id))
            .cloned()
            .collect();
        self.insert_object_types(&txn, &source, &added).await?;
        for ot in &source.object_types {
            exec(
                &txn,
                self.stmt(
                    "UPDATE object_types SET name = $2 WHERE id = $1",
                    vec![ot.id.to_string().into(), ot.name.clone().into()],
                ),
            )
            .await?;
        }
        exec(
            &txn,
            self.stmt(
                "UPDATE sources SET body = $2 WHERE id = $1",
                vec![
                    source_id.to_string().into(),
                    serde_json::to_string(&source).map_err(json_error)?.into(),
                ],
            ),
        )
        .await?;
        txn.commit().await.map_err(db_error)?;
        self.forget_source(source_id);
        Ok(source)
    }

    async fn delete_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<()> {
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        let source = self.get_source(workspace_id, source_id).await?;
        // Locks every object type of the source, so no write (which holds its row FOR SHARE)
        // or sync lands while the source goes.
        let lock = match self.backend() {
            sea_orm::DbBackend::Postgres => " FOR UPDATE",
            _ => "",
        };
        let rows = all(
            &txn,
            self.stmt(
                &format!(
                    "SELECT id, open_sync FROM object_types WHERE source_id = $1 \
                     AND workspace_id = $2 ORDER BY id{lock}"
                ),
                vec![
                    source_id.to_string().into(),
                    workspace_id.to_string().into(),
                ],
            ),
        )
        .await?;
        let mut open = Vec::new();
        for row in &rows {
            if let Some(n) = get::<Option<i64>>(row, "open_sync")? {
                open.push((uuid(row, "id")?, n));
            }
        }
        record::source_deletable(&source, &open)?;
        crate::folders::delete_source_tag_rows(&txn, source_id).await?;
        let of_types = "(SELECT id FROM object_types WHERE source_id = $1)";
        for sql in [
            "DELETE FROM records WHERE source_id = $1".to_string(),
            format!("DELETE FROM sync_counters WHERE object_type_id IN {of_types}"),
            format!("DELETE FROM sync_runs WHERE object_type_id IN {of_types}"),
            "DELETE FROM folders WHERE source_id = $1".to_string(),
            "DELETE FROM object_types WHERE source_id = $1".to_string(),
            "DELETE FROM sources WHERE id = $1".to_string(),
        ] {
            exec(&txn, self.stmt(&sql, vec![source_id.to_string().into()])).await?;
        }
        self.log_source_deleted(&txn, workspace_id, source_id)
            .await?;
        txn.commit().await.map_err(db_error)?;
        self.forget_source(source_id);
        Ok(())
    }

    async fn list_sources(&self, workspace_id: WorkspaceId) -> Result<Vec<Source>> {
        let rows = all(
            &self.db,
            self.stmt(
                "SELECT body FROM sources WHERE workspace_id = $1 ORDER BY seq, id",
                vec![workspace_id.to_string().into()],
            ),
        )
        .await?;
        rows.iter()
            .map(|r| serde_json::from_str(&get::<String>(r, "body")?).map_err(json_error))
            .collect()
    }

    async fn get_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<Source> {
        if let Ok(cache) = self.sources.read()
            && let Some((s, at)) = cache.get(&source_id)
            && at.elapsed() < crate::SOURCE_CACHE_TTL
        {
            return if s.workspace_id == workspace_id {
                Ok(s.clone())
            } else {
                Err(Error::not_found(format!("source {source_id} not found")))
            };
        }
        let row = one(
            &self.db,
            self.stmt(
                "SELECT body FROM sources WHERE id = $1 AND workspace_id = $2",
                vec![
                    source_id.to_string().into(),
                    workspace_id.to_string().into(),
                ],
            ),
        )
        .await?
        .ok_or_else(|| Error::not_found(format!("source {source_id} not found")))?;
        let source: Source =
            serde_json::from_str(&get::<String>(&row, "body")?).map_err(json_error)?;
        if let Ok(mut cache) = self.sources.write() {
            if cache.len() >= crate::SOURCE_CACHE_ENTRIES {
                cache.clear();
            }
            cache.insert(source_id, (source.clone(), std::time::Instant::now()));
        }
        Ok(source)
    }

    async fn open_sync(&self, scope: Scope, op: OpenOperation) -> Result<SyncRun> {
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        let state = self
            .object_type_state(&txn, scope, self.for_update())
            .await?;
        let latest = match state.current_sync {
            0 => None,
            n => self.sync_row(&txn, scope.object_type_id, n).await?,
        };
        let number = sync::open(latest.as_ref(), op)?;
        let run = SyncRun {
            object_type_id: scope.object_type_id,
            sync_number: number,
            operation: op,
            state: SyncState::Open,
            close_operation: None,
            started_at: time::now(),
            closed_at: None,
            counters: SyncCounters::default(),
            kept: None,
        };
        exec(
            &txn,
            self.stmt(
                "INSERT INTO sync_runs (object_type_id, sync_number, operation, state, started_at) \
                 VALUES ($1, $2, $3, $4, $5)",
                vec![
                    scope.object_type_id.to_string().into(),
                    number.into(),
                    enum_text(&op)?.into(),
                    enum_text(&SyncState::Open)?.into(),
                    millis(&run.started_at).into(),
                ],
            ),
        )
        .await?;
        exec(
            &txn,
            self.stmt(
                "UPDATE object_types SET current_sync = $2, open_sync = $2 WHERE id = $1",
                vec![scope.object_type_id.to_string().into(), number.into()],
            ),
        )
        .await?;
        txn.commit().await.map_err(db_error)?;
        Ok(run)
    }

    async fn close_sync_guarded(
        &self,
        scope: Scope,
        sync_number: i64,
        op: CloseOperation,
        max_removal_percent: Option<f64>,
    ) -> Result<SyncRun> {
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        let ot_state = self
            .object_type_state(&txn, scope, self.for_update())
            .await?;
        let run = self
            .sync_row(&txn, scope.object_type_id, sync_number)
            .await?
            .ok_or_else(|| Error::not_found(format!("sync {sync_number} not found")))?;
        let state = sync::close(&run, op)?;
        let ot = scope.object_type_id.to_string();
        // Live records of the object type with a sync number in [from, to).
        let live_between = |from: i64, to: i64| {
            self.stmt(
                "SELECT COUNT(*) AS n FROM records \
                 WHERE object_type_id = $1 AND NOT removed AND sync_number >= $2 AND sync_number < $3",
                vec![ot.clone().into(), from.into(), to.into()],
            )
        };
        let count = |row: Option<QueryResult>| -> Result<i64> {
            row.as_ref().map_or(Ok(0), |r| get(r, "n"))
        };
        // What the close removes and what stays live after it, counted before anything
        // changes (raising the floor moves no row): the guard costs the close no query.
        let (removed, floor, kept) = if sync::removes_stale(op) {
            // Every live record below this sync is stale. Raising the object type's floor to
            // this sync removes them all in one statement, however many there are.
            let stale =
                count(one(&txn, live_between(ot_state.complete_floor, sync_number)).await?)?;
            let kept = count(one(&txn, live_between(sync_number, i64::MAX)).await?)?;
            sync::check_mass_removal(
                u64::try_from(stale).unwrap_or(0),
                u64::try_from(stale + kept).unwrap_or(0),
                max_removal_percent,
            )?;
            (stale, sync_number, kept)
        } else {
            let floor = ot_state.complete_floor;
            (
                0,
                floor,
                count(one(&txn, live_between(floor, i64::MAX)).await?)?,
            )
        };
        exec(
            &txn,
            self.stmt(
                "UPDATE object_types SET open_sync = NULL, complete_floor = $2 WHERE id = $1",
                vec![ot.clone().into(), floor.into()],
            ),
        )
        .await?;
        let closed_at = time::now();
        exec(
            &txn,
            self.stmt(
                "UPDATE sync_runs SET state = $3, close_operation = $4, closed_at = $5, removed = $6, kept = $7 \
                 WHERE object_type_id = $1 AND sync_number = $2",
                vec![
                    ot.clone().into(),
                    sync_number.into(),
                    enum_text(&state)?.into(),
                    enum_text(&op)?.into(),
                    millis(&closed_at).into(),
                    removed.into(),
                    kept.into(),
                ],
            ),
        )
        .await?;
        if floor > ot_state.complete_floor {
            self.log_close(&txn, scope, ot_state.complete_floor, floor)
                .await?;
        }
        txn.commit().await.map_err(db_error)?;
        Ok(SyncRun {
            state,
            close_operation: Some(op),
            closed_at: Some(closed_at),
            counters: SyncCounters {
                removed: u64::try_from(removed).unwrap_or(0),
                ..run.counters
            },
            kept: Some(u64::try_from(kept).unwrap_or(0)),
            ..run
        })
    }

    async fn get_sync(&self, scope: Scope, sync_number: i64) -> Result<SyncRun> {
        self.object_type_state(&self.db, scope, "").await?;
        self.sync_row(&self.db, scope.object_type_id, sync_number)
            .await?
            .ok_or_else(|| Error::not_found(format!("sync {sync_number} not found")))
    }

    async fn list_syncs(&self, scope: Scope) -> Result<Vec<SyncRun>> {
        self.object_type_state(&self.db, scope, "").await?;
        let rows = all(
            &self.db,
            self.stmt(
                &format!(
                    "{SYNC_SELECT} WHERE s.object_type_id = $1{SYNC_GROUP} ORDER BY s.sync_number DESC"
                ),
                vec![scope.object_type_id.to_string().into()],
            ),
        )
        .await?;
        rows.iter().map(sync_from_row).collect()
    }

    async fn put_record(&self, write: RecordWrite) -> Result<PutOutcome> {
        inlet_core::input::check_record_write(&write)?;
        let scope = write.key.scope;
        let source = self.get_source(scope.workspace_id, scope.source_id).await?;
        let tag_rows = search::tag_rows(source.object_type(scope.object_type_id), &write.tags);
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        let state = self
            .object_type_state(&txn, scope, self.for_share())
            .await?;
        let sync_number = sync::resolve(write.sync_number, state.open_sync)?;
        let now = millis(&time::now());
        let extraction_failed = write.extraction.failure.is_some() && write.content.is_empty();
        let new_membership = sync::membership(sync_number, state.current_sync, None);
        let values: Vec<Value> = vec![
            Uuid::new_v4().to_string().into(),
            scope.object_type_id.to_string().into(),
            write.key.external_id.clone().into(),
            scope.source_id.to_string().into(),
            write.title.into(),
            write.url.into(),
            write.content.into(),
            serde_json::to_string(&write.tags)
                .map_err(json_error)?
                .into(),
            write.external_checksum.into(),
            now.into(),
            write.modified_by.into(),
            new_membership.into(),
            serde_json::to_string(&write.extraction)
                .map_err(json_error)?
                .into(),
            sync_number.into(),
            state.complete_floor.into(),
            write.file_name.into(),
        ];
        // One statement creates version 1 or bumps the version atomically.
        let row = one(
            &txn,
            self.stmt(
                "INSERT INTO records (id, object_type_id, external_id, source_id, version, title, url, \
                     content, tags, external_checksum, created_date, modified_date, modified_by, \
                     sync_number, removed, extraction, file_name) \
                 VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8, $9, $10, $10, $11, $12, FALSE, $13, $16) \
                 ON CONFLICT (object_type_id, external_id) DO UPDATE SET \
                     version = records.version + 1, title = excluded.title, url = excluded.url, \
                     file_name = excluded.file_name, \
                     content = excluded.content, tags = excluded.tags, \
                     external_checksum = excluded.external_checksum, \
                     modified_date = excluded.modified_date, modified_by = excluded.modified_by, \
                     sync_number = COALESCE($14, CASE WHEN records.removed \
                         OR records.sync_number < $15 THEN $12 ELSE records.sync_number END), \
                     removed = FALSE, \
                     extraction = excluded.extraction \
                 RETURNING id, version",
                values,
            ),
        )
        .await?
        .ok_or_else(|| Error::backend(std::io::Error::other("upsert returned no row")))?;
        let version: i64 = get(&row, "version")?;
        let record_id = uuid(&row, "id")?;
        crate::folders::write_tag_rows(&txn, record_id, &tag_rows).await?;
        self.count_event(
            &txn,
            scope.object_type_id,
            sync_number,
            &write.key.external_id,
            SyncEvent::Uploaded { extraction_failed },
        )
        .await?;
        let record = self
            .read_record(&txn, &write.key, false)
            .await?
            .ok_or_else(|| Error::backend(std::io::Error::other("upserted record vanished")))?;
        self.log_record(&txn, record_id).await?;
        txn.commit().await.map_err(db_error)?;
        Ok(PutOutcome {
            record,
            created: version == 1,
        })
    }

    async fn touch_record(&self, key: &RecordKey, touch: Touch) -> Result<Record> {
        inlet_core::input::check_external_id(&key.external_id)?;
        if let (sea_orm::DbBackend::Postgres, Some(n)) = (self.backend(), touch.sync_number)
            && let Some(record) = self
                .touch_in_one_statement(key, n, touch.if_match.as_deref(), touch.event)
                .await?
        {
            return Ok(record);
        }
        let _w = self.write_guard().await;
        if let (sea_orm::DbBackend::Sqlite, Some(n)) = (self.backend(), touch.sync_number)
            && let Some(record) = self.touch_sqlite(key, n, &touch).await?
        {
            return Ok(record);
        }
        let txn = self.db.begin().await.map_err(db_error)?;
        let state = self
            .object_type_state(&txn, key.scope, self.for_share())
            .await?;
        let sync_number = sync::resolve(touch.sync_number, state.open_sync)?;
        let existing = self.read_record(&txn, key, true).await?;
        record::check_touch(existing.as_ref(), touch.if_match.as_deref())?;
        let mut record = existing.ok_or_else(|| Error::not_found("no current record"))?;
        if let Some(n) = sync_number {
            // The row is locked since it was checked, so no upload can slip in between.
            exec(
                &txn,
                self.stmt(
                    "UPDATE records SET sync_number = $3 WHERE object_type_id = $1 AND external_id = $2",
                    vec![
                        key.scope.object_type_id.to_string().into(),
                        key.external_id.clone().into(),
                        n.into(),
                    ],
                ),
            )
            .await?;
            record.sync_number = n;
        }
        self.count_event(
            &txn,
            key.scope.object_type_id,
            sync_number,
            &key.external_id,
            touch.event,
        )
        .await?;
        txn.commit().await.map_err(db_error)?;
        record.object_type.name = state.name;
        Ok(record)
    }

    async fn get_record(&self, key: &RecordKey) -> Result<Record> {
        inlet_core::input::check_external_id(&key.external_id)?;
        self.object_type_state(&self.db, key.scope, "").await?;
        self.read_record(&self.db, key, false)
            .await?
            .ok_or_else(|| {
                Error::not_found(format!("no record with externalId '{}'", key.external_id))
            })
    }

    async fn delete_record(&self, key: &RecordKey) -> Result<()> {
        inlet_core::input::check_external_id(&key.external_id)?;
        let _w = self.write_guard().await;
        self.object_type_state(&self.db, key.scope, "").await?;
        let txn = self.db.begin().await.map_err(db_error)?;
        let changed = one(
            &txn,
            self.stmt(
                "UPDATE records SET removed = TRUE WHERE object_type_id = $1 AND external_id = $2 \
                 AND NOT removed \
                 AND sync_number >= (SELECT complete_floor FROM object_types WHERE id = $1) \
                 RETURNING id",
                vec![
                    key.scope.object_type_id.to_string().into(),
                    key.external_id.clone().into(),
                ],
            ),
        )
        .await?;
        let Some(row) = changed else {
            return Err(Error::not_found(format!(
                "no current record with externalId '{}'",
                key.external_id
            )));
        };
        self.log_record(&txn, uuid(&row, "id")?).await?;
        txn.commit().await.map_err(db_error)?;
        Ok(())
    }

    async fn get_records(&self, scope: Scope, external_ids: &[String]) -> Result<Vec<Record>> {
        self.records_by_external_id(scope, external_ids).await
    }

    async fn touch_records(
        &self,
        scope: Scope,
        sync_number: Option<i64>,
        items: &[TouchItem],
    ) -> Result<Vec<Result<()>>> {
        self.touch_many(scope, sync_number, items).await
    }

    async fn list_records(&self, scope: Scope, query: &ListQuery) -> Result<Vec<Record>> {
        self.list_page(scope, query).await
    }

    async fn log_head(&self) -> Result<Position> {
        self.head().await
    }

    async fn log_after(&self, after: Position, limit: usize) -> Result<LogPage> {
        self.after(after, limit).await
    }

    async fn log_after_in(
        &self,
        scope: &LogScope,
        after: Position,
        limit: usize,
    ) -> Result<LogPage> {
        self.after_in(scope, after, limit).await
    }

    async fn closed_records(
        &self,
        object_type_id: Uuid,
        from_sync: i64,
        to_sync: i64,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Removed>> {
        self.closed(object_type_id, from_sync, to_sync, after, limit)
            .await
    }

    async fn scan_live_in(
        &self,
        scope: &LogScope,
        upto: Position,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Record>> {
        self.scan_in(scope, upto, after, limit).await
    }

    async fn log_floor(&self) -> Result<Position> {
        self.floor().await
    }

    async fn purge_log(&self, before: Timestamp) -> Result<Position> {
        self.purge(before).await
    }

    async fn scan_live(
        &self,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>> {
        self.scan(after, limit).await
    }

    async fn put_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        folder: &Folder,
    ) -> Result<bool> {
        self.put_folder_row(workspace_id, source_id, tag, folder)
            .await
    }

    async fn folder_exists(&self, source_id: Uuid, tag: &str, external_id: &str) -> Result<bool> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT 1 AS x FROM folders WHERE source_id = $1 AND tag = $2 AND external_id = $3",
                vec![
                    source_id.to_string().into(),
                    tag.to_string().into(),
                    external_id.to_string().into(),
                ],
            ),
        )
        .await?;
        Ok(row.is_some())
    }

    async fn list_folders(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<(Folder, u64)>> {
        self.list_folder_rows(workspace_id, source_id, tag).await
    }

    async fn folder_names(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<Folder>> {
        self.folder_name_rows(workspace_id, source_id, tag).await
    }

    async fn delete_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        external_id: &str,
    ) -> Result<()> {
        self.delete_folder_row(workspace_id, source_id, tag, external_id)
            .await
    }
}
