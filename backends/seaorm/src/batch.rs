//! Record operations over many records at once: metadata of a batch, a batch of touches in one
//! transaction, and the paged listing. Each takes a constant number of statements, whatever
//! the batch size (`inlet_core::ingest`).

use std::collections::{BTreeMap, HashMap};

use inlet_core::{
    Result,
    record::{self, ListQuery, Record, Scope, TouchItem},
    sync::{self, SyncEvent},
};
use sea_orm::Value;

use crate::{
    SeaOrmStore, all, db_error, exec, get, millis,
    records::{counter_shard, record_columns, record_from_row},
};

/// [`crate::records::RECORD_COLUMNS`] without the content (metadata only).
const METADATA_COLUMNS: &str = record_columns!(
    content: "'' AS content",
    removed: "(r.removed OR r.sync_number < o.complete_floor) AS removed"
);

/// `$first, $first+1, …` for `n` values.
fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn scope_values(scope: Scope) -> Vec<Value> {
    vec![
        scope.object_type_id.to_string().into(),
        scope.source_id.to_string().into(),
        scope.workspace_id.to_string().into(),
    ]
}

impl SeaOrmStore {
    pub(crate) async fn records_by_external_id(
        &self,
        scope: Scope,
        external_ids: &[String],
    ) -> Result<Vec<Record>> {
        self.object_type_state(&self.db, scope, "").await?;
        if external_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut values = scope_values(scope);
        values.extend(external_ids.iter().map(|id| Value::from(id.clone())));
        let sql = format!(
            "SELECT {METADATA_COLUMNS} FROM records r JOIN object_types o ON o.id = r.object_type_id \
             WHERE r.object_type_id = $1 AND o.source_id = $2 AND o.workspace_id = $3 \
               AND r.external_id IN ({})",
            placeholders(4, external_ids.len())
        );
        let rows = all(&self.db, self.stmt(&sql, values)).await?;
        rows.iter().map(record_from_row).collect()
    }

    /// Touches a batch in one transaction: lock the object type, read the live rows of the
    /// batch (locked), update the ones that pass, count them per counter shard.
    pub(crate) async fn touch_many(
        &self,
        scope: Scope,
        sync_number: Option<i64>,
        event: SyncEvent,
        items: &[TouchItem],
    ) -> Result<Vec<Result<()>>> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let state = self
            .object_type_state(&txn, scope, self.for_share())
            .await?;
        let sync_number = sync::resolve(sync_number, state.open_sync)?;
        if items.is_empty() {
            txn.commit().await.map_err(db_error)?;
            return Ok(Vec::new());
        }
        let mut ids: Vec<&str> = items.iter().map(|i| i.external_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let lock = match self.backend() {
            sea_orm::DbBackend::Postgres => " FOR UPDATE",
            _ => "",
        };
        let mut values: Vec<Value> = vec![
            scope.object_type_id.to_string().into(),
            state.complete_floor.into(),
        ];
        values.extend(ids.iter().map(|id| Value::from(id.to_string())));
        // Sorted, so two batches lock shared rows in the same order.
        let sql = format!(
            "SELECT external_id, external_checksum FROM records \
             WHERE object_type_id = $1 AND NOT removed AND sync_number >= $2 \
               AND external_id IN ({}) ORDER BY external_id{lock}",
            placeholders(3, ids.len())
        );
        let live: HashMap<String, Option<String>> = all(&txn, self.stmt(&sql, values))
            .await?
            .iter()
            .map(|row| Ok((get(row, "external_id")?, get(row, "external_checksum")?)))
            .collect::<Result<_>>()?;
        let results: Vec<Result<()>> = items
            .iter()
            .map(|item| {
                record::check_touch_state(
                    live.get(&item.external_id).map(Option::as_deref),
                    item.if_match.as_deref(),
                )
            })
            .collect();
        let mut passed: Vec<&str> = items
            .iter()
            .zip(&results)
            .filter(|(_, r)| r.is_ok())
            .map(|(i, _)| i.external_id.as_str())
            .collect();
        if let Some(n) = sync_number
            && !passed.is_empty()
        {
            let mut shards: BTreeMap<i64, i64> = BTreeMap::new();
            for id in &passed {
                *shards.entry(counter_shard(id)).or_default() += 1;
            }
            passed.sort_unstable();
            passed.dedup();
            let mut values: Vec<Value> = vec![scope.object_type_id.to_string().into(), n.into()];
            values.extend(passed.iter().map(|id| Value::from(id.to_string())));
            let sql = format!(
                "UPDATE records SET sync_number = $2 WHERE object_type_id = $1 \
                 AND external_id IN ({})",
                placeholders(3, passed.len())
            );
            exec(&txn, self.stmt(&sql, values)).await?;
            let mut values: Vec<Value> = vec![scope.object_type_id.to_string().into(), n.into()];
            // The batch's event decides the column counted (a touch, or a checksum-equal
            // upload).
            let column = match event {
                SyncEvent::Unchanged => "unchanged",
                _ => "touched",
            };
            let mut rows = Vec::with_capacity(shards.len());
            for (shard, count) in shards {
                let at = values.len() + 1;
                rows.push(match event {
                    SyncEvent::Unchanged => format!("($1, $2, ${at}, 0, 0, ${}, 0)", at + 1),
                    _ => format!("($1, $2, ${at}, 0, ${}, 0, 0)", at + 1),
                });
                values.push(shard.into());
                values.push(count.into());
            }
            let sql = format!(
                "INSERT INTO sync_counters (object_type_id, sync_number, shard, uploaded, touched, \
                     unchanged, extraction_failures) VALUES {} \
                 ON CONFLICT (object_type_id, sync_number, shard) DO UPDATE SET \
                     {column} = sync_counters.{column} + excluded.{column}",
                rows.join(", ")
            );
            exec(&txn, self.stmt(&sql, values)).await?;
        }
        txn.commit().await.map_err(db_error)?;
        Ok(results)
    }

    pub(crate) async fn list_page(&self, scope: Scope, query: &ListQuery) -> Result<Vec<Record>> {
        self.object_type_state(&self.db, scope, "").await?;
        let mut values = scope_values(scope);
        let mut filters = String::new();
        if let Some(after) = &query.after {
            values.push(after.clone().into());
            filters.push_str(&format!(" AND r.external_id > ${}", values.len()));
        }
        if !query.include_removed {
            filters.push_str(" AND NOT r.removed AND r.sync_number >= o.complete_floor");
        }
        if let Some(since) = &query.modified_since {
            values.push(millis(since).into());
            filters.push_str(&format!(" AND r.modified_date >= ${}", values.len()));
        }
        if query.with_access_list {
            filters.push_str(" AND r.access IS NOT NULL");
        }
        if let Some(readable) = &query.readable {
            // A record without a list follows the default; one with a list (JSON text) is
            // readable when it names a grantee of the reader's.
            let mut named = Vec::with_capacity(readable.grantees.len());
            for g in &readable.grantees {
                values.push(g.clone().into());
                named.push(format!("${}", values.len()));
            }
            let listed = match (named.is_empty(), self.backend()) {
                (true, _) => "FALSE".to_string(),
                (false, sea_orm::DbBackend::Postgres) => format!(
                    "EXISTS (SELECT 1 FROM json_array_elements_text(r.access::json) AS g(v) \
                     WHERE g.v IN ({}))",
                    named.join(", ")
                ),
                (false, _) => format!(
                    "EXISTS (SELECT 1 FROM json_each(r.access) AS g WHERE g.value IN ({}))",
                    named.join(", ")
                ),
            };
            let default = if readable.default { "TRUE" } else { "FALSE" };
            filters.push_str(&format!(
                " AND ((r.access IS NULL AND {default}) OR (r.access IS NOT NULL AND {listed}))"
            ));
        }
        values.push(i64::try_from(query.limit).unwrap_or(i64::MAX).into());
        let sql = format!(
            "SELECT {METADATA_COLUMNS} FROM records r JOIN object_types o ON o.id = r.object_type_id \
             WHERE r.object_type_id = $1 AND o.source_id = $2 AND o.workspace_id = $3{filters} \
             ORDER BY r.external_id LIMIT ${}",
            values.len()
        );
        let rows = all(&self.db, self.stmt(&sql, values)).await?;
        rows.iter().map(record_from_row).collect()
    }
}
