//! The SQLite and PostgreSQL backends' registration: which database URLs this crate opens, and
//! where the search index lives by default for each.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use inlet_core::backend::{BackendInfo, OpenFuture, Opened, Stores};
use sea_orm_migration::MigratorTrait;

use crate::{Migrator, SeaOrmStore};

inventory::submit! {
    BackendInfo {
        name: "sqlite",
        schemes: &["sqlite:"],
        example: "sqlite://FILE?mode=rwc",
        open,
    }
}

inventory::submit! {
    BackendInfo {
        name: "postgres",
        schemes: &["postgres://", "postgresql://"],
        example: "postgres://...",
        open,
    }
}

fn open(url: &str) -> OpenFuture {
    let url = sqlite_creates_file(url);
    Box::pin(async move {
        create_private_file(&url);
        let store = SeaOrmStore::connect(&url).await?;
        if let Some(mark) = store.copy_mark().await? {
            return Err(inlet_core::Error::invalid(format!(
                "this database holds {mark}: it is incomplete; run the same `inlet admin copy` \
                 again to finish it"
            )));
        }
        Ok(Opened {
            stores: Stores::of(Arc::new(store)),
            description: format!("{} migrations applied", Migrator::migrations().len()),
            default_index_dir: Some(default_index_dir(&url)),
            default_blobs: format!("file://{}", default_blob_dir(&url).display()),
        })
    })
}

/// Opens (creating a missing SQLite file, migrating) the database `url` names without the
/// check that refuses an unfinished copy: for the copy itself and its verification.
pub async fn open_for_copy(url: &str) -> inlet_core::Result<SeaOrmStore> {
    let url = sqlite_creates_file(url);
    create_private_file(&url);
    SeaOrmStore::connect_for_copy(&url).await
}

/// The SQLite file a `sqlite:` URL names, if any.
pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    sqlite_file(url).map(Path::to_path_buf)
}

/// A `sqlite:` URL without a `mode` gets `mode=rwc`, so the file is created when missing;
/// explicit modes and other URLs are kept.
pub fn sqlite_creates_file(url: &str) -> String {
    if !url.starts_with("sqlite:") {
        return url.to_string();
    }
    let query = url.split_once('?').map_or("", |(_, q)| q);
    if query.split('&').any(|kv| kv.starts_with("mode=")) {
        return url.to_string();
    }
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}mode=rwc")
}

/// The file of a `sqlite:` URL (`None` for other URLs and in-memory databases).
fn sqlite_file(database_url: &str) -> Option<&Path> {
    let rest = database_url.strip_prefix("sqlite:")?;
    let path = rest.trim_start_matches("//");
    let path = path.split('?').next().unwrap_or(path);
    (!path.is_empty() && !path.contains(":memory:")).then(|| Path::new(path))
}

/// Creates a missing SQLite file readable by this user only (it holds every record's text,
/// password hashes and webhook secrets); SQLite gives its `-wal` and `-shm` files the same mode.
fn create_private_file(database_url: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let Some(path) = sqlite_file(database_url) else {
        return;
    };
    if !database_url.contains("mode=rwc") || path.exists() {
        return;
    }
    // Created by another process meanwhile, or a folder that does not exist: SQLite's own
    // open then says what is wrong.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
}

/// The default index directory: `<name>-index/` beside a SQLite file (`inlet.db` →
/// `inlet-index/`), `inlet-index/` in the working directory for PostgreSQL.
pub fn default_index_dir(database_url: &str) -> PathBuf {
    beside(database_url, "index")
}

/// Where originals are kept by default: `<stem>-blobs` beside a SQLite file (`inlet-blobs`
/// for `inlet.db`), else `inlet-blobs` in the working folder (replicas set `--blob-store`).
pub fn default_blob_dir(database_url: &str) -> PathBuf {
    beside(database_url, "blobs")
}

/// `<stem>-<what>` beside a SQLite file, else `inlet-<what>` in the working folder.
fn beside(database_url: &str, what: &str) -> PathBuf {
    if let Some(path) = sqlite_file(database_url) {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("inlet");
        let parent = path.parent().unwrap_or(Path::new(""));
        return parent.join(format!("{stem}-{what}"));
    }
    PathBuf::from(format!("inlet-{what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_create_their_file_unless_a_mode_is_given() {
        assert_eq!(
            sqlite_creates_file("sqlite://a.db"),
            "sqlite://a.db?mode=rwc"
        );
        assert_eq!(
            sqlite_creates_file("sqlite://a.db?cache=shared"),
            "sqlite://a.db?cache=shared&mode=rwc"
        );
        assert_eq!(
            sqlite_creates_file("sqlite://a.db?mode=ro"),
            "sqlite://a.db?mode=ro"
        );
        assert_eq!(sqlite_creates_file("postgres://h/db"), "postgres://h/db");
    }

    #[test]
    fn default_directories() {
        assert_eq!(
            default_index_dir("sqlite://inlet.db?mode=rwc"),
            PathBuf::from("inlet-index")
        );
        assert_eq!(
            default_index_dir("sqlite:///var/lib/inlet/main.db"),
            PathBuf::from("/var/lib/inlet/main-index")
        );
        assert_eq!(
            default_index_dir("postgres://db/inlet"),
            PathBuf::from("inlet-index")
        );
    }
}
