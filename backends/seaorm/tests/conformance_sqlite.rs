//! The conformance suite on SQLite: a fresh database file per case, removed after it; search
//! through the tantivy index.

use std::sync::Arc;

// The sweep's case keeps its blobs in a `memory:` blob store.
use inlet_blobs as _;

use inlet_store_seaorm::SeaOrmStore;
use sea_orm::ConnectionTrait;

async fn store() -> Arc<SeaOrmStore> {
    let path = std::env::temp_dir().join(format!("inlet-conformance-{}.db", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    Arc::new(SeaOrmStore::connect(&url).await.expect("open sqlite"))
}

async fn cleanup(store: Arc<SeaOrmStore>) {
    let row = store
        .connection()
        .query_one_raw(sea_orm::Statement::from_string(
            sea_orm::DbBackend::Sqlite,
            "SELECT file FROM pragma_database_list WHERE name = 'main'",
        ))
        .await
        .ok()
        .flatten();
    let file: Option<String> = row.and_then(|r| r.try_get("", "file").ok());
    drop(store);
    if let Some(file) = file {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{file}{suffix}"));
        }
    }
}

inlet_core::conformance_tests!(
    store(),
    cleanup,
    inlet_search_tantivy::TantivyIndex::in_memory().expect("index")
);
