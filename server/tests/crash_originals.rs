//! Originals survive `kill -9` (DESIGN 7b), on SQLite with its folder of blobs: a re-extraction
//! killed midway resumes after a restart without reading a finished record again, and uploads
//! killed in flight leave every acknowledged record with its original and, after the sweep, no
//! blob that no record names.

use std::time::{Duration, Instant};

use inlet_tests::{SourcePaths, corpus_file, files_under, process::InletProcess};
use reqwest::{Client, Method};
use sea_orm::{ConnectionTrait, Database, DbBackend, Statement};
use serde_json::{Value, json};

const INLET: &str = env!("CARGO_BIN_EXE_inlet");
const EMAIL: &str = "crash@example.test";
const TOKEN: &str = "crash-token";
const ENV: [(&str, &str); 4] = [
    ("INLET_ADMIN_EMAIL", EMAIL),
    ("INLET_ADMIN_API_TOKEN", TOKEN),
    ("INLET_ORIGINALS_GRACE", "1s"),
    ("INLET_BLOB_SWEEP_INTERVAL", "1s"),
];
const WHO: (&str, &str) = (EMAIL, TOKEN);

async fn call(server: &InletProcess, client: &Client, method: Method, path: &str) -> Value {
    let resp = server
        .request(client, method, path, WHO)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let body = resp.text().await.unwrap();
    assert!(status.is_success(), "{path}: {status} {body}");
    serde_json::from_str(&body).unwrap()
}

async fn upload(
    server: &InletProcess,
    client: &Client,
    paths: &SourcePaths,
    id: &str,
    bytes: Vec<u8>,
) -> reqwest::Result<reqwest::Response> {
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes).file_name(format!("{id}.bin")),
    );
    server
        .request(
            client,
            Method::PUT,
            &format!("{}/file", paths.object(id)),
            WHO,
        )
        .multipart(form)
        .send()
        .await
}

/// A counter of the process's `/metrics`.
async fn metric(server: &InletProcess, client: &Client, name: &str) -> f64 {
    let base = server.api.trim_end_matches("/api/v1");
    let text = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_during_re_extraction_resumes_without_rereading() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let client = Client::new();
    let mut server = InletProcess::spawn(INLET, &db, &ENV);
    server.ready(&client).await;
    let paths = server.record_source(&client, WHO, "crash").await;
    let pdf = corpus_file("pdf/2022_Q3_AAPL.pdf");
    let n = 60u64;
    for i in 0..n {
        let resp = upload(&server, &client, &paths, &format!("r{i}"), pdf.clone())
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
    }
    let job = server
        .request(&client, Method::POST, "/reextractions", WHO)
        .json(&json!({"all": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(job.status(), 202);
    let id = job.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/reextractions/{id}");
    // Kill once a few records were read again.
    let deadline = Instant::now() + Duration::from_secs(60);
    let before = loop {
        let job = call(&server, &client, Method::GET, &path).await;
        let reread = job["progress"]["reread"].as_u64().unwrap();
        if reread >= 3 {
            break reread;
        }
        assert!(Instant::now() < deadline, "no progress: {job}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    server.kill();
    assert!(
        before < n,
        "the run ended before the kill ({before} of {n})"
    );

    // The restarted process takes the job over once the dead worker's lease ends.
    let mut server = InletProcess::spawn(INLET, &db, &ENV);
    server.ready(&client).await;
    let deadline = Instant::now() + Duration::from_secs(120);
    let done = loop {
        let job = call(&server, &client, Method::GET, &path).await;
        if job["state"] == "DONE" {
            break job;
        }
        assert!(
            Instant::now() < deadline,
            "not resumed: {job}\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let reread = done["progress"]["reread"].as_u64().unwrap();
    // The record being read at the kill may be read twice; none finished before it is.
    assert!((n..=n + 1).contains(&reread), "{done}");
    let again = metric(&server, &client, "inlet_reextraction_reads_total").await as u64;
    assert!(
        again <= n - before + 1,
        "read {again} again after the restart, {before} of {n} were done before"
    );
    let record = call(&server, &client, Method::GET, &paths.object("r0")).await;
    assert_eq!(record["version"], 1, "{record}");
    assert!(record["extraction"]["failure"].is_null(), "{record}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_during_uploads_loses_and_leaks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("inlet.db");
    let db = format!("sqlite://{}?mode=rwc", file.display());
    let blobs = dir.path().join("inlet-blobs");
    let client = Client::new();
    let mut server = InletProcess::spawn(INLET, &db, &ENV);
    server.ready(&client).await;
    let paths = server.record_source(&client, WHO, "crash").await;

    // Uploads of distinct contents in flight when the server dies.
    let content = |i: usize| {
        let mut bytes = format!("file {i} ").repeat(40_000).into_bytes();
        bytes.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        bytes
    };
    let mut flights = Vec::new();
    for i in 0..24 {
        let (server_api, client, paths, bytes) = (
            server.api.clone(),
            client.clone(),
            paths.clone(),
            content(i),
        );
        flights.push(tokio::spawn(async move {
            let form = reqwest::multipart::Form::new().part(
                "file",
                reqwest::multipart::Part::bytes(bytes.clone()).file_name("f.txt"),
            );
            let resp = client
                .put(format!(
                    "{server_api}{}/file",
                    paths.object(&format!("u{i}"))
                ))
                .basic_auth(EMAIL, Some(TOKEN))
                .multipart(form)
                .send()
                .await;
            (i, bytes, resp.map(|r| r.status().as_u16()).ok())
        }));
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    server.kill();
    let mut acknowledged = Vec::new();
    for f in flights {
        let (i, bytes, status) = f.await.unwrap();
        if status.is_some_and(|s| s == 201) {
            acknowledged.push((i, bytes));
        }
    }
    println!(
        "{} of 24 uploads acknowledged before the kill",
        acknowledged.len()
    );

    let mut server = InletProcess::spawn(INLET, &db, &ENV);
    server.ready(&client).await;
    // Every acknowledged upload downloads as sent.
    for (i, bytes) in &acknowledged {
        let resp = server
            .request(
                &client,
                Method::GET,
                &format!("{}/file", paths.object(&format!("u{i}"))),
                WHO,
            )
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "u{i}");
        assert!(resp.bytes().await.unwrap().as_ref() == &bytes[..], "u{i}");
    }
    // After the sweep, the blobs are exactly the live records' originals.
    let conn = Database::connect(&db).await.unwrap();
    let named = || async {
        let row = conn
            .query_one_raw(Statement::from_string(
                DbBackend::Sqlite,
                "SELECT COUNT(DISTINCT original_sha256) AS n FROM records \
                 WHERE NOT removed AND original_sha256 IS NOT NULL",
            ))
            .await
            .unwrap()
            .unwrap();
        row.try_get::<i64>("", "n").unwrap() as usize
    };
    assert!(named().await >= acknowledged.len());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (files, live) = (files_under(&blobs), named().await);
        if files == live {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{files} blobs for {live} live originals\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
