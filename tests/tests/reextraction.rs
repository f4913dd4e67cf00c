//! Re-extraction through the API (DESIGN 7b), on memory, SQLite and PostgreSQL (and there with
//! originals in S3-compatible storage shared by replicas): a file an
//! extractor at version 1 could not read is read again once that extractor reaches version 2,
//! in the background of the serving process, and search finds it; the record keeps its
//! version, checksum, tags and file name, and the change feed reports the new reading. Jobs are
//! an ADMIN's, of their workspace only, can be cancelled, and report progress.
//!
//! The extractor that improves is a stand-in: the linked extractors, except that at version 1
//! the RTF extractor fails every file ("unreadable"), as the real one did before it could read
//! RTF; at version 2 it is the real one.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::{Duration, Instant},
};

use inlet_core::extract::{Limits, Turns};
use inlet_server::{
    Settings,
    reader::{Linked, Reader},
};
use inlet_tests::{
    SourcePaths, TestServer, corpus_file, expect_problem, file_form, postgres::Schema, s3::S3Server,
};
use reqwest::Method;
use serde_json::{Value, json};

/// The linked extractors with the RTF one at a version the test sets.
struct Improving {
    rtf: AtomicU32,
}

impl Reader for Improving {
    fn read(
        &self,
        bytes: &[u8],
        limits: &Limits,
        turns: Arc<dyn Turns>,
    ) -> inlet_extractors::Outcome {
        let mut outcome = Linked.read(bytes, limits, turns);
        if outcome.format == Some("rtf") {
            let version = self.rtf.load(Ordering::SeqCst);
            outcome.version = Some(version);
            if version < 2 {
                outcome.text.clear();
                outcome.failure = Some("unreadable: RTF is not read before version 2".into());
            }
        }
        outcome
    }

    fn version(&self, format: &str) -> Option<u32> {
        if format == "rtf" {
            return Some(self.rtf.load(Ordering::SeqCst));
        }
        Linked.version(format)
    }
}

async fn json_of(resp: reqwest::Response, want: u16) -> Value {
    let status = resp.status().as_u16();
    let body = resp.text().await.unwrap();
    assert_eq!(status, want, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// Record `id` of `paths` as the administrator reads it (asserting 200).
async fn record(server: &TestServer, paths: &SourcePaths, id: &str) -> Value {
    json_of(
        server
            .req(Method::GET, &paths.object(id))
            .send()
            .await
            .unwrap(),
        200,
    )
    .await
}

async fn upload(server: &TestServer, paths: &SourcePaths, id: &str, name: &str, bytes: Vec<u8>) {
    let resp = server
        .req(
            Method::PUT,
            &format!("{}/file?externalChecksum=sum-{id}", paths.object(id)),
        )
        .header("X-Service-Object-Tag", "color:legacy")
        .multipart(file_form(name, bytes))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
}

async fn hits(server: &TestServer, q: &str) -> Vec<String> {
    let answer = json_of(
        server
            .req(Method::GET, &format!("/search?q={q}&limit=50"))
            .send()
            .await
            .unwrap(),
        200,
    )
    .await;
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["externalId"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `after` is `before` read again by the version 2 extractor: its text is RTF's now, the rest
/// of the record as it was.
fn read_again(before: &Value, after: &Value) {
    assert_eq!(after["extraction"]["extractorVersion"], 2, "{after}");
    assert_eq!(after["extraction"]["format"], "rtf");
    assert!(after["extraction"]["failure"].is_null(), "{after}");
    for kept in [
        "version",
        "checksum",
        "tags",
        "title",
        "fileName",
        "createdDate",
    ] {
        assert_eq!(after[kept], before[kept], "{kept} changed: {after}");
    }
}

/// Waits (at most 10 s) until `server`'s search finds record "old" by its RTF text, then
/// asserts its download is still `uploaded`, byte for byte.
async fn found_whole(server: &TestServer, paths: &SourcePaths, uploaded: &[u8]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !hits(server, "Orange").await.contains(&"old".to_string()) {
        assert!(Instant::now() < deadline, "search never found the new text");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let file = server
        .req(Method::GET, &format!("{}/file", paths.object("old")))
        .send()
        .await
        .unwrap();
    assert_eq!(file.status(), 200);
    assert_eq!(file.bytes().await.unwrap().as_ref(), uploaded);
}

/// Queues a re-extraction with `body` as the administrator, asserting 202; the job.
async fn queue(server: &TestServer, body: Value) -> Value {
    json_of(
        server
            .req(Method::POST, "/reextractions")
            .json(&body)
            .send()
            .await
            .unwrap(),
        202,
    )
    .await
}

/// Polls job `id` until it ended (at most 60 s); answers it.
async fn finished(server: &TestServer, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let job = json_of(
            server
                .req(Method::GET, &format!("/reextractions/{id}"))
                .send()
                .await
                .unwrap(),
            200,
        )
        .await;
        if ["DONE", "FAILED", "CANCELLED"].contains(&job["state"].as_str().unwrap()) {
            return job;
        }
        assert!(Instant::now() < deadline, "job did not end: {job}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn an_improved_extractor_reads_old_files_again(database: &str) {
    let reader = Arc::new(Improving {
        rtf: AtomicU32::new(1),
    });
    let server = TestServer::start_reading(
        database,
        Settings::default(),
        Some("memory:"),
        reader.clone(),
    )
    .await;
    let paths = server.record_source().await;
    let rtf = corpus_file("rtf/extraction_test.rtf");
    upload(&server, &paths, "old", "legacy.rtf", rtf.clone()).await;
    upload(
        &server,
        &paths,
        "txt",
        "plain.txt",
        b"bananas in plain text".to_vec(),
    )
    .await;
    let before = record(&server, &paths, "old").await;
    assert_eq!(before["extraction"]["extractorVersion"], 1, "{before}");
    assert!(before["extraction"]["failure"].is_string(), "{before}");
    server.settle().await;
    assert!(!hits(&server, "Orange").await.contains(&"old".to_string()));
    let feed = json_of(
        server
            .req(Method::GET, "/changes?limit=100")
            .send()
            .await
            .unwrap(),
        200,
    )
    .await;
    let cursor = feed["cursor"].as_str().unwrap().to_string();

    // Nothing is due while the extractor is at the version that read the file.
    let job = queue(&server, json!({"dryRun": true})).await;
    let done = finished(&server, job["id"].as_str().unwrap()).await;
    assert_eq!(done["state"], "DONE", "{done}");
    assert_eq!(done["progress"]["due"], 0, "{done}");
    assert_eq!(done["progress"]["seen"], 2, "{done}");

    // The extractor improves; a re-extraction reads the file again.
    reader.rtf.store(2, Ordering::SeqCst);
    let job = queue(&server, json!({})).await;
    assert_eq!(job["origin"], "API");
    let done = finished(&server, job["id"].as_str().unwrap()).await;
    assert_eq!(done["state"], "DONE", "{done}");
    assert_eq!(done["progress"]["due"], 1, "{done}");
    assert_eq!(done["progress"]["reread"], 1, "{done}");
    assert!(done["startedDate"].is_string() && done["finishedDate"].is_string());

    let after = record(&server, &paths, "old").await;
    read_again(&before, &after);
    found_whole(&server, &paths, &rtf).await;

    // The change feed reports the new reading.
    let feed = json_of(
        server
            .req(Method::GET, "/changes")
            .query(&[("cursor", cursor.as_str())])
            .send()
            .await
            .unwrap(),
        200,
    )
    .await;
    let changed: Vec<&str> = feed["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["externalId"].as_str())
        .collect();
    assert_eq!(changed, ["old"], "{feed}");

    // Run again: nothing left to do.
    let job = queue(&server, json!({})).await;
    let done = finished(&server, job["id"].as_str().unwrap()).await;
    assert_eq!(done["progress"]["due"], 0, "{done}");

    // On demand: every text record of the source, whatever read it.
    let job = queue(
        &server,
        json!({"format": "text", "all": true, "sourceId": paths.source_id}),
    )
    .await;
    let done = finished(&server, job["id"].as_str().unwrap()).await;
    assert_eq!(done["progress"]["reread"], 1, "{done}");
    assert_eq!(done["format"], "text");

    let list = json_of(
        server
            .req(Method::GET, "/reextractions")
            .send()
            .await
            .unwrap(),
        200,
    )
    .await;
    assert_eq!(list.as_array().unwrap().len(), 4, "{list}");
    assert_eq!(list[0]["id"], job["id"], "newest first: {list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_improved_extractor_reads_old_files_again_in_memory() {
    an_improved_extractor_reads_old_files_again("memory:").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_improved_extractor_reads_old_files_again_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    an_improved_extractor_reads_old_files_again(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_improved_extractor_reads_old_files_again_on_postgres() {
    let Some(schema) = Schema::for_test().await else {
        return;
    };
    an_improved_extractor_reads_old_files_again(&schema.url).await;
    schema.drop().await;
}

/// The same on PostgreSQL with the originals in S3-compatible storage (moto's server) shared by
/// replicas: a replica with the version 1 extractor stores the file; two replicas with version
/// 2 start beside it over the same database and bucket. A job queued through one is worked by
/// one of the new replicas (the old one leaves it alone), read back through the other, and
/// every replica's search finds the new text; the record is otherwise unchanged, downloads are
/// byte-identical through every replica, and the bucket holds one blob per live record.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_over_postgres_and_s3_read_old_files_again() {
    let Some(schema) = Schema::for_test().await else {
        return;
    };
    let Some(s3) = S3Server::start().await else {
        schema.drop().await;
        return;
    };
    let replica = |version: u32| {
        TestServer::start_serving(
            &schema.url,
            Settings::default(),
            Some(s3.store("deployment")),
            Arc::new(Improving {
                rtf: AtomicU32::new(version),
            }),
        )
    };
    let old = replica(1).await;
    let paths = old.record_source().await;
    let rtf = corpus_file("rtf/extraction_test.rtf");
    upload(&old, &paths, "old", "legacy.rtf", rtf.clone()).await;
    upload(&old, &paths, "txt", "plain.txt", b"bananas".to_vec()).await;
    let before = record(&old, &paths, "old").await;
    assert_eq!(before["extraction"]["extractorVersion"], 1, "{before}");

    let a = replica(2).await;
    let b = replica(2).await;
    let job = queue(&a, json!({})).await;
    let done = finished(&b, job["id"].as_str().unwrap()).await;
    assert_eq!(done["state"], "DONE", "{done}");
    assert_eq!(done["progress"]["due"], 1, "{done}");
    assert_eq!(done["progress"]["reread"], 1, "{done}");

    let after = record(&b, &paths, "old").await;
    read_again(&before, &after);
    for server in [&old, &a, &b] {
        found_whole(server, &paths, &rtf).await;
    }
    let blobs = s3.store("deployment").list().await.unwrap();
    assert_eq!(blobs.len(), 2, "one blob per live record: {blobs:?}");
    schema.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn jobs_are_an_admins_of_their_workspace() {
    let server = TestServer::start().await;
    let paths = server.record_source().await;
    upload(&server, &paths, "a", "a.txt", b"some text".to_vec()).await;

    // A member may not ask; a bad format or source is refused.
    let member = server.user("member@example.com", "default", false).await;
    let resp = server
        .client
        .post(server.url("/reextractions"))
        .basic_auth("member@example.com", Some(&member.api_token))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert!(expect_problem(resp, 403).await.contains("ADMIN"));
    let resp = server
        .req(Method::POST, "/reextractions")
        .json(&json!({"format": "no-such-format"}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    let resp = server
        .req(Method::POST, "/reextractions")
        .json(&json!({"sourceId": uuid::Uuid::new_v4()}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;

    let job = queue(&server, json!({"all": true})).await;
    let id = job["id"].as_str().unwrap();
    let done = finished(&server, id).await;
    assert_eq!(done["progress"]["reread"], 1, "{done}");
    // Cancelling a job that ended answers it as it is.
    let again = json_of(
        server
            .req(Method::DELETE, &format!("/reextractions/{id}"))
            .send()
            .await
            .unwrap(),
        200,
    )
    .await;
    assert_eq!(again["state"], "DONE");

    // Another workspace's administrator sees no such job.
    let other = server.user("admin@other.example", "other", true).await;
    for method in [Method::GET, Method::DELETE] {
        let resp = server
            .client
            .request(method, server.url(&format!("/reextractions/{id}")))
            .basic_auth("admin@other.example", Some(&other.api_token))
            .send()
            .await
            .unwrap();
        expect_problem(resp, 404).await;
    }
    let list = server
        .client
        .get(server.url("/reextractions"))
        .basic_auth("admin@other.example", Some(&other.api_token))
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(list, 200).await, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_originals_re_extraction_says_why() {
    let server = TestServer::start_keeping("memory:", Settings::default(), None).await;
    let resp = server
        .req(Method::POST, "/reextractions")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert!(
        expect_problem(resp, 409)
            .await
            .contains("keeps no originals")
    );
}

/// `--reextract-after-upgrade`: a replica with newer extractors, started beside one with the
/// old ones over the same database, queues a re-extraction of every workspace by itself; the
/// old replica leaves the job alone (it would find nothing due), the new one reads the file
/// again. A third start with the same extractors queues nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_newer_replica_reads_old_files_again_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let blobs = format!("file://{}", dir.path().join("blobs").display());
    let old = TestServer::start_reading(
        &db,
        Settings::default(),
        Some(&blobs),
        Arc::new(Improving {
            rtf: AtomicU32::new(1),
        }),
    )
    .await;
    let paths = old.record_source().await;
    upload(
        &old,
        &paths,
        "old",
        "legacy.rtf",
        corpus_file("rtf/extraction_test.rtf"),
    )
    .await;
    let settings = Settings {
        reextract_after_upgrade: true,
        ..Settings::default()
    };
    let new = TestServer::start_reading(
        &db,
        settings.clone(),
        Some(&blobs),
        Arc::new(Improving {
            rtf: AtomicU32::new(2),
        }),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = record(&new, &paths, "old").await;
        if now["extraction"]["extractorVersion"] == 2 {
            assert!(now["extraction"]["failure"].is_null(), "{now}");
            assert_eq!(now["version"], 1);
            break;
        }
        assert!(Instant::now() < deadline, "never read again: {now}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let upgrade_jobs = || async {
        new.state
            .records
            .list_jobs(&inlet_core::store::jobs::JobQuery {
                kind: "reextract".into(),
                workspace_id: None,
                open_only: false,
                limit: 100,
            })
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.workspace_id.is_none())
            .count()
    };
    assert_eq!(upgrade_jobs().await, 1);
    // Started again with the same extractors: nothing new is queued.
    let _again = TestServer::start_reading(
        &db,
        settings,
        Some(&blobs),
        Arc::new(Improving {
            rtf: AtomicU32::new(2),
        }),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(upgrade_jobs().await, 1);
}
