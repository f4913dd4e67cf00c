//! m0021: the `documents` table ([`inlet_core::store::Documents`]); the jobs (m0019) and
//! rate-limit counters (m0001, m0011) kept so far in tables of their own move into it, as the
//! documents core now keeps them as, and their tables are dropped.

use inlet_core::store::{
    documents::{DocWrite, Op},
    jobs, rate_limits,
};
use sea_orm_migration::{
    MigrationTrait, SchemaManager, async_trait,
    prelude::{ConnectionTrait, DbErr},
    sea_orm::{DbBackend, QueryResult, Statement, Value},
};

/// The migration.
pub struct M0021Documents;

/// Inserts one document row (a key already there is left as it is).
pub(super) async fn insert(
    db: &impl ConnectionTrait,
    collection: &str,
    key: String,
    body: String,
    revision: i64,
) -> Result<(), DbErr> {
    let values: Vec<Value> = vec![collection.into(), key.into(), body.into(), revision.into()];
    db.execute_raw(crate::stmt(
        db.get_database_backend(),
        "INSERT INTO documents (collection, doc_key, body, revision) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (collection, doc_key) DO NOTHING",
        values,
    ))
    .await?;
    Ok(())
}

/// Inserts the documents `writes` put, each at revision 1.
pub(super) async fn insert_puts(
    db: &impl ConnectionTrait,
    writes: Vec<DocWrite>,
) -> Result<(), DbErr> {
    for w in writes {
        if let Op::Put(body) = w.op {
            insert(db, w.collection, w.key, body, 1).await?;
        }
    }
    Ok(())
}

/// A column of a row.
pub(super) fn col<T: sea_orm_migration::sea_orm::TryGetable>(
    row: &QueryResult,
    c: &str,
) -> Result<T, DbErr> {
    row.try_get("", c)
}

/// A migration error of this data.
pub(super) fn bad(e: impl std::fmt::Display) -> DbErr {
    DbErr::Migration(format!("moving to documents: {e}"))
}

impl sea_orm_migration::MigrationName for M0021Documents {
    fn name(&self) -> &str {
        "m0021_documents"
    }
}

fn create(backend: DbBackend) -> String {
    // Keys compare byte by byte: SQLite's default collation does; PostgreSQL's is named.
    let collate = match backend {
        DbBackend::Postgres => " COLLATE \"C\"",
        _ => "",
    };
    format!(
        "CREATE TABLE documents (collection TEXT NOT NULL, doc_key TEXT{collate} NOT NULL, \
         body TEXT NOT NULL, revision BIGINT NOT NULL, PRIMARY KEY (collection, doc_key))"
    )
}

/// The document rows of the stored jobs: (key, body, revision).
fn job_documents(rows: &[QueryResult]) -> Result<Vec<(String, String, i64)>, DbErr> {
    rows.iter()
        .map(|row| {
            let ms: i64 = col(row, "created_ms")?;
            let body: String = col(row, "body")?;
            let doc = jobs::JobDoc {
                kind: col(row, "kind")?,
                workspace_id: col::<Option<String>>(row, "workspace_id")?
                    .map(|w| uuid::Uuid::parse_str(&w).map_err(bad))
                    .transpose()?,
                created_at: chrono::DateTime::from_timestamp_millis(ms)
                    .ok_or_else(|| bad("a job's time is out of range"))?,
                finished: col(row, "finished")?,
                body: serde_json::from_str(&body).map_err(bad)?,
            };
            Ok((
                col(row, "id")?,
                serde_json::to_string(&doc).map_err(bad)?,
                col(row, "revision")?,
            ))
        })
        .collect()
}

#[async_trait::async_trait]
impl MigrationTrait for M0021Documents {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = db.get_database_backend();
        db.execute_unprepared(&create(backend)).await?;
        let job_rows = db
            .query_all_raw(Statement::from_string(
                backend,
                "SELECT id, kind, workspace_id, created_ms, finished, body, revision FROM jobs",
            ))
            .await?;
        for (key, body, revision) in job_documents(&job_rows)? {
            insert(db, jobs::COLLECTION, key, body, revision).await?;
        }
        let counters = db
            .query_all_raw(Statement::from_string(
                backend,
                "SELECT rate_key, window_start, hits FROM rate_limits",
            ))
            .await?;
        for row in &counters {
            let key: String = col(row, "rate_key")?;
            let window: i64 = col(row, "window_start")?;
            let hits: i64 = col(row, "hits")?;
            let hits = u32::try_from(hits).unwrap_or(u32::MAX).to_string();
            insert(
                db,
                rate_limits::COLLECTION,
                rate_limits::counter_key(&key, window),
                hits,
                1,
            )
            .await?;
        }
        db.execute_unprepared("DROP TABLE jobs").await?;
        db.execute_unprepared("DROP TABLE rate_limits").await?;
        Ok(())
    }
}
