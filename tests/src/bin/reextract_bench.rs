//! Re-extraction (issue 41): its throughput against extracting the same files directly, and
//! what a background re-extraction costs uploads' latency. Run in release:
//!
//! ```sh
//! cargo run --release -p inlet-tests --bin reextract-bench -- sqlite
//! ```
//!
//! One server over a fresh database of the kind named, keeping originals in a folder. Every
//! file of `../shared/corpus` up to 4 MB is uploaded; then:
//! 1. a re-extraction of all of them (`{"all": true}`) is timed from its queueing to `DONE`,
//!    against extracting the same bytes one after another in this process (the job reads one
//!    record at a time, so that is its peer);
//! 2. the same files are uploaded again one at a time (each answer's latency kept) while no
//!    re-extraction runs, then while one does, and the p50 and p95 of both are reported.

use std::time::{Duration, Instant};

use inlet_server::Settings;
use inlet_tests::{
    SourcePaths, TestServer,
    bench::{corpus_files, database},
    file_form,
};
use reqwest::Method;
use serde_json::{Value, json};

/// Largest corpus file uploaded.
const MAX_FILE: u64 = 4 << 20;

async fn upload(server: &TestServer, paths: &SourcePaths, id: &str, name: &str, bytes: &[u8]) {
    let resp = server
        .req(Method::PUT, &format!("{}/file", paths.object(id)))
        .multipart(file_form(name, bytes.to_vec()))
        .send()
        .await
        .expect("upload");
    assert!(resp.status().is_success(), "{name}: {}", resp.status());
}

/// Queues a re-extraction of every record; its id.
async fn reextract_all(server: &TestServer) -> String {
    let job: Value = server
        .req(Method::POST, "/reextractions")
        .json(&json!({"all": true}))
        .send()
        .await
        .expect("queue")
        .json()
        .await
        .expect("job");
    job["id"].as_str().expect("job id").to_string()
}

async fn job(server: &TestServer, id: &str) -> Value {
    server
        .req(Method::GET, &format!("/reextractions/{id}"))
        .send()
        .await
        .expect("job")
        .json()
        .await
        .expect("job")
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// Uploads every file one at a time under `prefix`; the latencies, sorted.
async fn latencies(
    server: &TestServer,
    paths: &SourcePaths,
    prefix: &str,
    files: &[(String, Vec<u8>)],
) -> Vec<Duration> {
    let mut out = Vec::new();
    for (i, (name, bytes)) in files.iter().enumerate() {
        let started = Instant::now();
        upload(server, paths, &format!("{prefix}-{i}"), name, bytes).await;
        out.push(started.elapsed());
    }
    out.sort();
    out
}

#[tokio::main]
async fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "sqlite".into());
    let files = corpus_files(MAX_FILE);
    let blobs = tempfile::tempdir().expect("temporary folder");
    let blob_url = format!("file://{}", blobs.path().join("blobs").display());
    let (url, label, _cleanup) = database(&which).await;
    let server = TestServer::start_keeping(&url, Settings::default(), Some(&blob_url)).await;
    let paths = server.record_source().await;
    for (i, (name, bytes)) in files.iter().enumerate() {
        upload(&server, &paths, &format!("f-{i}"), name, bytes).await;
    }

    // 1. Throughput.
    let started = Instant::now();
    let id = reextract_all(&server).await;
    let done = loop {
        let j = job(&server, &id).await;
        if j["state"] == "DONE" {
            break j;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let reextraction = started.elapsed();
    let reread = done["progress"]["reread"].as_u64().unwrap_or(0);
    let limits = inlet_core::extract::Limits::default();
    let started = Instant::now();
    for (_, bytes) in &files {
        let _ = inlet_extractors::extract(bytes, &limits);
    }
    let direct = started.elapsed();
    let rate = |n: usize, d: Duration| n as f64 / d.as_secs_f64();
    println!(
        "# reextract-bench: {label}, {} corpus files ({:.1} MB)\n\n\
         | run | files | seconds | files/s |\n|---|---|---|---|\n\
         | re-extraction job (API, one record at a time) | {reread} | {:.2} | {:.1} |\n\
         | extraction of the same bytes, one after another | {} | {:.2} | {:.1} |\n\n\
         re-extraction runs at {:.0}% of direct extraction's rate\n",
        files.len(),
        files.iter().map(|f| f.1.len()).sum::<usize>() as f64 / 1e6,
        reextraction.as_secs_f64(),
        rate(reread as usize, reextraction),
        files.len(),
        direct.as_secs_f64(),
        rate(files.len(), direct),
        rate(reread as usize, reextraction) / rate(files.len(), direct) * 100.0
    );

    // 2. Upload latency, idle and beside a re-extraction kept busy.
    let idle = latencies(&server, &paths, "idle", &files).await;
    let busy_id = reextract_all(&server).await;
    let busy = latencies(&server, &paths, "busy", &files).await;
    let during = job(&server, &busy_id).await;
    println!(
        "| uploads, one at a time | p50 ms | p95 ms |\n|---|---|---|\n\
         | no re-extraction | {:.1} | {:.1} |\n\
         | beside a re-extraction | {:.1} | {:.1} |\n\n\
         the re-extraction read {} records during the second run (state {})",
        percentile(&idle, 0.5),
        percentile(&idle, 0.95),
        percentile(&busy, 0.5),
        percentile(&busy, 0.95),
        during["progress"]["reread"],
        during["state"]
    );
}
