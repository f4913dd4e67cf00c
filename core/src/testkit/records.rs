//! Records: uploads, versions, touches, tombstones and concurrent writers.

use std::sync::Arc;

use crate::{
    Error, RecordStore,
    record::Scope,
    sync::{CloseOperation, OpenOperation},
    tag::TagValue,
};

use super::*;

/// A new externalId is created at version 1; every later upload increments the version, keeps the
/// id and created date, and replaces the whole tag set.
pub async fn uploads_create_then_increment_versions(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let run = store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    assert_eq!(run.sync_number, 1);
    let mut w = write(scope, "a", Some(1), Some("c1"));
    w.tags.insert(
        "color".into(),
        vec![TagValue::Text("red".into()), TagValue::Text("blue".into())],
    );
    let first = store.put_record(w).await.unwrap();
    assert!(first.created);
    assert_eq!(first.record.version, 1);
    assert_eq!(first.record.object_type.current_sync_number, 1);
    assert_eq!(first.record.object_type.name, "Files");
    let mut w = write(scope, "a", Some(1), Some("c2"));
    w.tags
        .insert("color".into(), vec![TagValue::Text("green".into())]);
    let second = store.put_record(w).await.unwrap();
    assert!(!second.created);
    assert_eq!(second.record.version, 2);
    assert_eq!(second.record.id, first.record.id);
    assert_eq!(second.record.created_date, first.record.created_date);
    assert_eq!(
        second.record.tags["color"],
        vec![TagValue::Text("green".into())]
    );
    assert_eq!(second.record.external_checksum.as_deref(), Some("c2"));
    let read = store.get_record(&key(scope, "a")).await.unwrap();
    assert_eq!(read, second.record);
}

/// Outside a sync, a new record joins the latest sync number (0 before any sync) and an existing
/// one keeps its membership.
pub async fn upload_outside_a_sync(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let r = store
        .put_record(write(scope, "early", None, None))
        .await
        .unwrap();
    assert_eq!(r.record.sync_number, 0);
    assert_eq!(r.record.object_type.current_sync_number, 0);
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    store
        .put_record(write(scope, "a", Some(1), None))
        .await
        .unwrap();
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    assert!(
        store
            .get_record(&key(scope, "early"))
            .await
            .unwrap()
            .removed
    );
    let r = store
        .put_record(write(scope, "late", None, None))
        .await
        .unwrap();
    assert_eq!(r.record.sync_number, 1);
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let r = store
        .put_record(write(scope, "new", None, None))
        .await
        .unwrap();
    assert_eq!(
        r.record.sync_number, 2,
        "new record joins the latest (open) sync"
    );
    store
        .close_sync(scope, 2, CloseOperation::CompleteIncremental)
        .await
        .unwrap();
    let r = store
        .put_record(write(scope, "a", None, None))
        .await
        .unwrap();
    assert_eq!(
        r.record.sync_number, 1,
        "without an open sync an existing record keeps its membership"
    );
}

/// A new source whose records `ids` (checksum `checksum`) were written in a completed first
/// sync, with a second sync (START, number 2) open.
pub(super) async fn in_a_second_sync(
    store: &dyn RecordStore,
    ids: &[&str],
    checksum: &str,
) -> Scope {
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    for id in ids {
        store
            .put_record(write(scope, id, Some(1), Some(checksum)))
            .await
            .unwrap();
    }
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    scope
}

/// Without a syncNumber, an upload or touch during an open sync acts on that sync (DESIGN 5):
/// COMPLETE keeps the records, and the sync's counters count the writes.
pub async fn writes_without_a_number_join_the_open_sync(store: &dyn RecordStore) {
    let scope = in_a_second_sync(store, &["touched", "uploaded", "stale"], "c1").await;
    let touched = store
        .touch_record(&key(scope, "touched"), touch(None, Some("c1")))
        .await
        .unwrap();
    assert_eq!(
        touched.sync_number, 2,
        "a touch without number joins sync 2"
    );
    let uploaded = store
        .put_record(write(scope, "uploaded", None, Some("c2")))
        .await
        .unwrap();
    assert_eq!(uploaded.record.sync_number, 2, "an upload joins sync 2");
    let closed = store
        .close_sync(scope, 2, CloseOperation::Complete)
        .await
        .unwrap();
    assert_eq!(closed.counters.removed, 1, "{closed:?}");
    assert_eq!(closed.counters.touched, 1, "{closed:?}");
    assert_eq!(closed.counters.uploaded, 1, "{closed:?}");
    for id in ["touched", "uploaded"] {
        assert!(
            !store.get_record(&key(scope, id)).await.unwrap().removed,
            "{id}"
        );
    }
    assert!(
        store
            .get_record(&key(scope, "stale"))
            .await
            .unwrap()
            .removed
    );
}

/// An upload or touch naming a sync number that is not the open sync conflicts.
pub async fn writes_must_name_the_open_sync(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let conflict = |e: &Error| matches!(e, Error::Conflict(_));
    assert_err(
        store.put_record(write(scope, "a", Some(1), None)).await,
        conflict,
        "Conflict",
    );
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    assert_err(
        store.put_record(write(scope, "a", Some(2), None)).await,
        conflict,
        "Conflict",
    );
    store
        .put_record(write(scope, "a", Some(1), None))
        .await
        .unwrap();
    assert_err(
        store
            .touch_record(&key(scope, "a"), touch(Some(7), None))
            .await,
        conflict,
        "Conflict",
    );
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    assert_err(
        store.put_record(write(scope, "a", Some(1), None)).await,
        conflict,
        "Conflict",
    );
    assert_err(
        store
            .touch_record(&key(scope, "a"), touch(Some(1), None))
            .await,
        conflict,
        "Conflict",
    );
    assert!(store.get_record(&key(scope, "nope")).await.is_err());
}

/// Touch makes a record part of the sync and changes nothing else; If-Match must equal the stored
/// checksum; a missing or removed record is NotFound.
pub async fn touch_joins_the_sync_and_changes_nothing_else(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    let before = store
        .put_record(write(scope, "a", Some(1), Some("c1")))
        .await
        .unwrap()
        .record;
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    assert_err(
        store
            .touch_record(&key(scope, "a"), touch(Some(2), Some("other")))
            .await,
        |e| matches!(e, Error::PreconditionFailed(_)),
        "PreconditionFailed",
    );
    let after = store
        .touch_record(&key(scope, "a"), touch(Some(2), Some("c1")))
        .await
        .unwrap();
    assert_eq!(after.sync_number, 2);
    assert_eq!(after.version, before.version);
    assert_eq!(after.modified_date, before.modified_date);
    assert_eq!(after.content, before.content);
    store
        .touch_record(&key(scope, "a"), touch(Some(2), None))
        .await
        .unwrap();
    assert_err(
        store
            .touch_record(&key(scope, "missing"), touch(Some(2), None))
            .await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    let closed = store
        .close_sync(scope, 2, CloseOperation::Complete)
        .await
        .unwrap();
    assert_eq!(closed.counters.removed, 0);
    assert_eq!(closed.counters.touched, 2);
    assert_eq!(closed.kept, Some(1));
}

/// Deleting makes the same tombstone as a sync removal; a second delete is NotFound.
pub async fn delete_makes_a_revivable_tombstone(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .put_record(write(scope, "a", None, Some("c")))
        .await
        .unwrap();
    store.delete_record(&key(scope, "a")).await.unwrap();
    let r = store.get_record(&key(scope, "a")).await.unwrap();
    assert!(r.removed);
    assert_eq!(r.visible_checksum(), None);
    assert_err(
        store.delete_record(&key(scope, "a")).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    assert_err(
        store.delete_record(&key(scope, "zz")).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    let back = store
        .put_record(write(scope, "a", None, None))
        .await
        .unwrap();
    assert_eq!(back.record.version, 2);
    assert!(!back.record.removed);
}

/// 50 concurrent uploads of one externalId end at version 50 with every version seen once.
pub async fn concurrent_uploads_never_lose_a_version(store: Arc<dyn RecordStore>) {
    let (_, scope) = new_source(store.as_ref()).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .put_record(write(scope, "hot", Some(1), Some(&format!("c{i}"))))
                    .await
            })
        })
        .collect();
    let mut versions = Vec::new();
    let mut created = 0;
    for t in tasks {
        let out = t.await.expect("task").expect("upload");
        created += usize::from(out.created);
        versions.push(out.record.version);
    }
    versions.sort_unstable();
    assert_eq!(versions, (1..=50).collect::<Vec<_>>());
    assert_eq!(created, 1);
    assert_eq!(
        store.get_record(&key(scope, "hot")).await.unwrap().version,
        50
    );
}
