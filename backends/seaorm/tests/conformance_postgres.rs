//! The conformance suite on PostgreSQL, when `INLET_TEST_POSTGRES_URL` names a server (CI:
//! `postgres://postgres@127.0.0.1:5432/test`). Each case gets its own schema, dropped after it.
//! Without the variable every case is skipped, unless `INLET_REQUIRE_POSTGRES=1`, which makes the
//! missing database a failure (CI sets it so the suite cannot silently not run).

use std::sync::Arc;

use inlet_store_seaorm::SeaOrmStore;
use sea_orm::{ConnectionTrait, Database, DbBackend, Statement};

fn base_url() -> Option<String> {
    match std::env::var("INLET_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("INLET_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "INLET_REQUIRE_POSTGRES=1 but INLET_TEST_POSTGRES_URL is not set"
            );
            None
        }
    }
}

fn with_search_path(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

async fn store() -> Option<Arc<SeaOrmStore>> {
    let base = base_url()?;
    let schema = format!("inlet_t_{}", uuid::Uuid::new_v4().simple());
    let admin = Database::connect(base.as_str())
        .await
        .expect("connect to INLET_TEST_POSTGRES_URL");
    admin
        .execute_unprepared(&format!("CREATE SCHEMA {schema}"))
        .await
        .expect("create schema");
    admin.close().await.ok();
    let store = SeaOrmStore::connect(&with_search_path(&base, &schema))
        .await
        .expect("open postgres store");
    println!("postgres conformance: schema {schema}");
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
    if let (Some(schema), Some(base)) = (schema, base_url())
        && schema.starts_with("inlet_t_")
        && let Ok(admin) = Database::connect(base.as_str()).await
    {
        let _ = admin
            .execute_unprepared(&format!("DROP SCHEMA {schema} CASCADE"))
            .await;
        admin.close().await.ok();
    }
}

inlet_core::conformance_tests!(optional store(), cleanup);
