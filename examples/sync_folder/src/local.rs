//! The local side: walking the folder, naming files and folders, and checksums.

use std::{
    fs,
    io::Read,
    path::{Component, Path, PathBuf},
};

use sha2::{Digest, Sha256};
use walkdir::WalkDir;

/// Longest record or folder externalId the server accepts, in bytes.
pub const MAX_EXTERNAL_ID_BYTES: usize = 1024;
/// Bytes read from a file at a time (hashing and uploading).
pub const READ_CHUNK: usize = 64 * 1024;
/// The checksum sent as `externalChecksum` is this prefix and the lowercase hex SHA-256 of the
/// file's bytes. The server treats it as an opaque string (spec 4.4: "any string that changes
/// when the file changes") and only compares it for equality.
pub const CHECKSUM_PREFIX: &str = "sha256:";

/// A regular file below the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalFile {
    /// Path relative to the root with `/` separators: the record's externalId.
    pub external_id: String,
    /// The folder it is in (its externalId), `None` at the root.
    pub folder: Option<String>,
    /// The file's own name (the upload's filename, from which the server makes the title).
    pub name: String,
    /// Where it is on disk.
    pub path: PathBuf,
    /// Size when walked.
    pub size: u64,
}

/// A directory below the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalFolder {
    /// Path relative to the root with `/` separators: the folder's externalId.
    pub external_id: String,
    /// Its own name (the folder's display name).
    pub name: String,
    /// The folder it is in, `None` at the root.
    pub parent: Option<String>,
}

/// What the walk found.
#[derive(Debug, Clone, Default)]
pub struct LocalTree {
    /// Directories, parents before their children.
    pub folders: Vec<LocalFolder>,
    /// Regular files, in path order.
    pub files: Vec<LocalFile>,
    /// Entries that are neither (symbolic links, sockets...), not mirrored.
    pub skipped: Vec<PathBuf>,
    /// Entries that cannot be mirrored, with the reason.
    pub errors: Vec<String>,
}

/// Walks `root` without following symbolic links.
pub fn walk(root: &Path) -> anyhow::Result<LocalTree> {
    let meta = fs::metadata(root)
        .map_err(|e| anyhow::anyhow!("cannot read folder {}: {e}", root.display()))?;
    if !meta.is_dir() {
        anyhow::bail!("{} is not a folder", root.display());
    }
    let mut tree = LocalTree::default();
    for entry in WalkDir::new(root)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                tree.errors.push(e.to_string());
                continue;
            }
        };
        let rel = match entry.path().strip_prefix(root) {
            Ok(rel) => rel,
            Err(_) => continue,
        };
        let external_id = match external_id(rel) {
            Ok(id) => id,
            Err(message) => {
                tree.errors
                    .push(format!("{}: {message}", entry.path().display()));
                continue;
            }
        };
        let (parent, name) = match external_id.rsplit_once('/') {
            Some((parent, name)) => (Some(parent.to_string()), name.to_string()),
            None => (None, external_id.clone()),
        };
        let kind = entry.file_type();
        if kind.is_dir() {
            tree.folders.push(LocalFolder {
                external_id,
                name,
                parent,
            });
        } else if kind.is_file() {
            let size = match entry.metadata() {
                Ok(m) => m.len(),
                Err(e) => {
                    tree.errors.push(e.to_string());
                    continue;
                }
            };
            tree.files.push(LocalFile {
                external_id,
                folder: parent,
                name,
                path: entry.into_path(),
                size,
            });
        } else {
            tree.skipped.push(entry.into_path());
        }
    }
    // Walk order already puts a directory before what it holds; make it explicit by depth.
    tree.folders
        .sort_by_key(|f| (f.external_id.matches('/').count(), f.external_id.clone()));
    Ok(tree)
}

/// The externalId of a relative path: its components joined with `/`.
pub fn external_id(rel: &Path) -> Result<String, String> {
    let mut parts = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(part) => parts.push(
                part.to_str()
                    .ok_or("the name is not valid UTF-8, so it cannot be an externalId")?,
            ),
            _ => return Err("not a plain relative path".into()),
        }
    }
    if parts.is_empty() {
        return Err("empty path".into());
    }
    let id = parts.join("/");
    if id.len() > MAX_EXTERNAL_ID_BYTES {
        return Err(format!(
            "the relative path has {} bytes; an externalId has at most {MAX_EXTERNAL_ID_BYTES}",
            id.len()
        ));
    }
    Ok(id)
}

/// A folder's display name: its own name, quoted if it is blank (the server trims names and
/// refuses empty ones).
pub fn folder_name(name: &str) -> String {
    if name.trim().is_empty() {
        format!("'{name}'")
    } else {
        name.to_string()
    }
}

/// The checksum of a file and the number of bytes it covers (blocking; run it off the async
/// runtime).
pub fn checksum(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0; READ_CHUNK];
    let mut len = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        len += n as u64;
    }
    Ok((checksum_of_digest(hasher), len))
}

/// The checksum of bytes in memory.
pub fn checksum_of(bytes: &[u8]) -> String {
    checksum_of_digest(Sha256::new_with_prefix(bytes))
}

fn checksum_of_digest(hasher: Sha256) -> String {
    format!("{CHECKSUM_PREFIX}{}", hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_ids_use_slashes() {
        assert_eq!(external_id(Path::new("a.txt")).unwrap(), "a.txt");
        assert_eq!(
            external_id(&Path::new("docs").join("api").join("v 1.txt")).unwrap(),
            "docs/api/v 1.txt"
        );
        assert!(external_id(Path::new("../x")).is_err());
        assert!(external_id(Path::new("")).is_err());
        let long = "x".repeat(MAX_EXTERNAL_ID_BYTES + 1);
        assert!(external_id(Path::new(&long)).is_err());
        let exact = "é".repeat(MAX_EXTERNAL_ID_BYTES / 2);
        assert!(external_id(Path::new(&exact)).is_ok());
    }

    #[test]
    fn checksum_is_prefixed_sha256() {
        assert_eq!(
            checksum_of(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn blank_folder_names_are_quoted() {
        assert_eq!(folder_name("docs"), "docs");
        assert_eq!(folder_name(" "), "' '");
    }

    #[test]
    fn walk_finds_files_and_folders_parents_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("b/c")).unwrap();
        fs::create_dir_all(root.join("a")).unwrap();
        fs::write(root.join("top.txt"), "1").unwrap();
        fs::write(root.join("b/c/deep.txt"), "22").unwrap();
        let tree = walk(root).unwrap();
        let folders: Vec<_> = tree
            .folders
            .iter()
            .map(|f| (f.external_id.as_str(), f.parent.as_deref(), f.name.as_str()))
            .collect();
        assert_eq!(
            folders,
            [("a", None, "a"), ("b", None, "b"), ("b/c", Some("b"), "c")]
        );
        let files: Vec<_> = tree
            .files
            .iter()
            .map(|f| (f.external_id.as_str(), f.folder.as_deref(), f.size))
            .collect();
        assert_eq!(
            files,
            [("b/c/deep.txt", Some("b/c"), 2), ("top.txt", None, 1)]
        );
        assert!(tree.errors.is_empty());
        let (sum, len) = checksum(&root.join("b/c/deep.txt")).unwrap();
        assert_eq!((sum, len), (checksum_of(b"22"), 2));
        assert!(walk(&root.join("top.txt")).is_err());
    }
}
