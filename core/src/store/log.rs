//! The ordered write log that search and the change feed follow (DESIGN 7).

use async_trait::async_trait;
use std::collections::HashSet;

use uuid::Uuid;

use crate::{Result, WorkspaceId, record::Record, time::Timestamp};

/// A place in a store's write log: positions grow in commit order; 0 is before every write.
pub type Position = u64;

/// One entry of a record store's write log.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A record was written or deleted; `record` is its state now (a tombstone when removed).
    Record {
        /// The entry's position.
        position: Position,
        /// The record's workspace.
        workspace_id: WorkspaceId,
        /// The record now.
        record: Box<Record>,
    },
    /// A COMPLETE close removed the object type's live records whose sync number was in
    /// `from_sync..to_sync` (a record uploaded again since has a later sync number, and a later
    /// entry of its own).
    Closed {
        /// The entry's position.
        position: Position,
        /// The object type closed.
        object_type_id: Uuid,
        /// The floor before the close.
        from_sync: i64,
        /// The floor the close set: records below it are removed.
        to_sync: i64,
    },
    /// A source was deleted with all its records.
    SourceDeleted {
        /// The entry's position.
        position: Position,
        /// The source's workspace (`None` on entries logged before the change feed existed).
        workspace_id: Option<WorkspaceId>,
        /// The source.
        source_id: Uuid,
    },
}

/// Which part of the write log a reader wants: one workspace, optionally one source of it
/// ([`Self::log_after_in`]).
///
/// [`Self::log_after_in`]: crate::record::RecordStore::log_after_in
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogScope {
    /// The reader's workspace.
    pub workspace_id: WorkspaceId,
    /// Only this source's records.
    pub source_id: Option<Uuid>,
}

impl LogScope {
    /// Whether a record of `source_id` in `workspace_id` is in scope.
    pub fn holds(&self, workspace_id: WorkspaceId, source_id: Uuid) -> bool {
        self.workspace_id == workspace_id && self.source_id.is_none_or(|s| s == source_id)
    }
}

/// A record a COMPLETE close removed ([`Self::closed_records`]).
///
/// [`Self::closed_records`]: crate::record::RecordStore::closed_records
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The record's id.
    pub id: Uuid,
    /// Its source.
    pub source_id: Uuid,
    /// Its object type.
    pub object_type_id: Uuid,
    /// The caller's id of the record.
    pub external_id: String,
    /// The sync it was last uploaded or touched in.
    pub sync_number: i64,
    /// Who could read it ([`crate::access`]).
    pub access: Option<Vec<crate::access::Grantee>>,
}

/// A page of the write log ([`Self::log_after`]).
///
/// [`Self::log_after`]: crate::record::RecordStore::log_after
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogPage {
    /// Entries in position order.
    pub changes: Vec<Change>,
    /// Everything up to this position is in `changes` or was superseded by a later entry: the
    /// next page starts after it.
    pub upto: Position,
}

impl Change {
    /// The entry's position.
    pub fn position(&self) -> Position {
        match self {
            Change::Record { position, .. }
            | Change::Closed { position, .. }
            | Change::SourceDeleted { position, .. } => *position,
        }
    }
}

/// The write log a store keeps in commit order, and the scans an index is rebuilt from.
#[async_trait]
pub trait WriteLog: Send + Sync + 'static {
    /// The write log's last position: every change at or below it has committed
    /// ([`crate::index`]).
    async fn log_head(&self) -> Result<Position>;
    /// The write log after `after`, in position order, at most `limit` entries, holding only
    /// the entries of `scope` when one is given; a record appears once, with its state now.
    /// [`LogPage::upto`] says how far the page reaches: the next call continues after it, and
    /// it reaches past entries of other workspaces, so a scoped reader moves on without seeing
    /// them.
    async fn read_log(
        &self,
        scope: Option<&LogScope>,
        after: Position,
        limit: usize,
    ) -> Result<LogPage>;
    /// The whole write log after `after` ([`Self::read_log`] of every workspace: the search
    /// index's read).
    async fn log_after(&self, after: Position, limit: usize) -> Result<LogPage> {
        self.read_log(None, after, limit).await
    }
    /// One workspace's write log after `after` ([`Self::read_log`] of `scope`: the change
    /// feed's read, [`crate::changes`]).
    async fn log_after_in(
        &self,
        scope: &LogScope,
        after: Position,
        limit: usize,
    ) -> Result<LogPage> {
        self.read_log(Some(scope), after, limit).await
    }
    /// The records of an object type that are not tombstones and whose sync number is in
    /// `from_sync..to_sync` (what a [`crate::index::Change::Closed`] removed), by id, after
    /// `after`, at most `limit`.
    async fn closed_records(
        &self,
        object_type_id: Uuid,
        from_sync: i64,
        to_sync: i64,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Removed>>;
    /// Live records by id, after `after`, at most `limit`, with their workspace: of `scope`
    /// only when one is given, and only those whose last logged write is at or before `upto`
    /// when one is given.
    async fn scan_records(
        &self,
        scope: Option<&LogScope>,
        upto: Option<Position>,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>>;
    /// Live records of `scope` whose last logged write is at or before `upto`, by id, after
    /// `after`, at most `limit`: the change feed's opening snapshot ([`Self::scan_records`]).
    async fn scan_live_in(
        &self,
        scope: &LogScope,
        upto: Position,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Record>> {
        Ok(self
            .scan_records(Some(scope), Some(upto), after, limit)
            .await?
            .into_iter()
            .map(|(_, r)| r)
            .collect())
    }
    /// The last position purged from the log (0 when nothing was): a reader behind it may have
    /// missed a removal.
    async fn log_floor(&self) -> Result<Position>;
    /// Purges the log's entries that are not one record's (closes, source deletions) logged
    /// before `before`, and answers the new [`Self::log_floor`]. Records keep their
    /// entry: the log is compacted by record.
    async fn purge_log(&self, before: Timestamp) -> Result<Position>;
    /// Live records of every workspace by id, after `after`, at most `limit`, with their
    /// workspace: what an index is rebuilt from ([`Self::scan_records`]).
    async fn scan_live(
        &self,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>> {
        self.scan_records(None, None, after, limit).await
    }
    /// Which of `sha256s` a live record of the workspace names as its original
    /// ([`crate::blob::Sweeper`]), each once, in no set order. The default reads every live
    /// record of the workspace ([`WriteLog::scan_records`]); a database store answers with
    /// one query.
    async fn live_originals(
        &self,
        workspace_id: crate::WorkspaceId,
        sha256s: &[String],
    ) -> Result<Vec<String>> {
        const PAGE: usize = 500;
        let wanted: HashSet<&str> = sha256s.iter().map(String::as_str).collect();
        let scope = LogScope {
            workspace_id,
            source_id: None,
        };
        let mut found: HashSet<String> = HashSet::new();
        let mut after = None;
        loop {
            let page = self.scan_records(Some(&scope), None, after, PAGE).await?;
            for (_, r) in &page {
                if let Some(sha) = r.original.as_ref().map(|o| o.sha256.as_str())
                    && wanted.contains(sha)
                {
                    found.insert(sha.to_string());
                }
            }
            match page.last() {
                Some((_, r)) if page.len() == PAGE => after = Some(r.id),
                _ => return Ok(found.into_iter().collect()),
            }
        }
    }
}
