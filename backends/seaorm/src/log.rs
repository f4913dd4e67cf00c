//! The write log the search index follows (`inlet_core::index`), on both databases.
//!
//! Positions come from one row, `change_head`, bumped by the last statement of every writing
//! transaction. The bump locks the row until the transaction ends, so positions are handed out
//! in commit order: a transaction that takes position n+1 waits until the holder of n has
//! committed (or rolled back, returning n). A follower that reads the head and then everything up
//! to it therefore never sees n+1 without n — unlike a sequence, whose numbers are taken in
//! start order and can commit out of order. Taking the head last keeps the time it is held to
//! the commit itself, and makes it the last lock of every transaction (no deadlock through it).
//!
//! A record carries its last position in `records.change_pos` (the log is compacted by record);
//! entries that are not one record's go to `change_log`, with their workspace and source (the
//! change feed reads one workspace's) and their time (they are purged after the retention;
//! `change_head.floor` is the last position purged).

use async_trait::async_trait;
use inlet_core::store::WriteLog;
use inlet_core::{
    Error, Result, WorkspaceId,
    index::{Change, LogPage, LogScope, Position, Removed},
    record::{Record, Scope},
    time::Timestamp,
};
use sea_orm::{ConnectionTrait, QueryResult};
use uuid::Uuid;

use crate::{
    SeaOrmStore, all, db_error, exec, get, millis, one,
    records::{RECORD_COLUMNS, record_columns, record_from_row},
    uuid,
};

/// [`RECORD_COLUMNS`] with `removed` as the record's own write left it (a tombstone), not
/// whether a later close removed it: the change feed gives that close's REMOVE at the close.
const WRITTEN_COLUMNS: &str = record_columns!(content: "r.content", removed: "r.removed");

fn position(p: i64) -> Position {
    u64::try_from(p).unwrap_or(0)
}

fn stored(p: Position) -> i64 {
    i64::try_from(p).unwrap_or(i64::MAX)
}

impl SeaOrmStore {
    /// Takes the next position; the row stays locked until the transaction ends. Call it last.
    async fn next_position(&self, txn: &impl ConnectionTrait) -> Result<i64> {
        let row = one(
            txn,
            self.stmt(
                "UPDATE change_head SET pos = pos + 1 WHERE id = 1 RETURNING pos",
                vec![],
            ),
        )
        .await?
        .ok_or_else(|| Error::backend(std::io::Error::other("change_head has no row")))?;
        get(&row, "pos")
    }

    /// Logs a write of record `record_id` (its state is read when the log is).
    pub(crate) async fn log_record(
        &self,
        txn: &impl ConnectionTrait,
        record_id: Uuid,
    ) -> Result<()> {
        let pos = self.next_position(txn).await?;
        exec(
            txn,
            self.stmt(
                "UPDATE records SET change_pos = $2 WHERE id = $1",
                vec![record_id.to_string().into(), pos.into()],
            ),
        )
        .await?;
        Ok(())
    }

    /// Logs a COMPLETE close that raised the object type's floor from `from_sync` to `to_sync`.
    pub(crate) async fn log_close(
        &self,
        txn: &impl ConnectionTrait,
        scope: Scope,
        from_sync: i64,
        to_sync: i64,
    ) -> Result<()> {
        let pos = self.next_position(txn).await?;
        exec(
            txn,
            self.stmt(
                "INSERT INTO change_log (pos, kind, object_type_id, source_id, workspace_id, \
                 from_sync, to_sync, created_ms) VALUES ($1, 'closed', $2, $3, $4, $5, $6, $7)",
                vec![
                    pos.into(),
                    scope.object_type_id.to_string().into(),
                    scope.source_id.to_string().into(),
                    scope.workspace_id.to_string().into(),
                    from_sync.into(),
                    to_sync.into(),
                    millis(&inlet_core::time::now()).into(),
                ],
            ),
        )
        .await?;
        Ok(())
    }

    /// Logs a source's deletion.
    pub(crate) async fn log_source_deleted(
        &self,
        txn: &impl ConnectionTrait,
        workspace_id: WorkspaceId,
        source_id: Uuid,
    ) -> Result<()> {
        let pos = self.next_position(txn).await?;
        exec(
            txn,
            self.stmt(
                "INSERT INTO change_log (pos, kind, source_id, workspace_id, created_ms) \
                 VALUES ($1, 'source_deleted', $2, $3, $4)",
                vec![
                    pos.into(),
                    source_id.to_string().into(),
                    workspace_id.to_string().into(),
                    millis(&inlet_core::time::now()).into(),
                ],
            ),
        )
        .await?;
        Ok(())
    }

    pub(crate) async fn head(&self) -> Result<Position> {
        let row = one(
            &self.db,
            self.stmt("SELECT pos FROM change_head WHERE id = 1", vec![]),
        )
        .await?;
        Ok(row
            .map(|r| get::<i64>(&r, "pos"))
            .transpose()?
            .map_or(0, position))
    }

    async fn log_rows(
        &self,
        scope: Option<&LogScope>,
        after: Position,
        limit: usize,
    ) -> Result<LogPage> {
        // Everything at or below the head read first has committed (see the module docs).
        let head = self.head().await?;
        let lim = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut params = vec![stored(after).into(), stored(head).into(), lim.into()];
        let (columns, mut record_filter, mut other_filter) = match scope {
            None => (RECORD_COLUMNS, String::new(), String::new()),
            Some(scope) => {
                params.push(scope.workspace_id.to_string().into());
                (
                    WRITTEN_COLUMNS,
                    " AND o.workspace_id = $4".to_string(),
                    " AND workspace_id = $4".to_string(),
                )
            }
        };
        if let Some(source_id) = scope.and_then(|s| s.source_id) {
            params.push(source_id.to_string().into());
            record_filter.push_str(" AND o.source_id = $5");
            other_filter.push_str(" AND source_id = $5");
        }
        let records = all(
            &self.db,
            self.stmt(
                &format!(
                    "SELECT {columns}, r.change_pos, o.workspace_id FROM records r \
                     JOIN object_types o ON o.id = r.object_type_id \
                     WHERE r.change_pos > $1 AND r.change_pos <= $2{record_filter} \
                     ORDER BY r.change_pos LIMIT $3"
                ),
                params.clone(),
            ),
        )
        .await?;
        let others = all(
            &self.db,
            self.stmt(
                &format!(
                    "SELECT pos, kind, object_type_id, source_id, workspace_id, from_sync, \
                     to_sync FROM change_log WHERE pos > $1 AND pos <= $2{other_filter} \
                     ORDER BY pos LIMIT $3"
                ),
                params,
            ),
        )
        .await?;
        // Each list is complete up to its last row only when it was cut at the limit.
        let mut upto = head;
        for (rows, col) in [(&records, "change_pos"), (&others, "pos")] {
            if rows.len() >= limit
                && let Some(last) = rows.last()
            {
                upto = upto.min(position(get(last, col)?));
            }
        }
        let mut changes = Vec::with_capacity(records.len() + others.len());
        for row in &records {
            let p = position(get(row, "change_pos")?);
            if p <= upto {
                changes.push(record_change(row, p)?);
            }
        }
        for row in &others {
            let p = position(get(row, "pos")?);
            if p <= upto {
                changes.push(other_change(row, p)?);
            }
        }
        changes.sort_by_key(Change::position);
        Ok(LogPage { changes, upto })
    }

    pub(crate) async fn closed(
        &self,
        object_type_id: Uuid,
        from_sync: i64,
        to_sync: i64,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Removed>> {
        let rows = all(
            &self.db,
            self.stmt(
                "SELECT id, source_id, external_id, sync_number, access FROM records \
                 WHERE object_type_id = $1 AND sync_number >= $2 AND sync_number < $3 \
                 AND NOT removed AND id > $4 ORDER BY id LIMIT $5",
                vec![
                    object_type_id.to_string().into(),
                    from_sync.into(),
                    to_sync.into(),
                    after.map(|a| a.to_string()).unwrap_or_default().into(),
                    i64::try_from(limit).unwrap_or(i64::MAX).into(),
                ],
            ),
        )
        .await?;
        rows.iter()
            .map(|r| {
                Ok(Removed {
                    id: uuid(r, "id")?,
                    source_id: uuid(r, "source_id")?,
                    object_type_id,
                    external_id: get(r, "external_id")?,
                    sync_number: get(r, "sync_number")?,
                    access: get::<Option<String>>(r, "access")?
                        .map(|a| serde_json::from_str(&a))
                        .transpose()
                        .map_err(crate::json_error)?,
                })
            })
            .collect()
    }

    /// The last position purged from the log.
    pub(crate) async fn floor(&self) -> Result<Position> {
        let row = one(
            &self.db,
            self.stmt("SELECT floor FROM change_head WHERE id = 1", vec![]),
        )
        .await?;
        Ok(row
            .map(|r| get::<i64>(&r, "floor"))
            .transpose()?
            .map_or(0, position))
    }

    /// Purges the `change_log` entries logged before `before` and raises the floor over them.
    pub(crate) async fn purge(&self, before: Timestamp) -> Result<Position> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let newest = one(
            &txn,
            self.stmt(
                "SELECT MAX(pos) AS newest FROM change_log WHERE created_ms < $1",
                vec![millis(&before).into()],
            ),
        )
        .await?
        .map(|r| get::<Option<i64>>(&r, "newest"))
        .transpose()?
        .flatten();
        if let Some(newest) = newest {
            exec(
                &txn,
                self.stmt(
                    "DELETE FROM change_log WHERE pos <= $1",
                    vec![newest.into()],
                ),
            )
            .await?;
            // Last: the head row's lock comes last in every transaction (module docs).
            exec(
                &txn,
                self.stmt(
                    "UPDATE change_head SET floor = $1 WHERE id = 1 AND floor < $1",
                    vec![newest.into()],
                ),
            )
            .await?;
        }
        txn.commit().await.map_err(db_error)?;
        self.floor().await
    }

    /// Live records by id after `after`, of `scope` and last written at or before `upto`
    /// when given (the index's rebuild, the feed's snapshot).
    pub(crate) async fn scan(
        &self,
        scope: Option<&LogScope>,
        upto: Option<Position>,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>> {
        let mut params: Vec<sea_orm::Value> = vec![
            after.map(|a| a.to_string()).unwrap_or_default().into(),
            i64::try_from(limit).unwrap_or(i64::MAX).into(),
        ];
        let mut filter = String::new();
        if let Some(scope) = scope {
            params.push(scope.workspace_id.to_string().into());
            filter.push_str(&format!(" AND o.workspace_id = ${}", params.len()));
            if let Some(source_id) = scope.source_id {
                params.push(source_id.to_string().into());
                filter.push_str(&format!(" AND o.source_id = ${}", params.len()));
            }
        }
        if let Some(upto) = upto {
            params.push(stored(upto).into());
            filter.push_str(&format!(" AND r.change_pos <= ${}", params.len()));
        }
        let rows = all(
            &self.db,
            self.stmt(
                &format!(
                    "SELECT {RECORD_COLUMNS}, o.workspace_id FROM records r \
                     JOIN object_types o ON o.id = r.object_type_id \
                     WHERE r.id > $1{filter} AND NOT r.removed \
                     AND r.sync_number >= o.complete_floor ORDER BY r.id LIMIT $2"
                ),
                params,
            ),
        )
        .await?;
        rows.iter()
            .map(|row| Ok((uuid(row, "workspace_id")?, record_from_row(row)?)))
            .collect()
    }
}

fn record_change(row: &QueryResult, position: Position) -> Result<Change> {
    Ok(Change::Record {
        position,
        workspace_id: uuid(row, "workspace_id")?,
        record: Box::new(record_from_row(row)?),
    })
}

fn other_change(row: &QueryResult, position: Position) -> Result<Change> {
    let kind: String = get(row, "kind")?;
    match kind.as_str() {
        "closed" => Ok(Change::Closed {
            position,
            object_type_id: uuid(row, "object_type_id")?,
            from_sync: get(row, "from_sync")?,
            to_sync: get(row, "to_sync")?,
        }),
        "source_deleted" => Ok(Change::SourceDeleted {
            position,
            workspace_id: get::<Option<String>>(row, "workspace_id")?
                .and_then(|w| Uuid::try_parse(&w).ok()),
            source_id: uuid(row, "source_id")?,
        }),
        other => Err(Error::backend(std::io::Error::other(format!(
            "unknown change_log kind {other}"
        )))),
    }
}

#[async_trait]
impl WriteLog for SeaOrmStore {
    async fn log_head(&self) -> Result<Position> {
        self.head().await
    }

    async fn read_log(
        &self,
        scope: Option<&LogScope>,
        after: Position,
        limit: usize,
    ) -> Result<LogPage> {
        self.log_rows(scope, after, limit).await
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

    async fn scan_records(
        &self,
        scope: Option<&LogScope>,
        upto: Option<Position>,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>> {
        self.scan(scope, upto, after, limit).await
    }

    async fn log_floor(&self) -> Result<Position> {
        self.floor().await
    }

    async fn purge_log(&self, before: Timestamp) -> Result<Position> {
        self.purge(before).await
    }

    async fn live_originals(
        &self,
        workspace_id: WorkspaceId,
        sha256s: &[String],
    ) -> Result<Vec<String>> {
        self.originals_in_use(workspace_id, sha256s).await
    }
}
