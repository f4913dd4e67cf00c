#![doc = include_str!("../README.md")]

mod batch;
pub mod copy;
mod documents;
mod folders;
mod log;
mod migration;
mod records;
pub mod register;
mod sources;
mod syncs;
mod webhooks;

/// The schema migrations, run by [`SeaOrmStore::connect`]; public for tools and upgrade tests.
pub use migration::Migrator;

use std::time::Duration;

use chrono::{DateTime, Utc};
use inlet_core::{Error, time::Timestamp};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr, QueryResult,
    RuntimeErr, SqlErr, Statement, Value,
};
use uuid::Uuid;

/// Default connections in the pool.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 16;
/// How long a request waits for a pooled connection before answering 503.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long SQLite waits for a lock held by another connection.
pub const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// SQLite `mmap_size`: how much of the database file is read through a memory map.
pub const SQLITE_MMAP_BYTES: u64 = 256 * 1024 * 1024;
/// SQLite `cache_size` per connection, in KiB when negative (16 MiB).
pub const SQLITE_CACHE_KIB: i64 = -16 * 1024;

/// The SeaORM store (both traits).
#[derive(Debug, Clone)]
pub struct SeaOrmStore {
    db: DatabaseConnection,
    /// SQLite has one writer at a time: writes queue here rather than failing with "busy".
    write_lock: Option<std::sync::Arc<tokio::sync::Mutex<()>>>,
    /// Sources read recently, each kept for [`SOURCE_CACHE_TTL`]: a change made on another
    /// replica is seen within that time; this replica's own changes at once.
    sources: std::sync::Arc<
        std::sync::RwLock<
            std::collections::HashMap<uuid::Uuid, (inlet_core::source::Source, std::time::Instant)>,
        >,
    >,
}

/// Sources kept in memory per process before the cache starts over.
const SOURCE_CACHE_ENTRIES: usize = 10_000;
/// How long a cached source is trusted (sources change rarely: a rename, trackStatus, an added
/// object type, tag config or facet, a deletion).
pub const SOURCE_CACHE_TTL: Duration = Duration::from_secs(5);

impl SeaOrmStore {
    /// Connects to `url` (`sqlite://...` or `postgres://...`) and runs pending migrations.
    pub async fn connect(url: &str) -> Result<Self, Error> {
        Self::connect_with(url, DEFAULT_MAX_CONNECTIONS).await
    }

    /// Connects with a pool of at most `max_connections` and runs pending migrations.
    pub async fn connect_with(url: &str, max_connections: u32) -> Result<Self, Error> {
        Self::connect_mapped(url, max_connections, SQLITE_MMAP_BYTES).await
    }

    /// Connects for a copy that reads every page once (`crate::copy`): SQLite reads without
    /// memory-mapping the file, so the copy's resident memory stays that of its pages in flight
    /// rather than growing with the database.
    pub async fn connect_for_copy(url: &str) -> Result<Self, Error> {
        Self::connect_mapped(url, DEFAULT_MAX_CONNECTIONS, 0).await
    }

    async fn connect_mapped(url: &str, max_connections: u32, mmap: u64) -> Result<Self, Error> {
        let mut opts = ConnectOptions::new(url.to_string());
        opts.max_connections(max_connections)
            .min_connections(0)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_timeout(ACQUIRE_TIMEOUT)
            .sqlx_logging(false)
            .map_sqlx_sqlite_opts(move |o| {
                o.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                    .synchronous(sea_orm::sqlx::sqlite::SqliteSynchronous::Full)
                    .busy_timeout(SQLITE_BUSY_TIMEOUT)
                    .foreign_keys(true)
                    // Reads through the OS page cache without copying, and a larger page
                    // cache per connection than the 2 MB default.
                    .pragma("mmap_size", mmap.to_string())
                    .pragma("cache_size", SQLITE_CACHE_KIB.to_string())
            });
        let db = Database::connect(opts).await.map_err(db_error)?;
        if db.get_database_backend() == DbBackend::Postgres {
            migrate_postgres(url).await?;
        } else {
            migration::up(&db).await.map_err(db_error)?;
        }
        let write_lock = (db.get_database_backend() == DbBackend::Sqlite)
            .then(|| std::sync::Arc::new(tokio::sync::Mutex::new(())));
        Ok(Self {
            db,
            write_lock,
            sources: Default::default(),
        })
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

    /// Begins a write transaction (under [`Self::write_guard`]). On SQLite it takes the
    /// database's write lock at once (`BEGIN IMMEDIATE`), waiting for it up to the busy timeout:
    /// a deferred transaction that reads first fails at once with "database is locked" when it
    /// upgrades while another connection still holds the lock, as one whose transaction was
    /// dropped on an early return does until its rollback runs.
    async fn begin_write(&self) -> Result<sea_orm::DatabaseTransaction, Error> {
        use sea_orm::TransactionTrait;
        self.db
            .begin_with_options(sea_orm::TransactionOptions {
                sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
                ..Default::default()
            })
            .await
            .map_err(db_error)
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

/// Key of the advisory lock that serializes migrations of replicas starting at once.
const MIGRATION_LOCK: i64 = 0x1e7_0001;

/// Runs migrations on PostgreSQL under a session advisory lock, on a one-connection pool so the
/// lock and the migration share a session: replicas starting together migrate one at a time.
async fn migrate_postgres(url: &str) -> Result<(), Error> {
    let mut opts = ConnectOptions::new(url.to_string());
    opts.max_connections(1)
        .min_connections(1)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .sqlx_logging(false);
    let conn = Database::connect(opts).await.map_err(db_error)?;
    conn.execute_unprepared(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
        .await
        .map_err(db_error)?;
    let result = migration::up(&conn).await.map_err(db_error);
    let _ = conn
        .execute_unprepared(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"))
        .await;
    let _ = conn.close().await;
    result
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

/// Whether a driver error means "the database cannot serve now" rather than a bad statement.
fn sqlx_unavailable(e: &sea_orm::sqlx::Error) -> bool {
    use sea_orm::sqlx::Error as E;
    match e {
        E::Io(_) | E::Tls(_) | E::PoolTimedOut | E::PoolClosed | E::WorkerCrashed => true,
        E::Database(db) => {
            // SQLite: SQLITE_BUSY (5), SQLITE_LOCKED (6), SQLITE_IOERR (10), SQLITE_FULL (13),
            // SQLITE_CANTOPEN (14) and their extended codes; PostgreSQL: class 08 (connection),
            // 53 (insufficient resources), 57P (operator intervention, e.g. shutdown).
            let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
            let sqlite_primary = code.parse::<i64>().ok().map(|c| c & 0xff);
            matches!(sqlite_primary, Some(5 | 6 | 10 | 13 | 14))
                || code.starts_with("08")
                || code.starts_with("53")
                || code.starts_with("57P")
        }
        _ => false,
    }
}

/// A database error caused by a value in the request rather than by the database: PostgreSQL
/// class 22 (data exception: a character the encoding cannot hold, a number out of range, a
/// string too long) and 54 (program limit: an index row too large). In the caller's words.
fn refused_value(e: &DbErr) -> Option<&'static str> {
    let (DbErr::Exec(RuntimeErr::SqlxError(x)) | DbErr::Query(RuntimeErr::SqlxError(x))) = e else {
        return None;
    };
    let sea_orm::sqlx::Error::Database(db) = &**x else {
        return None;
    };
    let code = db.code()?;
    if code.starts_with("22") {
        Some(
            "a value of the request cannot be stored (a character or number the database does not accept)",
        )
    } else if code.starts_with("54") {
        Some("a value of the request is too long to store")
    } else {
        None
    }
}

/// Maps database errors into core errors: unavailability becomes [`Error::Unavailable`] (503),
/// a unique violation [`Error::Conflict`], anything else [`Error::Backend`].
pub(crate) fn db_error(e: DbErr) -> Error {
    if let Some(SqlErr::UniqueConstraintViolation(m)) = e.sql_err() {
        // The constraint's text names tables and columns: it stays in the log.
        tracing::debug!(error = %m, "unique violation");
        return Error::conflict("a concurrent request wrote the same object first; retry");
    }
    if let Some(reason) = refused_value(&e) {
        tracing::warn!(error = %e, "the database refused a value");
        return Error::invalid(reason);
    }
    let unavailable = match &e {
        DbErr::ConnectionAcquire(_) => true,
        DbErr::Conn(RuntimeErr::SqlxError(x))
        | DbErr::Exec(RuntimeErr::SqlxError(x))
        | DbErr::Query(RuntimeErr::SqlxError(x)) => sqlx_unavailable(x),
        DbErr::Conn(_) => true,
        _ => false,
    };
    if unavailable {
        Error::Unavailable(e.to_string())
    } else {
        Error::backend(e)
    }
}

fn json_error(e: serde_json::Error) -> Error {
    Error::backend(e)
}

/// A UUID column.
pub(crate) fn uuid(row: &QueryResult, col: &str) -> Result<Uuid, Error> {
    Uuid::parse_str(&get::<String>(row, col)?).map_err(Error::backend)
}

pub(crate) fn millis(t: &Timestamp) -> i64 {
    t.timestamp_millis()
}

pub(crate) fn from_millis(ms: i64) -> Result<Timestamp, Error> {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .ok_or_else(|| Error::backend(std::io::Error::other(format!("bad timestamp {ms}"))))
}

pub(crate) fn enum_text<T: serde::Serialize>(v: &T) -> Result<String, Error> {
    match serde_json::to_value(v).map_err(json_error)? {
        serde_json::Value::String(s) => Ok(s),
        other => Ok(other.to_string()),
    }
}

pub(crate) fn enum_parse<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, Error> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).map_err(json_error)
}
