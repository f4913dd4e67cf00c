//! Uploads and JSON pushes: [`prepare`] checks a write before its content is built (so a
//! refused write costs no extraction), [`store`] applies the checksum skip or stores the write.

use std::future::Future;

use crate::{
    Error, RecordStore, Result,
    folder::is_folder_tag,
    input,
    record::{
        self, AccessItem, Extraction, PutOutcome, Record, RecordKey, RecordWrite, Scope, Touch,
    },
    source::{ObjectType, Source},
    structured,
    sync::{self, SyncEvent, SyncState},
    tag::{self, TagValue, Tags},
};

/// A record write as the caller gave it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The record's externalId.
    pub external_id: &'a str,
    /// The open sync the write belongs to, if the caller named one.
    pub sync_number: Option<i64>,
    /// The caller's checksum of the content (`externalChecksum`).
    pub checksum: Option<&'a str>,
    /// The record's link in its source system (`externalUrl`).
    pub external_url: Option<&'a str>,
    /// The tag header lines (`X-Service-Object-Tag`), as sent.
    pub tag_headers: &'a [String],
    /// Who writes (an e-mail).
    pub modified_by: &'a str,
}

/// A checked write, ready to store once its content is built.
#[derive(Debug, Clone)]
pub struct Write {
    /// Where the record lives.
    pub key: RecordKey,
    /// The open sync the write belongs to.
    pub sync_number: Option<i64>,
    /// The caller's checksum.
    pub checksum: Option<String>,
    /// The parsed tags (they replace the record's).
    pub tags: Tags,
    /// Who writes.
    pub modified_by: String,
    /// The access list sent with it; `None` keeps the record's ([`crate::access`]).
    pub access: Option<Vec<crate::access::Grantee>>,
}

/// What a write stores when its content is (re)built.
#[derive(Debug, Clone, Default)]
pub struct Content {
    /// The record's title.
    pub title: String,
    /// The file name as uploaded (RECORD).
    pub file_name: Option<String>,
    /// The record's url.
    pub url: Option<String>,
    /// The searchable text.
    pub content: String,
    /// How extraction went.
    pub extraction: Extraction,
    /// The uploaded file's original, written to the blob store before the record commits.
    pub original: Option<crate::blob::Original>,
}

/// What [`store`] did.
#[derive(Debug)]
pub enum Stored {
    /// The checksum matched the stored one: the record was only touched (current state).
    Unchanged(Record),
    /// The content was built and stored.
    Written(PutOutcome),
}

/// Refusal of a write to a source created without trackStatus (how it begins).
pub const NOT_TRACKED: &str =
    "this source was created without trackStatus=true and accepts no uploads";

/// The refusal of a write to source `id`, created without trackStatus: [`NOT_TRACKED`] and the
/// request that turns it on.
pub fn not_tracked(id: uuid::Uuid) -> String {
    format!(
        "{NOT_TRACKED}; turn it on with PATCH /api/v1/sources/{id} and the body \
         {{\"trackStatus\": true}}"
    )
}

/// Checks a write before its content is built: the source tracks status, the externalId,
/// checksum, url and tags are valid, every folder a HIERARCHICAL tag names exists, and a named
/// sync is the open one (checked again atomically when the write lands; this early check saves
/// a pointless extraction).
pub async fn prepare(
    store: &dyn RecordStore,
    source: &Source,
    object_type: &ObjectType,
    scope: Scope,
    request: Request<'_>,
) -> Result<Write> {
    if !source.track_status {
        return Err(Error::NotFound(not_tracked(source.id)));
    }
    input::check_external_id(request.external_id)?;
    if let Some(c) = request.checksum {
        input::check_checksum("externalChecksum", c)?;
    }
    if let Some(url) = request.external_url {
        input::check_url("externalUrl", url)?;
    }
    let tags = tag::parse_tags(
        object_type,
        request.tag_headers.iter().map(|t| t.as_bytes()),
    )?;
    check_folders(store, object_type, scope, &tags).await?;
    if let Some(n) = request.sync_number {
        ensure_open(store, scope, n).await?;
    }
    Ok(Write {
        key: RecordKey {
            scope,
            external_id: request.external_id.to_string(),
        },
        sync_number: request.sync_number,
        checksum: request.checksum.map(str::to_string),
        tags,
        modified_by: request.modified_by.to_string(),
        access: None,
    })
}

/// Every folder a HIERARCHICAL tag value names must exist.
async fn check_folders(
    store: &dyn RecordStore,
    object_type: &ObjectType,
    scope: Scope,
    tags: &Tags,
) -> Result<()> {
    for (tag_id, values) in tags {
        if !is_folder_tag(object_type, tag_id) {
            continue;
        }
        for value in values {
            if let TagValue::Text(folder) = value
                && !store.folder_exists(scope.source_id, tag_id, folder).await?
            {
                return Err(Error::NotFound(format!(
                    "folder '{folder}' of tag '{tag_id}' not found; create it with PUT \
                     /api/v1/sources/{{sourceId}}/tagconfigs/{{tagConfigId}}/hierarchies/{{externalId}}"
                )));
            }
        }
    }
    Ok(())
}

/// Fails with a conflict unless `sync_number` is the object type's open sync.
pub async fn ensure_open(store: &dyn RecordStore, scope: Scope, sync_number: i64) -> Result<()> {
    let open = match store.get_sync(scope, sync_number).await {
        Ok(run) => (run.state == SyncState::Open).then_some(sync_number),
        Err(Error::NotFound(_)) => None,
        Err(e) => return Err(e),
    };
    sync::check_sync_number(open, sync_number)
}

/// Stores a checked write. A checksum equal to the stored one only touches the record
/// ([`Stored::Unchanged`]; `build` never runs); when the record changed or was removed between
/// the read and the touch, the write is stored instead. Otherwise `build` makes the content
/// and the record is created or updated. `build`'s error type is the caller's.
pub async fn store<F, E>(store: &dyn RecordStore, write: Write, build: F) -> Result<Stored, E>
where
    F: Future<Output = Result<Content, E>>,
    E: From<Error>,
{
    let existing = match store.get_record(&write.key).await {
        Ok(r) => Some(r),
        Err(Error::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    if record::decide_upload(existing.as_ref(), write.checksum.as_deref())
        == record::UploadDecision::Unchanged
    {
        let touch = Touch {
            sync_number: write.sync_number,
            if_match: write.checksum.clone(),
            event: SyncEvent::Unchanged,
        };
        match store.touch_record(&write.key, touch).await {
            // The checksum skip does not skip an access change.
            Ok(mut record) => {
                if let Some(access) = write.access.filter(|a| record.access.as_ref() != Some(a)) {
                    let item = AccessItem {
                        external_id: write.key.external_id.clone(),
                        access: Some(access.clone()),
                    };
                    let mut results = store.set_access(write.key.scope, &[item]).await?;
                    results.pop().unwrap_or(Ok(()))?;
                    record.access = Some(access);
                }
                return Ok(Stored::Unchanged(record));
            }
            // Changed or removed since we looked: store this write instead.
            Err(Error::PreconditionFailed(_) | Error::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let content = build.await?;
    let outcome = store
        .put_record(RecordWrite {
            key: write.key,
            sync_number: write.sync_number,
            title: content.title,
            file_name: content.file_name,
            url: content.url,
            content: content.content,
            tags: write.tags,
            external_checksum: write.checksum,
            extraction: content.extraction,
            modified_by: write.modified_by,
            access: write.access,
            original: content.original,
        })
        .await?;
    Ok(Stored::Written(outcome))
}

/// The content of a STRUCTURED record from its JSON (title, url and search text from the
/// object type's templates); `external_url` is used when no externalUrlTemplate gives one, and
/// `extraction` says how an attached file's text was read.
pub fn structured_content(
    object_type: &ObjectType,
    record: &serde_json::Value,
    external_url: Option<String>,
    extraction: Option<Extraction>,
) -> Result<Content> {
    let built = structured::build(object_type, record)?;
    Ok(Content {
        title: built.title,
        file_name: None,
        url: built.url.or(external_url),
        extraction: Extraction {
            chars: built.content.chars().count() as u64,
            ..extraction.unwrap_or_default()
        },
        content: built.content,
        original: None,
    })
}
