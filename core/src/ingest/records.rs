//! The record operations a connector calls that carry no file: metadata reads, touches and
//! deletes, one at a time and in batches, and the paged record listing. Each applies the rules
//! the single endpoints of spec 4.4 answer by (input checks, If-Match, sync state), so a batch
//! item answers exactly what its single call would have; the HTTP layer only parses and maps.

use crate::{
    Error, RecordStore, Result,
    access::Viewer,
    input,
    record::{self, ListQuery, Record, RecordKey, Scope, Touch, TouchItem},
    sync::SyncEvent,
    time::Timestamp,
};

/// Most items one batch call takes.
pub const MAX_BATCH: usize = 1000;
/// Most records one listing page holds.
pub const MAX_PAGE: usize = 1000;
/// Records per listing page when the caller names no limit.
pub const DEFAULT_PAGE: usize = 100;

/// One item's answer in a batch, in the order the items were given.
#[derive(Debug)]
pub struct Item<T> {
    /// The item's externalId as given.
    pub external_id: String,
    /// What the single call would have answered.
    pub outcome: Result<T>,
}

/// One touch of a batch as the caller gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TouchRequest {
    /// The record's externalId.
    pub external_id: String,
    /// The expected stored checksum (double quotes optional, as in `If-Match`).
    pub if_match: Option<String>,
}

/// A page of the record listing.
#[derive(Debug)]
pub struct Page {
    /// Records in externalId byte order, without content.
    pub records: Vec<Record>,
    /// Where the next page starts; `None` on the last page.
    pub next_cursor: Option<String>,
}

fn key(scope: Scope, external_id: &str) -> Result<RecordKey> {
    input::check_external_id(external_id)?;
    Ok(RecordKey {
        scope,
        external_id: external_id.to_string(),
    })
}

/// Reads an If-Match value (header or batch item) and checks it.
fn if_match(field: &str, value: Option<&str>) -> Result<Option<String>> {
    value
        .map(|v| {
            let m = record::parse_if_match(v);
            input::check_checksum(field, &m).map(|()| m)
        })
        .transpose()
}

/// Refuses a batch longer than [`MAX_BATCH`], naming the limit.
pub fn check_batch(len: usize) -> Result<()> {
    if len > MAX_BATCH {
        return Err(Error::invalid(format!(
            "a batch holds at most {MAX_BATCH} items; this one has {len}: split it"
        )));
    }
    Ok(())
}

/// One record's metadata (tombstones included), when `viewer` may read it.
pub async fn metadata(
    store: &dyn RecordStore,
    scope: Scope,
    external_id: &str,
    viewer: &Viewer,
) -> Result<Record> {
    readable(viewer, store.get_record(&key(scope, external_id)?).await?)
}

/// The externalIds among `external_ids` whose records exist but `viewer` may not read: a write
/// to one answers as a write to a record that does not exist ([`hidden_record`]), so a reader
/// changes only what they may read (DESIGN 7a).
pub async fn hidden(
    store: &dyn RecordStore,
    scope: Scope,
    external_ids: &[String],
    viewer: &Viewer,
) -> Result<std::collections::HashSet<String>> {
    if matches!(viewer, Viewer::All) {
        return Ok(Default::default());
    }
    let valid: Vec<String> = external_ids
        .iter()
        .filter(|id| input::check_external_id(id).is_ok())
        .cloned()
        .collect();
    Ok(store
        .get_records(scope, &valid)
        .await?
        .into_iter()
        .filter(|r| !r.readable_by(viewer))
        .map(|r| r.external_id)
        .collect())
}

/// The live record `external_id` with its original, for a download: a removed record, or one
/// `viewer` may not read, answers as a record that does not exist; one without an original
/// (stored before originals were kept, or a STRUCTURED record without a file) says so.
pub async fn original(
    store: &dyn RecordStore,
    scope: Scope,
    external_id: &str,
    viewer: &Viewer,
) -> Result<(Record, crate::blob::Original)> {
    let record = metadata(store, scope, external_id, viewer).await?;
    if record.removed {
        return Err(not_found(external_id));
    }
    match record.original.clone() {
        Some(original) => Ok((record, original)),
        None => Err(Error::not_found(format!(
            "record '{external_id}' has no original file: it holds no file, or was stored \
             before originals were kept (upload it again to keep one)"
        ))),
    }
}

/// The refusal of a write to a record the writer may not read: a touch's or delete's answer
/// for a record that does not exist.
pub fn hidden_record(external_id: &str) -> Error {
    Error::not_found(format!("no current record with externalId '{external_id}'"))
}

/// `record` when `viewer` may read it; otherwise the answer for a record that does not exist,
/// word for word (DESIGN 7a).
pub fn readable(viewer: &Viewer, record: Record) -> Result<Record> {
    if record.readable_by(viewer) {
        Ok(record)
    } else {
        Err(not_found(&record.external_id))
    }
}

/// Touches one record: marks it part of `sync_number` (or the open sync) when it is live and
/// `if_match` (the header's value) equals its checksum.
pub async fn touch(
    store: &dyn RecordStore,
    scope: Scope,
    external_id: &str,
    sync_number: Option<i64>,
    if_match_header: Option<&str>,
) -> Result<Record> {
    let key = key(scope, external_id)?;
    let touch = Touch {
        sync_number,
        if_match: if_match("If-Match", if_match_header)?,
        event: SyncEvent::Touched,
    };
    store.touch_record(&key, touch).await
}

/// Deletes one record (a tombstone).
pub async fn delete(store: &dyn RecordStore, scope: Scope, external_id: &str) -> Result<()> {
    store.delete_record(&key(scope, external_id)?).await
}

/// Metadata of up to [`MAX_BATCH`] records, read together; a missing record, or one `viewer`
/// may not read, is that item's `NotFound`, a malformed externalId that item's `Invalid`.
pub async fn metadata_batch(
    store: &dyn RecordStore,
    scope: Scope,
    external_ids: Vec<String>,
    viewer: &Viewer,
) -> Result<Vec<Item<Record>>> {
    check_batch(external_ids.len())?;
    let valid: Vec<String> = external_ids
        .iter()
        .filter(|id| input::check_external_id(id).is_ok())
        .cloned()
        .collect();
    let found: std::collections::HashMap<String, Record> = store
        .get_records(scope, &valid)
        .await?
        .into_iter()
        .filter(|r| r.readable_by(viewer))
        .map(|r| (r.external_id.clone(), r))
        .collect();
    Ok(external_ids
        .into_iter()
        .map(|external_id| {
            let outcome = input::check_external_id(&external_id).and_then(|()| {
                // A repeated externalId answers the same record each time.
                found
                    .get(&external_id)
                    .cloned()
                    .ok_or_else(|| not_found(&external_id))
            });
            Item {
                external_id,
                outcome,
            }
        })
        .collect())
}

fn not_found(external_id: &str) -> Error {
    Error::not_found(format!("no record with externalId '{external_id}'"))
}

/// One access change as the caller gave it: the entries of the new list, or `None` for the
/// object type's default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessRequest {
    /// The record's externalId.
    pub external_id: String,
    /// The new list's entries (`everyone`, `user:<e-mail>`, `group:<externalId>`).
    pub access: Option<Vec<String>>,
}

/// Changes the access lists of up to [`MAX_BATCH`] live records in one store transaction, each
/// logged as a change of its record (versions unchanged); each item answers `NotFound` (no
/// live record) or `Invalid` (a malformed externalId or entry) on its own.
pub async fn access_batch(
    store: &dyn RecordStore,
    scope: Scope,
    requests: Vec<AccessRequest>,
) -> Result<Vec<Item<()>>> {
    check_batch(requests.len())?;
    let mut items: Vec<Item<()>> = Vec::with_capacity(requests.len());
    let mut valid = Vec::new();
    let mut at = Vec::new();
    for request in requests {
        let parsed = input::check_external_id(&request.external_id).and_then(|()| {
            request
                .access
                .as_ref()
                .map(|entries| crate::access::parse_list(entries.iter().map(String::as_str)))
                .transpose()
        });
        match parsed {
            Ok(access) => {
                at.push(items.len());
                valid.push(record::AccessItem {
                    external_id: request.external_id.clone(),
                    access,
                });
                items.push(Item {
                    external_id: request.external_id,
                    outcome: Ok(()),
                });
            }
            Err(e) => items.push(Item {
                external_id: request.external_id,
                outcome: Err(e),
            }),
        }
    }
    if !valid.is_empty() {
        let results = store.set_access(scope, &valid).await?;
        for (i, outcome) in at.into_iter().zip(results) {
            items[i].outcome = outcome;
        }
    }
    Ok(items)
}

/// Touches up to [`MAX_BATCH`] records in one store transaction. The sync rules (a given
/// `sync_number` must be the open sync) apply to the whole batch and are the call's error; each
/// item answers `NotFound` (no live record), `PreconditionFailed` (checksum differs) or
/// `Invalid` (malformed item) on its own.
pub async fn touch_batch(
    store: &dyn RecordStore,
    scope: Scope,
    sync_number: Option<i64>,
    items: Vec<TouchRequest>,
) -> Result<Vec<Item<()>>> {
    check_batch(items.len())?;
    let checked: Vec<Result<TouchItem>> = items
        .iter()
        .map(|item| {
            input::check_external_id(&item.external_id)?;
            Ok(TouchItem {
                external_id: item.external_id.clone(),
                if_match: if_match("ifMatch", item.if_match.as_deref())?,
            })
        })
        .collect();
    let valid: Vec<TouchItem> = checked
        .iter()
        .filter_map(|c| c.as_ref().ok())
        .cloned()
        .collect();
    let mut applied = store
        .touch_records(scope, sync_number, SyncEvent::Touched, &valid)
        .await?
        .into_iter();
    let mut out = Vec::with_capacity(items.len());
    for (item, check) in items.into_iter().zip(checked) {
        let outcome = match check {
            Err(e) => Err(e),
            Ok(_) => applied.next().unwrap_or_else(|| {
                Err(Error::backend(std::io::Error::other(
                    "the store answered fewer touches than it was given",
                )))
            }),
        };
        out.push(Item {
            external_id: item.external_id,
            outcome,
        });
    }
    Ok(out)
}

/// Deletes up to [`MAX_BATCH`] records, each as [`delete`] does (a missing or already removed
/// record is that item's `NotFound`). A storage failure midway answers the items done and
/// marks the rest [`Error::Unavailable`]; one before any deletion is the call's error.
pub async fn delete_batch(
    store: &dyn RecordStore,
    scope: Scope,
    external_ids: Vec<String>,
) -> Result<Vec<Item<()>>> {
    check_batch(external_ids.len())?;
    let mut out = Vec::with_capacity(external_ids.len());
    let mut ids = external_ids.into_iter();
    while let Some(external_id) = ids.next() {
        let outcome = match delete(store, scope, &external_id).await {
            Ok(()) => Ok(()),
            Err(e @ (Error::NotFound(_) | Error::Invalid(_))) => Err(e),
            // A storage failure before anything was deleted fails the call; after, the answer
            // says which items were deleted and which were not (each with the failure), so a
            // retry of the failed ones is all a client needs.
            Err(e) if !out.iter().any(|i: &Item<()>| i.outcome.is_ok()) => return Err(e),
            Err(e) => {
                let not_done = |external_id| Item {
                    external_id,
                    outcome: Err(Error::Unavailable(format!("not deleted: {e}"))),
                };
                out.push(not_done(external_id));
                out.extend(ids.by_ref().map(not_done));
                break;
            }
        };
        out.push(Item {
            external_id,
            outcome,
        });
    }
    Ok(out)
}

const CURSOR_PREFIX: &str = "r1.";

/// The cursor of the page after `external_id`: opaque to callers (hex of the externalId).
fn cursor_after(external_id: &str) -> String {
    let mut c = String::with_capacity(CURSOR_PREFIX.len() + external_id.len() * 2);
    c.push_str(CURSOR_PREFIX);
    for b in external_id.as_bytes() {
        c.push_str(&format!("{b:02x}"));
    }
    c
}

fn parse_cursor(cursor: &str) -> Result<String> {
    let bad = || Error::invalid("cursor is not one this listing returned; start without it");
    let hex = cursor.strip_prefix(CURSOR_PREFIX).ok_or_else(bad)?;
    if hex.len() % 2 != 0 {
        return Err(bad());
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("x"), 16))
        .collect::<std::result::Result<Vec<u8>, _>>()
        .map_err(|_| bad())?;
    String::from_utf8(bytes).map_err(|_| bad())
}

/// A page size asked for: [`DEFAULT_PAGE`] when absent, 1 to [`MAX_PAGE`].
pub(crate) fn page_limit(limit: Option<u64>) -> Result<usize> {
    match limit {
        None => Ok(DEFAULT_PAGE),
        Some(0) => Err(Error::invalid("limit must be at least 1")),
        Some(n) if n > MAX_PAGE as u64 => Err(Error::invalid(format!(
            "limit is at most {MAX_PAGE}; got {n}"
        ))),
        Some(n) => Ok(usize::try_from(n).unwrap_or(MAX_PAGE)),
    }
}

/// One page of an object type's records in a stable order (externalId, byte order), resumable
/// from the returned cursor. `limit` defaults to [`DEFAULT_PAGE`], at most [`MAX_PAGE`].
pub async fn list(
    store: &dyn RecordStore,
    scope: Scope,
    cursor: Option<&str>,
    limit: Option<u64>,
    include_removed: bool,
    modified_since: Option<Timestamp>,
    viewer: &Viewer,
) -> Result<Page> {
    let limit = page_limit(limit)?;
    let mut after = cursor.map(parse_cursor).transpose()?;
    // A reader sees only what they may read: the store leaves out records hidden from them
    // (checked again here), so the cursor names only records they saw.
    let read = limit + 1;
    let readable = viewer.readable_in(scope.source_id, scope.object_type_id);
    let mut records = Vec::new();
    loop {
        let query = ListQuery {
            after: after.clone(),
            // One more than asked tells whether another page follows.
            limit: read,
            include_removed,
            modified_since,
            with_access_list: false,
            readable: readable.clone(),
        };
        let page = store.list_records(scope, &query).await?;
        let ended = page.len() < read;
        after = page.last().map(|r| r.external_id.clone());
        records.extend(page.into_iter().filter(|r| r.readable_by(viewer)));
        if records.len() > limit || ended {
            break;
        }
    }
    let next_cursor = if records.len() > limit {
        records.truncate(limit);
        records.last().map(|r| cursor_after(&r.external_id))
    } else {
        None
    };
    Ok(Page {
        records,
        next_cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_strangers() {
        for id in ["a", "dir/ünïcode file.pdf", "x:y", ""] {
            assert_eq!(parse_cursor(&cursor_after(id)).ok().as_deref(), Some(id));
        }
        for bad in ["", "abc", "r1.0", "r1.zz", "r1.ff", "r2.61"] {
            assert!(matches!(parse_cursor(bad), Err(Error::Invalid(_))), "{bad}");
        }
    }

    #[test]
    fn batch_limit_is_named() {
        assert!(check_batch(MAX_BATCH).is_ok());
        let Err(Error::Invalid(m)) = check_batch(MAX_BATCH + 1) else {
            panic!("over-long batch accepted");
        };
        assert!(m.contains("1000") && m.contains("1001"), "{m}");
    }
}
