//! The conformance suite on PostgreSQL, when `INLET_TEST_POSTGRES_URL` names a server (CI:
//! `postgres://postgres@127.0.0.1:5432/test`). Each case gets its own schema, dropped after it.
//! Without the variable every case is skipped, unless `INLET_REQUIRE_POSTGRES=1`, which makes the
//! missing database a failure (CI sets it so the suite cannot silently not run). Search goes
//! through the tantivy index.

use std::sync::Arc;

// The sweep's case keeps its blobs in a `memory:` blob store.
use inlet_blobs as _;

use inlet_store_seaorm::SeaOrmStore;
use sea_orm::{ConnectionTrait, DbBackend, Statement};

mod common;

async fn store() -> Option<Arc<SeaOrmStore>> {
    let schema = common::PgSchema::create().await?;
    let store = SeaOrmStore::connect(&schema.url)
        .await
        .expect("open postgres store");
    println!("postgres conformance: schema {}", schema.name);
    Some(Arc::new(store))
}

async fn cleanup(store: Arc<SeaOrmStore>) {
    let row = store
        .connection()
        .query_one_raw(Statement::from_string(
            DbBackend::Postgres,
            "SELECT current_schema() AS s",
        ))
        .await
        .ok()
        .flatten();
    let schema: Option<String> = row.and_then(|r| r.try_get("", "s").ok());
    drop(store);
    if let Some(schema) = schema {
        common::PgSchema::drop_named(&schema).await;
    }
}

inlet_core::conformance_tests!(
    optional store(),
    cleanup,
    inlet_search_tantivy::TantivyIndex::in_memory().expect("index")
);
