//! Originals (DESIGN 7b): the bytes of every uploaded file, kept in a blob store,
//! content-addressed by SHA-256 within a workspace (one copy per distinct content). The rules
//! live here: how a blob is named, what a record keeps of its original, and which blobs the
//! sweep removes. Implementations register by URL scheme as the stores do
//! ([`BlobBackendInfo`]); a blob is written before the record that names it commits, so a crash
//! between the two leaves only an unreferenced blob, which [`Sweeper`] removes.
//!
//! ```ignore
//! inventory::submit! {
//!     BlobBackendInfo {
//!         name: "toy",
//!         schemes: &["toy:"],
//!         example: "toy:",
//!         open: |url| Box::pin(async move { Ok(Arc::new(Toy::new()) as Arc<dyn BlobStore>) }),
//!     }
//! }
//! ```

use std::{
    collections::{HashMap, HashSet},
    future::Future,
    ops::Range,
    pin::Pin,
    sync::Arc,
    time::Duration,
};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Error, RecordStore, Result, WorkspaceId, time::Timestamp};

/// What a record keeps of its original: the blob's name within the workspace and its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Original {
    /// Lower-case hex SHA-256 of the bytes (the blob's name, and the download's `ETag`).
    pub sha256: String,
    /// Bytes.
    pub size: u64,
}

impl Original {
    /// The original of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            sha256: hex(&Sha256::digest(bytes)),
            size: bytes.len() as u64,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// One blob: a workspace's copy of one content.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlobKey {
    /// The workspace whose records name it.
    pub workspace_id: WorkspaceId,
    /// Lower-case hex SHA-256 of its bytes.
    pub sha256: String,
}

impl BlobKey {
    /// The key of `original` in `workspace_id`.
    pub fn new(workspace_id: WorkspaceId, original: &Original) -> Self {
        Self {
            workspace_id,
            sha256: original.sha256.clone(),
        }
    }

    /// Its path in a store: `<workspace>/<first two hex digits>/<sha256>`, so no folder of a
    /// file system holds more than a 256th of a workspace's blobs.
    pub fn path(&self) -> String {
        format!(
            "{}/{}/{}",
            self.workspace_id,
            &self.sha256[..2.min(self.sha256.len())],
            self.sha256
        )
    }

    /// The key a store path names (`None` for anything else found in the store).
    pub fn parse(path: &str) -> Option<Self> {
        let mut parts = path.split('/');
        let (ws, fan, sha) = (parts.next()?, parts.next()?, parts.next()?);
        let valid = parts.next().is_none()
            && sha.len() == 64
            && sha
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && sha.starts_with(fan);
        Some(Self {
            workspace_id: uuid::Uuid::parse_str(ws).ok()?,
            sha256: sha.to_string(),
        })
        .filter(|_| valid)
    }
}

/// A stored blob as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobMeta {
    /// Its key.
    pub key: BlobKey,
    /// Bytes.
    pub size: u64,
    /// When it was last written.
    pub written: Timestamp,
}

/// Where originals are kept. Writes are whole and atomic (a reader sees all of a blob or none
/// of it); writing a key again with the same bytes is harmless and refreshes `written`.
/// [`Error::Unavailable`] when the store cannot be reached or is full.
#[async_trait]
pub trait BlobStore: Send + Sync + 'static {
    /// Stores `bytes` under `key`.
    async fn put(&self, key: &BlobKey, bytes: Vec<u8>) -> Result<()>;
    /// The bytes under `key`, or the `range` of them (clamped to the blob); `None` when absent.
    async fn get(&self, key: &BlobKey, range: Option<Range<u64>>) -> Result<Option<Vec<u8>>>;
    /// Removes `key` (absent is fine).
    async fn delete(&self, key: &BlobKey) -> Result<()>;
    /// Every blob, in no set order.
    async fn list(&self) -> Result<Vec<BlobMeta>>;
    /// Whether the store answers (for readiness checks).
    async fn check(&self) -> Result<()>;
}

/// The future a [`BlobBackendInfo::open`] returns.
pub type BlobOpenFuture = Pin<Box<dyn Future<Output = Result<Arc<dyn BlobStore>>> + Send>>;

/// One registered blob store implementation, submitted with `inventory::submit!`.
pub struct BlobBackendInfo {
    /// Short name for logs and errors (`file`, `memory`, `s3`).
    pub name: &'static str,
    /// URL prefixes it opens (`file://`, `s3://`); unique across implementations.
    pub schemes: &'static [&'static str],
    /// An example URL for the "unsupported blob store URL" message.
    pub example: &'static str,
    /// Opens the store a URL names (creating a local folder when missing).
    pub open: fn(&str) -> BlobOpenFuture,
}

inventory::collect!(BlobBackendInfo);

/// Opens the blob store `url` names with the implementation its scheme selects (the longest
/// matching scheme wins).
pub async fn open(url: &str) -> Result<Arc<dyn BlobStore>> {
    let entries: Vec<&BlobBackendInfo> = inventory::iter::<BlobBackendInfo>.into_iter().collect();
    let found = entries
        .iter()
        .flat_map(|b| b.schemes.iter().map(move |s| (s, *b)))
        .filter(|(s, _)| url.starts_with(**s))
        .max_by_key(|(s, _)| s.len())
        .map(|(_, b)| b);
    match found {
        Some(b) => (b.open)(url).await,
        None => {
            let mut examples: Vec<&str> = entries.iter().map(|b| b.example).collect();
            examples.sort_unstable();
            Err(Error::invalid(format!(
                "unsupported blob store URL '{url}': use {}",
                if examples.is_empty() {
                    "a binary linked with a blob store".to_string()
                } else {
                    examples.join(" or ")
                }
            )))
        }
    }
}

/// How long an unreferenced blob is kept before the sweep removes it, by default: long enough
/// that an upload between writing its blob and committing its record, and a download of a
/// record just replaced or removed, always finish first.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(3600);

/// Copies every blob of `from` that `to` lacks (or holds with another size) into `to`, one at a
/// time; `step` is told the blobs handled so far and in all. Answers the blobs and bytes
/// copied. Ends by checking that `to` holds every blob `from` listed.
pub async fn copy_all(
    from: &dyn BlobStore,
    to: &dyn BlobStore,
    step: &mut (dyn FnMut(u64, u64) + Send),
) -> Result<(u64, u64)> {
    let listed = from.list().await?;
    let held: HashMap<BlobKey, u64> = to
        .list()
        .await?
        .into_iter()
        .map(|b| (b.key, b.size))
        .collect();
    let total = listed.len() as u64;
    let (mut blobs, mut bytes) = (0, 0);
    for (i, b) in listed.iter().enumerate() {
        if held.get(&b.key) != Some(&b.size)
            && let Some(data) = from.get(&b.key, None).await?
        {
            bytes += data.len() as u64;
            to.put(&b.key, data).await?;
            blobs += 1;
        }
        step(i as u64 + 1, total);
    }
    let now: HashMap<BlobKey, u64> = to
        .list()
        .await?
        .into_iter()
        .map(|b| (b.key, b.size))
        .collect();
    if let Some(lost) = listed.iter().find(|b| now.get(&b.key) != Some(&b.size)) {
        return Err(Error::Unavailable(format!(
            "the copy of original {} is missing from the target blob store",
            lost.key.path()
        )));
    }
    Ok((blobs, bytes))
}

/// Blobs a sweep asks the store about at once.
const SWEEP_BATCH: usize = 500;

/// What a sweep found and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Blobs in the store when the sweep began.
    pub blobs: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Blobs no live record names, kept until their grace ends.
    pub waiting: u64,
    /// Blobs removed.
    pub removed: u64,
    /// Their bytes.
    pub removed_bytes: u64,
}

/// Removes blobs no live record names. A blob is removed only after it was found unreferenced
/// and unwritten for [`Sweeper::grace`] on this sweeper's earlier sweeps: one written just
/// before its record commits, or rewritten by a new upload of the same content, is seen
/// referenced (or freshly written) in time. A restart forgets what it saw, which only delays
/// removals.
pub struct Sweeper {
    grace: Duration,
    /// Unreferenced blobs with when they were first seen so and their `written` then.
    seen: HashMap<BlobKey, (Timestamp, Timestamp)>,
}

impl Sweeper {
    /// A sweeper keeping unreferenced blobs for `grace`.
    pub fn new(grace: Duration) -> Self {
        Self {
            grace,
            seen: HashMap::new(),
        }
    }

    /// One pass over the store at `now`.
    pub async fn sweep(
        &mut self,
        blobs: &dyn BlobStore,
        records: &dyn RecordStore,
        now: Timestamp,
    ) -> Result<SweepReport> {
        let listed = blobs.list().await?;
        let mut report = SweepReport {
            blobs: listed.len() as u64,
            bytes: listed.iter().map(|b| b.size).sum(),
            ..SweepReport::default()
        };
        let grace = chrono::TimeDelta::from_std(self.grace).unwrap_or(chrono::TimeDelta::MAX);
        let mut by_workspace: HashMap<WorkspaceId, Vec<BlobMeta>> = HashMap::new();
        for b in listed {
            by_workspace.entry(b.key.workspace_id).or_default().push(b);
        }
        let mut unreferenced = HashSet::new();
        for (ws, metas) in by_workspace {
            for batch in metas.chunks(SWEEP_BATCH) {
                let shas: Vec<String> = batch.iter().map(|b| b.key.sha256.clone()).collect();
                let live: HashSet<String> = records
                    .live_originals(ws, &shas)
                    .await?
                    .into_iter()
                    .collect();
                for b in batch {
                    if live.contains(&b.key.sha256) {
                        continue;
                    }
                    let (first, written) =
                        *self.seen.entry(b.key.clone()).or_insert((now, b.written));
                    let due = written == b.written
                        && now.signed_duration_since(first) >= grace
                        && now.signed_duration_since(b.written) >= grace;
                    if due {
                        blobs.delete(&b.key).await?;
                        report.removed += 1;
                        report.removed_bytes += b.size;
                    } else {
                        if written != b.written {
                            self.seen.insert(b.key.clone(), (now, b.written));
                        }
                        report.waiting += 1;
                        unreferenced.insert(b.key.clone());
                    }
                }
            }
        }
        self.seen.retain(|k, _| unreferenced.contains(k));
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_content_addresses_and_parse_back() {
        let o = Original::of(b"hello");
        assert_eq!(
            o.sha256,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(o.size, 5);
        let key = BlobKey::new(uuid::Uuid::nil(), &o);
        assert_eq!(key.path(), format!("{}/2c/{}", uuid::Uuid::nil(), o.sha256));
        assert_eq!(BlobKey::parse(&key.path()), Some(key.clone()));
        for bad in [
            "x/2c/abc",
            &format!("{}/2d/{}", uuid::Uuid::nil(), o.sha256),
            &format!("{}/2c/{}/x", uuid::Uuid::nil(), o.sha256),
            &format!("{}/2c/{}", uuid::Uuid::nil(), o.sha256.to_uppercase()),
        ] {
            assert_eq!(BlobKey::parse(bad), None, "{bad}");
        }
    }
}
