//! Rate-limit counters do not accumulate: after failures under 300 invented keys, a failure a
//! day and more later removes their documents (keyed by window first, so the purge reads only
//! expired ones), on SQLite and PostgreSQL.

use inlet_core::{store::prelude::*, token::RATE_RETENTION_MS};
use inlet_store_seaorm::SeaOrmStore;
use sea_orm::{ConnectionTrait, Statement};

mod common;

async fn rows(store: &SeaOrmStore) -> i64 {
    let backend = store.connection().get_database_backend();
    store
        .connection()
        .query_one_raw(Statement::from_string(
            backend,
            "SELECT COUNT(*) AS n FROM documents WHERE collection = 'rate_limits'",
        ))
        .await
        .unwrap()
        .unwrap()
        .try_get("", "n")
        .unwrap()
}

async fn expired_counters_are_removed(store: &SeaOrmStore) {
    let window = 1_700_000_000_000i64;
    for i in 0..300 {
        let key = format!("token-client:{}{i}|127.0.0.1", "x".repeat(290));
        assert_eq!(store.rate_hit(&key, window).await.unwrap(), 1);
    }
    assert_eq!(rows(store).await, 300);
    // Within the retention the counters stay.
    store
        .rate_hit("login:a|127.0.0.1", window + 60_000)
        .await
        .unwrap();
    assert_eq!(rows(store).await, 301);
    // A day past their window, the next failure removes them; login:a's counter of a window
    // within the retention stays beside its new one.
    let later = window + RATE_RETENTION_MS + 60_000;
    assert_eq!(store.rate_hit("login:a|127.0.0.1", later).await.unwrap(), 1);
    assert_eq!(rows(store).await, 2);
    assert_eq!(
        store.rate_count("login:a|127.0.0.1", later).await.unwrap(),
        1
    );
}

#[tokio::test]
async fn sqlite_expired_counters_are_removed() {
    let path = std::env::temp_dir().join(format!("inlet-rates-{}.db", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let store = SeaOrmStore::connect(&url).await.unwrap();
    expired_counters_are_removed(&store).await;
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

#[tokio::test]
async fn postgres_expired_counters_are_removed() {
    let Some(schema) = common::PgSchema::create().await else {
        return;
    };
    let store = SeaOrmStore::connect(&schema.url).await.unwrap();
    expired_counters_are_removed(&store).await;
    drop(store);
    common::PgSchema::drop_named(&schema.name).await;
}
