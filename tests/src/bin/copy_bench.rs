//! `inlet admin copy` from SQLite to PostgreSQL (issue 42: 100,000 records with their tags in
//! under 2 minutes, in memory that does not grow with the record count). Run in release, with
//! `INLET_TEST_POSTGRES_URL` set:
//!
//! ```sh
//! cargo build --release -p inlet-server -p inlet-tests
//! target/release/copy-bench 10000 100000
//! ```
//!
//! For each count: a fresh SQLite database with one source, that many records (three tag rows
//! each) and no originals, copied into a fresh PostgreSQL schema by the `inlet` binary beside
//! this one, timed and its peak resident memory read by `/usr/bin/time`.

use std::process::Command;

use inlet_server::Settings;
use inlet_tests::{ADMIN_EMAIL, TestServer, bulk_records, postgres::Schema};
use sea_orm::{ConnectionTrait, Database};

#[tokio::main]
async fn main() {
    let counts: Vec<i64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counts = if counts.is_empty() {
        vec![10_000, 100_000]
    } else {
        counts
    };
    let inlet = std::env::current_exe()
        .expect("this binary's path")
        .with_file_name("inlet");
    let base = std::env::var("INLET_TEST_POSTGRES_URL")
        .expect("set INLET_TEST_POSTGRES_URL for the copy bench");
    println!(
        "# copy-bench: SQLite -> PostgreSQL\n\n| records | tag rows | seconds | records/s | peak RSS MB |\n|---|---|---|---|---|"
    );
    for n in counts {
        let dir = tempfile::tempdir().expect("temporary folder");
        let from = format!("sqlite://{}?mode=rwc", dir.path().join("from.db").display());
        let server = TestServer::start_keeping(&from, Settings::default(), None).await;
        let paths = server.record_source().await;
        let workspace_id = server
            .state
            .tokens
            .user_by_email(ADMIN_EMAIL)
            .await
            .expect("admin")
            .expect("admin")
            .workspace_id;
        let scope = inlet_core::record::Scope {
            workspace_id,
            source_id: paths.source_id.parse().expect("source id"),
            object_type_id: paths.object_type_id.parse().expect("object type id"),
        };
        let db = Database::connect(&from).await.expect("connect");
        bulk_records(&db, scope, n, 0).await.expect("records");
        for (tag, value, num) in [
            ("color", "'blue'", "NULL"),
            ("color", "'red'", "NULL"),
            ("size", "'7'", "7"),
        ] {
            db.execute_unprepared(&format!(
                "INSERT INTO record_tags (record_id, tag, value, num) \
                 SELECT id, '{tag}', {value}, {num} FROM records"
            ))
            .await
            .expect("tags");
        }
        let _ = db.close().await;
        let schema = Schema::create(&base, "inlet_copy").await;
        let out = Command::new("/usr/bin/time")
            .args(["-f", "%e %M"])
            .arg(&inlet)
            .args(["admin", "copy", "--from", &from, "--to", &schema.url])
            .output()
            .expect("run inlet admin copy");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let last = stderr.lines().last().unwrap_or_default();
        let mut fields = last.split_whitespace();
        let secs: f64 = fields.next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
        let kib: f64 = fields.next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
        println!(
            "| {n} | {} | {secs:.1} | {:.0} | {:.0} |",
            3 * n,
            n as f64 / secs,
            kib / 1024.0
        );
        schema.drop().await;
    }
}
