//! The search index directory of the real `inlet serve` process on SQLite (its default place,
//! `inlet-index/` beside the database file): a restart resumes from the position it applied, and
//! a deleted directory is rebuilt from the store, each to the same answers.
//!
//! Processes, not in-process servers: a restart must leave no writer of the old index behind (an
//! in-process server's index writer and its merge threads outlive the server's handle).

use std::time::{Duration, Instant};

use inlet_tests::{HARBOUR_TEXTS, file_form, process::InletProcess, search_answer};
use reqwest::{Client, Method};
use serde_json::{Value, json};

const INLET: &str = env!("CARGO_BIN_EXE_inlet");
const EMAIL: &str = "index@example.test";
const TOKEN: &str = "index-token";
const ADMIN: (&str, &str) = (EMAIL, TOKEN);
const ADMIN_ENV: [(&str, &str); 2] = [
    ("INLET_ADMIN_EMAIL", EMAIL),
    ("INLET_ADMIN_API_TOKEN", TOKEN),
];

/// What the server logs when it builds the index from the store.
const REBUILD: &str = "search index: building from the store";
const QUERIES: [&str; 4] = ["harbour", "cranes containers", "\"quarterly report\"", ""];

/// What a search answers: the total, the result ids in order, the facets.
async fn answer(client: &Client, server: &InletProcess, q: &str) -> Value {
    let v: Value = server
        .request(client, Method::GET, "/search", ADMIN)
        .query(&[("q", q), ("limit", "50")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    search_answer(&v)
}

async fn answers(client: &Client, server: &InletProcess) -> Vec<Value> {
    let mut all = Vec::new();
    for q in QUERIES {
        all.push(answer(client, server, q).await);
    }
    all
}

/// Polls (at most 30 s) until `server` answers every query as `want`; panics with the last
/// answers otherwise. Search trails writes, and a rebuild runs in the background.
async fn expect_answers(client: &Client, server: &InletProcess, want: &[Value], when: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = answers(client, server).await;
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{when}: answers {got:#?}\nexpected {want:#?}\nlog:\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_survives_a_restart_and_a_deleted_directory_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let index_dir = dir.path().join("inlet-index");
    let client = Client::new();

    let mut first = InletProcess::spawn(INLET, &db, &ADMIN_ENV);
    first.ready(&client).await;
    let paths = first.record_source(&client, ADMIN, "files").await;
    for (i, text) in HARBOUR_TEXTS.iter().enumerate() {
        let resp = first
            .request(
                &client,
                Method::PUT,
                &format!("{}/file", paths.object(&format!("doc-{i}"))),
                ADMIN,
            )
            .multipart(file_form(&format!("doc {i}.txt"), text.as_bytes().to_vec()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "upload doc-{i}");
    }
    // Settled once browsing lists all six: the index applies the log in order.
    let deadline = Instant::now() + Duration::from_secs(30);
    while answer(&client, &first, "").await["total"] != HARBOUR_TEXTS.len() {
        assert!(Instant::now() < deadline, "search did not catch up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = answers(&client, &first).await;
    assert_eq!(before[0]["total"], 4, "{before:#?}");
    assert_eq!(before[2]["ids"], json!(["doc-1"]), "{before:#?}");
    first.terminate();
    assert!(
        first.wait_exit(Duration::from_secs(30)).is_some(),
        "inlet did not stop on SIGTERM"
    );
    assert!(
        index_dir.join("meta.json").exists(),
        "the index is kept beside the database"
    );

    // A restart resumes from the applied position: same answers.
    let mut second = InletProcess::spawn(INLET, &db, &ADMIN_ENV);
    second.ready(&client).await;
    expect_answers(&client, &second, &before, "after a restart").await;
    assert!(
        !second.log().contains(REBUILD),
        "a restart rebuilt the index:\n{}",
        second.log()
    );
    second.kill();

    // A deleted directory is rebuilt from the store.
    std::fs::remove_dir_all(&index_dir).unwrap();
    let mut third = InletProcess::spawn(INLET, &db, &ADMIN_ENV);
    third.ready(&client).await;
    expect_answers(&client, &third, &before, "after a rebuild").await;
    assert!(third.log().contains(REBUILD), "{}", third.log());
    assert!(
        index_dir.join("meta.json").exists(),
        "the index is written again"
    );
}
