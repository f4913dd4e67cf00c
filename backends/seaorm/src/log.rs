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
//! entries that are not one record's go to `change_log`.

use inlet_core::{
    Error, Result, WorkspaceId,
    index::{Change, LogPage, Position},
    record::Record,
};
use sea_orm::{ConnectionTrait, QueryResult};
use uuid::Uuid;

use crate::{
    SeaOrmStore, all, exec, get, one,
    records::{RECORD_COLUMNS, record_from_row, uuid},
};

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
        object_type_id: Uuid,
        from_sync: i64,
        to_sync: i64,
    ) -> Result<()> {
        let pos = self.next_position(txn).await?;
        exec(
            txn,
            self.stmt(
                "INSERT INTO change_log (pos, kind, object_type_id, from_sync, to_sync) \
                 VALUES ($1, 'closed', $2, $3, $4)",
                vec![
                    pos.into(),
                    object_type_id.to_string().into(),
                    from_sync.into(),
                    to_sync.into(),
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
        source_id: Uuid,
    ) -> Result<()> {
        let pos = self.next_position(txn).await?;
        exec(
            txn,
            self.stmt(
                "INSERT INTO change_log (pos, kind, source_id) VALUES ($1, 'source_deleted', $2)",
                vec![pos.into(), source_id.to_string().into()],
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

    pub(crate) async fn after(&self, after: Position, limit: usize) -> Result<LogPage> {
        // Everything at or below the head read first has committed (see the module docs).
        let head = self.head().await?;
        let lim = i64::try_from(limit).unwrap_or(i64::MAX);
        let range = vec![stored(after).into(), stored(head).into(), lim.into()];
        let records = all(
            &self.db,
            self.stmt(
                &format!(
                    "SELECT {RECORD_COLUMNS}, r.change_pos, o.workspace_id FROM records r \
                     JOIN object_types o ON o.id = r.object_type_id \
                     WHERE r.change_pos > $1 AND r.change_pos <= $2 \
                     ORDER BY r.change_pos LIMIT $3"
                ),
                range.clone(),
            ),
        )
        .await?;
        let others = all(
            &self.db,
            self.stmt(
                "SELECT pos, kind, object_type_id, source_id, from_sync, to_sync FROM change_log \
                 WHERE pos > $1 AND pos <= $2 ORDER BY pos LIMIT $3",
                range,
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
    ) -> Result<Vec<Uuid>> {
        let rows = all(
            &self.db,
            self.stmt(
                "SELECT id FROM records WHERE object_type_id = $1 AND sync_number >= $2 \
                 AND sync_number < $3 AND id > $4 ORDER BY id LIMIT $5",
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
        rows.iter().map(|r| uuid(r, "id")).collect()
    }

    pub(crate) async fn scan(
        &self,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>> {
        let rows = all(
            &self.db,
            self.stmt(
                &format!(
                    "SELECT {RECORD_COLUMNS}, o.workspace_id FROM records r \
                     JOIN object_types o ON o.id = r.object_type_id \
                     WHERE r.id > $1 AND NOT r.removed AND r.sync_number >= o.complete_floor \
                     ORDER BY r.id LIMIT $2"
                ),
                vec![
                    after.map(|a| a.to_string()).unwrap_or_default().into(),
                    i64::try_from(limit).unwrap_or(i64::MAX).into(),
                ],
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
            source_id: uuid(row, "source_id")?,
        }),
        other => Err(Error::backend(std::io::Error::other(format!(
            "unknown change_log kind {other}"
        )))),
    }
}
