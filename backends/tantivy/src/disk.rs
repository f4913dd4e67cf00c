//! The index folder on disk: what a tantivy error means (damage to discard, or a lock, a
//! permission, a full disk to refuse on), which files every segment has, and the folder made
//! readable by this user only.

use std::path::{Path, PathBuf};

use inlet_core::{Error, Result};
use tantivy::{
    TantivyError,
    directory::error::{LockError, OpenReadError},
};

/// A tantivy or I/O error as core's backend error.
pub(crate) fn backend(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::backend(e)
}

/// What [`TantivyIndex::inspect`] found in a folder.
pub(crate) enum Inspected {
    /// An index of this format whose files pass their checksums.
    Usable,
    /// No index yet.
    Empty,
    /// An index to discard, and why.
    Discard(String),
    /// Something that is no reason to discard (a lock, permissions): the start stops.
    Refused(Error),
}

/// The sizes of an index's committed files as first seen, and the `meta.json` they were
/// listed from (its length and modification time).
#[derive(Default)]
pub(crate) struct FileSizes {
    pub(crate) meta: Option<(u64, Option<std::time::SystemTime>)>,
    pub(crate) sizes: std::collections::HashMap<PathBuf, u64>,
}

/// Whether a tantivy error says the index's data is damaged (rather than, say, that the
/// folder is locked or unreadable to us).
pub(crate) fn is_damage(e: &TantivyError) -> bool {
    let io_kind = |e: &std::io::Error| {
        !matches!(
            e.kind(),
            std::io::ErrorKind::PermissionDenied
                | std::io::ErrorKind::StorageFull
                | std::io::ErrorKind::ReadOnlyFilesystem
                | std::io::ErrorKind::OutOfMemory
        )
    };
    match e {
        TantivyError::LockFailure(..)
        | TantivyError::OpenDirectoryError(_)
        | TantivyError::SystemError(_)
        | TantivyError::Poisoned => false,
        TantivyError::IoError(io) => io_kind(io),
        TantivyError::OpenReadError(OpenReadError::IoError { io_error, .. }) => io_kind(io_error),
        _ => true,
    }
}

/// A segment file every segment has (delete bitsets and temporary stores come and go).
pub(crate) fn is_required(file: &Path) -> bool {
    file.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "idx" | "pos" | "term" | "fieldnorm" | "fast" | "store"))
}

/// The error for a folder another process holds, naming it and the option; other errors as
/// they are.
pub(crate) fn locked_or(dir: &Path, e: TantivyError) -> Error {
    match e {
        TantivyError::LockFailure(LockError::LockBusy, _) => Error::conflict(format!(
            "the search index folder {} is in use by another process; every replica needs a \
             folder of its own: set --index-dir (INLET_INDEX_DIR)",
            dir.display()
        )),
        e => backend(e),
    }
}

/// The error for a write after [`TantivyIndex::release`].
pub(crate) fn released() -> Error {
    Error::Unavailable("the search index is being replaced".into())
}

/// Creates `dir` (and its parents) readable by this user only: the index holds every record's
/// text.
pub(crate) fn make_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(backend)
}

/// Removes what tantivy writes in `dir` (`meta.json`, `.managed.json` and segment files named
/// by a segment id), and nothing else: the folder may hold other files.
pub(crate) fn remove_index_files(dir: &Path) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(backend(e)),
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let segment_id = name
            .split('.')
            .next()
            .is_some_and(|stem| stem.len() == 32 && stem.bytes().all(|b| b.is_ascii_hexdigit()));
        if (segment_id || name == "meta.json" || name == ".managed.json")
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            std::fs::remove_file(entry.path()).map_err(backend)?;
        }
    }
    Ok(())
}
