//! PostgreSQL for the cross-crate tests and benchmarks: the server named by
//! `INLET_TEST_POSTGRES_URL` (CI: `postgres://postgres@127.0.0.1:5432/test`) and a fresh schema
//! on it per test, dropped after. Without the variable a test is skipped, unless
//! `INLET_REQUIRE_POSTGRES=1` makes the missing server a failure (CI sets it, so no PostgreSQL
//! test can silently not run).

use sea_orm::{ConnectionTrait, Database, DatabaseConnection};

/// The server's URL, or `None` (after printing why) when the test is to be skipped.
pub fn base_url() -> Option<String> {
    match std::env::var("INLET_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("INLET_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "INLET_REQUIRE_POSTGRES=1 but INLET_TEST_POSTGRES_URL is not set"
            );
            println!("skipped: INLET_TEST_POSTGRES_URL is not set");
            None
        }
    }
}

/// `base` with every connection's `search_path` set to `schema`.
pub fn url_in_schema(base: &str, schema: &str) -> String {
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}options=-c%20search_path%3D{schema}")
}

/// A schema of its own on the server at `base`; [`Schema::drop`] removes it.
pub struct Schema {
    /// `<prefix>_<uuid>`.
    pub name: String,
    /// `base` with connections in this schema.
    pub url: String,
    admin: DatabaseConnection,
}

impl Schema {
    /// Creates `<prefix>_<uuid>` on the server at `base` (panics when it cannot).
    pub async fn create(base: &str, prefix: &str) -> Schema {
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        let admin = Database::connect(base)
            .await
            .expect("connect to INLET_TEST_POSTGRES_URL");
        admin
            .execute_unprepared(&format!("CREATE SCHEMA {name}"))
            .await
            .expect("create schema");
        let url = url_in_schema(base, &name);
        Schema { name, url, admin }
    }

    /// A fresh test schema (`inlet_t_…`) on `INLET_TEST_POSTGRES_URL`, or `None` when the test
    /// is skipped ([`base_url`]).
    pub async fn for_test() -> Option<Schema> {
        Some(Self::create(&base_url()?, "inlet_t").await)
    }

    /// A connection to the server outside the schema.
    pub fn admin(&self) -> &DatabaseConnection {
        &self.admin
    }

    /// Drops the schema and everything in it.
    pub async fn drop(self) {
        let _ = self
            .admin
            .execute_unprepared(&format!("DROP SCHEMA {} CASCADE", self.name))
            .await;
        let _ = self.admin.close().await;
    }
}
