//! Keeps this replica's search index following the record store's write log (DESIGN 7): builds
//! it from the store when it has never been built, then applies the log as it grows — on a
//! short tick, so writes made through any replica show within the visibility delay.
//!
//! The index is tantivy's ([`inlet_search_tantivy`]); where it lives is the operator's choice
//! (`--index-dir`), see [`open_index`].

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use inlet_core::{
    Error, RecordStore, Result, WorkspaceId,
    index::{self, Hits, IndexBatch, IndexQuery, Position, SearchIndex},
};
use inlet_search_tantivy::{TantivyIndex, folder::FolderIndex};
use tokio::sync::{Notify, watch};
use uuid::Uuid;

/// How often the follower looks for new writes in the log.
pub const TICK: Duration = Duration::from_millis(100);
/// Pause after a failed round (the database may be away), before trying again.
const RETRY: Duration = Duration::from_secs(1);

/// Where an index lives, and why an existing one was discarded (to log).
pub struct OpenedIndex {
    /// The index.
    pub index: Arc<dyn SearchIndex>,
    /// Its directory (`None`: in memory).
    pub dir: Option<PathBuf>,
    /// Why an index found there was discarded, to be rebuilt.
    pub discarded: Option<String>,
}

/// Opens the index in `dir`, or in memory without one.
pub fn open_index(dir: Option<&Path>) -> Result<OpenedIndex> {
    match dir {
        None => Ok(OpenedIndex {
            index: Arc::new(Blocking(TantivyIndex::in_memory()?)),
            dir: None,
            discarded: None,
        }),
        Some(dir) => {
            let (index, discarded) = FolderIndex::open(dir)?;
            Ok(OpenedIndex {
                index: Arc::new(Blocking(index)),
                dir: Some(dir.to_path_buf()),
                discarded,
            })
        }
    }
}

/// Runs an index's writes off the async worker threads: a commit waits on the disk.
struct Blocking<I>(I);

impl<I: SearchIndex> SearchIndex for Blocking<I> {
    fn applied(&self) -> Result<Option<Position>> {
        self.0.applied()
    }
    fn apply(&self, batch: IndexBatch) -> Result<()> {
        blocking(|| self.0.apply(batch))
    }
    fn clear(&self) -> Result<()> {
        blocking(|| self.0.clear())
    }
    fn search(&self, query: &IndexQuery) -> Result<Hits> {
        self.0.search(query)
    }
    fn size_bytes(&self) -> u64 {
        self.0.size_bytes()
    }
}

fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// Whom a change-feed reader waits for: a workspace, and a source of it when filtered.
type FeedKey = (WorkspaceId, Option<Uuid>);

/// The follower's state, for `/readyz`, `/metrics` and tests.
#[derive(Default)]
pub struct Indexer {
    started: AtomicBool,
    /// Set once a build or catch-up has finished; cleared while a rebuild runs.
    ready: AtomicBool,
    rebuilding: AtomicBool,
    /// Records indexed by the running or last rebuild.
    rebuilt: AtomicU64,
    /// The log position applied.
    applied: AtomicU64,
    /// The log head seen last.
    head: AtomicU64,
    wake: Notify,
    /// Change-feed readers waiting for new writes, by (workspace, source filter): each told the
    /// log head when an applied entry concerns it ([`index::Touched`]).
    feeds: parking_lot::Mutex<HashMap<FeedKey, watch::Sender<Position>>>,
}

impl Indexer {
    /// Whether the index has caught up with the store since its last (re)build began (a lag
    /// after that does not make the replica unready; a rebuild does).
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Whether a rebuild is running, and how many records it has indexed.
    pub fn rebuild_progress(&self) -> Option<u64> {
        self.rebuilding
            .load(Ordering::Acquire)
            .then(|| self.rebuilt.load(Ordering::Relaxed))
    }

    /// (applied, head) log positions as last seen.
    pub fn positions(&self) -> (Position, Position) {
        (
            self.applied.load(Ordering::Relaxed),
            self.head.load(Ordering::Relaxed),
        )
    }

    /// Asks the follower to look at the log now (after a write through this replica).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// A receiver told each time the follower applies a write that concerns `workspace` (and
    /// `source`, when given): change-feed long polls wait on it, and writes elsewhere do not
    /// wake them.
    pub fn feed(&self, workspace: WorkspaceId, source: Option<Uuid>) -> watch::Receiver<Position> {
        self.feeds
            .lock()
            .entry((workspace, source))
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// Tells the waiting readers whom `touched` concerns that the log reached `head`, and
    /// forgets keys nobody waits on any more.
    fn tell_feeds(&self, touched: &index::Touched, head: Position) {
        self.feeds.lock().retain(|(workspace, source), sender| {
            if touched.concerns(*workspace, *source) {
                sender.send_replace(head);
            }
            sender.receiver_count() > 0
        });
    }

    /// Starts following (once; later calls do nothing), and purging the log's entries older
    /// than `retention` ([`RecordStore::purge_log`]).
    pub fn start(
        self: &Arc<Self>,
        records: Arc<dyn RecordStore>,
        index: Arc<dyn SearchIndex>,
        retention: Duration,
    ) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let me = self.clone();
        let log = records.clone();
        tokio::spawn(async move { me.run(records, index).await });
        tokio::spawn(purge(log, retention));
    }

    async fn run(self: Arc<Self>, records: Arc<dyn RecordStore>, index: Arc<dyn SearchIndex>) {
        loop {
            match self.round(&*records, &*index).await {
                Ok(()) => {
                    let _ = tokio::time::timeout(TICK, self.wake.notified()).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "search index: following the write log failed; retrying");
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    }

    async fn round(&self, records: &dyn RecordStore, index: &dyn SearchIndex) -> Result<()> {
        let mut rebuilt = false;
        if index.applied()?.is_none() {
            self.rebuild(records, index).await?;
            rebuilt = true;
        }
        let mut progress = match index::catch_up(records, index).await {
            Err(Error::Gone(why)) => {
                tracing::warn!(reason = %why, "search index: rebuilding");
                self.rebuild(records, index).await?;
                rebuilt = true;
                index::catch_up(records, index).await?
            }
            other => other?,
        };
        self.head.store(progress.head, Ordering::Relaxed);
        // What a rebuild read is not itemized: every waiting reader looks again.
        progress.touched.unknown |= rebuilt;
        if progress.changes > 0 || rebuilt {
            self.tell_feeds(&progress.touched, progress.head);
        }
        self.applied.store(progress.position, Ordering::Relaxed);
        if !self.ready.swap(true, Ordering::AcqRel) {
            tracing::info!(position = progress.position, "search index: caught up");
        }
        Ok(())
    }

    async fn rebuild(&self, records: &dyn RecordStore, index: &dyn SearchIndex) -> Result<()> {
        let started = Instant::now();
        tracing::info!("search index: building from the store");
        // Not ready until caught up again: a rebuilding index holds part of the records.
        self.ready.store(false, Ordering::Release);
        self.rebuilding.store(true, Ordering::Release);
        self.rebuilt.store(0, Ordering::Relaxed);
        let mut last_log = Instant::now();
        let rebuilt = &self.rebuilt;
        let result = index::rebuild(records, index, &mut |done| {
            rebuilt.store(done, Ordering::Relaxed);
            if last_log.elapsed() > Duration::from_secs(5) {
                last_log = Instant::now();
                tracing::info!(records = done, "search index: building");
            }
        })
        .await;
        self.rebuilding.store(false, Ordering::Release);
        let done = result?;
        tracing::info!(
            records = done,
            seconds = started.elapsed().as_secs_f64(),
            "search index: built"
        );
        Ok(())
    }

    /// Waits until the index has applied everything committed before the call (tests and
    /// tools; requests never wait).
    pub async fn settle(&self, records: &dyn RecordStore, timeout: Duration) -> Result<()> {
        let target = records.log_head().await?;
        let deadline = Instant::now() + timeout;
        loop {
            if self.is_ready() && self.applied.load(Ordering::Relaxed) >= target {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(Error::backend(std::io::Error::other(
                    "the search index did not catch up in time",
                )));
            }
            self.wake();
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// How often the log is purged: a tenth of the retention, between a second and an hour.
pub fn purge_interval(retention: Duration) -> Duration {
    (retention / 10).clamp(Duration::from_secs(1), Duration::from_secs(3600))
}

/// Purges the write log's entries older than `retention`, now and then every
/// [`purge_interval`]. Every replica may run it: a purge is idempotent.
async fn purge(records: Arc<dyn RecordStore>, retention: Duration) {
    let retention = chrono::TimeDelta::from_std(retention).unwrap_or(chrono::TimeDelta::MAX);
    loop {
        let before = inlet_core::time::now()
            .checked_sub_signed(retention)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        match records.purge_log(before).await {
            Ok(floor) => tracing::debug!(floor, "write log purged"),
            Err(e) => tracing::warn!(error = %e, "purging the write log failed; retrying later"),
        }
        tokio::time::sleep(purge_interval(retention.to_std().unwrap_or(Duration::MAX))).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feed_readers_are_told_only_of_their_workspace_and_source() {
        let indexer = Indexer::default();
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let (s1, s2) = (Uuid::from_u128(11), Uuid::from_u128(12));
        let mut all_of_a = indexer.feed(a, None);
        let a_s1 = indexer.feed(a, Some(s1));
        let mut all_of_b = indexer.feed(b, None);
        let touched = |pairs: &[(Uuid, Uuid)]| index::Touched {
            sources: pairs.iter().copied().collect(),
            unknown: false,
        };
        indexer.tell_feeds(&touched(&[(b, s1)]), 5);
        assert!(!all_of_a.has_changed().unwrap_or(true));
        assert!(!a_s1.has_changed().unwrap_or(true));
        assert!(all_of_b.has_changed().unwrap_or(false));
        all_of_b.borrow_and_update();
        indexer.tell_feeds(&touched(&[(a, s2)]), 6);
        assert!(all_of_a.has_changed().unwrap_or(false));
        assert!(!a_s1.has_changed().unwrap_or(true), "another source of a");
        all_of_a.borrow_and_update();
        indexer.tell_feeds(
            &index::Touched {
                unknown: true,
                ..Default::default()
            },
            7,
        );
        assert!(all_of_a.has_changed().unwrap_or(false) && a_s1.has_changed().unwrap_or(false));
        // Keys nobody waits on are forgotten.
        drop((all_of_a, a_s1, all_of_b));
        indexer.tell_feeds(&touched(&[]), 8);
        assert!(indexer.feeds.lock().is_empty());
    }
}
