//! Originals over HTTP (DESIGN 7b): every uploaded file is kept and downloads byte for byte with
//! its name, media type and SHA-256 `ETag`, conditionally and by range; a record another
//! workspace owns, one the caller may not read, and a removed one are 404; and on SQLite with a
//! folder of blobs, the blob count follows the live records through uploads, replacements,
//! deletes, a COMPLETE close and a source's deletion (the background sweep removes the rest).

use std::time::{Duration, Instant};

use inlet_core::blob::Original;
use inlet_server::Settings;
use inlet_tests::{SourcePaths, TestServer, corpus_file, expect_problem, file_form, files_under};
use reqwest::{Method, StatusCode};
use serde_json::json;

async fn upload(server: &TestServer, paths: &SourcePaths, id: &str, name: &str, bytes: Vec<u8>) {
    let resp = server
        .req(Method::PUT, &format!("{}/file", paths.object(id)))
        .multipart(file_form(name, bytes))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{id}: {}", resp.status());
}

fn file(paths: &SourcePaths, id: &str) -> String {
    format!("{}/file", paths.object(id))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn originals_download_as_uploaded() {
    let server = TestServer::start().await;
    let paths = server.record_source().await;
    let pdf = corpus_file("pdf/2022_Q3_AAPL.pdf");
    upload(&server, &paths, "q3", "Q3 report – Apple.pdf", pdf.clone()).await;

    let resp = server
        .req(Method::GET, &file(&paths, "q3"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let header = |r: &reqwest::Response, name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let etag = format!("\"{}\"", Original::of(&pdf).sha256);
    assert_eq!(header(&resp, "etag"), Some(etag.clone()));
    assert_eq!(
        header(&resp, "content-type").as_deref(),
        Some("application/pdf")
    );
    assert_eq!(header(&resp, "accept-ranges").as_deref(), Some("bytes"));
    assert_eq!(header(&resp, "content-length"), Some(pdf.len().to_string()));
    let disposition = header(&resp, "content-disposition").unwrap();
    assert!(
        disposition.contains("filename*=UTF-8''Q3%20report%20%E2%80%93%20Apple%2Epdf"),
        "{disposition}"
    );
    assert_eq!(resp.bytes().await.unwrap().as_ref(), &pdf[..]);

    // Conditional: the current ETag answers 304 without a body; another one the file.
    let resp = server
        .req(Method::GET, &file(&paths, "q3"))
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header(&resp, "etag"), Some(etag.clone()));
    let resp = server
        .req(Method::GET, &file(&paths, "q3"))
        .header("If-None-Match", "\"stale\"")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    // Ranges: the first bytes, the last ones, and one beyond the file.
    let size = pdf.len();
    for (range, want) in [
        ("bytes=0-7".to_string(), 0..8),
        (format!("bytes={}-", size - 5), size - 5..size),
        ("bytes=-5".to_string(), size - 5..size),
    ] {
        let resp = server
            .req(Method::GET, &file(&paths, "q3"))
            .header("Range", &range)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::PARTIAL_CONTENT, "{range}");
        assert_eq!(
            header(&resp, "content-range"),
            Some(format!("bytes {}-{}/{size}", want.start, want.end - 1))
        );
        assert_eq!(resp.bytes().await.unwrap().as_ref(), &pdf[want]);
    }
    let resp = server
        .req(Method::GET, &file(&paths, "q3"))
        .header("Range", format!("bytes={size}-"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(
        header(&resp, "content-range"),
        Some(format!("bytes */{size}"))
    );
    assert!(expect_problem(resp, 416).await.contains("beyond"));

    // A new upload replaces the original; a removed record's file is gone.
    upload(&server, &paths, "q3", "notes.txt", b"plain notes".to_vec()).await;
    let resp = server
        .req(Method::GET, &file(&paths, "q3"))
        .send()
        .await
        .unwrap();
    assert_eq!(header(&resp, "content-type").as_deref(), Some("text/plain"));
    assert_eq!(resp.bytes().await.unwrap().as_ref(), b"plain notes");
    let resp = server
        .req(Method::DELETE, &paths.object("q3"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    let gone = server
        .req(Method::GET, &file(&paths, "q3"))
        .send()
        .await
        .unwrap();
    let missing = server
        .req(Method::GET, &file(&paths, "nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_problem(gone, 404).await.replace("q3", "nope"),
        expect_problem(missing, 404).await,
        "a removed record's file answers as a missing record's"
    );

    // Another workspace's administrator, and a member who may not read the record: 404.
    upload(
        &server,
        &paths,
        "secret",
        "secret.txt",
        b"board minutes".to_vec(),
    )
    .await;
    let resp = server
        .req(Method::PUT, &format!("{}/access", paths.object("secret")))
        .json(&json!({"access": ["group:board"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let stranger = server.user("admin@other.test", "other", true).await;
    let member = server.user("member@example.test", "default", false).await;
    for who in [&stranger, &member] {
        let resp = server
            .client
            .get(server.url(&file(&paths, "secret")))
            .basic_auth(&who.email, Some(&who.api_token))
            .send()
            .await
            .unwrap();
        expect_problem(resp, 404).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_originals_downloads_say_why() {
    let server = TestServer::start_keeping("memory:", Settings::default(), None).await;
    let paths = server.record_source().await;
    upload(&server, &paths, "a", "a.txt", b"hello".to_vec()).await;
    let resp = server
        .req(Method::GET, &file(&paths, "a"))
        .send()
        .await
        .unwrap();
    let detail = expect_problem(resp, 404).await;
    assert!(detail.contains("original"), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn blobs_follow_the_live_records() {
    let dir = tempfile::tempdir().unwrap();
    let blob_dir = dir.path().join("blobs");
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let settings = Settings {
        originals_grace: Duration::from_secs(1),
        blob_sweep_interval: Duration::from_millis(200),
        ..Settings::default()
    };
    let url = format!("file://{}", blob_dir.display());
    let server = TestServer::start_keeping(&db, settings, Some(&url)).await;
    let paths = server.record_source().await;
    let other = SourcePaths::of(
        &server
            .create_source(inlet_tests::record_source("other"))
            .await,
        0,
    );
    // Two records with one content share a blob; c is replaced; d is deleted; e, written
    // before the sync, is not seen by its COMPLETE close; the other source's record goes with
    // its source.
    upload(&server, &paths, "e", "e.txt", b"outside".to_vec()).await;
    let n = server.sync(&paths, "START_INITIAL", None).await;
    for (id, bytes) in [
        ("a", &b"shared"[..]),
        ("b", b"shared"),
        ("c", b"first"),
        ("d", b"deleted"),
    ] {
        let resp = server
            .req(Method::PUT, &format!("{}?syncNumber={n}", file(&paths, id)))
            .multipart(file_form(&format!("{id}.txt"), bytes.to_vec()))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success());
    }
    upload(&server, &paths, "c", "c.txt", b"second".to_vec()).await;
    let resp = server
        .req(Method::DELETE, &paths.object("d"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    upload(&server, &other, "x", "x.txt", b"elsewhere".to_vec()).await;
    assert_eq!(files_under(&blob_dir), 6, "one blob per distinct content");

    // The COMPLETE close keeps what the sync saw: a, b and c (the replacement joined the open
    // sync).
    server.sync(&paths, "COMPLETE", Some(n)).await;
    let resp = server
        .req(Method::DELETE, &format!("/sources/{}", other.source_id))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);

    // Live: a and b (shared), c (second). The sweep removes first, deleted, outside, elsewhere.
    let deadline = Instant::now() + Duration::from_secs(20);
    while files_under(&blob_dir) != 2 {
        assert!(
            Instant::now() < deadline,
            "blobs left: {}",
            files_under(&blob_dir)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for (id, bytes) in [("a", &b"shared"[..]), ("b", b"shared"), ("c", b"second")] {
        let resp = server
            .req(Method::GET, &file(&paths, id))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{id}");
        assert_eq!(resp.bytes().await.unwrap().as_ref(), bytes, "{id}");
    }
    // The sweep's figures are on /metrics.
    let metrics = server
        .client
        .get(format!("{}/metrics", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("inlet_originals_written_total 7"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_store_that_refuses_writes_fails_the_upload_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let blob_dir = dir.path().join("blobs");
    let url = format!("file://{}", blob_dir.display());
    let server = TestServer::start_keeping("memory:", Settings::default(), Some(&url)).await;
    let paths = server.record_source().await;
    upload(&server, &paths, "kept", "kept.txt", b"kept".to_vec()).await;
    // The workspace's folder of blobs replaced by a file: every write below it fails, as on a
    // full or read-only disk (root ignores permissions, so a file stands in for them).
    let admin = server
        .state
        .tokens
        .user_by_email(inlet_tests::ADMIN_EMAIL)
        .await
        .unwrap()
        .unwrap();
    let folder = blob_dir.join(admin.workspace_id.to_string());
    std::fs::remove_dir_all(&folder).unwrap();
    std::fs::write(&folder, b"in the way").unwrap();
    let resp = server
        .req(Method::PUT, &file(&paths, "lost"))
        .multipart(file_form("lost.txt", b"never stored".to_vec()))
        .send()
        .await
        .unwrap();
    let detail = expect_problem(resp, 503).await;
    assert!(detail.contains("original files is unavailable"), "{detail}");
    assert!(
        !detail.contains(&blob_dir.display().to_string()),
        "{detail}"
    );
    let resp = server
        .req(Method::GET, &format!("{}/metadata", paths.object("lost")))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
    // A replacement that cannot keep its original leaves the record as it was.
    let resp = server
        .req(Method::PUT, &file(&paths, "kept"))
        .multipart(file_form("kept.txt", b"changed".to_vec()))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 503).await;
    let meta: serde_json::Value = server
        .req(Method::GET, &format!("{}/metadata", paths.object("kept")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(meta["version"], 1);
}
