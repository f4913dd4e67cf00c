//! Records, their metadata, the upload/touch decisions and the [`RecordStore`] trait.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    Error, Result, WorkspaceId,
    source::Source,
    sync::{CloseOperation, OpenOperation, SyncEvent, SyncRun},
    tag::Tags,
    time::Timestamp,
};

/// Addresses one object type of one source in one workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scope {
    /// The caller's workspace.
    pub workspace_id: WorkspaceId,
    /// The source.
    pub source_id: Uuid,
    /// The object type.
    pub object_type_id: Uuid,
}

/// Addresses one record by its caller-given externalId.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordKey {
    /// Where the record lives.
    pub scope: Scope,
    /// The caller's id of the record.
    pub external_id: String,
}

/// The object type as a record shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectTypeRef {
    /// Object type id.
    pub id: Uuid,
    /// Object type name.
    pub name: String,
    /// The open sync, else the latest, else 0.
    pub current_sync_number: i64,
}

/// How text extraction went for a stored upload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Extraction {
    /// Detected format id (e.g. `pdf`), if any extractor recognized the bytes.
    pub format: Option<String>,
    /// Characters of text kept.
    pub chars: u64,
    /// Whether the text was cut at the output cap.
    pub truncated: bool,
    /// Why the content is empty, when it is.
    pub failure: Option<String>,
}

/// A stored record (live or a tombstone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// Record id, stable across versions and revival.
    pub id: Uuid,
    /// The source.
    pub source_id: Uuid,
    /// The object type, with its current sync number.
    pub object_type: ObjectTypeRef,
    /// The caller's id.
    pub external_id: String,
    /// 1 when created, +1 on every stored upload.
    pub version: i64,
    /// Normalized file name (RECORD) or rendered titleTemplate (STRUCTURED).
    pub title: String,
    /// The file name as uploaded (RECORD), which the title's normalization may have stripped of
    /// its non-ASCII characters; searched with the title.
    #[serde(default)]
    pub file_name: Option<String>,
    /// Link into the external system.
    pub url: Option<String>,
    /// Extracted text (RECORD) or rendered searchTemplate (STRUCTURED).
    pub content: String,
    /// The full tag set of the last stored upload.
    pub tags: Tags,
    /// The checksum the caller sent with the last stored upload.
    pub external_checksum: Option<String>,
    /// When the record was first created.
    pub created_date: Timestamp,
    /// When content was last stored.
    pub modified_date: Timestamp,
    /// E-mail of the user who last stored content.
    pub modified_by: String,
    /// The last sync the record was uploaded or touched in.
    pub sync_number: i64,
    /// Removed by a sync or deleted: a tombstone, revived by the next upload.
    pub removed: bool,
    /// How extraction went.
    pub extraction: Extraction,
}

impl Record {
    /// The checksum as metadata shows it: absent on a tombstone.
    pub fn visible_checksum(&self) -> Option<&str> {
        if self.removed {
            None
        } else {
            self.external_checksum.as_deref()
        }
    }
}

/// Everything a stored upload writes.
#[derive(Debug, Clone)]
pub struct RecordWrite {
    /// Which record.
    pub key: RecordKey,
    /// The open sync the upload names, if any.
    pub sync_number: Option<i64>,
    /// Title.
    pub title: String,
    /// The file name as uploaded (RECORD uploads).
    pub file_name: Option<String>,
    /// Url.
    pub url: Option<String>,
    /// Content.
    pub content: String,
    /// Full tag set (replaces the old one).
    pub tags: Tags,
    /// Checksum sent with the upload.
    pub external_checksum: Option<String>,
    /// Extraction outcome.
    pub extraction: Extraction,
    /// E-mail of the uploading user.
    pub modified_by: String,
}

/// Result of a stored upload.
#[derive(Debug, Clone)]
pub struct PutOutcome {
    /// The record after the write.
    pub record: Record,
    /// `true` when the externalId was new (201), `false` for an update or revival (200).
    pub created: bool,
}

/// A touch request.
#[derive(Debug, Clone)]
pub struct Touch {
    /// The open sync the touch names, if any.
    pub sync_number: Option<i64>,
    /// Expected stored checksum (If-Match, unquoted); `None` always matches.
    pub if_match: Option<String>,
    /// How the sync counts it: a touch, or a checksum-equal upload.
    pub event: SyncEvent,
}

/// One touch of a batch ([`RecordStore::touch_records`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TouchItem {
    /// The record's externalId (checked by the caller).
    pub external_id: String,
    /// Expected stored checksum, unquoted; `None` always matches.
    pub if_match: Option<String>,
}

/// A page request of [`RecordStore::list_records`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListQuery {
    /// Start after this externalId (byte order); `None` starts at the first.
    pub after: Option<String>,
    /// At most this many records.
    pub limit: usize,
    /// Include tombstones (deleted records and records a COMPLETE close removed).
    pub include_removed: bool,
    /// Only records whose content was last stored at or after this time.
    pub modified_since: Option<Timestamp>,
}

/// What an upload does to the record, decided before any extraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadDecision {
    /// A new externalId: create version 1.
    Create,
    /// Store the new content (update or revival), version + 1.
    Store,
    /// The checksum equals the stored one: touch, no extraction, no version bump.
    Unchanged,
}

/// Decides what an upload with `checksum` does to `existing`.
pub fn decide_upload(existing: Option<&Record>, checksum: Option<&str>) -> UploadDecision {
    match existing {
        None => UploadDecision::Create,
        Some(r) if checksum.is_some() && r.visible_checksum() == checksum => {
            UploadDecision::Unchanged
        }
        Some(_) => UploadDecision::Store,
    }
}

/// Checks a touch against the stored record: it must exist and be live, and `if_match` (if any)
/// must equal the stored checksum.
pub fn check_touch(existing: Option<&Record>, if_match: Option<&str>) -> Result<()> {
    check_touch_state(
        existing
            .filter(|r| !r.removed)
            .map(|r| r.external_checksum.as_deref()),
        if_match,
    )
}

/// [`check_touch`] on what a store reads for it: `None` when there is no live record, else the
/// live record's checksum.
pub fn check_touch_state(
    live_checksum: Option<Option<&str>>,
    if_match: Option<&str>,
) -> Result<()> {
    let checksum =
        live_checksum.ok_or_else(|| Error::not_found("no current record with this externalId"))?;
    match if_match {
        None | Some("*") => Ok(()),
        Some(expected) if checksum == Some(expected) => Ok(()),
        Some(_) => Err(Error::PreconditionFailed(
            "If-Match does not match the stored checksum".into(),
        )),
    }
}

/// Reads an `If-Match` header value: the checksum wrapped in double quotes (a weak `W/` prefix
/// and missing quotes are tolerated).
pub fn parse_if_match(header: &str) -> String {
    let v = header.trim();
    let v = v.strip_prefix("W/").unwrap_or(v);
    v.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(v)
        .to_string()
}

/// An edit of a stored source, run by the store inside its lock or transaction.
pub type SourceEdit = Box<dyn FnOnce(&mut Source) -> Result<()> + Send>;

/// The conflict of creating a second source with an externalId the workspace already uses.
pub fn duplicate_source(external_id: &str, existing: Uuid) -> Error {
    Error::conflict(format!(
        "a source with externalId '{external_id}' already exists: {existing} (change it with \
         PATCH /api/v1/sources/{existing}, or delete it)"
    ))
}

/// Refuses to delete a source while a sync of one of its object types is open.
pub fn source_deletable(source: &Source, open_syncs: &[(Uuid, i64)]) -> Result<()> {
    match open_syncs.first() {
        None => Ok(()),
        Some((ot, n)) => Err(Error::conflict(format!(
            "sync {n} of object type {ot} is open; close it (FAIL removes nothing) before \
             deleting source {}",
            source.id
        ))),
    }
}

/// Storage of sources, sync runs and records. Every method is atomic; implementations run the
/// decisions of [`crate::sync`] and this module inside their own transaction or lock.
#[async_trait]
pub trait RecordStore: Send + Sync + 'static {
    /// Checks the store can serve requests: one round trip to its database (`/readyz`). A store
    /// without a remote part is always ready.
    async fn ping(&self) -> Result<()> {
        Ok(())
    }
    /// Stores a new source (ids already assigned by [`crate::source::NewSource::build`]). A
    /// source of the same workspace with the same externalId is [`Error::Conflict`], its detail
    /// from [`duplicate_source`].
    async fn create_source(&self, source: &Source) -> Result<()>;
    /// Applies `edit` to the stored source atomically (no concurrent edit is lost) and stores
    /// the result; object types it adds can be written at once. Returns the source as stored.
    async fn update_source(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        edit: SourceEdit,
    ) -> Result<Source>;
    /// Deletes a source with its object types, records, sync runs and folders.
    /// [`Error::Conflict`] while a sync of one of its object types is open.
    async fn delete_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<()>;
    /// The workspace's sources, oldest first.
    async fn list_sources(&self, workspace_id: WorkspaceId) -> Result<Vec<Source>>;
    /// One source; another workspace's source is [`Error::NotFound`].
    async fn get_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<Source>;

    /// Opens a sync per [`crate::sync::open`].
    async fn open_sync(&self, scope: Scope, op: OpenOperation) -> Result<SyncRun>;
    /// Closes the open sync `sync_number` per [`crate::sync::close`]; COMPLETE removes every live
    /// record of the object type that did not join it, in the same atomic step.
    async fn close_sync(
        &self,
        scope: Scope,
        sync_number: i64,
        op: CloseOperation,
    ) -> Result<SyncRun> {
        self.close_sync_guarded(scope, sync_number, op, None).await
    }
    /// [`RecordStore::close_sync`] under the mass-removal guard: a COMPLETE close that would
    /// remove more than `max_removal_percent` of the live records is refused by
    /// [`crate::sync::check_mass_removal`] (counted in the close's own transaction) and the sync
    /// stays open.
    async fn close_sync_guarded(
        &self,
        scope: Scope,
        sync_number: i64,
        op: CloseOperation,
        max_removal_percent: Option<f64>,
    ) -> Result<SyncRun>;
    /// One sync run.
    async fn get_sync(&self, scope: Scope, sync_number: i64) -> Result<SyncRun>;
    /// All sync runs of the object type, newest first.
    async fn list_syncs(&self, scope: Scope) -> Result<Vec<SyncRun>>;

    /// Stores an upload: creates, replaces or revives the record, assigning the next version
    /// atomically. A given `sync_number` must be the open sync ([`Error::Conflict`] otherwise).
    async fn put_record(&self, write: RecordWrite) -> Result<PutOutcome>;
    /// Marks a live record as part of the sync per [`check_touch`]; nothing else changes.
    async fn touch_record(&self, key: &RecordKey, touch: Touch) -> Result<Record>;
    /// One record, tombstones included.
    async fn get_record(&self, key: &RecordKey) -> Result<Record>;
    /// Makes a live record a tombstone, as a sync removal does.
    async fn delete_record(&self, key: &RecordKey) -> Result<()>;
    /// The records of one object type with these externalIds, tombstones included, without
    /// their content (empty); an externalId without a record is left out. The default reads
    /// them one by one: a database store answers with one query.
    async fn get_records(&self, scope: Scope, external_ids: &[String]) -> Result<Vec<Record>> {
        let mut found = Vec::with_capacity(external_ids.len());
        for external_id in external_ids {
            let key = RecordKey {
                scope,
                external_id: external_id.clone(),
            };
            match self.get_record(&key).await {
                Ok(mut r) => {
                    r.content.clear();
                    found.push(r);
                }
                Err(Error::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(found)
    }
    /// Touches several records of one object type, as [`RecordStore::touch_record`] does each
    /// (counted as touches): the sync rules apply to the whole batch (an error of the call),
    /// [`check_touch`] to each item (its own result, in the order given). A store applies the
    /// batch in one transaction; the default touches one by one (not atomic as a whole).
    async fn touch_records(
        &self,
        scope: Scope,
        sync_number: Option<i64>,
        items: &[TouchItem],
    ) -> Result<Vec<Result<()>>> {
        let mut results = Vec::with_capacity(items.len());
        for item in items {
            let key = RecordKey {
                scope,
                external_id: item.external_id.clone(),
            };
            let touch = Touch {
                sync_number,
                if_match: item.if_match.clone(),
                event: SyncEvent::Touched,
            };
            results.push(match self.touch_record(&key, touch).await {
                Ok(_) => Ok(()),
                Err(e @ (Error::NotFound(_) | Error::PreconditionFailed(_))) => Err(e),
                Err(e) => return Err(e),
            });
        }
        Ok(results)
    }
    /// A page of an object type's records in externalId byte order, without their content
    /// (empty).
    async fn list_records(&self, scope: Scope, query: &ListQuery) -> Result<Vec<Record>>;

    /// The write log's last position: every change at or below it has committed
    /// ([`crate::index`]).
    async fn log_head(&self) -> Result<crate::index::Position>;
    /// The write log after `after`, in position order, at most `limit` entries; a record
    /// appears once, with its state now. [`crate::index::LogPage::upto`] says how far the page
    /// reaches: the next call continues after it.
    async fn log_after(
        &self,
        after: crate::index::Position,
        limit: usize,
    ) -> Result<crate::index::LogPage>;
    /// The write log after `after` as [`RecordStore::log_after`] reads it, holding only the
    /// entries of `scope` (the change feed's read, [`crate::changes`]); `upto` still reaches
    /// past entries of other workspaces, so a reader moves on without seeing them.
    async fn log_after_in(
        &self,
        scope: &crate::index::LogScope,
        after: crate::index::Position,
        limit: usize,
    ) -> Result<crate::index::LogPage>;
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
    ) -> Result<Vec<crate::index::Removed>>;
    /// Live records of `scope` whose last logged write is at or before `upto`, by id, after
    /// `after`, at most `limit`: the change feed's opening snapshot.
    async fn scan_live_in(
        &self,
        scope: &crate::index::LogScope,
        upto: crate::index::Position,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Record>>;
    /// The last position purged from the log (0 when nothing was): a reader behind it may have
    /// missed a removal.
    async fn log_floor(&self) -> Result<crate::index::Position>;
    /// Purges the log's entries that are not one record's (closes, source deletions) logged
    /// before `before`, and answers the new [`RecordStore::log_floor`]. Records keep their
    /// entry: the log is compacted by record.
    async fn purge_log(&self, before: Timestamp) -> Result<crate::index::Position>;
    /// Live records of every workspace by id, after `after`, at most `limit`, with their
    /// workspace: what an index is rebuilt from.
    async fn scan_live(
        &self,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<(WorkspaceId, Record)>>;

    /// Creates (`true`) or renames/moves (`false`) a folder of a HIERARCHICAL tag of a source.
    /// A missing parent is [`Error::NotFound`]; a parent that would close a cycle
    /// [`Error::Invalid`].
    async fn put_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        folder: &crate::folder::Folder,
    ) -> Result<bool>;
    /// Whether a folder exists (uploads tagging a record with a folder check this).
    async fn folder_exists(&self, source_id: Uuid, tag: &str, external_id: &str) -> Result<bool>;
    /// A tag's folders with the number of live records tagged with each (not rolled up).
    async fn list_folders(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<(crate::folder::Folder, u64)>>;
    /// A tag's folders without their counts (search names folder facet values with these). The
    /// default asks [`RecordStore::list_folders`]; a store that counts with a query overrides it.
    async fn folder_names(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<crate::folder::Folder>> {
        Ok(self
            .list_folders(workspace_id, source_id, tag)
            .await?
            .into_iter()
            .map(|(f, _)| f)
            .collect())
    }
    /// Deletes a folder: [`Error::NotFound`] when absent, [`Error::Conflict`] while it has child
    /// folders or live records.
    async fn delete_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        external_id: &str,
    ) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(checksum: Option<&str>, removed: bool) -> Record {
        let now = crate::time::now();
        Record {
            id: Uuid::new_v4(),
            source_id: Uuid::new_v4(),
            object_type: ObjectTypeRef {
                id: Uuid::new_v4(),
                name: "t".into(),
                current_sync_number: 1,
            },
            external_id: "e".into(),
            version: 1,
            title: "t".into(),
            file_name: None,
            url: None,
            content: String::new(),
            tags: Tags::new(),
            external_checksum: checksum.map(Into::into),
            created_date: now,
            modified_date: now,
            modified_by: "a@b".into(),
            sync_number: 1,
            removed,
            extraction: Extraction::default(),
        }
    }

    #[test]
    fn upload_decision_table() {
        use UploadDecision::*;
        let live = record(Some("c1"), false);
        let tomb = record(Some("c1"), true);
        let no_sum = record(None, false);
        let cases: [(Option<&Record>, Option<&str>, UploadDecision); 7] = [
            (None, None, Create),
            (None, Some("c1"), Create),
            (Some(&live), Some("c1"), Unchanged),
            (Some(&live), Some("c2"), Store),
            (Some(&live), None, Store),
            (Some(&tomb), Some("c1"), Store),
            (Some(&no_sum), Some("c1"), Store),
        ];
        for (existing, sum, expected) in cases {
            assert_eq!(
                decide_upload(existing, sum),
                expected,
                "{existing:?} {sum:?}"
            );
        }
    }

    #[test]
    fn touch_table() {
        let live = record(Some("c1"), false);
        let tomb = record(Some("c1"), true);
        assert!(check_touch(Some(&live), None).is_ok());
        assert!(check_touch(Some(&live), Some("c1")).is_ok());
        assert!(check_touch(Some(&live), Some("*")).is_ok());
        assert!(matches!(
            check_touch(Some(&live), Some("c2")),
            Err(Error::PreconditionFailed(_))
        ));
        assert!(matches!(
            check_touch(Some(&record(None, false)), Some("c1")),
            Err(Error::PreconditionFailed(_))
        ));
        assert!(matches!(
            check_touch(Some(&tomb), None),
            Err(Error::NotFound(_))
        ));
        assert!(matches!(check_touch(None, None), Err(Error::NotFound(_))));
    }

    #[test]
    fn tombstone_hides_its_checksum() {
        assert_eq!(record(Some("c"), false).visible_checksum(), Some("c"));
        assert_eq!(record(Some("c"), true).visible_checksum(), None);
    }

    #[test]
    fn if_match_unquotes() {
        assert_eq!(parse_if_match("\"abc\""), "abc");
        assert_eq!(parse_if_match("W/\"abc\""), "abc");
        assert_eq!(parse_if_match(" abc "), "abc");
        assert_eq!(parse_if_match("\"\""), "");
    }
}
