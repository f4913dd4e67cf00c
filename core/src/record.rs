//! Records, their metadata and the upload/touch decisions (stored through
//! [`crate::store::Records`]).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    Error, Result, WorkspaceId, access::Grantee, source::Source, sync::SyncEvent, tag::Tags,
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
    /// The version of that format's extractor that read it (absent when no extractor did, and
    /// on records read before versions were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// Characters of text kept.
    pub chars: u64,
    /// Whether the text was cut at the output cap.
    pub truncated: bool,
    /// Why the content is empty, when it is.
    pub failure: Option<String>,
    /// What the document says about itself (absent on records stored before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<crate::extract::DocumentMetadata>,
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
    /// Who may read it; `None` follows the object type's `defaultAccess`
    /// ([`crate::access`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Vec<Grantee>>,
    /// The uploaded file's bytes as kept in the blob store ([`crate::blob`]); `None` for
    /// STRUCTURED records without a file, records stored before originals were kept, and
    /// deployments that keep none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<crate::blob::Original>,
}

impl Record {
    /// Who may read it, as index terms ([`crate::access::record_terms`]).
    pub fn access_terms(&self) -> Vec<String> {
        crate::access::record_terms(self.access.as_deref(), self.source_id, self.object_type.id)
    }

    /// Whether `viewer` may read it.
    pub fn readable_by(&self, viewer: &crate::access::Viewer) -> bool {
        matches!(viewer, crate::access::Viewer::All) || viewer.reads(&self.access_terms())
    }

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
    /// The access list sent with the upload; `None` keeps the record's (a new record follows
    /// its object type's default).
    pub access: Option<Vec<Grantee>>,
    /// The uploaded file's original, already in the blob store; `None` for none.
    pub original: Option<crate::blob::Original>,
}

/// A record's text read again from its original (DESIGN 7b): stored only while the record is
/// live, still at `version` and still names the original `sha256`, so a newer upload is never
/// overwritten with older text. Its version, checksum, title, tags and sync membership stay.
#[derive(Debug, Clone)]
pub struct Reread {
    /// Which record.
    pub key: RecordKey,
    /// The version read; a record at another version is left alone.
    pub version: i64,
    /// The original read; a record naming another is left alone.
    pub sha256: String,
    /// The new searchable text.
    pub content: String,
    /// How this reading went.
    pub extraction: Extraction,
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

/// One access change of a batch ([`crate::store::Records::set_access`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessItem {
    /// The record's externalId (checked by the caller).
    pub external_id: String,
    /// The new list; `None` returns the record to its object type's default.
    pub access: Option<Vec<Grantee>>,
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
    /// Only records that carry an access list of their own (not their object type's default).
    pub with_access_list: bool,
    /// Only the records a reader may read; `None`: every record.
    pub readable: Option<crate::access::Readable>,
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

/// Checks everything a record write stores; every store calls it, so no backend stores what
/// another would refuse.
pub fn check_write(write: &RecordWrite) -> Result<()> {
    crate::input::check_external_id(&write.key.external_id)?;
    if let Some(c) = &write.external_checksum {
        crate::input::check_checksum("externalChecksum", c)?;
    }
    if let Some(url) = &write.url {
        crate::input::check_url("the record's url", url)?;
    }
    crate::input::check(
        "the record's title",
        &write.title,
        crate::input::Class::Text,
    )?;
    crate::input::check(
        "the record's content",
        &write.content,
        crate::input::Class::Text,
    )?;
    crate::input::check("modifiedBy", &write.modified_by, crate::input::Class::Line)?;
    crate::tag::check_tags(&write.tags)
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
            access: None,
            original: None,
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
