//! Copying a deployment between SQL stores (DESIGN 7c): every table but the transient ones, row
//! for row, from a consistent snapshot of the source into an empty target, then verified table
//! by table (row count and an order-independent digest of the rows). The target carries a mark
//! while it is incomplete: the service refuses to start on a marked database
//! ([`SeaOrmStore::copy_mark`]), and a rerun of the copy starts it over.
//!
//! Rows are read in pages by key (keyset paging; tables without a primary key by groups of a
//! key column) and written in multi-row inserts, one transaction per page, so memory does not
//! grow with the store.

use std::fmt;

use inlet_core::{Error, Result};
use sea_orm::{
    AccessMode, ConnectionTrait, DbBackend, IsolationLevel, QueryResult, TransactionTrait, Value,
};
use sha2::{Digest, Sha256};

use crate::{SeaOrmStore, all, db_error, exec, get, one};

/// One copied table: its name and the columns it is paged by.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// The table.
    pub name: &'static str,
    /// Its primary key, or (with `grouped`) the column its rows are grouped by.
    pub key: &'static [&'static str],
    /// No primary key: pages hold every row of a run of `key` values.
    pub grouped: bool,
}

const fn table(name: &'static str, key: &'static [&'static str]) -> Table {
    Table {
        name,
        key,
        grouped: false,
    }
}

/// Every table a copy carries, parents before the rows that refer to them.
pub const TABLES: &[Table] = &[
    table("sources", &["id"]),
    table("object_types", &["id"]),
    table("sync_runs", &["object_type_id", "sync_number"]),
    table("sync_counters", &["object_type_id", "sync_number", "shard"]),
    table("records", &["id"]),
    Table {
        name: "record_tags",
        key: &["record_id"],
        grouped: true,
    },
    table("change_head", &["id"]),
    table("change_log", &["pos"]),
    table("webhook_deliveries", &["id"]),
    table("documents", &["collection", "doc_key"]),
];

/// Tables a copy leaves out: each store's migration history and the copy's own mark.
pub const NOT_COPIED: &[&str] = &["seaql_migrations", "copy_marks"];

/// Rows read and written at once.
const PAGE: usize = 1000;
/// Most values one insert binds (SQLite allows 32,766, PostgreSQL 65,535).
const MAX_BINDS: usize = 30_000;

/// How a column's values are read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Int32,
    Int64,
    Bool,
    Float,
    Text,
}

#[derive(Debug, Clone)]
struct Column {
    name: String,
    kind: Kind,
}

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Null,
    Int(i64),
    Bool(bool),
    Float(f64),
    Text(String),
}

impl Cell {
    /// The value bound for a column of `kind` (a typed NULL: PostgreSQL infers from it).
    fn value(&self, kind: Kind) -> Value {
        match (self, kind) {
            (Cell::Null, Kind::Int32) => Value::Int(None),
            (Cell::Null, Kind::Int64) => Value::BigInt(None),
            (Cell::Null, Kind::Bool) => Value::Bool(None),
            (Cell::Null, Kind::Float) => Value::Double(None),
            (Cell::Null, Kind::Text) => Value::String(None),
            (Cell::Int(v), Kind::Int32) => Value::Int(Some(i32::try_from(*v).unwrap_or(i32::MAX))),
            (Cell::Int(v), Kind::Bool) => Value::Bool(Some(*v != 0)),
            (Cell::Int(v), _) => Value::BigInt(Some(*v)),
            (Cell::Bool(v), Kind::Int32 | Kind::Int64) => Value::BigInt(Some(i64::from(*v))),
            (Cell::Bool(v), _) => Value::Bool(Some(*v)),
            (Cell::Float(v), _) => Value::Double(Some(*v)),
            (Cell::Text(v), _) => Value::String(Some(v.clone())),
        }
    }

    /// Feeds the value to a row digest (the same on every backend).
    fn digest(&self, h: &mut Sha256) {
        match self {
            Cell::Null => h.update([0]),
            Cell::Int(v) => {
                h.update([1]);
                h.update(v.to_le_bytes());
            }
            Cell::Bool(v) => h.update([2, u8::from(*v)]),
            Cell::Float(v) => {
                h.update([3]);
                h.update(v.to_le_bytes());
            }
            Cell::Text(v) => {
                h.update([4]);
                h.update((v.len() as u64).to_le_bytes());
                h.update(v.as_bytes());
            }
        }
    }
}

fn kind_of(declared: &str) -> Kind {
    let t = declared.to_ascii_uppercase();
    if t.contains("BOOL") {
        Kind::Bool
    } else if t == "INTEGER" || t == "INT" || t == "INT4" || t == "SMALLINT" {
        Kind::Int32
    } else if t.contains("INT") {
        Kind::Int64
    } else if t.contains("DOUBLE") || t.contains("REAL") || t.contains("FLOAT") {
        Kind::Float
    } else {
        Kind::Text
    }
}

/// The columns of `table` as the connection's database declares them, in order.
async fn columns(db: &impl ConnectionTrait, table: &str) -> Result<Vec<Column>> {
    let backend = db.get_database_backend();
    let rows = match backend {
        DbBackend::Postgres => {
            all(
                db,
                crate::stmt(
                    backend,
                    "SELECT column_name AS name, data_type AS type \
                     FROM information_schema.columns \
                     WHERE table_name = $1 AND table_schema = current_schema() \
                     ORDER BY ordinal_position",
                    vec![table.into()],
                ),
            )
            .await?
        }
        _ => {
            all(
                db,
                crate::stmt(
                    backend,
                    &format!("SELECT name, type FROM pragma_table_info('{table}') ORDER BY cid"),
                    vec![],
                ),
            )
            .await?
        }
    };
    let mut out = Vec::new();
    for r in rows {
        let declared: String = get(&r, "type")?;
        let mut kind = kind_of(&declared);
        // SQLite stores every integer in 64 bits.
        if backend == DbBackend::Sqlite && kind == Kind::Int32 {
            kind = Kind::Int64;
        }
        out.push(Column {
            name: get(&r, "name")?,
            kind,
        });
    }
    if out.is_empty() {
        return Err(Error::invalid(format!("the database has no table {table}")));
    }
    Ok(out)
}

/// The source's columns in the target's order: both databases ran the same migrations, but a
/// database upgraded from an old version may hold them in another order.
fn same_columns(table: &str, from: Vec<Column>, to: &[Column]) -> Result<Vec<Column>> {
    if from.len() != to.len() {
        return Err(differs(table));
    }
    to.iter()
        .map(|t| {
            from.iter()
                .find(|f| f.name == t.name)
                .cloned()
                .ok_or_else(|| differs(table))
        })
        .collect()
}

fn differs(table: &str) -> Error {
    Error::invalid(format!(
        "table {table} differs between the two databases: open both with this version first \
         (`inlet serve` migrates)"
    ))
}

fn cell(row: &QueryResult, c: &Column) -> Result<Cell> {
    let name = c.name.as_str();
    Ok(match c.kind {
        Kind::Int32 => get::<Option<i32>>(row, name)?.map_or(Cell::Null, |v| Cell::Int(v.into())),
        Kind::Int64 => get::<Option<i64>>(row, name)?.map_or(Cell::Null, Cell::Int),
        Kind::Bool => get::<Option<bool>>(row, name)?.map_or(Cell::Null, Cell::Bool),
        Kind::Float => get::<Option<f64>>(row, name)?.map_or(Cell::Null, Cell::Float),
        Kind::Text => get::<Option<String>>(row, name)?.map_or(Cell::Null, Cell::Text),
    })
}

/// Reads a table page by page in key order.
struct Pager<'a> {
    table: Table,
    columns: &'a [Column],
    /// The key of the last row read (the group value, for a grouped table).
    after: Option<Vec<Cell>>,
    done: bool,
}

impl<'a> Pager<'a> {
    fn new(table: Table, columns: &'a [Column]) -> Self {
        Self {
            table,
            columns,
            after: None,
            done: false,
        }
    }

    fn key_columns(&self) -> Result<Vec<&'a Column>> {
        self.table
            .key
            .iter()
            .map(|k| {
                self.columns.iter().find(|c| c.name == *k).ok_or_else(|| {
                    Error::invalid(format!("table {} has no column {k}", self.table.name))
                })
            })
            .collect()
    }

    /// The next page (empty at the end).
    async fn next(&mut self, db: &impl ConnectionTrait) -> Result<Vec<Vec<Cell>>> {
        if self.done {
            return Ok(Vec::new());
        }
        let keys = self.key_columns()?;
        let list = self
            .columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let key_list = self.table.key.join(", ");
        let mut values: Vec<Value> = Vec::new();
        let after = match &self.after {
            Some(last) => {
                let marks: Vec<String> = last
                    .iter()
                    .zip(&keys)
                    .map(|(cell, col)| {
                        values.push(cell.value(col.kind));
                        format!("${}", values.len())
                    })
                    .collect();
                format!("WHERE ({key_list}) > ({})", marks.join(", "))
            }
            None => String::new(),
        };
        let t = self.table.name;
        let sql = if self.table.grouped {
            format!(
                "SELECT {list} FROM {t} WHERE {key_list} IN \
                 (SELECT DISTINCT {key_list} FROM {t} {after} ORDER BY {key_list} LIMIT {PAGE}) \
                 ORDER BY {list}"
            )
        } else {
            format!("SELECT {list} FROM {t} {after} ORDER BY {key_list} LIMIT {PAGE}")
        };
        let rows = all(db, crate::stmt(db.get_database_backend(), &sql, values)).await?;
        let mut page = Vec::with_capacity(rows.len());
        for r in &rows {
            page.push(
                self.columns
                    .iter()
                    .map(|c| cell(r, c))
                    .collect::<Result<Vec<_>>>()?,
            );
        }
        if !self.table.grouped && page.len() < PAGE {
            self.done = true;
        }
        match page.last() {
            Some(last) => {
                let at: Vec<Cell> = self
                    .table
                    .key
                    .iter()
                    .filter_map(|k| self.columns.iter().position(|c| c.name == *k))
                    .map(|i| last[i].clone())
                    .collect();
                self.after = Some(at);
            }
            None => self.done = true,
        }
        Ok(page)
    }
}

/// Writes rows into `table` of the connection, in inserts of at most [`MAX_BINDS`] values.
async fn insert(
    db: &impl ConnectionTrait,
    table: &str,
    columns: &[Column],
    rows: &[Vec<Cell>],
) -> Result<()> {
    let per = (MAX_BINDS / columns.len()).max(1);
    let names = columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    for chunk in rows.chunks(per) {
        let mut values = Vec::with_capacity(chunk.len() * columns.len());
        let mut tuples = Vec::with_capacity(chunk.len());
        for row in chunk {
            let marks: Vec<String> = row
                .iter()
                .zip(columns)
                .map(|(cell, col)| {
                    values.push(cell.value(col.kind));
                    format!("${}", values.len())
                })
                .collect();
            tuples.push(format!("({})", marks.join(", ")));
        }
        let sql = format!("INSERT INTO {table} ({names}) VALUES {}", tuples.join(", "));
        exec(db, crate::stmt(db.get_database_backend(), &sql, values)).await?;
    }
    Ok(())
}

/// What a copy or a verification tells as it goes.
#[derive(Debug, Clone)]
pub enum Step {
    /// An interrupted copy into the target was found: starting over.
    StartingOver,
    /// A table is being copied: rows so far and in all.
    Copying {
        /// The table.
        table: &'static str,
        /// Rows written so far.
        done: u64,
        /// Rows in the source's snapshot.
        total: u64,
    },
    /// A table was copied.
    Copied {
        /// The table.
        table: &'static str,
        /// Rows written.
        rows: u64,
    },
    /// A table was compared.
    Verified {
        /// The table.
        table: &'static str,
        /// Rows on each side.
        rows: u64,
    },
}

/// A table whose rows differ between two stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The table.
    pub table: &'static str,
    /// Rows in the first store and their digest.
    pub left: (u64, String),
    /// Rows in the second store and their digest.
    pub right: (u64, String),
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} rows (digest {}) against {} rows (digest {})",
            self.table, self.left.0, self.left.1, self.right.0, self.right.1
        )
    }
}

/// Row count and an order-independent digest (the wrapping sum of the rows' SHA-256) of a
/// table.
async fn digest(db: &impl ConnectionTrait, table: Table) -> Result<(u64, String)> {
    let mut cols = columns(db, table.name).await?;
    cols.sort_by(|a, b| a.name.cmp(&b.name));
    let mut pager = Pager::new(table, &cols);
    let (mut n, mut sum) = (0u64, [0u128; 2]);
    loop {
        let page = pager.next(db).await?;
        if page.is_empty() {
            break;
        }
        for row in &page {
            let mut h = Sha256::new();
            for c in row {
                c.digest(&mut h);
            }
            let d = h.finalize();
            let (a, b) = d.split_at(16);
            sum[0] = sum[0].wrapping_add(u128::from_le_bytes(a.try_into().unwrap_or_default()));
            sum[1] = sum[1].wrapping_add(u128::from_le_bytes(b.try_into().unwrap_or_default()));
            n += 1;
        }
    }
    Ok((n, format!("{:032x}{:032x}", sum[1], sum[0])))
}

/// Compares every copied table of two connections; the tables that differ.
async fn compare(
    a: &impl ConnectionTrait,
    b: &impl ConnectionTrait,
    step: &mut (dyn FnMut(Step) + Send),
) -> Result<Vec<Difference>> {
    let mut out = Vec::new();
    for t in TABLES {
        let (left, right) = (digest(a, *t).await?, digest(b, *t).await?);
        step(Step::Verified {
            table: t.name,
            rows: left.0,
        });
        if left != right {
            out.push(Difference {
                table: t.name,
                left,
                right,
            });
        }
    }
    Ok(out)
}

async fn count(db: &impl ConnectionTrait, table: &str) -> Result<u64> {
    let row = one(
        db,
        crate::stmt(
            db.get_database_backend(),
            &format!("SELECT COUNT(*) AS n FROM {table}"),
            vec![],
        ),
    )
    .await?;
    Ok(row
        .map(|r| get::<i64>(&r, "n"))
        .transpose()?
        .map_or(0, |n| u64::try_from(n).unwrap_or(0)))
}

impl SeaOrmStore {
    /// The mark an unfinished copy left (where it copied from, and when it began), if any.
    pub async fn copy_mark(&self) -> Result<Option<String>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT source, started_ms FROM copy_marks WHERE id = 1",
                vec![],
            ),
        )
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let source: String = get(&row, "source")?;
        let started = crate::from_millis(get(&row, "started_ms")?)?;
        Ok(Some(format!(
            "an unfinished copy from {source} begun {}",
            inlet_core::time::format(&started)
        )))
    }

    /// Whether the store holds anything a copy would carry (a fresh store holds only the
    /// change log's head at 0).
    pub async fn is_empty(&self) -> Result<bool> {
        for t in TABLES {
            let n = count(&self.db, t.name).await?;
            let fresh = if t.name == "change_head" { 1 } else { 0 };
            if n > fresh {
                return Ok(false);
            }
        }
        let head = one(
            &self.db,
            self.stmt("SELECT pos FROM change_head WHERE id = 1", vec![]),
        )
        .await?;
        Ok(head
            .map(|r| get::<i64>(&r, "pos"))
            .transpose()?
            .unwrap_or(0)
            == 0)
    }

    /// Copies everything this store holds into `target`, which must be empty or hold an
    /// unfinished copy (then started over), reading one consistent snapshot of this store
    /// (it may serve meanwhile), and compares every table of the two. The target stays marked
    /// unfinished (the service refuses it) until [`Self::finish_copy`]: the caller copies
    /// the originals first. `label` names this store in the target's mark.
    pub async fn copy_into(
        &self,
        target: &SeaOrmStore,
        label: &str,
        step: &mut (dyn FnMut(Step) + Send),
    ) -> Result<()> {
        if let Some(mark) = self.copy_mark().await? {
            return Err(Error::invalid(format!(
                "the source holds {mark}: finish that copy first"
            )));
        }
        if target.copy_mark().await?.is_some() {
            step(Step::StartingOver);
            target.wipe().await?;
        } else if !target.is_empty().await? {
            return Err(Error::invalid(
                "the target database is not empty: copy into a new database (or one an \
                 interrupted copy left)",
            ));
        }
        exec(&target.db, target.stmt("DELETE FROM copy_marks", vec![])).await?;
        exec(
            &target.db,
            target.stmt(
                "INSERT INTO copy_marks (id, source, started_ms) VALUES (1, $1, $2)",
                vec![
                    label.to_string().into(),
                    inlet_core::time::now().timestamp_millis().into(),
                ],
            ),
        )
        .await?;
        let snapshot = self
            .db
            .begin_with_config(
                Some(IsolationLevel::RepeatableRead),
                Some(AccessMode::ReadOnly),
            )
            .await
            .map_err(db_error)?;
        // A SQLite read transaction takes its snapshot at its first read.
        count(&snapshot, "documents").await?;
        for t in TABLES {
            let to_cols = columns(&target.db, t.name).await?;
            let from_cols = same_columns(t.name, columns(&snapshot, t.name).await?, &to_cols)?;
            let total = count(&snapshot, t.name).await?;
            exec(
                &target.db,
                target.stmt(&format!("DELETE FROM {}", t.name), vec![]),
            )
            .await?;
            let mut pager = Pager::new(*t, &from_cols);
            let mut done = 0u64;
            loop {
                let page = pager.next(&snapshot).await?;
                if page.is_empty() {
                    break;
                }
                let tx = target.db.begin().await.map_err(db_error)?;
                insert(&tx, t.name, &to_cols, &page).await?;
                tx.commit().await.map_err(db_error)?;
                done += page.len() as u64;
                step(Step::Copying {
                    table: t.name,
                    done,
                    total,
                });
            }
            step(Step::Copied {
                table: t.name,
                rows: done,
            });
        }
        let differences = compare(&snapshot, &target.db, step).await?;
        snapshot.rollback().await.map_err(db_error)?;
        if !differences.is_empty() {
            let list: Vec<String> = differences.iter().map(ToString::to_string).collect();
            return Err(Error::invalid(format!(
                "the copy differs from its source: {}",
                list.join("; ")
            )));
        }
        Ok(())
    }

    /// Clears the mark of an unfinished copy: the store serves again.
    pub async fn finish_copy(&self) -> Result<()> {
        exec(&self.db, self.stmt("DELETE FROM copy_marks", vec![])).await?;
        Ok(())
    }

    /// Writes a consistent snapshot of this SQLite database to the new file `path` while it
    /// may serve (`VACUUM INTO`).
    pub async fn backup_to(&self, path: &std::path::Path) -> Result<()> {
        if self.backend() != DbBackend::Sqlite {
            return Err(Error::invalid(
                "`inlet admin backup` snapshots a SQLite database; back PostgreSQL up with \
                 pg_dump (docs/operators.md, Backups)",
            ));
        }
        if path.exists() {
            return Err(Error::invalid(format!(
                "{} exists: a backup is written to a new file",
                path.display()
            )));
        }
        let quoted = path.to_string_lossy().replace('\'', "''");
        exec(
            &self.db,
            self.stmt(&format!("VACUUM INTO '{quoted}'"), vec![]),
        )
        .await?;
        Ok(())
    }

    /// Compares every copied table of this store and `other`; the tables that differ.
    pub async fn verify_against(
        &self,
        other: &SeaOrmStore,
        step: &mut (dyn FnMut(Step) + Send),
    ) -> Result<Vec<Difference>> {
        compare(&self.db, &other.db, step).await
    }

    /// Empties every copied table (children first): what an interrupted copy left.
    async fn wipe(&self) -> Result<()> {
        for t in TABLES.iter().rev() {
            exec(
                &self.db,
                self.stmt(&format!("DELETE FROM {}", t.name), vec![]),
            )
            .await?;
        }
        Ok(())
    }

    /// The tables of this database that a copy neither carries nor leaves out on purpose (a
    /// table a migration added without teaching the copy about it): should be none.
    pub async fn uncopied_tables(&self) -> Result<Vec<String>> {
        let sql = match self.backend() {
            DbBackend::Postgres => {
                "SELECT table_name AS name FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
            }
            _ => "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        };
        let rows = all(&self.db, self.stmt(sql, vec![])).await?;
        let mut out = Vec::new();
        for r in rows {
            let name: String = get(&r, "name")?;
            if !TABLES.iter().any(|t| t.name == name) && !NOT_COPIED.contains(&name.as_str()) {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }
}
