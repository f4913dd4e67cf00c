//! A pool with no free connection answers `Error::Unavailable` (the server's 503) after the
//! acquire timeout, never hangs or panics, and serves again once a connection is back.

use std::time::{Duration, Instant};

use inlet_core::{Error, RecordStore};
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
