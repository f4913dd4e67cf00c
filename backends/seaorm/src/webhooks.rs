//! The webhook delivery queue (`inlet_core::webhook`) on both databases; the registrations
//! are documents (`inlet_core::store::webhooks`). A replica claims
//! due deliveries by moving their next attempt to the end of a lease in one statement
//! (`FOR UPDATE SKIP LOCKED` on PostgreSQL, under the writer lock on SQLite), so two replicas
//! never send the same attempt, and one that dies mid-attempt leaves it to the next after the
//! lease.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use inlet_core::{
    Error, Result, WorkspaceId,
    time::Timestamp,
    webhook::{Attempt, ClaimRules, Deliveries, Delivery, DeliveryState, Event},
};
use sea_orm::{QueryResult, Value};
use uuid::Uuid;

use crate::{SeaOrmStore, all, db_error, exec, get, one, uuid};

fn ms(t: &Timestamp) -> i64 {
    t.timestamp_millis()
}

fn at(ms: i64) -> Result<Timestamp> {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .ok_or_else(|| Error::backend(std::io::Error::other(format!("bad timestamp {ms}"))))
}

fn delivery_from_row(row: &QueryResult) -> Result<Delivery> {
    let event: String = get(row, "event")?;
    let state: String = get(row, "state")?;
    Ok(Delivery {
        id: uuid(row, "id")?,
        webhook_id: uuid(row, "webhook_id")?,
        workspace_id: uuid(row, "workspace_id")?,
        event: Event::parse(&event)?,
        body: get(row, "body")?,
        created_date: at(get(row, "created_ms")?)?,
        attempts: u32::try_from(get::<i64>(row, "attempts")?).unwrap_or(u32::MAX),
        state: DeliveryState::parse(&state)?,
        next_attempt: get::<Option<i64>>(row, "next_attempt_ms")?
            .map(at)
            .transpose()?,
        last_attempt: get::<Option<i64>>(row, "last_attempt_ms")?
            .map(at)
            .transpose()?,
        last_status: get::<Option<i64>>(row, "last_status")?.and_then(|s| u16::try_from(s).ok()),
        last_error: get(row, "last_error")?,
    })
}

const DELIVERY_COLUMNS: &str = "d.id, d.webhook_id, d.workspace_id, d.event, d.body, \
    d.created_ms, d.attempts, d.state, d.next_attempt_ms, d.last_attempt_ms, d.last_status, \
    d.last_error";

#[async_trait]
impl Deliveries for SeaOrmStore {
    async fn queue_deliveries(&self, deliveries: &[Delivery]) -> Result<()> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        for d in deliveries {
            exec(
                &txn,
                self.stmt(
                    "INSERT INTO webhook_deliveries (id, webhook_id, workspace_id, event, body, \
                     created_ms, attempts, state, next_attempt_ms) \
                     VALUES ($1, $2, $3, $4, $5, $6, 0, 'PENDING', $7)",
                    vec![
                        d.id.to_string().into(),
                        d.webhook_id.to_string().into(),
                        d.workspace_id.to_string().into(),
                        d.event.name().into(),
                        d.body.clone().into(),
                        ms(&d.created_date).into(),
                        d.next_attempt.map(|t| ms(&t)).into(),
                    ],
                ),
            )
            .await?;
        }
        txn.commit().await.map_err(db_error)
    }

    async fn claim_due(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        rules: &ClaimRules<'_>,
    ) -> Result<Vec<Delivery>> {
        // Most of the time nothing is due: find that with a read, without the writer lock
        // (the sender asks every second on every replica).
        let due = one(
            &self.db,
            self.stmt(
                "SELECT 1 AS due FROM webhook_deliveries WHERE state = 'PENDING' \
                 AND next_attempt_ms <= $1 LIMIT 1",
                vec![ms(&now).into()],
            ),
        )
        .await?;
        if due.is_none() {
            return Ok(Vec::new());
        }
        let _w = self.write_guard().await;
        let count = |n: usize| Value::from(i64::try_from(n).unwrap_or(i64::MAX));
        let mut values: Vec<Value> = vec![
            ms(&now).into(),
            ms(&lease_until).into(),
            count(rules.limit),
            count(rules.per_webhook),
            count(rules.per_workspace),
        ];
        let mut skip = String::new();
        for (column, ids) in [
            ("webhook_id", rules.skip_webhooks),
            ("workspace_id", rules.skip_workspaces),
        ] {
            if ids.is_empty() {
                continue;
            }
            let marks: Vec<String> = ids
                .iter()
                .map(|id| {
                    values.push(id.to_string().into());
                    format!("${}", values.len())
                })
                .collect();
            skip.push_str(&format!(" AND {column} NOT IN ({})", marks.join(", ")));
        }
        // Two windows (ClaimRules): each due delivery's turn within its webhook, then its share
        // within its workspace. The outer condition on next_attempt_ms is checked again on a
        // row another replica claimed meanwhile (PostgreSQL re-reads a row it waited for), so
        // a row is never claimed twice.
        let claimed = all(
            &self.db,
            self.stmt(
                &format!(
                    "UPDATE webhook_deliveries SET next_attempt_ms = $2 \
                     WHERE state = 'PENDING' AND next_attempt_ms <= $1 AND id IN (\
                     SELECT id FROM (SELECT id, turn, next_attempt_ms, ROW_NUMBER() OVER (\
                     PARTITION BY workspace_id ORDER BY turn, next_attempt_ms, id) AS share \
                     FROM (SELECT id, workspace_id, next_attempt_ms, ROW_NUMBER() OVER (\
                     PARTITION BY webhook_id ORDER BY next_attempt_ms, id) AS turn \
                     FROM webhook_deliveries WHERE state = 'PENDING' \
                     AND next_attempt_ms <= $1{skip}) turns WHERE turn <= $4) shares \
                     WHERE share <= $5 ORDER BY share, turn, next_attempt_ms, id LIMIT $3) \
                     RETURNING id"
                ),
                values,
            ),
        )
        .await?;
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Value> = claimed
            .iter()
            .map(|r| get::<String>(r, "id").map(Value::from))
            .collect::<Result<_>>()?;
        let marks: Vec<String> = (1..=ids.len()).map(|i| format!("${i}")).collect();
        let rows = all(
            &self.db,
            self.stmt(
                &format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries d \
                     WHERE d.id IN ({}) ORDER BY d.created_ms, d.id",
                    marks.join(", ")
                ),
                ids,
            ),
        )
        .await?;
        rows.iter().map(delivery_from_row).collect()
    }

    async fn purge_deliveries(&self, before: Timestamp) -> Result<u64> {
        let _w = self.write_guard().await;
        let done = exec(
            &self.db,
            self.stmt(
                "DELETE FROM webhook_deliveries WHERE state <> 'PENDING' AND last_attempt_ms < $1",
                vec![ms(&before).into()],
            ),
        )
        .await?;
        Ok(done)
    }

    async fn record_attempt(
        &self,
        delivery_id: Uuid,
        attempt: &Attempt,
        next: Option<Timestamp>,
    ) -> Result<()> {
        let (state, next) = attempt.outcome(next);
        let next = next.map(|t| ms(&t));
        let _w = self.write_guard().await;
        exec(
            &self.db,
            self.stmt(
                "UPDATE webhook_deliveries SET attempts = attempts + 1, state = $2, \
                 next_attempt_ms = $3, last_attempt_ms = $4, last_status = $5, last_error = $6 \
                 WHERE id = $1",
                vec![
                    delivery_id.to_string().into(),
                    state.name().into(),
                    next.into(),
                    ms(&attempt.at).into(),
                    attempt.status.map(i64::from).into(),
                    attempt.error.clone().into(),
                ],
            ),
        )
        .await?;
        Ok(())
    }

    async fn list_deliveries(
        &self,
        workspace_id: WorkspaceId,
        webhook_id: Uuid,
        limit: usize,
    ) -> Result<Vec<Delivery>> {
        let rows = all(
            &self.db,
            self.stmt(
                &format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries d \
                     WHERE d.webhook_id = $1 AND d.workspace_id = $2 \
                     ORDER BY d.created_ms DESC, d.id DESC LIMIT $3"
                ),
                vec![
                    webhook_id.to_string().into(),
                    workspace_id.to_string().into(),
                    i64::try_from(limit).unwrap_or(i64::MAX).into(),
                ],
            ),
        )
        .await?;
        rows.iter().map(delivery_from_row).collect()
    }

    async fn delete_deliveries(&self, webhook_id: Uuid) -> Result<()> {
        let _w = self.write_guard().await;
        exec(
            &self.db,
            self.stmt(
                "DELETE FROM webhook_deliveries WHERE webhook_id = $1",
                vec![webhook_id.to_string().into()],
            ),
        )
        .await?;
        Ok(())
    }
}
