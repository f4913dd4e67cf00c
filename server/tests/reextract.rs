//! `inlet admin reextract` as a real process, against the database and blob folder a serving
//! process uses: a record read by an older extractor is read again from its original (search
//! finds its new text, its version, checksum and title stay), a dry run reads nothing, and a
//! second run finds nothing left to do.

use std::{
    process::Command,
    time::{Duration, Instant},
};

use inlet_core::record::{Extraction, RecordKey, Reread, Scope};
use inlet_server::Settings;
use inlet_tests::{TestServer, file_form};
use reqwest::Method;
use serde_json::Value;

const INLET: &str = env!("CARGO_BIN_EXE_inlet");

fn reextract(db: &str, blobs: &str, extra: &[&str]) -> Value {
    let out = Command::new(INLET)
        .args([
            "admin",
            "reextract",
            "--database",
            db,
            "--blob-store",
            blobs,
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn records_an_older_extractor_read_are_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let blobs = format!("file://{}", dir.path().join("blobs").display());
    let server = TestServer::start_keeping(&db, Settings::default(), Some(&blobs)).await;
    let paths = server.record_source().await;
    for (id, text) in [("a", "pineapple harvest minutes"), ("b", "second file")] {
        let resp = server
            .req(
                Method::PUT,
                &format!("{}/file?externalChecksum=c-{id}", paths.object(id)),
            )
            .multipart(file_form(&format!("{id}.txt"), text))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
    }
    // a as an older extractor left it: no text, no version recorded.
    let admin = server
        .state
        .tokens
        .user_by_email(inlet_tests::ADMIN_EMAIL)
        .await
        .unwrap()
        .unwrap();
    let key = RecordKey {
        scope: Scope {
            workspace_id: admin.workspace_id,
            source_id: paths.source_id.parse().unwrap(),
            object_type_id: paths.object_type_id.parse().unwrap(),
        },
        external_id: "a".into(),
    };
    let a = server.state.records.get_record(&key).await.unwrap();
    let old = Reread {
        key: key.clone(),
        version: a.version,
        sha256: a.original.clone().unwrap().sha256,
        content: String::new(),
        extraction: Extraction {
            format: Some("text".into()),
            failure: Some("an older extractor read nothing".into()),
            ..Extraction::default()
        },
    };
    assert!(
        server
            .state
            .records
            .store_reread(old)
            .await
            .unwrap()
            .is_some()
    );
    let finds = |q: &'static str| {
        let server = &server;
        async move {
            let found: Value = server
                .req(Method::GET, &format!("/search?q={q}"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            found["total"].as_u64().unwrap_or(0) > 0
        }
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while finds("pineapple").await {
        assert!(
            Instant::now() < deadline,
            "the old reading never reached search"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let dry = reextract(&db, &blobs, &["--dry-run"]);
    assert_eq!(
        (dry["due"].as_u64(), dry["reread"].as_u64()),
        (Some(1), Some(0)),
        "{dry}"
    );
    let done = reextract(&db, &blobs, &[]);
    assert_eq!(
        (done["due"].as_u64(), done["reread"].as_u64()),
        (Some(1), Some(1)),
        "{done}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !finds("pineapple").await {
        assert!(
            Instant::now() < deadline,
            "search does not see the new reading"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let meta: Value = server
        .req(Method::GET, &format!("{}/metadata", paths.object("a")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(meta["version"], 1, "{meta}");
    assert_eq!(meta["externalChecksum"], "c-a");
    let record = server.state.records.get_record(&key).await.unwrap();
    assert_eq!(record.title, "a.txt");
    assert_eq!(record.extraction.version, Some(1));
    assert!(record.extraction.failure.is_none());
    assert_eq!(record.content, "pineapple harvest minutes");
    // Nothing is left to do; failed-only finds no failure either.
    let again = reextract(&db, &blobs, &[]);
    assert_eq!(again["due"].as_u64(), Some(0), "{again}");
    let failed = reextract(&db, &blobs, &["--failed-only"]);
    assert_eq!(failed["due"].as_u64(), Some(0), "{failed}");
}
