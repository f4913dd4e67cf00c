#![doc = include_str!("../README.md")]

mod migration;
mod records;
mod tokens;

use std::time::Duration;

use inlet_core::Error;
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr, QueryResult,
    SqlErr, Statement, Value,
};
use sea_orm_migration::MigratorTrait;

/// Default connections in the pool.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 16;
/// How long a request waits for a pooled connection before answering 503.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long SQLite waits for a lock held by another connection.
pub const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The SeaORM store (both traits).
#[derive(Debug, Clone)]
pub struct SeaOrmStore {
    db: DatabaseConnection,
    /// SQLite has one writer at a time: writes queue here rather than failing with "busy".
    write_lock: Option<std::sync::Arc<tokio::sync::Mutex<()>>>,
}

impl SeaOrmStore {
    /// Connects to `url` (`sqlite://...` or `postgres://...`) and runs pending migrations.
    pub async fn connect(url: &str) -> Result<Self, Error> {
        Self::connect_with(url, DEFAULT_MAX_CONNECTIONS).await
    }

    /// Connects with a pool of at most `max_connections` and runs pending migrations.
    pub async fn connect_with(url: &str, max_connections: u32) -> Result<Self, Error> {
        let mut opts = ConnectOptions::new(url.to_string());
        opts.max_connections(max_connections)
            .min_connections(0)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_timeout(ACQUIRE_TIMEOUT)
            .sqlx_logging(false)
            .map_sqlx_sqlite_opts(|o| {
                o.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                    .synchronous(sea_orm::sqlx::sqlite::SqliteSynchronous::Full)
                    .busy_timeout(SQLITE_BUSY_TIMEOUT)
                    .foreign_keys(true)
            });
        let db = Database::connect(opts).await.map_err(db_error)?;
        migration::Migrator::up(&db, None).await.map_err(db_error)?;
        let write_lock = (db.get_database_backend() == DbBackend::Sqlite)
            .then(|| std::sync::Arc::new(tokio::sync::Mutex::new(())));
        Ok(Self { db, write_lock })
    }

    /// The underlying connection (for tests and tools).
    pub fn connection(&self) -> &DatabaseConnection {
        &self.db
    }

    fn backend(&self) -> DbBackend {
        self.db.get_database_backend()
    }

    /// Builds a statement from SQL written with `$1`-style placeholders (SQLite gets `?1`).
    fn stmt(&self, sql: &str, values: Vec<Value>) -> Statement {
        stmt(self.backend(), sql, values)
    }

    /// Holds SQLite's in-process writer lock (no-op on PostgreSQL).
    async fn write_guard(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match &self.write_lock {
            Some(l) => Some(l.lock().await),
            None => None,
        }
    }

    /// ` FOR UPDATE` on PostgreSQL, nothing on SQLite.
    fn for_update(&self) -> &'static str {
        match self.backend() {
            DbBackend::Postgres => " FOR UPDATE",
            _ => "",
        }
    }

    /// ` FOR SHARE` on PostgreSQL, nothing on SQLite.
    fn for_share(&self) -> &'static str {
        match self.backend() {
            DbBackend::Postgres => " FOR SHARE",
            _ => "",
        }
    }
}

fn stmt(backend: DbBackend, sql: &str, values: Vec<Value>) -> Statement {
    let sql = match backend {
        DbBackend::Postgres => sql.to_string(),
        _ => sql.replace('$', "?"),
    };
    Statement::from_sql_and_values(backend, sql, values)
}

/// Runs a query and returns every row.
async fn all(db: &impl ConnectionTrait, st: Statement) -> Result<Vec<QueryResult>, Error> {
    db.query_all_raw(st).await.map_err(db_error)
}

/// Runs a query and returns the first row, if any.
async fn one(db: &impl ConnectionTrait, st: Statement) -> Result<Option<QueryResult>, Error> {
    db.query_one_raw(st).await.map_err(db_error)
}

/// Executes a statement and returns the rows affected.
async fn exec(db: &impl ConnectionTrait, st: Statement) -> Result<u64, Error> {
    db.execute_raw(st)
        .await
        .map(|r| r.rows_affected())
        .map_err(db_error)
}

/// Reads a column.
fn get<T: sea_orm::TryGetable>(row: &QueryResult, col: &str) -> Result<T, Error> {
    row.try_get("", col).map_err(db_error)
}

/// Maps database errors into core errors: unavailability becomes [`Error::Unavailable`] (503),
/// a unique violation [`Error::Conflict`], anything else [`Error::Backend`].
pub(crate) fn db_error(e: DbErr) -> Error {
    if let Some(SqlErr::UniqueConstraintViolation(m)) = e.sql_err() {
        return Error::Conflict(m);
    }
    let text = e.to_string();
    let unavailable = matches!(e, DbErr::Conn(_) | DbErr::ConnectionAcquire(_))
        || [
            "database is locked",
            "disk is full",
            "disk I/O error",
            "No space left",
            "pool timed out",
            "Connection refused",
            "connection closed",
            "terminating connection",
            "the database system is",
            "error communicating with database",
            "unable to open database",
        ]
        .iter()
        .any(|needle| text.contains(needle));
    if unavailable {
        Error::Unavailable(text)
    } else {
        Error::backend(e)
    }
}

fn json_error(e: serde_json::Error) -> Error {
    Error::backend(e)
}
