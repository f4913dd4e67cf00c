//! The search index as operators run it (issue: search on one tantivy index): replicas over one
//! PostgreSQL answer alike, and a close's removals leave search. (Restarts and a deleted index
//! directory: `server/tests/index_dir.rs`, on the real process.)

use inlet_server::config::Settings;
use inlet_tests::{HARBOUR_TEXTS, TestServer, file_form, postgres, search_answer};
use reqwest::Method;
use serde_json::{Value, json};

/// Uploads `text` as `name` to the record `id`.
async fn upload(s: &TestServer, object: &str, name: &str, text: &str) {
    let resp = s
        .req(Method::PUT, &format!("{object}/file"))
        .multipart(file_form(name, text.as_bytes().to_vec()))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "upload: {}", resp.status());
}

/// What a search answers that must not depend on the replica: the total, the result ids in
/// order, the facets.
async fn answer(s: &TestServer, q: &str) -> Value {
    s.settle().await;
    let v: Value = s
        .req(Method::GET, "/search")
        .query(&[("q", q), ("limit", "50")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    search_answer(&v)
}

/// Uploads [`HARBOUR_TEXTS`] as `doc-0` … `doc-5`.
async fn upload_texts(s: &TestServer, paths: &inlet_tests::SourcePaths) {
    for (i, text) in HARBOUR_TEXTS.iter().enumerate() {
        upload(
            s,
            &paths.object(&format!("doc-{i}")),
            &format!("doc {i}.txt"),
            text,
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_over_one_postgres_answer_alike() {
    let Some(base) = postgres::base_url() else {
        return;
    };
    let schema = postgres::Schema::create(&base, "inlet_replicas").await;
    let a = TestServer::start_on(&schema.url, Settings::default()).await;
    let b = TestServer::start_on(&schema.url, Settings::default()).await;
    let paths = a.record_source().await;
    // Writes through both replicas: uploads, rewrites, a delete.
    for (i, text) in HARBOUR_TEXTS.iter().enumerate() {
        let s = if i % 2 == 0 { &a } else { &b };
        upload(
            s,
            &paths.object(&format!("doc-{i}")),
            &format!("doc {i}.txt"),
            text,
        )
        .await;
    }
    upload(
        &b,
        &paths.object("doc-0"),
        "doc 0.txt",
        "harbour cranes rewritten",
    )
    .await;
    let resp = a
        .req(Method::DELETE, &paths.object("doc-5"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    for q in [
        "harbour",
        "cranes containers",
        "\"harbour traffic\"",
        "night -cranes",
        "",
    ] {
        let (from_a, from_b) = (answer(&a, q).await, answer(&b, q).await);
        assert_eq!(from_a, from_b, "replicas differ for {q:?}");
    }
    assert_eq!(answer(&a, "harbour").await["total"], 4);
    assert_eq!(
        answer(&b, "minutes").await["total"],
        0,
        "the deleted record is gone"
    );
    drop((a, b));
    schema.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_complete_close_removes_records_from_search() {
    let s = TestServer::start_sqlite().await;
    let paths = s.record_source().await;
    let open = |op: &'static str| {
        let s = &s;
        let syncs = paths.syncs();
        async move {
            let v: Value = s
                .req(Method::POST, &syncs)
                .json(&json!({"operation": op}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            v["syncNumber"].as_i64().unwrap()
        }
    };
    let close = |n: i64| {
        let s = &s;
        let syncs = paths.syncs();
        async move {
            let resp = s
                .req(Method::PUT, &format!("{syncs}/{n}"))
                .json(&json!({"operation": "COMPLETE"}))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
        }
    };
    let first = open("START_INITIAL").await;
    upload_texts(&s, &paths).await;
    close(first).await;
    assert_eq!(answer(&s, "harbour").await["total"], 4);
    let second = open("START").await;
    upload(&s, &paths.object("doc-1"), "doc 1.txt", HARBOUR_TEXTS[1]).await;
    close(second).await;
    let left = answer(&s, "harbour").await;
    assert_eq!(left["ids"], json!(["doc-1"]), "{left}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn match_all_narrows_and_a_bad_match_says_what_it_takes() {
    let s = TestServer::start().await;
    let paths = s.record_source().await;
    upload_texts(&s, &paths).await;
    s.settle().await;
    let ids = |v: Value| inlet_tests::result_ids(&v);
    let get = |query: &'static [(&'static str, &'static str)]| {
        let s = &s;
        async move {
            s.req(Method::GET, "/search")
                .query(query)
                .send()
                .await
                .unwrap()
        }
    };
    let any: Value = get(&[("q", "harbour night")]).await.json().await.unwrap();
    assert_eq!(any["total"], 4);
    assert_eq!(any["exhaustive"], true);
    let first = any["results"][0]["externalId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        ["doc-0", "doc-3"].contains(&first.as_str()),
        "both words first: {any}"
    );
    let all: Value = get(&[("q", "harbour night"), ("match", "all")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(ids(all), ["doc-0", "doc-3"]);
    let detail =
        inlet_tests::expect_problem(get(&[("q", "x"), ("match", "some")]).await, 400).await;
    assert!(
        detail.contains("`any`") && detail.contains("`all`"),
        "{detail}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_file_is_found_by_its_original_name() {
    let s = TestServer::start_sqlite().await;
    let paths = s.record_source().await;
    // The spec's title rule keeps ASCII only: this file's title is `.txt`.
    upload(&s, &paths.object("memo"), "日本語メモ.txt", "meeting notes").await;
    upload(
        &s,
        &paths.object("plan"),
        "Q3_budgetReport-final.xlsx",
        "numbers",
    )
    .await;
    let memo: Value = s
        .req(Method::GET, &paths.object("memo"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(memo["title"], ".txt");
    assert_eq!(answer(&s, "日本語").await["ids"], json!(["memo"]));
    assert_eq!(answer(&s, "メモ").await["ids"], json!(["memo"]));
    assert_eq!(answer(&s, "budget report").await["ids"], json!(["plan"]));
    assert_eq!(answer(&s, "budgetReport").await["ids"], json!(["plan"]));
}
