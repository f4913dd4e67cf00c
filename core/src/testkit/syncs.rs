//! Conformance cases of closing syncs under the mass-removal guard.

use super::*;
use std::sync::Arc;

use crate::{
    Error, RecordStore,
    record::{Extraction, Touch},
    sync::{CloseOperation, OpenOperation, SyncEvent, SyncState},
};

/// A COMPLETE close that would remove more than the allowed share is refused in its own
/// transaction: the sync stays open and nothing is removed; within the share, or without a
/// guard, it closes as always.
pub async fn mass_removal_guard_leaves_the_sync_open(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    for id in ["a", "b", "c", "d"] {
        store
            .put_record(write(scope, id, Some(1), None))
            .await
            .unwrap();
    }
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    let open = store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let n = open.sync_number;
    store
        .put_record(write(scope, "a", Some(n), None))
        .await
        .unwrap();
    // Closing now removes b, c and d: 75% of the 4 live records.
    assert_err(
        store
            .close_sync_guarded(scope, n, CloseOperation::Complete, Some(50.0))
            .await,
        |e| matches!(e, Error::Conflict(m) if m.contains("3 of") && m.contains("4 live")),
        "Conflict naming the counts",
    );
    assert_eq!(
        store.get_sync(scope, n).await.unwrap().state,
        SyncState::Open
    );
    assert!(!store.get_record(&key(scope, "b")).await.unwrap().removed);
    // Incremental closes remove nothing, so the guard never refuses them; 75% is within 80%.
    let closed = store
        .close_sync_guarded(scope, n, CloseOperation::Complete, Some(80.0))
        .await
        .unwrap();
    assert_eq!(closed.counters.removed, 3);
    assert_eq!(closed.kept, Some(1));
    assert!(store.get_record(&key(scope, "b")).await.unwrap().removed);
    let again = store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let closed = store
        .close_sync_guarded(
            scope,
            again.sync_number,
            CloseOperation::CompleteIncremental,
            Some(0.0),
        )
        .await
        .unwrap();
    assert_eq!(closed.state, SyncState::Completed);
}

/// COMPLETE removes exactly the records not uploaded or touched in the sync; they become
/// tombstones without a visible checksum; touching one is NotFound; uploading revives it.
pub async fn close_complete_removes_untouched_records(store: &dyn RecordStore) {
    let scope = in_a_second_sync(store, &["keep", "touch", "drop"], "c").await;
    store
        .put_record(write(scope, "keep", Some(2), Some("c2")))
        .await
        .unwrap();
    store
        .touch_record(&key(scope, "touch"), touch(Some(2), None))
        .await
        .unwrap();
    let run = store
        .close_sync(scope, 2, CloseOperation::Complete)
        .await
        .unwrap();
    assert_eq!(run.state, SyncState::Completed);
    assert_eq!(run.close_operation, Some(CloseOperation::Complete));
    assert_eq!(run.counters.removed, 1);
    assert_eq!(run.kept, Some(2));
    assert!(run.closed_at.is_some());
    let dropped = store.get_record(&key(scope, "drop")).await.unwrap();
    assert!(dropped.removed);
    assert_eq!(dropped.visible_checksum(), None);
    assert!(!store.get_record(&key(scope, "keep")).await.unwrap().removed);
    assert!(
        !store
            .get_record(&key(scope, "touch"))
            .await
            .unwrap()
            .removed
    );
    assert_err(
        store
            .touch_record(&key(scope, "drop"), touch(None, None))
            .await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let revived = store
        .put_record(write(scope, "drop", Some(3), Some("c3")))
        .await
        .unwrap();
    assert!(!revived.created);
    assert!(!revived.record.removed);
    assert_eq!(revived.record.version, dropped.version + 1);
    assert_eq!(revived.record.id, dropped.id);
    assert_eq!(revived.record.visible_checksum(), Some("c3"));
}

/// FAIL and COMPLETE_INCREMENTAL remove nothing.
pub async fn fail_and_incremental_remove_nothing(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
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
    for (n, op, state) in [
        (2, CloseOperation::Fail, SyncState::Failed),
        (3, CloseOperation::CompleteIncremental, SyncState::Completed),
    ] {
        store.open_sync(scope, OpenOperation::Start).await.unwrap();
        let run = store.close_sync(scope, n, op).await.unwrap();
        assert_eq!(run.state, state);
        assert_eq!(run.counters.removed, 0);
        assert!(!store.get_record(&key(scope, "a")).await.unwrap().removed);
    }
}

/// Every misuse of the sync state machine conflicts; an unknown sync is NotFound.
pub async fn sync_state_machine_misuse_conflicts(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    let conflict = |e: &Error| matches!(e, Error::Conflict(_));
    assert_err(
        store.open_sync(scope, OpenOperation::Start).await,
        conflict,
        "Conflict",
    );
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    assert_err(
        store.open_sync(scope, OpenOperation::Start).await,
        conflict,
        "Conflict",
    );
    assert_err(
        store.open_sync(scope, OpenOperation::StartInitial).await,
        conflict,
        "Conflict",
    );
    assert_err(
        store.close_sync(scope, 9, CloseOperation::Complete).await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
    store
        .close_sync(scope, 1, CloseOperation::Fail)
        .await
        .unwrap();
    assert_err(
        store.close_sync(scope, 1, CloseOperation::Complete).await,
        conflict,
        "Conflict",
    );
    assert_err(
        store.open_sync(scope, OpenOperation::StartInitial).await,
        conflict,
        "Conflict",
    );
    let run = store.open_sync(scope, OpenOperation::Start).await.unwrap();
    assert_eq!(run.sync_number, 2);
    let runs = store.list_syncs(scope).await.unwrap();
    assert_eq!(
        runs.iter().map(|r| r.sync_number).collect::<Vec<_>>(),
        [2, 1]
    );
    assert_eq!(
        store.get_sync(scope, 1).await.unwrap().state,
        SyncState::Failed
    );
}

/// Sync counters record uploads, touches, checksum skips and extraction failures.
pub async fn sync_counters_count_writes(store: &dyn RecordStore) {
    let (_, scope) = new_source(store).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    store
        .put_record(write(scope, "a", Some(1), Some("c")))
        .await
        .unwrap();
    let mut failed = write(scope, "b", Some(1), None);
    failed.content.clear();
    failed.extraction = Extraction {
        format: None,
        version: None,
        chars: 0,
        truncated: false,
        failure: Some("unrecognized format".into()),
        metadata: None,
    };
    store.put_record(failed).await.unwrap();
    store
        .touch_record(
            &key(scope, "a"),
            Touch {
                sync_number: Some(1),
                if_match: Some("c".into()),
                event: SyncEvent::Unchanged,
            },
        )
        .await
        .unwrap();
    store
        .touch_record(&key(scope, "b"), touch(Some(1), None))
        .await
        .unwrap();
    let run = store.get_sync(scope, 1).await.unwrap();
    assert_eq!(run.counters.uploaded, 2);
    assert_eq!(run.counters.extraction_failures, 1);
    assert_eq!(run.counters.unchanged, 1);
    assert_eq!(run.counters.touched, 1);
}

/// Of concurrent opens, exactly one succeeds; the rest conflict.
pub async fn two_syncs_never_open_at_once(store: Arc<dyn RecordStore>) {
    let (_, scope) = new_source(store.as_ref()).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.open_sync(scope, OpenOperation::Start).await })
        })
        .collect();
    let mut opened = 0;
    for t in tasks {
        match t.await.expect("task") {
            Ok(run) => {
                opened += 1;
                assert_eq!(run.sync_number, 2);
            }
            Err(Error::Conflict(_)) => {}
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
    assert_eq!(opened, 1);
}

/// A COMPLETE racing uploads and touches of its own sync never removes a record that was
/// successfully uploaded or touched in that sync.
pub async fn complete_racing_uploads_keeps_their_records(store: Arc<dyn RecordStore>) {
    let (_, scope) = new_source(store.as_ref()).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    for i in 0..40 {
        store
            .put_record(write(scope, &format!("old{i}"), Some(1), None))
            .await
            .unwrap();
    }
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let writers: Vec<_> = (0..40)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let ok = if i % 2 == 0 {
                    store
                        .put_record(write(scope, &format!("old{i}"), Some(2), None))
                        .await
                        .is_ok()
                } else {
                    store
                        .touch_record(&key(scope, &format!("old{i}")), touch(Some(2), None))
                        .await
                        .is_ok()
                };
                (i, ok)
            })
        })
        .collect();
    let closer = {
        let store = store.clone();
        tokio::spawn(async move { store.close_sync(scope, 2, CloseOperation::Complete).await })
    };
    let run = closer.await.expect("task").expect("close");
    let mut joined = 0;
    for w in writers {
        let (i, ok) = w.await.expect("task");
        let record = store
            .get_record(&key(scope, &format!("old{i}")))
            .await
            .unwrap();
        if ok {
            joined += 1;
            assert!(!record.removed, "old{i} joined sync 2 but was removed");
        } else {
            assert!(record.removed, "old{i} failed to join sync 2 yet survived");
        }
    }
    assert_eq!(run.counters.removed, 40 - joined);
}
