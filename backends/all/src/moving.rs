//! Moving a deployment (DESIGN 7c): copying it between SQLite and PostgreSQL with its
//! originals, comparing two stores, and backing a SQLite deployment up while it serves. The
//! tables are the SQL store's to copy (`inlet_store_seaorm::copy`); the originals go through
//! the blob store trait, so any two blob stores work.

use std::path::Path;

use inlet_core::{Error, Result, blob};
use inlet_store_seaorm::register::{default_blob_dir, open_for_copy, sqlite_path};

pub use inlet_store_seaorm::copy::{Difference, Step};

/// One end of a move: a database and its blob store of originals (`None`: the database's
/// default, as `inlet serve` picks it).
#[derive(Debug, Clone)]
pub struct End {
    /// The database URL.
    pub database: String,
    /// The blob store URL.
    pub blobs: Option<String>,
}

impl End {
    fn blobs(&self) -> String {
        self.blobs
            .clone()
            .unwrap_or_else(|| format!("file://{}", default_blob_dir(&self.database).display()))
    }
}

/// What a move tells as it goes.
#[derive(Debug, Clone)]
pub enum Event {
    /// A step of the tables' copy or comparison.
    Table(Step),
    /// Originals handled so far and in all.
    Originals {
        /// Handled.
        done: u64,
        /// In all.
        total: u64,
    },
}

/// What a copy did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Copied {
    /// Originals written to the target's blob store (those it held already are skipped).
    pub blobs: u64,
    /// Their bytes.
    pub bytes: u64,
}

fn sql_only(url: &str) -> Result<()> {
    if url.starts_with("sqlite:")
        || url.starts_with("postgres://")
        || url.starts_with("postgresql://")
    {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "'{}' is not a SQLite or PostgreSQL database: copies move between those (the memory \
             store keeps nothing to copy)",
            url.split('?').next().unwrap_or(url)
        )))
    }
}

/// Copies the deployment at `from` into `to` (empty, or holding an interrupted copy, which is
/// started over): every table from one consistent snapshot, then the originals, then a
/// comparison of every table; the target serves only once all of it succeeded.
pub async fn copy(from: &End, to: &End, event: &mut (dyn FnMut(Event) + Send)) -> Result<Copied> {
    sql_only(&from.database)?;
    sql_only(&to.database)?;
    if from.database == to.database {
        return Err(Error::invalid("--from and --to name the same database"));
    }
    let source = open_for_copy(&from.database).await?;
    let target = open_for_copy(&to.database).await?;
    let label = redacted(&from.database);
    source
        .copy_into(&target, &label, &mut |s| event(Event::Table(s)))
        .await?;
    let (from_blobs, to_blobs) = (
        blob::open(&from.blobs()).await?,
        blob::open(&to.blobs()).await?,
    );
    let (blobs, bytes) = blob::copy_all(&*from_blobs, &*to_blobs, &mut |done, total| {
        event(Event::Originals { done, total })
    })
    .await?;
    target.finish_copy().await?;
    Ok(Copied { blobs, bytes })
}

/// Compares every table of two databases; the tables that differ.
pub async fn verify(
    a: &str,
    b: &str,
    event: &mut (dyn FnMut(Event) + Send),
) -> Result<Vec<Difference>> {
    sql_only(a)?;
    sql_only(b)?;
    let (a, b) = (open_for_copy(a).await?, open_for_copy(b).await?);
    a.verify_against(&b, &mut |s| event(Event::Table(s))).await
}

/// Writes a consistent snapshot of the SQLite deployment `from` to the new file `file` while
/// it may serve, and its originals to a folder beside it (`<stem>-blobs`, where `inlet serve`
/// and `inlet admin restore` look for them).
pub async fn backup(
    from: &End,
    file: &Path,
    event: &mut (dyn FnMut(Event) + Send),
) -> Result<Copied> {
    sql_only(&from.database)?;
    let store = open_for_copy(&from.database).await?;
    store.backup_to(file).await?;
    let backup = End {
        database: format!("sqlite://{}", file.display()),
        blobs: None,
    };
    let (from_blobs, to_blobs) = (
        blob::open(&from.blobs()).await?,
        blob::open(&backup.blobs()).await?,
    );
    let (blobs, bytes) = blob::copy_all(&*from_blobs, &*to_blobs, &mut |done, total| {
        event(Event::Originals { done, total })
    })
    .await?;
    Ok(Copied { blobs, bytes })
}

/// Restores the backup `file` (with its originals beside it) into `to`: a copy.
pub async fn restore(
    file: &Path,
    to: &End,
    event: &mut (dyn FnMut(Event) + Send),
) -> Result<Copied> {
    if !file.is_file() {
        return Err(Error::invalid(format!(
            "no backup file at {}",
            file.display()
        )));
    }
    let from = End {
        database: format!("sqlite://{}", file.display()),
        blobs: Some(format!(
            "file://{}",
            default_blob_dir(&format!("sqlite://{}", file.display())).display()
        )),
    };
    copy(&from, to, event).await
}

/// A database URL without its password, for marks and messages.
fn redacted(url: &str) -> String {
    if let Some(path) = sqlite_path(url) {
        return format!("sqlite://{}", path.display());
    }
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "a database".into(),
    }
}
