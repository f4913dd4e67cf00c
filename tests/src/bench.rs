//! Shared pieces of the benchmark binaries: a fresh database to run on and its removal.

use sea_orm::{ConnectionTrait, Database, DatabaseConnection, Statement};

/// Removes a benchmark's database once its pool is handed back.
pub type Cleanup =
    Box<dyn FnOnce(DatabaseConnection) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>>;

/// The database URL to bench on, its label, and how to remove it afterwards.
pub async fn database(which: &str) -> (String, String, Cleanup) {
    match which {
        "memory" => (
            "memory:".into(),
            "memory".into(),
            Box::new(|_| Box::pin(async {})),
        ),
        "postgres" => {
            let base = std::env::var("INLET_TEST_POSTGRES_URL")
                .expect("set INLET_TEST_POSTGRES_URL for the postgres bench");
            let schema = format!("inlet_bench_{}", uuid::Uuid::new_v4().simple());
            let admin = Database::connect(base.as_str()).await.expect("connect");
            admin
                .execute_unprepared(&format!("CREATE SCHEMA {schema}"))
                .await
                .expect("schema");
            let sep = if base.contains('?') { '&' } else { '?' };
            let url = format!("{base}{sep}options=-c%20search_path%3D{schema}");
            let version = admin
                .query_one_raw(Statement::from_string(
                    sea_orm::DbBackend::Postgres,
                    "SHOW server_version",
                ))
                .await
                .ok()
                .flatten()
                .and_then(|r| r.try_get::<String>("", "server_version").ok())
                .unwrap_or_default();
            (
                url,
                format!("PostgreSQL {version}"),
                Box::new(move |pool: DatabaseConnection| {
                    Box::pin(async move {
                        let _ = pool.close().await;
                        let _ = admin
                            .execute_unprepared(&format!("DROP SCHEMA {schema} CASCADE"))
                            .await;
                    })
                }),
            )
        }
        _ => {
            let dir = std::env::temp_dir().join(format!("inlet-bench-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&dir).expect("dir");
            let url = format!("sqlite://{}?mode=rwc", dir.join("bench.db").display());
            (
                url,
                "SQLite (WAL, synchronous=FULL)".into(),
                Box::new(move |pool: DatabaseConnection| {
                    Box::pin(async move {
                        let _ = pool.close().await;
                        let _ = std::fs::remove_dir_all(&dir);
                    })
                }),
            )
        }
    }
}
