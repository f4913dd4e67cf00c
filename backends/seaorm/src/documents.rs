//! Documents ([`inlet_core::store::Documents`]): one row per (collection, key) in `documents`
//! (m0021), keys in byte order (`COLLATE "C"` on PostgreSQL, SQLite's binary collation). A
//! batch runs in one transaction; a write whose expectation fails rolls it back.

use async_trait::async_trait;
use inlet_core::Result;
use inlet_core::store::{
    Documents,
    documents::{DocWrite, Document, Expect, KeyRange, Op, keys_one_prefix_at_a_time, prefix_end},
};
use sea_orm::{ConnectionTrait, DbBackend, QueryResult, Value};

use crate::{SeaOrmStore, all, db_error, exec, get, one};

/// Unconditional deletes one statement removes at most.
const DELETE_RUN: usize = 500;
/// Unconditional puts one statement writes at most (3 values each).
const PUT_RUN: usize = 300;
/// Prefixes one scan statement reads at most.
const PREFIX_RUN: usize = 500;

fn document(row: &QueryResult) -> Result<Document> {
    Ok(Document {
        key: get(row, "doc_key")?,
        body: get(row, "body")?,
        revision: u64::try_from(get::<i64>(row, "revision")?).unwrap_or(0),
    })
}

impl SeaOrmStore {
    /// Applies one write in `txn`; answers whether its expectation held.
    async fn write_document(&self, txn: &impl ConnectionTrait, w: &DocWrite) -> Result<bool> {
        let key = || -> Vec<Value> { vec![w.collection.into(), w.key.clone().into()] };
        let with = |mut values: Vec<Value>, more: Vec<Value>| {
            values.extend(more);
            values
        };
        let body = match &w.op {
            Op::Put(body) => Some(body.clone()),
            Op::Delete => None,
            Op::Check => {
                // Read under a share lock (PostgreSQL): the document cannot change or go until
                // this batch commits. SQLite's writes are serialized already.
                let found = one(
                    txn,
                    self.stmt(
                        &format!(
                            "SELECT revision FROM documents WHERE collection = $1 AND doc_key = $2{}",
                            self.for_share()
                        ),
                        key(),
                    ),
                )
                .await?;
                let stored = found
                    .map(|r| get::<i64>(&r, "revision"))
                    .transpose()?
                    .map(|r| u64::try_from(r).unwrap_or(0));
                return Ok(w.expect.holds(stored));
            }
        };
        let sql = match (&body, w.expect) {
            (Some(_), Expect::Any) => {
                "INSERT INTO documents (collection, doc_key, body, revision) \
                 VALUES ($1, $2, $3, 1) ON CONFLICT (collection, doc_key) DO UPDATE \
                 SET body = excluded.body, revision = documents.revision + 1"
            }
            (Some(_), Expect::Absent) => {
                "INSERT INTO documents (collection, doc_key, body, revision) \
                 VALUES ($1, $2, $3, 1) ON CONFLICT (collection, doc_key) DO NOTHING"
            }
            (Some(_), Expect::Revision(_)) => {
                "UPDATE documents SET body = $3, revision = revision + 1 \
                 WHERE collection = $1 AND doc_key = $2 AND revision = $4"
            }
            (None, Expect::Any) => {
                exec(
                    txn,
                    self.stmt(
                        "DELETE FROM documents WHERE collection = $1 AND doc_key = $2",
                        key(),
                    ),
                )
                .await?;
                return Ok(true);
            }
            (None, Expect::Absent) => {
                let found = one(
                    txn,
                    self.stmt(
                        "SELECT revision FROM documents WHERE collection = $1 AND doc_key = $2",
                        key(),
                    ),
                )
                .await?;
                return Ok(found.is_none());
            }
            (None, Expect::Revision(r)) => {
                let r = i64::try_from(r).unwrap_or(i64::MAX);
                let n = exec(
                    txn,
                    self.stmt(
                        "DELETE FROM documents WHERE collection = $1 AND doc_key = $2 \
                         AND revision = $3",
                        with(key(), vec![r.into()]),
                    ),
                )
                .await?;
                return Ok(n == 1);
            }
        };
        let mut values = with(key(), vec![body.into()]);
        if let Expect::Revision(r) = w.expect {
            values.push(i64::try_from(r).unwrap_or(i64::MAX).into());
        }
        Ok(exec(txn, self.stmt(sql, values)).await? == 1 || w.expect == Expect::Any)
    }
}

#[async_trait]
impl Documents for SeaOrmStore {
    async fn get_document(&self, collection: &str, key: &str) -> Result<Option<Document>> {
        one(
            &self.db,
            self.stmt(
                "SELECT doc_key, body, revision FROM documents \
                 WHERE collection = $1 AND doc_key = $2",
                vec![collection.into(), key.into()],
            ),
        )
        .await?
        .as_ref()
        .map(document)
        .transpose()
    }

    async fn scan_documents(
        &self,
        collection: &str,
        range: KeyRange<'_>,
        limit: usize,
    ) -> Result<Vec<Document>> {
        let mut sql = String::from(
            "SELECT doc_key, body, revision FROM documents \
             WHERE collection = $1 AND doc_key >= $2",
        );
        let mut values: Vec<Value> = vec![collection.into(), range.prefix.into()];
        if let Some(after) = range.after {
            values.push(after.into());
            sql.push_str(&format!(" AND doc_key > ${}", values.len()));
        }
        values.push(i64::try_from(limit).unwrap_or(i64::MAX).into());
        sql.push_str(&format!(" ORDER BY doc_key LIMIT ${}", values.len()));
        let rows = all(&self.db, self.stmt(&sql, values)).await?;
        // Keys after the prefix's run end the page.
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let d = document(row)?;
            if !d.key.starts_with(range.prefix) {
                break;
            }
            out.push(d);
        }
        Ok(out)
    }

    async fn keys_under(&self, collection: &str, prefixes: &[String]) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for run in prefixes.chunks(PREFIX_RUN) {
            let Some((sql, values)) = prefix_scan(self.backend(), collection, run)? else {
                // A prefix no key sorts after (only ever U+10FFFF characters): one by one.
                out.extend(keys_one_prefix_at_a_time(self, collection, run).await?);
                continue;
            };
            let rows = all(&self.db, self.stmt(sql, values)).await?;
            for row in &rows {
                out.push(get(row, "doc_key")?);
            }
        }
        Ok(out)
    }

    async fn write_documents(&self, writes: &[DocWrite]) -> Result<bool> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let mut rest = writes;
        while let Some(w) = rest.first() {
            // A run of unconditional deletes of one collection (expired counters) is one
            // statement.
            let run = rest
                .iter()
                .take_while(|d| {
                    d.op == Op::Delete && d.expect == Expect::Any && d.collection == w.collection
                })
                .take(DELETE_RUN)
                .count();
            if run > 1 {
                let mut values: Vec<Value> = vec![w.collection.into()];
                let marks: Vec<String> = rest[..run]
                    .iter()
                    .map(|d| {
                        values.push(d.key.clone().into());
                        format!("${}", values.len())
                    })
                    .collect();
                let sql = format!(
                    "DELETE FROM documents WHERE collection = $1 AND doc_key IN ({})",
                    marks.join(", ")
                );
                exec(&txn, self.stmt(&sql, values)).await?;
                rest = &rest[run..];
                continue;
            }
            // A run of unconditional puts of distinct keys (a token with its index entries) is
            // one upsert.
            let mut seen = std::collections::HashSet::new();
            let puts = rest
                .iter()
                .take_while(|d| {
                    matches!(d.op, Op::Put(_))
                        && d.expect == Expect::Any
                        && seen.insert((d.collection, d.key.as_str()))
                })
                .take(PUT_RUN)
                .count();
            if puts > 1 {
                let mut values: Vec<Value> = Vec::with_capacity(puts * 3);
                let rows: Vec<String> = rest[..puts]
                    .iter()
                    .map(|d| {
                        let body = match &d.op {
                            Op::Put(body) => body.clone(),
                            _ => String::new(),
                        };
                        values.push(d.collection.into());
                        values.push(d.key.clone().into());
                        values.push(body.into());
                        let n = values.len();
                        format!("(${}, ${}, ${}, 1)", n - 2, n - 1, n)
                    })
                    .collect();
                let sql = format!(
                    "INSERT INTO documents (collection, doc_key, body, revision) VALUES {} \
                     ON CONFLICT (collection, doc_key) DO UPDATE \
                     SET body = excluded.body, revision = documents.revision + 1",
                    rows.join(", ")
                );
                exec(&txn, self.stmt(&sql, values)).await?;
                rest = &rest[puts..];
                continue;
            }
            if !self.write_document(&txn, w).await? {
                txn.rollback().await.map_err(db_error)?;
                return Ok(false);
            }
            rest = &rest[1..];
        }
        txn.commit().await.map_err(db_error)?;
        Ok(true)
    }
}

/// A key-range scan of the index for each of `prefixes`, in the order given, or `None` when
/// one has no end ([`prefix_end`]): the ranges go as one JSON parameter, and each is read by its own index
/// scan (a lateral join on PostgreSQL, the outer loop of a `CROSS JOIN` on SQLite). One text
/// for any number of ranges is prepared once per connection; ranges written into the text as
/// parameters of their own were slower on both (a new statement to prepare per count, and on
/// PostgreSQL a generic plan that guessed each range's width and read the table per range).
fn prefix_scan(
    backend: DbBackend,
    collection: &str,
    prefixes: &[String],
) -> Result<Option<(&'static str, Vec<Value>)>> {
    let Some(ranges) = prefixes
        .iter()
        .map(|p| Some((p.as_str(), prefix_end(p)?)))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let ranges = serde_json::to_string(&ranges).map_err(inlet_core::Error::backend)?;
    let sql = match backend {
        DbBackend::Postgres => {
            "SELECT d.doc_key \
             FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS r(bounds, n) \
             CROSS JOIN LATERAL (SELECT doc_key FROM documents \
               WHERE collection = $1 AND doc_key >= (r.bounds->>0) COLLATE \"C\" \
               AND doc_key < (r.bounds->>1) COLLATE \"C\" \
               ORDER BY doc_key) d \
             ORDER BY r.n, d.doc_key"
        }
        _ => {
            "SELECT d.doc_key FROM json_each($2) AS r \
             CROSS JOIN documents AS d \
             WHERE d.collection = $1 AND d.doc_key >= (r.value ->> 0) \
             AND d.doc_key < (r.value ->> 1) \
             ORDER BY r.key, d.doc_key"
        }
    };
    Ok(Some((sql, vec![collection.into(), ranges.into()])))
}
