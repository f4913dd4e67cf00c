//! Shared pieces of the benchmark binaries: a fresh database to run on and its removal.

use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

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
            let schema = crate::postgres::Schema::create(&base, "inlet_bench").await;
            let url = schema.url.clone();
            let version = schema
                .admin()
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
                        schema.drop().await;
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

/// The `p` quantile (0–1) of ascending `sorted` values, nearest rank.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}
