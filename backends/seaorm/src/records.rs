//! [`RecordStore`] over SQL.

use crate::from_millis;
use crate::millis;
use crate::uuid;
use std::collections::HashMap;

use async_trait::async_trait;
use inlet_core::store::{Records, Sources};
use inlet_core::{
    Error, Result,
    record::{
        self, AccessItem, Extraction, ListQuery, ObjectTypeRef, PutOutcome, Record, RecordKey,
        RecordWrite, Scope, Touch, TouchItem,
    },
    search,
    sync::{self, SyncCounters, SyncEvent},
    tag::Tags,
    time::{self},
};
use sea_orm::{ConnectionTrait, QueryResult, Value};
use uuid::Uuid;

use crate::{SeaOrmStore, all, db_error, exec, get, json_error, one};

/// The object type's row: its name, current and open sync, checked against the scope.
pub(crate) struct ObjectTypeState {
    pub(crate) name: String,
    pub(crate) current_sync: i64,
    pub(crate) open_sync: Option<i64>,
    /// The last COMPLETE sync: a record whose sync number is below it was removed by it.
    pub(crate) complete_floor: i64,
}

/// Counter shards per sync (see the `sync_counters` table).
const COUNTER_SHARDS: u64 = 16;

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
            ", r.extraction, r.access, r.original_sha256, r.original_size, ",
            "o.name AS ot_name, o.current_sync AS ot_current_sync"
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
        access: get::<Option<String>>(row, "access")?
            .map(|a| serde_json::from_str(&a))
            .transpose()
            .map_err(json_error)?,
        original: match (
            get::<Option<String>>(row, "original_sha256")?,
            get::<Option<i64>>(row, "original_size")?,
        ) {
            (Some(sha256), Some(size)) => Some(inlet_core::blob::Original {
                sha256,
                size: u64::try_from(size).unwrap_or_default(),
            }),
            _ => None,
        },
    })
}

impl SeaOrmStore {
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
        let txn = self.begin_write().await?;
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
impl Records for SeaOrmStore {
    async fn put_record(&self, write: RecordWrite) -> Result<PutOutcome> {
        inlet_core::record::check_write(&write)?;
        let scope = write.key.scope;
        let source = self.get_source(scope.workspace_id, scope.source_id).await?;
        let tag_rows = search::tag_rows(source.object_type(scope.object_type_id), &write.tags);
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
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
            write
                .access
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(json_error)?
                .into(),
            write.original.as_ref().map(|o| o.sha256.clone()).into(),
            write
                .original
                .as_ref()
                .map(|o| i64::try_from(o.size).unwrap_or(i64::MAX))
                .into(),
        ];
        // One statement creates version 1 or bumps the version atomically.
        let row = one(
            &txn,
            self.stmt(
                "INSERT INTO records (id, object_type_id, external_id, source_id, version, title, url, \
                     content, tags, external_checksum, created_date, modified_date, modified_by, \
                     sync_number, removed, extraction, file_name, access, original_sha256, \
                     original_size) \
                 VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8, $9, $10, $10, $11, $12, FALSE, $13, $16, \
                     $17, $18, $19) \
                 ON CONFLICT (object_type_id, external_id) DO UPDATE SET \
                     version = records.version + 1, title = excluded.title, url = excluded.url, \
                     file_name = excluded.file_name, \
                     content = excluded.content, tags = excluded.tags, \
                     external_checksum = excluded.external_checksum, \
                     modified_date = excluded.modified_date, modified_by = excluded.modified_by, \
                     sync_number = COALESCE($14, CASE WHEN records.removed \
                         OR records.sync_number < $15 THEN $12 ELSE records.sync_number END), \
                     removed = FALSE, \
                     extraction = excluded.extraction, \
                     access = COALESCE(excluded.access, records.access), \
                     original_sha256 = excluded.original_sha256, \
                     original_size = excluded.original_size \
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
        let txn = self.begin_write().await?;
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
        let txn = self.begin_write().await?;
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
            // Rolled back here, under the write guard: a transaction left to roll back when its
            // connection is next used can still hold SQLite's write lock when the next writer
            // starts ("database is locked").
            txn.rollback().await.map_err(db_error)?;
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
        event: SyncEvent,
        items: &[TouchItem],
    ) -> Result<Vec<Result<()>>> {
        self.touch_many(scope, sync_number, event, items).await
    }

    async fn set_access(&self, scope: Scope, items: &[AccessItem]) -> Result<Vec<Result<()>>> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        self.object_type_state(&txn, scope, self.for_share())
            .await?;
        let mut results = Vec::with_capacity(items.len());
        for item in items {
            let access = item
                .access
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(json_error)?;
            let row = one(
                &txn,
                self.stmt(
                    "UPDATE records SET access = $3 WHERE object_type_id = $1 AND external_id = $2 \
                     AND NOT removed AND sync_number >= (SELECT complete_floor FROM object_types \
                     WHERE id = $1) RETURNING id",
                    vec![
                        scope.object_type_id.to_string().into(),
                        item.external_id.clone().into(),
                        access.into(),
                    ],
                ),
            )
            .await?;
            match row {
                Some(row) => {
                    self.log_record(&txn, uuid(&row, "id")?).await?;
                    results.push(Ok(()));
                }
                None => results.push(Err(Error::not_found(format!(
                    "no current record with externalId '{}'",
                    item.external_id
                )))),
            }
        }
        txn.commit().await.map_err(db_error)?;
        Ok(results)
    }

    async fn list_records(&self, scope: Scope, query: &ListQuery) -> Result<Vec<Record>> {
        self.list_page(scope, query).await
    }

    async fn store_reread(&self, reread: record::Reread) -> Result<Option<Record>> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let scope = reread.key.scope;
        self.object_type_state(&txn, scope, self.for_share())
            .await?;
        let extraction = serde_json::to_string(&reread.extraction).map_err(json_error)?;
        let row = one(
            &txn,
            self.stmt(
                "UPDATE records SET content = $5, extraction = $6 \
                 WHERE object_type_id = $1 AND external_id = $2 AND version = $3 \
                 AND original_sha256 = $4 AND NOT removed AND sync_number >= \
                 (SELECT complete_floor FROM object_types WHERE id = $1) RETURNING id",
                vec![
                    scope.object_type_id.to_string().into(),
                    reread.key.external_id.clone().into(),
                    reread.version.into(),
                    reread.sha256.into(),
                    reread.content.into(),
                    extraction.into(),
                ],
            ),
        )
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        self.log_record(&txn, uuid(&row, "id")?).await?;
        let record = self.read_record(&txn, &reread.key, false).await?;
        txn.commit().await.map_err(db_error)?;
        Ok(record)
    }

    async fn tag_counts(&self, source_id: Uuid, tag: &str) -> Result<HashMap<String, u64>> {
        self.folder_counts(source_id, tag).await
    }
}

impl SeaOrmStore {
    /// [`inlet_core::store::WriteLog::live_originals`] in one query.
    pub(crate) async fn originals_in_use(
        &self,
        workspace_id: inlet_core::WorkspaceId,
        sha256s: &[String],
    ) -> Result<Vec<String>> {
        if sha256s.is_empty() {
            return Ok(Vec::new());
        }
        let mut values: Vec<Value> = vec![workspace_id.to_string().into()];
        let marks: Vec<String> = sha256s
            .iter()
            .map(|s| {
                values.push(s.clone().into());
                format!("${}", values.len())
            })
            .collect();
        let rows = all(
            &self.db,
            self.stmt(
                &format!(
                    "SELECT DISTINCT r.original_sha256 FROM records r \
                     JOIN object_types o ON o.id = r.object_type_id \
                     WHERE r.original_sha256 IN ({}) AND o.workspace_id = $1 \
                     AND NOT r.removed AND r.sync_number >= o.complete_floor",
                    marks.join(", ")
                ),
                values,
            ),
        )
        .await?;
        rows.iter()
            .map(|r| get::<String>(r, "original_sha256"))
            .collect()
    }
}
