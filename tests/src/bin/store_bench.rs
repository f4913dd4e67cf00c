//! Storage benchmark through HTTP (issue: durable storage). Run in release:
//!
//! ```sh
//! cargo run --release -p inlet-tests --bin store-bench -- sqlite
//! INLET_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo run --release -p inlet-tests --bin store-bench -- postgres
//! ```
//!
//! Measures, with 16 concurrent clients against a real server on a loopback port: uploads/s of
//! small text files, metadata reads/s and touches/s; next to the touch rate, a plain-SQL baseline
//! (single-row UPDATEs of the same rows over a pool of the same size, in the same run); and the
//! time to close a full sync over 100k and 1M records. Prints a markdown table.

use std::{sync::Arc, time::Instant};

use inlet_core::record::Scope;
use inlet_server::Settings;
use inlet_tests::{SourcePaths, TestServer, bench::database, bulk_records, file_form};
use reqwest::Method;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use serde_json::json;

const CLIENTS: usize = 16;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map(String::as_str).unwrap_or("sqlite");
    let ops: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4000);
    let close_sizes: Vec<i64> = args
        .get(2)
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![100_000, 1_000_000]);
    let (url, label, cleanup) = database(which).await;
    println!("# store-bench: {label}, {CLIENTS} concurrent clients, {ops} operations per phase\n");
    let s = Arc::new(TestServer::start_on(&url, Settings::default()).await);
    let p = s.record_source().await;
    phase_open(&s, &p, "START_INITIAL").await;

    let rate = |n: usize, t: Instant| n as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    run(ops, {
        let (s, p) = (s.clone(), p.clone());
        move |i| {
            let (s, p) = (s.clone(), p.clone());
            async move {
                let resp = s
                    .req(Method::PUT, &format!("{}/file", p.object(&format!("f{i}"))))
                    .query(&[("syncNumber", "1"), ("externalChecksum", &format!("c{i}"))])
                    .multipart(file_form(
                        "note.txt",
                        format!("small text file number {i}\n").repeat(8),
                    ))
                    .send()
                    .await
                    .expect("upload");
                assert!(resp.status().is_success(), "{}", resp.status());
            }
        }
    })
    .await;
    let uploads = rate(ops, t);

    let t = Instant::now();
    run(ops, {
        let (s, p) = (s.clone(), p.clone());
        move |i| {
            let (s, p) = (s.clone(), p.clone());
            async move {
                let resp = s
                    .req(
                        Method::GET,
                        &format!("{}/metadata", p.object(&format!("f{i}"))),
                    )
                    .send()
                    .await
                    .expect("metadata");
                assert_eq!(resp.status(), 200);
            }
        }
    })
    .await;
    let reads = rate(ops, t);

    phase_close(&s, &p, 1).await;
    phase_open(&s, &p, "START").await;
    let t = Instant::now();
    run(ops, {
        let (s, p) = (s.clone(), p.clone());
        move |i| {
            let (s, p) = (s.clone(), p.clone());
            async move {
                let resp = s
                    .req(Method::PUT, &p.object(&format!("f{i}")))
                    .query(&[("syncNumber", "2")])
                    .header("If-Match", format!("\"c{i}\""))
                    .send()
                    .await
                    .expect("touch");
                assert_eq!(resp.status(), 204);
            }
        }
    })
    .await;
    let touches = rate(ops, t);

    if url == "memory:" {
        println!(
            "| uploads/s | {uploads:.0} |\n| metadata reads/s | {reads:.0} |\n| touches/s | {touches:.0} |"
        );
        return;
    }
    // Baseline: the same rows, one plain UPDATE each, over a pool of the same size.
    let pool = baseline_pool(&url).await;
    let ot = p.object_type_id.clone();
    let t = Instant::now();
    run(ops, {
        let pool = pool.clone();
        move |i| {
            let (pool, ot) = (pool.clone(), ot.clone());
            async move {
                let backend = pool.get_database_backend();
                let sql = match backend {
                    sea_orm::DbBackend::Postgres => "UPDATE records SET sync_number = $1 WHERE object_type_id = $2 AND external_id = $3",
                    _ => "UPDATE records SET sync_number = ?1 WHERE object_type_id = ?2 AND external_id = ?3",
                };
                pool.execute_raw(Statement::from_sql_and_values(backend, sql, [3i64.into(), ot.into(), format!("f{i}").into()]))
                    .await
                    .expect("baseline update");
            }
        }
    })
    .await;
    let baseline = rate(ops, t);
    phase_close(&s, &p, 2).await;

    println!("| measure | {label} |");
    println!("|---|---|");
    println!("| uploads/s (small text, HTTP) | {uploads:.0} |");
    println!("| metadata reads/s (HTTP) | {reads:.0} |");
    println!("| touches/s (HTTP) | {touches:.0} |");
    println!("| plain-SQL single-row UPDATEs/s (baseline) | {baseline:.0} |");
    println!("| touches / baseline | {:.2} |", touches / baseline);

    for n in close_sizes {
        let secs = close_full_sync(&s, &pool, n).await;
        println!("| close COMPLETE over {n} records (all removed) | {secs:.2} s |");
    }
    drop(s);
    cleanup(pool).await;
}

/// Runs `total` operations on `CLIENTS` concurrent workers.
async fn run<F, Fut>(total: usize, op: F)
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (next, op) = (next.clone(), op.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    op(i).await;
                }
            })
        })
        .collect();
    for w in workers {
        w.await.expect("worker");
    }
}

async fn phase_open(s: &TestServer, p: &SourcePaths, op: &str) {
    let resp = s
        .req(Method::POST, &p.syncs())
        .json(&json!({"operation": op}))
        .send()
        .await
        .expect("open");
    assert_eq!(resp.status(), 201);
}

async fn phase_close(s: &TestServer, p: &SourcePaths, n: i64) {
    let resp = s
        .req(Method::PUT, &format!("{}/{n}", p.syncs()))
        .json(&json!({"operation": "COMPLETE"}))
        .send()
        .await
        .expect("close");
    assert_eq!(resp.status(), 200);
}

/// A fresh object type with `n` records in closed sync 1 and open sync 2; times the COMPLETE of
/// sync 2 through HTTP (which removes all `n`).
async fn close_full_sync(s: &TestServer, pool: &DatabaseConnection, n: i64) -> f64 {
    let source = s
        .create_source(inlet_tests::record_source(&format!("close-{n}")))
        .await;
    let p = SourcePaths::of(&source, 0);
    phase_open(s, &p, "START_INITIAL").await;
    let admin = s
        .state
        .tokens
        .user_by_email(inlet_tests::ADMIN_EMAIL)
        .await
        .expect("admin")
        .expect("admin");
    let scope = Scope {
        workspace_id: admin.workspace_id,
        source_id: p.source_id.parse().expect("uuid"),
        object_type_id: p.object_type_id.parse().expect("uuid"),
    };
    bulk_records(pool, scope, n, 1).await.expect("bulk insert");
    phase_close(s, &p, 1).await;
    phase_open(s, &p, "START").await;
    let t = Instant::now();
    let resp = s
        .req(Method::PUT, &format!("{}/2", p.syncs()))
        .json(&json!({"operation": "COMPLETE"}))
        .send()
        .await
        .expect("close");
    let secs = t.elapsed().as_secs_f64();
    let body: serde_json::Value = resp.json().await.expect("json");
    assert_eq!(body["removed"], n, "{body}");
    secs
}

/// A pool configured exactly as the store's (same size, same SQLite pragmas).
async fn baseline_pool(url: &str) -> DatabaseConnection {
    inlet_store_seaorm::SeaOrmStore::connect(url)
        .await
        .expect("baseline pool")
        .connection()
        .clone()
}
