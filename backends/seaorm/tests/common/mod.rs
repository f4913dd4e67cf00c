//! PostgreSQL for this crate's test suites: a fresh schema per case on
//! `INLET_TEST_POSTGRES_URL` (CI: `postgres://postgres@127.0.0.1:5432/test`). Without the
//! variable a case is skipped, unless `INLET_REQUIRE_POSTGRES=1`, which makes the missing
//! database a failure (CI sets it so no suite can silently not run).

use std::future::Future;

use sea_orm::{ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement, Value};

/// The server's URL, or `None` (after printing why) when the suite is to be skipped.
pub fn base_url() -> Option<String> {
    match std::env::var("INLET_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("INLET_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "INLET_REQUIRE_POSTGRES=1 but INLET_TEST_POSTGRES_URL is not set"
            );
            println!("skipped: INLET_TEST_POSTGRES_URL is not set");
            None
        }
    }
}

/// A schema of its own (`inlet_t_…`), and the URL whose connections use it.
pub struct PgSchema {
    pub name: String,
    pub url: String,
}

impl PgSchema {
    /// Creates a fresh schema, or `None` when the suite is skipped.
    pub async fn create() -> Option<PgSchema> {
        let base = base_url()?;
        let name = format!("inlet_t_{}", uuid::Uuid::new_v4().simple());
        let admin = Database::connect(base.as_str())
            .await
            .expect("connect to INLET_TEST_POSTGRES_URL");
        admin
            .execute_unprepared(&format!("CREATE SCHEMA {name}"))
            .await
            .expect("create schema");
        admin.close().await.ok();
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options=-c%20search_path%3D{name}");
        Some(PgSchema { name, url })
    }

    /// Drops the schema `name` (only ever one of ours: `inlet_t_…`).
    pub async fn drop_named(name: &str) {
        if !name.starts_with("inlet_t_") {
            return;
        }
        let Some(base) = base_url() else {
            return;
        };
        if let Ok(admin) = Database::connect(base.as_str()).await {
            let _ = admin
                .execute_unprepared(&format!("DROP SCHEMA {name} CASCADE"))
                .await;
            admin.close().await.ok();
        }
    }
}

/// Runs `case` over a fresh SQLite file in a folder of its own, removed afterwards.
#[allow(dead_code)] // not every suite runs on SQLite files
pub async fn on_sqlite<F, Fut>(case: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = std::env::temp_dir().join(format!("inlet-upgrade-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    case(format!(
        "sqlite://{}?mode=rwc",
        dir.join("old.db").display()
    ))
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `case` over a fresh PostgreSQL schema (skipped as [`base_url`] says), dropped
/// afterwards.
#[allow(dead_code)] // not every suite runs cases this way
pub async fn on_postgres<F, Fut>(case: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(schema) = PgSchema::create().await else {
        return;
    };
    case(schema.url.clone()).await;
    PgSchema::drop_named(&schema.name).await;
}

/// A statement from SQL written with `$1`-style placeholders (SQLite gets `?`), for writing
/// the rows of an earlier version's tables.
#[allow(dead_code)] // only the upgrade suites write old rows
pub fn statement(backend: DbBackend, sql: &str, values: Vec<Value>) -> Statement {
    let sql = match backend {
        DbBackend::Postgres => sql.to_string(),
        _ => sql.replace('$', "?"),
    };
    Statement::from_sql_and_values(backend, sql, values)
}

/// Writes `source` and its first object type as the tables of m0007 to m0023 keep them.
#[allow(dead_code)] // only the upgrade suites write old rows
pub async fn old_source(db: &DatabaseConnection, source: &inlet_core::source::Source) {
    let backend = db.get_database_backend();
    let ot = &source.object_types[0];
    let rows: [(&str, Vec<Value>); 2] = [
        (
            "INSERT INTO sources (id, workspace_id, seq, body, external_id) \
             VALUES ($1, $2, 1, $3, $4)",
            vec![
                source.id.to_string().into(),
                source.workspace_id.to_string().into(),
                serde_json::to_string(source).unwrap().into(),
                source.external_id.clone().into(),
            ],
        ),
        (
            "INSERT INTO object_types (id, source_id, workspace_id, name) \
             VALUES ($1, $2, $3, $4)",
            vec![
                ot.id.to_string().into(),
                source.id.to_string().into(),
                source.workspace_id.to_string().into(),
                ot.name.clone().into(),
            ],
        ),
    ];
    for (sql, values) in rows {
        db.execute_raw(statement(backend, sql, values))
            .await
            .unwrap();
    }
}

/// Asserts that each of `tables` is gone (a migration dropped it).
#[allow(dead_code)] // only the upgrade suites drop tables
pub async fn assert_gone(db: &DatabaseConnection, tables: &[&str]) {
    for table in tables {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        let gone = db
            .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
            .await;
        assert!(gone.is_err(), "{table} is still there");
    }
}
