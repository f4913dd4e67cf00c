//! Sync runs: open, and close with the COMPLETE removal in one transaction.

use crate::enum_parse;
use crate::enum_text;
use crate::from_millis;
use crate::millis;
use crate::uuid;
use crate::{SeaOrmStore, all, db_error, exec, get, one};
use async_trait::async_trait;
use inlet_core::store::Syncs;
use inlet_core::{
    Error, Result,
    record::Scope,
    sync::{self, CloseOperation, OpenOperation, SyncCounters, SyncRun, SyncState},
    time::{self},
};
use sea_orm::{ConnectionTrait, QueryResult};
use uuid::Uuid;

#[async_trait]
impl Syncs for SeaOrmStore {
    async fn open_sync(&self, scope: Scope, op: OpenOperation) -> Result<SyncRun> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
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
        let txn = self.begin_write().await?;
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
}

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
    pub(crate) async fn sync_row(
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
}
