//! Storage exhaustion: a pool with no free connection, and a full disk, answer `Error::Unavailable`
//! (the server's 503) rather than hanging or panicking, and the store serves again afterwards.

use std::time::{Duration, Instant};

use inlet_core::{Error, store::prelude::*};
use inlet_store_seaorm::{ACQUIRE_TIMEOUT, SeaOrmStore};
use sea_orm::TransactionTrait;

#[tokio::test]
async fn exhausted_pool_is_unavailable_then_recovers() {
    let path = std::env::temp_dir().join(format!("inlet-pool-{}.db", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let store = SeaOrmStore::connect_with(&url, 1)
        .await
        .expect("open sqlite");
    let ws = uuid::Uuid::new_v4();

    // Hold the only connection.
    let held = store.connection().begin().await.expect("begin");
    let t = Instant::now();
    let err = store
        .list_sources(ws)
        .await
        .expect_err("no connection to be had");
    assert!(matches!(err, Error::Unavailable(_)), "{err:?}");
    assert!(t.elapsed() >= ACQUIRE_TIMEOUT - Duration::from_millis(100));
    assert!(t.elapsed() < ACQUIRE_TIMEOUT + Duration::from_secs(5));

    drop(held);
    assert!(
        store
            .list_sources(ws)
            .await
            .expect("serves again")
            .is_empty()
    );
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// A full disk (simulated by capping the SQLite file's pages on a one-connection pool) is
/// `Error::Unavailable`, loses nothing already stored, and writes succeed again once space is
/// back.
#[tokio::test]
async fn full_disk_is_unavailable_and_recovers() {
    use inlet_core::testkit;
    use sea_orm::{ConnectionTrait, DbBackend, Statement};

    let path = std::env::temp_dir().join(format!("inlet-full-{}.db", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let store = SeaOrmStore::connect_with(&url, 1)
        .await
        .expect("open sqlite");
    let (_, scope) = testkit::new_source(&store).await;
    store
        .put_record(testkit::write(scope, "kept", None, None))
        .await
        .expect("first write");
    let pragma = |sql: &str| Statement::from_string(DbBackend::Sqlite, sql.to_string());
    let row = store
        .connection()
        .query_one_raw(pragma("PRAGMA page_count"))
        .await
        .unwrap()
        .unwrap();
    let pages: i64 = row.try_get_by_index(0).unwrap();
    store
        .connection()
        .execute_raw(pragma(&format!("PRAGMA max_page_count = {pages}")))
        .await
        .unwrap();

    let mut big = testkit::write(scope, "big", None, None);
    big.content = "lorem ipsum dolor sit amet ".repeat(40_000);
    let err = store.put_record(big.clone()).await.expect_err("no room");
    assert!(matches!(err, Error::Unavailable(_)), "{err:?}");
    let kept = store
        .get_record(&testkit::key(scope, "kept"))
        .await
        .unwrap();
    assert_eq!(kept.version, 1);
    assert!(
        store.get_record(&testkit::key(scope, "big")).await.is_err(),
        "no half record"
    );

    store
        .connection()
        .execute_raw(pragma("PRAGMA max_page_count = 1073741823"))
        .await
        .unwrap();
    assert!(store.put_record(big).await.expect("room again").created);
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}
