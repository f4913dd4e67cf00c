//! Conformance cases of the change feed ([`crate::changes`]) over a store's write log.

use std::collections::BTreeMap;

use super::{assert_err, key, new_source_in, test_source, write};
use crate::{
    Error, RecordStore,
    changes::{self, Cursor, FeedChange},
    index::LogScope,
    record::Scope,
    sync::{CloseOperation, OpenOperation},
};

/// A second source in `workspace` (the test source under another externalId).
async fn another_source(store: &dyn RecordStore, workspace: crate::WorkspaceId, id: &str) -> Scope {
    let mut source = test_source(workspace);
    source.external_id = id.into();
    store.create_source(&source).await.unwrap();
    Scope {
        workspace_id: workspace,
        source_id: source.id,
        object_type_id: source.object_types[0].id,
    }
}

/// Walks the feed from `cursor` to its end, `limit` changes per read; answers what it read and
/// the cursor it ended at.
async fn walk(
    store: &dyn RecordStore,
    scope: &LogScope,
    mut cursor: Cursor,
    limit: u64,
) -> (Vec<FeedChange>, Cursor) {
    let mut all = Vec::new();
    for _ in 0..10_000 {
        let page = changes::read(store, scope, cursor, Some(limit))
            .await
            .unwrap();
        assert!(page.changes.len() <= limit as usize, "page over its limit");
        let done = page.changes.is_empty();
        all.extend(page.changes);
        // The text form is what a consumer keeps.
        cursor = Cursor::parse(&page.cursor.encode()).unwrap();
        if done {
            return (all, cursor);
        }
    }
    panic!("the feed never ended");
}

/// What a consumer applying `changes` in order holds: externalId → version.
fn applied(changes: &[FeedChange]) -> BTreeMap<String, i64> {
    let mut held = BTreeMap::new();
    for change in changes {
        match change {
            FeedChange::Upsert(r) => {
                held.insert(r.external_id.clone(), r.version);
            }
            FeedChange::Remove(r) => {
                held.remove(&r.external_id);
            }
            FeedChange::SourceDeleted { .. } => panic!("no source was deleted"),
        }
    }
    held
}

/// A change's identity, to compare walks and find repeats.
fn label(change: &FeedChange) -> String {
    match change {
        FeedChange::Upsert(r) => format!("upsert {} v{}", r.external_id, r.version),
        FeedChange::Remove(r) => format!("remove {}", r.external_id),
        FeedChange::SourceDeleted { source_id } => format!("source {source_id}"),
    }
}

async fn live(store: &dyn RecordStore, scope: Scope) -> BTreeMap<String, i64> {
    let query = crate::record::ListQuery {
        limit: 1000,
        ..Default::default()
    };
    store
        .list_records(scope, &query)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.external_id, r.version))
        .collect()
}

/// The feed opens with a snapshot of the workspace's live records, then gives every later write
/// in commit order: uploads as UPSERTs, DELETEs and the records a COMPLETE close removed as
/// REMOVEs. Reading one change at a time (so pages end inside the snapshot and inside a close)
/// gives what reading a thousand does; a consumer applying the walk holds exactly the live
/// records; no change repeats; other workspaces and, when asked, other sources stay out.
pub async fn change_feed_walks_a_snapshot_then_commit_order(store: &dyn RecordStore) {
    let workspace = uuid::Uuid::new_v4();
    let (_, scope) = new_source_in(store, workspace).await;
    let other_source = another_source(store, workspace, "other").await;
    let (_, stranger) = new_source_in(store, uuid::Uuid::new_v4()).await;
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    for id in ["a", "b", "c"] {
        store
            .put_record(write(scope, id, Some(1), None))
            .await
            .unwrap();
    }
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    store
        .put_record(write(other_source, "o", None, None))
        .await
        .unwrap();
    store
        .put_record(write(stranger, "s", None, None))
        .await
        .unwrap();
    let everything = LogScope {
        workspace_id: workspace,
        source_id: None,
    };
    let (opening, end) = walk(store, &everything, Cursor::Start, 2).await;
    let mut seen: Vec<String> = opening.iter().map(label).collect();
    seen.sort();
    assert_eq!(
        seen,
        ["upsert a v1", "upsert b v1", "upsert c v1", "upsert o v1"]
    );

    // Later writes: a stored again, b deleted, d and e new; then a sync touching only a, whose
    // COMPLETE close removes c, d and e.
    store
        .put_record(write(scope, "a", None, None))
        .await
        .unwrap();
    store.delete_record(&key(scope, "b")).await.unwrap();
    for id in ["d", "e"] {
        store
            .put_record(write(scope, id, None, None))
            .await
            .unwrap();
    }
    let open = store.open_sync(scope, OpenOperation::Start).await.unwrap();
    let n = open.sync_number;
    store
        .put_record(write(scope, "a", Some(n), None))
        .await
        .unwrap();
    store
        .close_sync(scope, n, CloseOperation::Complete)
        .await
        .unwrap();
    store
        .put_record(write(stranger, "s", None, None))
        .await
        .unwrap();

    let (one_by_one, end_one) = walk(store, &everything, end, 1).await;
    let (at_once, end_all) = walk(store, &everything, end, 1000).await;
    let labels: Vec<String> = one_by_one.iter().map(label).collect();
    assert_eq!(labels, at_once.iter().map(label).collect::<Vec<_>>());
    assert_eq!(end_one, end_all);
    for pair in labels.windows(2) {
        assert_ne!(pair[0], pair[1], "a change repeated: {labels:?}");
    }
    // Each removal is given once: a record a close removed is not also a tombstone at its
    // earlier write.
    for id in ["b", "c", "d", "e"] {
        let removes = labels.iter().filter(|l| **l == format!("remove {id}"));
        assert_eq!(removes.count(), 1, "REMOVE of {id}: {labels:?}");
    }
    assert!(labels.iter().all(|l| !l.contains(" s")), "{labels:?}");
    // The last change of a is its newest version.
    assert_eq!(
        labels.iter().rev().find(|l| l.starts_with("upsert a")),
        Some(&"upsert a v3".to_string())
    );
    let mut want = live(store, scope).await;
    want.extend(live(store, other_source).await);
    assert_eq!(applied_in_order(&opening, &one_by_one), want);

    // Read again from the end: nothing, and the cursor holds.
    let page = changes::read(store, &everything, end_all, Some(10))
        .await
        .unwrap();
    assert!(page.changes.is_empty());
    // One source only.
    let one_source = LogScope {
        workspace_id: workspace,
        source_id: Some(other_source.source_id),
    };
    let (only, _) = walk(store, &one_source, Cursor::Start, 1000).await;
    assert_eq!(only.iter().map(label).collect::<Vec<_>>(), ["upsert o v1"]);
}

/// Applies a snapshot then a walk, in order.
fn applied_in_order(opening: &[FeedChange], rest: &[FeedChange]) -> BTreeMap<String, i64> {
    let all: Vec<FeedChange> = opening.iter().chain(rest).cloned().collect();
    applied(&all)
}

/// A deleted source is one SOURCE_DELETED. Purging the log past it raises the floor: a cursor
/// from before is Gone (it could have missed that removal), a walk without a cursor still
/// works, and a cursor from after the floor goes on.
pub async fn change_feed_retention_makes_old_cursors_gone(store: &dyn RecordStore) {
    let workspace = uuid::Uuid::new_v4();
    let (_, scope) = new_source_in(store, workspace).await;
    let doomed = another_source(store, workspace, "doomed").await;
    let everything = LogScope {
        workspace_id: workspace,
        source_id: None,
    };
    store
        .put_record(write(doomed, "x", None, None))
        .await
        .unwrap();
    let (_, before) = walk(store, &everything, Cursor::Start, 100).await;
    store
        .delete_source(workspace, doomed.source_id)
        .await
        .unwrap();
    store
        .put_record(write(scope, "kept", None, None))
        .await
        .unwrap();
    let (seen, after) = walk(store, &everything, before, 100).await;
    assert_eq!(
        seen.iter().map(label).collect::<Vec<_>>(),
        [
            format!("source {}", doomed.source_id),
            "upsert kept v1".to_string()
        ]
    );
    let floor = store
        .purge_log(crate::time::now() + chrono::Duration::seconds(1))
        .await
        .unwrap();
    assert!(floor > 0);
    assert_eq!(store.log_floor().await.unwrap(), floor);
    assert_err(
        changes::read(store, &everything, before, None).await,
        |e| matches!(e, Error::Gone(m) if m.contains("without a cursor")),
        "Gone for a cursor behind the floor",
    );
    let page = changes::read(store, &everything, after, None)
        .await
        .unwrap();
    assert!(page.changes.is_empty());
    let (fresh, _) = walk(store, &everything, Cursor::Start, 100).await;
    assert_eq!(
        fresh.iter().map(label).collect::<Vec<_>>(),
        ["upsert kept v1"]
    );
    // A purge with nothing old enough leaves the floor.
    assert_eq!(
        store
            .purge_log(crate::time::now() - chrono::Duration::days(1))
            .await
            .unwrap(),
        floor
    );
}
