//! The search index contract (DESIGN 7): the ordered write log a record store keeps, the
//! documents an index is given, and the [`SearchIndex`] every store is searched through.
//!
//! The record store is the source of truth. Every committed write that changes what search
//! shows takes the next position of one log, in commit order: an upload or JSON push, a DELETE,
//! and a COMPLETE close (one entry for the close; [`RecordStore::closed_records`] expands it).
//! The log is compacted by record: a record appears once, at the position of its last write,
//! and the entry carries the record's state now, so a follower that applies entries in order
//! ends at the store's state whatever it skipped over. An index applies entries in batches and
//! stores the last position it applied with the same commit ([`SearchIndex::applied`]), so a
//! restart resumes where it stopped; a missing index is rebuilt from [`RecordStore::scan`].
//!
//! [`RecordStore::closed_records`]: crate::record::RecordStore::closed_records
//! [`RecordStore::scan`]: crate::record::RecordStore::scan

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::{
    Result, WorkspaceId,
    record::Record,
    search::{TagFilter, TagRow},
};

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
}

impl Change {
    /// The entry's position.
    pub fn position(&self) -> Position {
        match self {
            Change::Record { position, .. } | Change::Closed { position, .. } => *position,
        }
    }
}

/// A record as the index keeps it: what search filters, ranks and shows.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDoc {
    /// The record's id.
    pub record_id: Uuid,
    /// Its workspace.
    pub workspace_id: WorkspaceId,
    /// Its source.
    pub source_id: Uuid,
    /// Its object type.
    pub object_type_id: Uuid,
    /// The caller's id of the record.
    pub external_id: String,
    /// Title (the normalized file name or rendered titleTemplate).
    pub title: String,
    /// The file name as uploaded, when it says more than the title.
    pub file_name: Option<String>,
    /// Link into the external system.
    pub url: Option<String>,
    /// Searchable text (extracted text or rendered searchTemplate).
    pub content: String,
    /// Tags as the API shows them: externalId → canonical values.
    pub tags: BTreeMap<String, Vec<String>>,
    /// Filter and facet rows ([`crate::search::tag_rows`]), with folder ancestry expanded by
    /// the caller when it wants folder filters to include subfolders.
    pub rows: Vec<TagRow>,
    /// Milliseconds: creation, as shown.
    pub created_ms: i64,
    /// Milliseconds: last stored content, as shown.
    pub modified_ms: i64,
    /// Milliseconds the created filters compare ([`crate::search::effective_dates`]).
    pub created_filter_ms: i64,
    /// Milliseconds the modified filters compare.
    pub modified_filter_ms: i64,
}

/// What one commit of an index applies: documents to (re)write, records to drop, and the log
/// position they bring the index to.
#[derive(Debug, Clone, Default)]
pub struct IndexBatch {
    /// Documents added or replacing the record's earlier document.
    pub upserts: Vec<IndexDoc>,
    /// Records no longer searchable.
    pub deletes: Vec<Uuid>,
    /// The position applied through.
    pub position: Position,
}

/// A search, confined to one workspace.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IndexQuery {
    /// The caller's workspace.
    pub workspace_id: WorkspaceId,
    /// Words, `"phrases"` and `-excluded` words as typed; empty browses newest first.
    pub text: String,
    /// Every word must match (`match=all`); otherwise any word does, best first.
    pub match_all: bool,
    /// Only this source.
    pub source_id: Option<Uuid>,
    /// Only this object type.
    pub object_type_id: Option<Uuid>,
    /// Tag filters: values of one tag OR together, tags AND (a folder filter lists the folder
    /// and every folder below it).
    pub tags: Vec<TagFilter>,
    /// Milliseconds: created (or the mapped CREATED_DATE tag) at or after.
    pub created_from: Option<i64>,
    /// Milliseconds: created at or before.
    pub created_to: Option<i64>,
    /// Milliseconds: modified (or the mapped MODIFIED_DATE tag) at or after.
    pub modified_from: Option<i64>,
    /// Milliseconds: modified at or before.
    pub modified_to: Option<i64>,
    /// Results per page.
    pub limit: u32,
    /// The previous page's [`Hits::next_cursor`].
    pub cursor: Option<String>,
    /// Tags whose values are counted over every match.
    pub facet_tags: Vec<String>,
}

/// One result of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The record's id.
    pub record_id: Uuid,
    /// The caller's id of the record.
    pub external_id: String,
    /// Its source.
    pub source_id: Uuid,
    /// Its object type.
    pub object_type_id: Uuid,
    /// Title.
    pub title: String,
    /// Link into the external system.
    pub url: Option<String>,
    /// HTML-escaped extract with matches in `<mark>`…`</mark>`.
    pub snippet: String,
    /// Tags: externalId → canonical values.
    pub tags: BTreeMap<String, Vec<String>>,
    /// Milliseconds: creation.
    pub created_ms: i64,
    /// Milliseconds: last stored content.
    pub modified_ms: i64,
}

/// A page of search results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hits {
    /// Every matching record (exact).
    pub total: u64,
    /// This page, best first (newest first without words).
    pub hits: Vec<Hit>,
    /// Per facet tag: (value, count) over every match, most frequent first.
    pub facets: BTreeMap<String, Vec<(String, u64)>>,
    /// Opaque: pass back for the next page; `None` on the last.
    pub next_cursor: Option<String>,
}

/// A search engine following a record store's write log. One implementation serves every store.
pub trait SearchIndex: Send + Sync + 'static {
    /// The last log position applied, or `None` for an index that has never been built (a new,
    /// missing or discarded index: build it with [`SearchIndex::apply`] from a scan).
    fn applied(&self) -> Result<Option<Position>>;
    /// Applies a batch in one durable commit that also records its position.
    fn apply(&self, batch: IndexBatch) -> Result<()>;
    /// Drops every document and the applied position (before a rebuild).
    fn clear(&self) -> Result<()>;
    /// Answers a query over what has been applied.
    fn search(&self, query: &IndexQuery) -> Result<Hits>;
    /// Bytes the index takes on disk (or in memory), for operators.
    fn size_bytes(&self) -> u64;
}
