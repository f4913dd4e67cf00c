//! End-to-end: the change feed (`GET /api/v1/changes`) over HTTP against real servers — the
//! snapshot then the changes in commit order, long polls, the retention's 410, workspace
//! isolation, and two PostgreSQL replicas under concurrent writers (no gap, no repeat, each
//! record's changes in commit order).

use std::{
    collections::{BTreeMap, HashMap},
    time::{Duration, Instant},
};

use inlet_server::config::Settings;
use inlet_tests::{SourcePaths, TestServer, expect_problem, postgres};
use reqwest::Method;
use serde_json::{Value, json};

async fn delete(s: &TestServer, p: &SourcePaths, id: &str) -> u16 {
    s.req(Method::DELETE, &p.object(id))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn read(s: &TestServer, query: &[(&str, String)]) -> Value {
    let resp = s
        .req(Method::GET, "/changes")
        .query(query)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let body = resp.text().await.unwrap();
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// Reads from `cursor` (the start when `None`) until a page comes back empty.
async fn walk(s: &TestServer, cursor: Option<String>, limit: u32) -> (Vec<Value>, String) {
    let mut cursor = cursor;
    let mut all = Vec::new();
    loop {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(c) = &cursor {
            query.push(("cursor", c.clone()));
        }
        let page = read(s, &query).await;
        let changes = page["changes"].as_array().unwrap().clone();
        cursor = Some(page["cursor"].as_str().unwrap().to_string());
        if changes.is_empty() {
            return (all, cursor.unwrap_or_default());
        }
        all.extend(changes);
    }
}

fn label(c: &Value) -> String {
    match c["type"].as_str().unwrap() {
        "UPSERT" => format!(
            "UPSERT {} v{}",
            c["externalId"].as_str().unwrap(),
            c["record"]["version"]
        ),
        "REMOVE" => format!("REMOVE {}", c["externalId"].as_str().unwrap()),
        other => format!("{other} {}", c["sourceId"].as_str().unwrap()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_feed_opens_with_a_snapshot_then_follows_every_write() {
    let s = TestServer::start_sqlite().await;
    let p = s.record_source().await;
    let n = s.sync(&p, "START_INITIAL", None).await;
    for id in ["a", "b x", "c"] {
        s.upload_text(&p, id, &format!("text of {id}")).await;
    }
    s.sync(&p, "COMPLETE", Some(n)).await;

    let (opening, end) = walk(&s, None, 2).await;
    let mut labels: Vec<String> = opening.iter().map(label).collect();
    labels.sort();
    assert_eq!(labels, ["UPSERT a v1", "UPSERT b x v1", "UPSERT c v1"]);
    // An UPSERT carries the metadata and where the content is read.
    let b = opening.iter().find(|c| c["externalId"] == "b x").unwrap();
    assert_eq!(b["sourceId"], p.source_id.as_str());
    assert_eq!(b["objectTypeId"], p.object_type_id.as_str());
    assert_eq!(b["syncNumber"], n);
    let url = b["contentUrl"].as_str().unwrap();
    assert!(url.ends_with("/objects/b%20x"), "{url}");
    let object: Value = s
        .client
        .get(format!("{}{url}", s.base))
        .basic_auth(inlet_tests::ADMIN_EMAIL, Some(inlet_tests::ADMIN_TOKEN))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(object["content"], "text of b x");

    // Then: a rewritten, c deleted, d new; a sync touching only a removes b and d.
    s.upload_text(&p, "a", "a again").await;
    assert_eq!(delete(&s, &p, "c").await, 204);
    s.upload_text(&p, "d", "text of d").await;
    let n = s.sync(&p, "START", None).await;
    let resp = s
        .req(Method::PUT, &p.object("a"))
        .query(&[("syncNumber", n.to_string())])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    s.sync(&p, "COMPLETE", Some(n)).await;
    let (later, end) = walk(&s, Some(end), 1).await;
    let labels: Vec<String> = later.iter().map(label).collect();
    assert_eq!(labels[..2], ["UPSERT a v2", "REMOVE c"], "{labels:?}");
    let removed: Vec<&String> = labels[2..]
        .iter()
        .filter(|l| l.starts_with("REMOVE"))
        .collect();
    let mut removed: Vec<String> = removed.into_iter().cloned().collect();
    removed.sort();
    assert_eq!(removed, ["REMOVE b x", "REMOVE d"], "{labels:?}");
    // The cursor at the end stays valid and answers nothing new.
    let page = read(&s, &[("cursor", end.clone())]).await;
    assert_eq!(page["changes"], json!([]));
    assert_eq!(page["cursor"], end.as_str());
    // One source only.
    let other = s.create_source(inlet_tests::record_source("other")).await;
    let other = SourcePaths::of(&other, 0);
    s.upload_text(&other, "x", "x").await;
    let only = read(&s, &[("sourceId", other.source_id.clone())]).await;
    let labels: Vec<String> = only["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(label)
        .collect();
    assert_eq!(labels, ["UPSERT x v1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_reads_are_named_and_other_workspaces_see_nothing() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    s.upload_text(&p, "a", "a").await;
    for (name, value, says) in [
        ("limit", "0", "at least 1"),
        ("limit", "1001", "at most 1000"),
        ("wait", "31", "at most 30"),
        ("cursor", "c99999999", "cursor"),
        ("cursor", "nonsense", "cursor"),
    ] {
        let resp = s
            .req(Method::GET, "/changes")
            .query(&[(name, value)])
            .send()
            .await
            .unwrap();
        let detail = expect_problem(resp, 400).await;
        assert!(detail.contains(says), "{name}={value}: {detail}");
    }
    let other = s.user("x@other.test", "other", false).await;
    let theirs: Value = s
        .client
        .get(s.url("/changes"))
        .basic_auth(&other.email, Some(&other.api_token))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["changes"], json!([]));
    let unauthenticated = s.client.get(s.url("/changes")).send().await.unwrap();
    expect_problem(unauthenticated, 401).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_wait_answers_when_a_change_arrives() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let (_, end) = walk(&s, None, 100).await;
    // Nothing arrives: the wait ends empty, with a cursor.
    let started = Instant::now();
    let page = read(&s, &[("cursor", end.clone()), ("wait", "1".into())]).await;
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(page["changes"], json!([]));
    let end = page["cursor"].as_str().unwrap().to_string();
    // A write during the wait ends it early.
    let waiting = {
        let base = s.base.clone();
        let client = s.client.clone();
        let end = end.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let page: Value = client
                .get(format!("{base}/api/v1/changes"))
                .basic_auth(inlet_tests::ADMIN_EMAIL, Some(inlet_tests::ADMIN_TOKEN))
                .query(&[("cursor", end.as_str()), ("wait", "20")])
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            (page, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.upload_text(&p, "late", "late").await;
    let (page, took) = waiting.await.unwrap();
    assert_eq!(
        page["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(label)
            .collect::<Vec<_>>(),
        ["UPSERT late v1"]
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cursor_older_than_the_retention_is_gone() {
    let s = TestServer::start_on(
        &format!(
            "sqlite://{}?mode=rwc",
            std::env::temp_dir()
                .join(format!("inlet-feed-{}.db", uuid::Uuid::new_v4()))
                .display()
        ),
        Settings {
            change_retention: Duration::from_secs(1),
            ..Settings::default()
        },
    )
    .await;
    let p = s.record_source().await;
    let doomed = SourcePaths::of(
        &s.create_source(inlet_tests::record_source("doomed")).await,
        0,
    );
    s.upload_text(&doomed, "x", "x").await;
    let (_, old) = walk(&s, None, 100).await;
    let resp = s
        .req(Method::DELETE, &format!("/sources/{}", doomed.source_id))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    s.upload_text(&p, "kept", "kept").await;
    // The purge runs every second and removes the deletion once it is a second old.
    let deadline = Instant::now() + Duration::from_secs(15);
    let gone = loop {
        let resp = s
            .req(Method::GET, "/changes")
            .query(&[("cursor", old.as_str())])
            .send()
            .await
            .unwrap();
        if resp.status() == 410 {
            break resp.text().await.unwrap();
        }
        assert_eq!(resp.status(), 200);
        assert!(
            Instant::now() < deadline,
            "the old cursor was never refused"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let problem: Value = serde_json::from_str(&gone).unwrap();
    assert_eq!(problem["status"], 410);
    assert!(problem["detail"].as_str().unwrap().contains("retention"));
    let earliest = problem["earliestCursor"].as_str().unwrap().to_string();
    let (fresh, _) = walk(&s, Some(earliest), 100).await;
    assert_eq!(
        fresh.iter().map(label).collect::<Vec<_>>(),
        ["UPSERT kept v1"]
    );
}

/// Writers on two replicas over one PostgreSQL while a consumer walks the feed of one of them:
/// every record's UPSERTs come in version order (commit order) with no repeat, and applying the
/// walk ends at exactly the records the store holds (no gap).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_serve_one_feed_under_concurrent_writers() {
    let Some(base) = postgres::base_url() else {
        return;
    };
    let schema = postgres::Schema::create(&base, "inlet_feed").await;
    let a = std::sync::Arc::new(TestServer::start_on(&schema.url, Settings::default()).await);
    let b = std::sync::Arc::new(TestServer::start_on(&schema.url, Settings::default()).await);
    let p = a.record_source().await;
    let (_, start) = walk(&b, None, 100).await;

    let mut writers = Vec::new();
    for w in 0..4u32 {
        let server = if w % 2 == 0 { a.clone() } else { b.clone() };
        let p = p.clone();
        writers.push(tokio::spawn(async move {
            for i in 0..40u32 {
                let id = format!("r{}", (i * 7 + w * 3) % 24);
                if i % 5 == 4 {
                    let _ = delete(&server, &p, &id).await;
                } else {
                    server
                        .upload_text(&p, &id, &format!("writer {w} step {i}"))
                        .await;
                }
            }
        }));
    }
    let consumer = {
        let b = b.clone();
        tokio::spawn(async move {
            let mut cursor = start;
            let mut seen = Vec::new();
            let mut quiet = 0;
            while quiet < 3 {
                let page = read(
                    &b,
                    &[
                        ("cursor", cursor.clone()),
                        ("limit", "7".into()),
                        ("wait", "1".into()),
                    ],
                )
                .await;
                let changes = page["changes"].as_array().unwrap().clone();
                quiet = if changes.is_empty() { quiet + 1 } else { 0 };
                seen.extend(changes);
                cursor = page["cursor"].as_str().unwrap().to_string();
            }
            seen
        })
    };
    for w in writers {
        w.await.unwrap();
    }
    let seen = consumer.await.unwrap();
    let mut versions: HashMap<String, i64> = HashMap::new();
    let mut held: BTreeMap<String, i64> = BTreeMap::new();
    for c in &seen {
        let id = c["externalId"].as_str().unwrap().to_string();
        match c["type"].as_str().unwrap() {
            "UPSERT" => {
                let v = c["record"]["version"].as_i64().unwrap();
                if let Some(before) = versions.insert(id.clone(), v) {
                    assert!(v > before, "{id}: v{v} after v{before}");
                }
                held.insert(id, v);
            }
            "REMOVE" => {
                held.remove(&id);
            }
            other => panic!("{other}"),
        }
    }
    let listed: Value = a
        .req(Method::GET, &format!("{}/objects", p.object_type()))
        .query(&[("limit", "1000")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let live: BTreeMap<String, i64> = listed["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["externalId"].as_str().unwrap().to_string(),
                o["version"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(held, live);
    // A walk from the start on the other replica agrees.
    let (fresh, _) = walk(&a, None, 1000).await;
    let from_start: BTreeMap<String, i64> = fresh
        .iter()
        .map(|c| {
            (
                c["externalId"].as_str().unwrap().to_string(),
                c["record"]["version"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(from_start, live);
    drop((a, b));
    schema.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waits_are_capped_per_user() {
    let s = TestServer::start().await;
    s.record_source().await;
    let (_, end) = walk(&s, None, 100).await;
    let cap = inlet_server::config::MAX_FEED_WAITS_PER_USER;
    let open: Vec<_> = (0..cap)
        .map(|_| {
            let (base, client, end) = (s.base.clone(), s.client.clone(), end.clone());
            tokio::spawn(async move {
                client
                    .get(format!("{base}/api/v1/changes"))
                    .basic_auth(inlet_tests::ADMIN_EMAIL, Some(inlet_tests::ADMIN_TOKEN))
                    .query(&[("cursor", end.as_str()), ("wait", "3")])
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16()
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let resp = s
        .req(Method::GET, "/changes")
        .query(&[("cursor", end.as_str()), ("wait", "3")])
        .send()
        .await
        .unwrap();
    let detail = inlet_tests::expect_problem(resp, 429).await;
    assert!(detail.contains(&format!("at most {cap}")), "{detail}");
    // A read without wait is not counted.
    let page = read(&s, &[("cursor", end.clone())]).await;
    assert_eq!(page["changes"], json!([]));
    for waiting in open {
        assert_eq!(waiting.await.unwrap(), 200);
    }
    // Once they answered, waits are allowed again.
    let page = read(&s, &[("cursor", end), ("wait", "1".into())]).await;
    assert_eq!(page["changes"], json!([]));
}
