//! A second sync of many unchanged files: the batch endpoints against the per-file procedure of
//! spec 4.4, in the same run, through the real `sync-folder` binary and a real server on a
//! loopback port. Run in release:
//!
//! ```sh
//! cargo bench -p inlet-example-sync-folder --bench sync-bench -- sqlite 100000
//! INLET_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench -p inlet-example-sync-folder --bench sync-bench -- postgres 100000
//! ```
//!
//! Prints the first sync (every file uploaded), then second syncs where nothing changed:
//! batched, per file (`--per-file`), and batched again; and the time of a 1,000-item
//! `batch/touch` request as the client sees it (server plus loopback), p50 and p95 of 50.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use inlet_server::Settings;
use inlet_tests::{ADMIN_EMAIL, ADMIN_TOKEN, TestServer, bench::database};
use reqwest::Method;
use sea_orm::ConnectionTrait;
use serde_json::{Value, json};

/// The externalId of file `i`.
fn name(i: usize) -> String {
    format!("f{i:07}.txt")
}

/// One flat directory: the skip procedure is measured, not the folder listing (each folder
/// listing request counts the tag's records, see docs/performance.md).
fn write_tree(root: &Path, files: usize) {
    for i in 0..files {
        std::fs::write(root.join(name(i)), format!("small text file number {i}\n")).expect("write");
    }
}

/// Runs `sync-folder` over `root` with these extra arguments; returns the wall time and its
/// summary line.
async fn sync(server: &TestServer, root: &Path, extra: &[&str]) -> (Duration, String) {
    let t = Instant::now();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_sync-folder"))
        .args([
            "--url",
            &server.base,
            "--user",
            ADMIN_EMAIL,
            "--token",
            ADMIN_TOKEN,
        ])
        .args(["--create-source", "bench", "--quiet", "--jobs", "8"])
        .args(extra)
        .arg(root)
        .output()
        .await
        .expect("sync-folder runs");
    let elapsed = t.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "sync-folder failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("summary"))
        .unwrap_or_default()
        .to_string();
    (elapsed, summary)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let which = args.first().map(String::as_str).unwrap_or("sqlite");
    let files: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let (url, label, cleanup) = database(which).await;
    println!("# sync-bench: {label}, {files} small files, sync-folder --jobs 8\n");
    let server = TestServer::start_on(&url, Settings::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    write_tree(dir.path(), files);

    let (t, summary) = sync(&server, dir.path(), &[]).await;
    if which == "postgres" {
        // What autovacuum does within a minute of a bulk load, done here: the machine's
        // PostgreSQL may run without it (this one does), and without statistics the batch
        // reads plan a scan of the whole object type.
        let db = sea_orm::Database::connect(url.as_str())
            .await
            .expect("connect");
        let autovacuum = db
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DbBackend::Postgres,
                "SHOW autovacuum",
            ))
            .await
            .ok()
            .flatten()
            .and_then(|r| r.try_get::<String>("", "autovacuum").ok())
            .unwrap_or_default();
        db.execute_unprepared("VACUUM ANALYZE records")
            .await
            .expect("vacuum");
        println!("# autovacuum {autovacuum}; VACUUM ANALYZE records after the first sync\n");
    }
    println!("| run | seconds | files/s | summary |\n|---|---:|---:|---|");
    let row = |name: &str, t: Duration, summary: &str| {
        println!(
            "| {name} | {:.1} | {:.0} | {summary} |",
            t.as_secs_f64(),
            files as f64 / t.as_secs_f64()
        );
    };
    row("first sync (uploads)", t, &summary);
    let (batched, summary) = sync(&server, dir.path(), &[]).await;
    row("unchanged, batched", batched, &summary);
    let (per_file, summary) = sync(&server, dir.path(), &["--per-file"]).await;
    row("unchanged, per file", per_file, &summary);
    let (again, summary) = sync(&server, dir.path(), &[]).await;
    row("unchanged, batched again", again, &summary);
    let best = batched.min(again);
    println!(
        "\nspeed-up of batching: {:.1}x (per file {:.1} s / batched {:.1} s)",
        per_file.as_secs_f64() / best.as_secs_f64(),
        per_file.as_secs_f64(),
        best.as_secs_f64()
    );

    // One 1,000-item batch touch at a time, inside an open sync.
    let sources: Value = server
        .req(Method::GET, "/sources")
        .send()
        .await
        .expect("sources")
        .json()
        .await
        .expect("json");
    let source = sources
        .as_array()
        .and_then(|a| a.iter().find(|s| s["externalId"] == "bench"))
        .expect("the bench source");
    let ot = format!(
        "/sources/{}/objecttypes/{}",
        source["id"].as_str().expect("id"),
        source["sourceObjectTypes"][0]["id"].as_str().expect("id")
    );
    let open: Value = server
        .req(Method::POST, &format!("{ot}/syncs"))
        .json(&json!({"operation": "START"}))
        .send()
        .await
        .expect("open")
        .json()
        .await
        .expect("json");
    let n = open["syncNumber"].as_i64().expect("syncNumber");
    let rounds = 50.min(files.div_ceil(1000)).max(1);
    let mut times = Vec::new();
    for round in 0..50 {
        let first = (round % rounds) * 1000;
        let objects: Vec<Value> = (first..(first + 1000).min(files))
            .map(|i| json!({"externalId": name(i)}))
            .collect();
        let body = json!({"syncNumber": n, "objects": objects});
        let t = Instant::now();
        let resp = server
            .req(Method::POST, &format!("{ot}/batch/touch"))
            .json(&body)
            .send()
            .await
            .expect("batch touch");
        let answer: Value = resp.json().await.expect("json");
        times.push(t.elapsed());
        assert!(
            answer["items"]
                .as_array()
                .is_some_and(|items| items.iter().all(|i| i["status"] == 204)),
            "every touch applies"
        );
    }
    times.sort();
    println!(
        "\n1,000-item batch touch (client-observed, 50 requests): p50 {:.1} ms, p95 {:.1} ms",
        percentile(&times, 0.5).as_secs_f64() * 1000.0,
        percentile(&times, 0.95).as_secs_f64() * 1000.0
    );
    server
        .req(Method::PUT, &format!("{ot}/syncs/{n}"))
        .json(&json!({"operation": "FAIL"}))
        .send()
        .await
        .expect("close");
    drop(server);
    let pool = sea_orm::Database::connect(&url).await.expect("connect");
    cleanup(pool).await;
}
