//! Conformance cases of closing syncs under the mass-removal guard.

use super::{assert_err, key, new_source, write};
use crate::{
    Error, RecordStore,
    sync::{CloseOperation, OpenOperation, SyncState},
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
