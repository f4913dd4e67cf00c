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
/// `null` while the index is being rebuilt (503): the callers poll.
async fn answer(client: &Client, server: &InletProcess, q: &str) -> Value {
    let resp = server
        .request(client, Method::GET, "/search", ADMIN)
        .query(&[("q", q), ("limit", "50")])
        .send()
        .await
        .unwrap();
    if resp.status() == 503 {
        return Value::Null;
    }
    search_answer(&resp.json().await.unwrap())
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

/// Uploads `count` small text records (`r-<i>`) through `server`, asserting 201.
async fn upload(
    client: &Client,
    server: &InletProcess,
    ot: &inlet_tests::SourcePaths,
    ids: std::ops::Range<usize>,
) {
    for i in ids {
        let resp = server
            .request(
                client,
                Method::PUT,
                &format!("{}/file", ot.object(&format!("r-{i}"))),
                ADMIN,
            )
            .multipart(file_form(
                &format!("r {i}.txt"),
                format!("lighthouse record {i}").into_bytes(),
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "upload r-{i}");
    }
}

/// Polls `q` until its total is `want` (at most 30 s). Every answer on the way must be a 200
/// that does not name `never`, or a 503 (the index being rebuilt).
async fn expect_total(
    client: &Client,
    server: &InletProcess,
    q: &str,
    want: u64,
    never: &str,
    when: &str,
) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let resp = server
            .request(client, Method::GET, "/search", ADMIN)
            .query(&[("q", q), ("limit", "100")])
            .send()
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "{when}: the server did not answer ({e}); log:\n{}",
                    server.log()
                )
            });
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap();
        match status {
            200 => {
                let ids = inlet_tests::result_ids(&body);
                assert!(
                    !ids.iter().any(|id| id == never),
                    "{when}: a deleted record was returned: {ids:?}"
                );
                if body["total"] == want {
                    return;
                }
            }
            503 => assert!(
                body["detail"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("search index"),
                "{when}: {body}"
            ),
            other => panic!(
                "{when}: search answered {other}: {body}\nlog:\n{}",
                server.log()
            ),
        }
        assert!(
            Instant::now() < deadline,
            "{when}: total never reached {want}; log:\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The segment files of the index in `dir` with this extension.
fn segment_files(dir: &std::path::Path, ext: &str) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect()
}

/// What the server logs when it finds its index damaged while serving.
const DAMAGED: &str = "search index damaged";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_damaged_while_serving_is_rebuilt_without_wrong_answers() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let index_dir = dir.path().join("inlet-index");
    let client = Client::new();
    let mut server = InletProcess::spawn(INLET, &db, &ADMIN_ENV);
    server.ready(&client).await;
    let ot = server.record_source(&client, ADMIN, "damage").await;
    upload(&client, &server, &ot, 0..20).await;
    expect_total(&client, &server, "lighthouse", 20, "", "before").await;

    // The folder deleted under the running server, then a delete and a new upload.
    std::fs::remove_dir_all(&index_dir).unwrap();
    let resp = server
        .request(&client, Method::DELETE, &ot.object("r-3"), ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    upload(&client, &server, &ot, 20..21).await;
    expect_total(
        &client,
        &server,
        "lighthouse",
        20,
        "r-3",
        "after the folder was deleted",
    )
    .await;
    assert!(server.log().contains(DAMAGED), "{}", server.log());
    assert!(
        index_dir.join("meta.json").exists(),
        "the index is written again"
    );

    // A segment file emptied under the running server: no crash, no wrong answer.
    let victim = segment_files(&index_dir, "store")
        .into_iter()
        .next()
        .expect("a .store file");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&victim)
        .unwrap()
        .set_len(0)
        .unwrap();
    let resp = server
        .request(&client, Method::DELETE, &ot.object("r-4"), ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    expect_total(
        &client,
        &server,
        "lighthouse",
        19,
        "r-4",
        "after a segment was emptied",
    )
    .await;
    assert!(
        server.wait_exit(Duration::from_millis(10)).is_none(),
        "the server died:\n{}",
        server.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segment_files_overwritten_between_runs_are_found_at_start_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let index_dir = dir.path().join("inlet-index");
    let client = Client::new();
    let mut first = InletProcess::spawn(INLET, &db, &ADMIN_ENV);
    first.ready(&client).await;
    let ot = first.record_source(&client, ADMIN, "blocks").await;
    upload(&client, &first, &ot, 0..30).await;
    expect_total(&client, &first, "lighthouse", 30, "", "before").await;
    let before = answers(&client, &first).await;
    first.terminate();
    assert!(first.wait_exit(Duration::from_secs(30)).is_some());
    // What holds every record's text is private to the service's user.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.path().join("inlet.db")), 0o600);
    assert_eq!(mode(&index_dir), 0o700);

    // Blocks in the middle of every postings and store file overwritten, lengths kept.
    for ext in ["idx", "store"] {
        for file in segment_files(&index_dir, ext) {
            let mut bytes = std::fs::read(&file).unwrap();
            let mid = bytes.len() / 2;
            let end = (mid + 64).min(bytes.len());
            bytes[mid..end].iter_mut().for_each(|b| *b = !*b);
            std::fs::write(&file, bytes).unwrap();
        }
    }
    let mut second = InletProcess::spawn(INLET, &db, &ADMIN_ENV);
    second.ready(&client).await;
    expect_answers(
        &client,
        &second,
        &before,
        "after the blocks were overwritten",
    )
    .await;
    expect_total(
        &client,
        &second,
        "lighthouse",
        30,
        "",
        "after the blocks were overwritten",
    )
    .await;
    let log = second.log();
    assert!(
        log.contains("search index discarded") && log.contains(REBUILD),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_on_one_index_folder_refuses_and_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let index_dir = dir.path().join("shared-index");
    let index_env = index_dir.display().to_string();
    let env = [
        ADMIN_ENV[0],
        ADMIN_ENV[1],
        ("INLET_INDEX_DIR", index_env.as_str()),
    ];
    let client = Client::new();
    let mut first = InletProcess::spawn(INLET, &db, &env);
    first.ready(&client).await;
    let ot = first.record_source(&client, ADMIN, "owner").await;
    upload(&client, &first, &ot, 0..10).await;
    expect_total(&client, &first, "lighthouse", 10, "", "before").await;
    let files_before = std::fs::read_dir(&index_dir).unwrap().count();

    let mut second = InletProcess::spawn(INLET, &db, &env);
    let status = second
        .wait_exit(Duration::from_secs(60))
        .expect("the second process stops");
    assert!(!status.success());
    let log = second.log();
    assert!(
        log.contains(&index_dir.display().to_string())
            && log.contains("--index-dir")
            && log.contains("in use by another process"),
        "{log}"
    );
    assert!(std::fs::read_dir(&index_dir).unwrap().count() >= files_before.min(1));
    upload(&client, &first, &ot, 10..20).await;
    expect_total(
        &client,
        &first,
        "lighthouse",
        20,
        "",
        "after the refused start",
    )
    .await;
    assert!(!first.log().contains(DAMAGED), "{}", first.log());
}

/// Two replicas started the obvious way, from one working directory over one PostgreSQL
/// database: the second refuses the default index folder the first holds, clearly; the first
/// finds every record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_postgres_replicas_from_one_directory_do_not_share_an_index() {
    let Some(schema) = inlet_tests::postgres::Schema::for_test().await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let client = Client::new();
    let mut first = InletProcess::spawn_in(INLET, &schema.url, &ADMIN_ENV, cwd.path());
    first.ready(&client).await;
    let ot = first.record_source(&client, ADMIN, "replicas").await;
    let mut second = InletProcess::spawn_in(INLET, &schema.url, &ADMIN_ENV, cwd.path());
    let status = second
        .wait_exit(Duration::from_secs(60))
        .expect("the second replica stops");
    assert!(!status.success());
    assert!(
        second.log().contains("inlet-index") && second.log().contains("--index-dir"),
        "{}",
        second.log()
    );
    upload(&client, &first, &ot, 0..400).await;
    expect_total(&client, &first, "lighthouse", 400, "", "400 uploads").await;
    first.kill();
    schema.drop().await;
}
