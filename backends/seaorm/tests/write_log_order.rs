//! The write log is in commit order on PostgreSQL (issue: search index fed by the store's write
//! log). A sequence hands out numbers in start order, so a follower reading "everything after the
//! last number I saw" skips a write that took an earlier number and committed later. These
//! tests hold transactions open in different orders and race writers against a follower.
//! Skipped without `INLET_TEST_POSTGRES_URL` (a failure with `INLET_REQUIRE_POSTGRES=1`).

use std::{collections::HashSet, sync::Arc, time::Duration};

use inlet_core::{
    RecordStore,
    index::{Change, Position},
    store::prelude::*,
    testkit::{new_source, write},
};
use inlet_store_seaorm::SeaOrmStore;
use sea_orm::{ConnectionTrait, DbBackend, Statement, TransactionTrait};
use uuid::Uuid;

mod common;

async fn store() -> Option<(Arc<SeaOrmStore>, common::PgSchema)> {
    let schema = common::PgSchema::create().await?;
    let store = SeaOrmStore::connect(&schema.url)
        .await
        .expect("open postgres store");
    Some((Arc::new(store), schema))
}

/// Ids of the records of `source` in the log after `after`, following pages to the head.
async fn follow(
    store: &dyn RecordStore,
    mut after: Position,
    seen: &mut Vec<(Position, Uuid)>,
    source: Uuid,
) -> Position {
    loop {
        let page = store.log_after(after, 7).await.expect("log page");
        for c in &page.changes {
            if let Change::Record {
                position, record, ..
            } = c
                && record.source_id == source
            {
                seen.push((*position, record.id));
            }
        }
        if page.upto == after {
            return after;
        }
        after = page.upto;
    }
}

/// A transaction that took its position first and commits last holds back every later writer:
/// the follower sees neither until it commits, then both in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_held_position_holds_back_later_writers() {
    let Some((store, schema)) = store().await else {
        return;
    };
    let (_, scope) = new_source(&*store).await;
    let first = store
        .put_record(write(scope, "first", None, None))
        .await
        .expect("first")
        .record;
    let start = store.log_head().await.expect("head");

    // A writer that takes the next position (as every store write does, last) and stays open.
    let txn = store.connection().begin().await.expect("begin");
    txn.execute_raw(Statement::from_string(
        DbBackend::Postgres,
        "UPDATE records SET title = 'held' WHERE external_id = 'first'",
    ))
    .await
    .expect("write");
    txn.execute_raw(Statement::from_string(
        DbBackend::Postgres,
        format!(
            "WITH h AS (UPDATE change_head SET pos = pos + 1 WHERE id = 1 RETURNING pos) \
             UPDATE records SET change_pos = (SELECT pos FROM h) WHERE id = '{}'",
            first.id
        ),
    ))
    .await
    .expect("take a position");

    // A store write started later must wait for it.
    let later = {
        let store = store.clone();
        tokio::spawn(async move { store.put_record(write(scope, "later", None, None)).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !later.is_finished(),
        "the later write waits for the held position"
    );
    let mut seen = Vec::new();
    follow(&*store, start, &mut seen, scope.source_id).await;
    assert!(
        seen.is_empty(),
        "nothing is visible before the first commit: {seen:?}"
    );

    txn.commit().await.expect("commit the held writer");
    let later = later.await.expect("join").expect("later write").record;
    follow(&*store, start, &mut seen, scope.source_id).await;
    let order: Vec<Uuid> = seen.iter().map(|(_, id)| *id).collect();
    assert_eq!(order, [first.id, later.id], "commit order");
    assert!(seen[0].0 < seen[1].0);
    drop(store);
    common::PgSchema::drop_named(&schema.name).await;
}

/// Writers racing a follower that always continues after the last position it read: the
/// follower misses none of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_follower_racing_writers_misses_nothing() {
    let Some((store, schema)) = store().await else {
        return;
    };
    let (_, scope) = new_source(&*store).await;
    let start = store.log_head().await.expect("head");
    let mut writers = Vec::new();
    for w in 0..8 {
        let store = store.clone();
        writers.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in 0..40 {
                let id = format!("w{w}-{i}");
                let r = store
                    .put_record(write(scope, &id, None, None))
                    .await
                    .expect("write");
                ids.push(r.record.id);
            }
            ids
        }));
    }
    let mut seen = Vec::new();
    let mut at = start;
    while !writers.iter().all(|w| w.is_finished()) {
        at = follow(&*store, at, &mut seen, scope.source_id).await;
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut written = HashSet::new();
    for w in writers {
        written.extend(w.await.expect("join"));
    }
    follow(&*store, at, &mut seen, scope.source_id).await;
    let got: HashSet<Uuid> = seen.iter().map(|(_, id)| *id).collect();
    assert_eq!(got.len(), 320);
    assert_eq!(got, written, "the follower saw every write");
    assert!(
        seen.windows(2).all(|w| w[0].0 < w[1].0),
        "positions only grow"
    );
    drop(store);
    common::PgSchema::drop_named(&schema.name).await;
}
