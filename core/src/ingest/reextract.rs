//! Re-extraction (DESIGN 7b): reading records again from their originals when an extractor
//! improved (its version is newer than the one that read the record), or on demand for the
//! records that failed. The rules live here: which records are read again, and that a reading
//! never overwrites a newer upload ([`crate::record::Reread`]). Extracting is the caller's (it
//! owns the extractors and their pools). Files attached to STRUCTURED records are not read
//! again (their text sits inside the record's JSON, placed by its templates).

use std::{collections::HashMap, future::Future};

use uuid::Uuid;

use crate::{
    RecordStore, Result,
    blob::{BlobKey, BlobStore},
    record::{Extraction, Record, RecordKey, Reread, Scope},
    source::SourceDataType,
};

/// Records a scan reads from the store at once.
const PAGE: usize = 200;

/// Which records a run reads again.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Only records of this format (`pdf`).
    pub format: Option<String>,
    /// Only records of this source.
    pub source_id: Option<Uuid>,
    /// Only records whose extraction failed (unreadable, unrecognized, timed out), whatever
    /// version read them.
    pub failed_only: bool,
}

/// One run: which records, from where, and whether to read them or only count them.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Which records.
    pub selection: Selection,
    /// Count what would be read again, reading nothing.
    pub dry_run: bool,
    /// Start after this record id (where a stopped run reached); `None`: the start.
    pub after: Option<Uuid>,
}

/// What a run did, counted as it goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Live records looked at.
    pub seen: u64,
    /// Records selected and due: read again (or, in a dry run, that would be).
    pub due: u64,
    /// Read again and stored.
    pub reread: u64,
    /// Selected but without an original (stored before originals were kept): skipped.
    pub no_original: u64,
    /// Changed by an upload (or removed) while being read: left as the upload made them.
    pub changed_meanwhile: u64,
    /// Whose original is missing from the blob store: skipped (logged by the caller).
    pub missing: u64,
}

/// Whether `record` is read again under `selection`, given the current version of each
/// format's extractor: a live record of the selected format and source that was read by an
/// older version than today's (or by none that recorded its version), or, with
/// [`Selection::failed_only`], whose extraction failed. Unrecognized files are read again only
/// as failed ones.
pub fn is_due(
    record: &Record,
    selection: &Selection,
    current: &dyn Fn(&str) -> Option<u32>,
) -> bool {
    let e = &record.extraction;
    if record.removed
        || selection.source_id.is_some_and(|s| s != record.source_id)
        || selection
            .format
            .as_deref()
            .is_some_and(|f| e.format.as_deref() != Some(f))
    {
        return false;
    }
    if selection.failed_only {
        return e.failure.is_some();
    }
    match e.format.as_deref().and_then(current) {
        Some(now) => e.version.is_none_or(|then| then < now),
        None => false,
    }
}

/// Reads again every record `is_due` selects, page by page in record id order from the plan's
/// `after`, storing each new reading unless the record changed meanwhile; `extract` reads bytes
/// into text. `progress` is called after each record with the counts and the id reached (to
/// resume from after a stop). A dry run counts without reading.
pub async fn run<F, Fut>(
    store: &dyn RecordStore,
    blobs: &dyn BlobStore,
    plan: &Plan,
    current: &dyn Fn(&str) -> Option<u32>,
    extract: F,
    progress: &mut (dyn FnMut(&Progress, Uuid) + Send),
) -> Result<Progress>
where
    F: Fn(Vec<u8>) -> Fut,
    Fut: Future<Output = (String, Extraction)>,
{
    let (selection, mut after) = (&plan.selection, plan.after);
    let mut counts = Progress::default();
    // Whether each object type holds files (RECORD), by id.
    let mut files: HashMap<Uuid, bool> = HashMap::new();
    loop {
        let page = store.scan_live(after, PAGE).await?;
        let ended = page.len() < PAGE;
        for (workspace_id, record) in page {
            after = Some(record.id);
            counts.seen += 1;
            if !files.contains_key(&record.object_type.id) {
                let source = store.get_source(workspace_id, record.source_id).await?;
                for ot in &source.object_types {
                    files.insert(ot.id, ot.source_data_type == SourceDataType::Record);
                }
            }
            let holds_files = files.get(&record.object_type.id).copied() == Some(true);
            if holds_files && is_due(&record, selection, current) {
                counts.due += 1;
                if !plan.dry_run {
                    reread(store, blobs, workspace_id, &record, &extract, &mut counts).await?;
                }
            }
            progress(&counts, record.id);
        }
        if ended {
            return Ok(counts);
        }
    }
}

async fn reread<F, Fut>(
    store: &dyn RecordStore,
    blobs: &dyn BlobStore,
    workspace_id: crate::WorkspaceId,
    record: &Record,
    extract: &F,
    counts: &mut Progress,
) -> Result<()>
where
    F: Fn(Vec<u8>) -> Fut,
    Fut: Future<Output = (String, Extraction)>,
{
    let Some(original) = &record.original else {
        counts.no_original += 1;
        return Ok(());
    };
    let Some(bytes) = blobs
        .get(&BlobKey::new(workspace_id, original), None)
        .await?
    else {
        counts.missing += 1;
        return Ok(());
    };
    let (content, extraction) = extract(bytes).await;
    let reread = Reread {
        key: RecordKey {
            scope: Scope {
                workspace_id,
                source_id: record.source_id,
                object_type_id: record.object_type.id,
            },
            external_id: record.external_id.clone(),
        },
        version: record.version,
        sha256: original.sha256.clone(),
        content,
        extraction,
    };
    match store.store_reread(reread).await? {
        Some(_) => counts.reread += 1,
        None => counts.changed_meanwhile += 1,
    }
    Ok(())
}
