//! End-to-end: every row of spec section 3's lifecycle table, over HTTP against a real server.

use inlet_tests::{TestServer, expect_problem, file_form};
use reqwest::Method;
use serde_json::{Value, json};

async fn open(s: &TestServer, p: &inlet_tests::SourcePaths, op: &str) -> Value {
    let resp = s
        .req(Method::POST, &p.syncs())
        .json(&json!({"operation": op}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    resp.json().await.unwrap()
}

async fn close(s: &TestServer, p: &inlet_tests::SourcePaths, n: i64, op: &str) -> Value {
    let resp = s
        .req(Method::PUT, &format!("{}/{n}", p.syncs()))
        .json(&json!({"operation": op}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

async fn upload(
    s: &TestServer,
    p: &inlet_tests::SourcePaths,
    external_id: &str,
    query: &[(&str, &str)],
    tags: &[&str],
    name: &str,
    body: &str,
) -> reqwest::Response {
    let mut req = s
        .req(Method::PUT, &format!("{}/file", p.object(external_id)))
        .query(query)
        .multipart(file_form(name, body.as_bytes().to_vec()));
    for t in tags {
        req = req.header("X-Service-Object-Tag", *t);
    }
    req.send().await.unwrap()
}

async fn record(s: &TestServer, p: &inlet_tests::SourcePaths, external_id: &str) -> Value {
    let resp = s
        .req(Method::GET, &p.object(external_id))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

async fn metadata(
    s: &TestServer,
    p: &inlet_tests::SourcePaths,
    external_id: &str,
) -> reqwest::Response {
    s.req(Method::GET, &format!("{}/metadata", p.object(external_id)))
        .send()
        .await
        .unwrap()
}

async fn touch(
    s: &TestServer,
    p: &inlet_tests::SourcePaths,
    external_id: &str,
    sync: i64,
    if_match: Option<&str>,
) -> reqwest::Response {
    let mut req = s
        .req(Method::PUT, &p.object(external_id))
        .query(&[("syncNumber", sync.to_string())]);
    if let Some(m) = if_match {
        req = req.header("If-Match", m);
    }
    req.send().await.unwrap()
}

fn is_timestamp(v: &Value) -> bool {
    // 2026-11-22T10:42:10.123+00:00
    let s = v.as_str().unwrap_or_default();
    s.len() == 29 && s.as_bytes()[19] == b'.' && s.ends_with("+00:00") && s.as_bytes()[10] == b'T'
}

#[tokio::test]
async fn create_source_answers_ids_for_object_types_fields_tags_and_facets() {
    let s = TestServer::start().await;
    let source = s.create_source(inlet_tests::record_source("ext-1")).await;
    assert!(uuid::Uuid::parse_str(source["id"].as_str().unwrap()).is_ok());
    let ot = &source["sourceObjectTypes"][0];
    assert!(uuid::Uuid::parse_str(ot["id"].as_str().unwrap()).is_ok());
    let fields: Vec<&str> = ot["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["title", "url", "content"]);
    assert!(
        ot["fields"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["id"].is_string())
    );
    assert!(ot["tagConfigs"][0]["id"].is_string());
    assert_eq!(ot["facets"][1]["targetType"], "MODIFIED_DATE");
    assert_eq!(source["config"]["trackStatus"], true);
    assert!(
        is_timestamp(&source["createdDate"]),
        "{}",
        source["createdDate"]
    );

    let id = source["id"].as_str().unwrap();
    let got: Value = s
        .req(Method::GET, &format!("/sources/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got, source);
    let list: Value = s
        .req(Method::GET, "/sources")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list, json!([source]));
}

#[tokio::test]
async fn full_sync_lifecycle_follows_the_spec_table() {
    full_sync_lifecycle(TestServer::start().await).await;
}

#[tokio::test]
async fn full_sync_lifecycle_follows_the_spec_table_on_sqlite() {
    full_sync_lifecycle(TestServer::start_sqlite().await).await;
}

async fn full_sync_lifecycle(s: TestServer) {
    let p = s.record_source().await;

    // Open the first sync.
    let run = open(&s, &p, "START_INITIAL").await;
    assert_eq!(run["syncNumber"], 1);
    assert_eq!(run["state"], "OPEN");
    assert_eq!(run["operation"], "START_INITIAL");
    assert_eq!(run["objectType"]["currentSyncNumber"], 1);
    assert!(is_timestamp(&run["startedAt"]));

    // (no record) + upload with open syncNumber -> 201, version 1.
    let resp = upload(
        &s,
        &p,
        "a",
        &[
            ("syncNumber", "1"),
            ("externalUrl", "https://ex.test/a"),
            ("externalChecksum", "c1"),
        ],
        &["color:red", "color:blue", "size:42"],
        "Report (draft).txt",
        "alpha beta",
    )
    .await;
    assert_eq!(resp.status(), 201);
    let meta: Value = resp.json().await.unwrap();
    let keys: Vec<&String> = meta.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "version",
            "id",
            "objectType",
            "externalId",
            "createdDate",
            "modifiedDate",
            "externalChecksum",
            "modifiedBy",
            // The one addition to spec 2.4 (docs/decisions.md, Uploads): how the file was read.
            "extraction"
        ]
    );
    assert_eq!(meta["version"], 1);
    assert_eq!(meta["externalId"], "a");
    assert_eq!(meta["externalChecksum"], "c1");
    assert_eq!(meta["objectType"]["name"], "Documents");
    assert_eq!(meta["objectType"]["id"], p.object_type_id.as_str());
    assert_eq!(meta["objectType"]["currentSyncNumber"], 1);
    assert_eq!(meta["modifiedBy"]["email"], inlet_tests::ADMIN_EMAIL);
    assert!(is_timestamp(&meta["createdDate"]) && is_timestamp(&meta["modifiedDate"]));
    let rec = record(&s, &p, "a").await;
    assert_eq!(rec["title"], "Report_draft_.txt");
    assert_eq!(rec["url"], "https://ex.test/a");
    assert_eq!(rec["content"], "alpha beta");
    assert_eq!(
        rec["tags"],
        json!({"color": ["red", "blue"], "size": ["42"]})
    );
    assert_eq!(rec["extraction"]["format"], "text");

    // Existing record + upload -> 200, version incremented, tags replaced (not merged).
    let resp = upload(
        &s,
        &p,
        "a",
        &[("syncNumber", "1"), ("externalChecksum", "c2")],
        &["color:green"],
        "Report.txt",
        "gamma",
    )
    .await;
    assert_eq!(resp.status(), 200);
    let meta: Value = resp.json().await.unwrap();
    assert_eq!(meta["version"], 2);
    let rec = record(&s, &p, "a").await;
    assert_eq!(rec["tags"], json!({"color": ["green"]}));
    assert_eq!(rec["content"], "gamma");
    assert!(
        rec.get("url").is_none(),
        "externalUrl omitted -> no url: {rec}"
    );

    // Checksum equal -> 200 with current metadata; not re-extracted; tags and externalUrl ignored.
    let resp = upload(
        &s,
        &p,
        "a",
        &[
            ("syncNumber", "1"),
            ("externalChecksum", "c2"),
            ("externalUrl", "https://ex.test/new"),
        ],
        &["color:yellow"],
        "Other.txt",
        "delta",
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut same: Value = resp.json().await.unwrap();
    assert_eq!(same["skipped"]["reason"], "CHECKSUM_UNCHANGED", "{same}");
    same.as_object_mut().unwrap().remove("skipped");
    let mut current = meta.clone();
    // No file was read, so the answer has no extraction outcome.
    current.as_object_mut().unwrap().remove("extraction");
    assert_eq!(
        same, current,
        "checksum-equal upload returns the current metadata unchanged"
    );
    let rec = record(&s, &p, "a").await;
    assert_eq!(rec["content"], "gamma");
    assert_eq!(rec["tags"], json!({"color": ["green"]}));
    assert!(rec.get("url").is_none());
    assert_eq!(rec["title"], "Report.txt");

    // More records for the removal row.
    for id in ["b", "c"] {
        assert_eq!(
            upload(
                &s,
                &p,
                id,
                &[("syncNumber", "1"), ("externalChecksum", "x")],
                &[],
                "f.txt",
                "text"
            )
            .await
            .status(),
            201
        );
    }
    let closed = close(&s, &p, 1, "COMPLETE").await;
    assert_eq!(closed["state"], "COMPLETED");
    assert_eq!(closed["closeOperation"], "COMPLETE");
    assert_eq!(closed["removed"], 0);
    assert_eq!(closed["kept"], 3);
    assert_eq!(closed["uploaded"], 4);
    assert_eq!(closed["unchanged"], 1);

    // Second sync: "a" re-uploaded, "b" touched (If-Match equal), "c" left alone.
    let run = open(&s, &p, "START").await;
    assert_eq!(run["syncNumber"], 2);
    assert_eq!(
        upload(&s, &p, "a", &[("syncNumber", "2")], &[], "a.txt", "new a")
            .await
            .status(),
        200
    );
    let resp = touch(&s, &p, "b", 2, Some("\"x\"")).await;
    assert_eq!(resp.status(), 204);
    assert_eq!(resp.text().await.unwrap(), "");
    let b_meta: Value = metadata(&s, &p, "b").await.json().await.unwrap();
    assert_eq!(b_meta["version"], 1, "touch changes nothing else");
    let closed = close(&s, &p, 2, "COMPLETE").await;
    assert_eq!(closed["removed"], 1);
    assert_eq!(closed["kept"], 2);
    assert_eq!(closed["touched"], 1);

    // Removed record: metadata without externalChecksum; touch 404.
    let resp = metadata(&s, &p, "c").await;
    assert_eq!(resp.status(), 200);
    let c_meta: Value = resp.json().await.unwrap();
    assert!(c_meta.get("externalChecksum").is_none(), "{c_meta}");
    assert_eq!(c_meta["version"], 1);
    open(&s, &p, "START").await;
    expect_problem(touch(&s, &p, "c", 3, None).await, 404).await;

    // Removed + upload -> 200, version incremented, checksum visible again.
    let resp = upload(
        &s,
        &p,
        "c",
        &[("syncNumber", "3"), ("externalChecksum", "y")],
        &[],
        "c.txt",
        "back",
    )
    .await;
    assert_eq!(resp.status(), 200);
    let c_meta: Value = resp.json().await.unwrap();
    assert_eq!(c_meta["version"], 2);
    assert_eq!(c_meta["externalChecksum"], "y");

    // FAIL removes nothing, though "a" and "b" were not part of sync 3.
    let closed = close(&s, &p, 3, "FAIL").await;
    assert_eq!(closed["state"], "FAILED");
    assert_eq!(closed["removed"], 0);
    for id in ["a", "b", "c"] {
        assert_eq!(record(&s, &p, id).await["removed"], false, "{id}");
    }

    // COMPLETE_INCREMENTAL removes nothing either.
    open(&s, &p, "START").await;
    let closed = close(&s, &p, 4, "COMPLETE_INCREMENTAL").await;
    assert_eq!(closed["removed"], 0);

    // Sync runs read back, newest first.
    let runs: Value = s
        .req(Method::GET, &p.syncs())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let numbers: Vec<i64> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["syncNumber"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [4, 3, 2, 1]);
    let one: Value = s
        .req(Method::GET, &format!("{}/2", p.syncs()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(one["removed"], 1);
    assert_eq!(one["objectType"]["currentSyncNumber"], 4);
}

#[tokio::test]
async fn upload_outside_a_sync_and_touch_rules() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let resp = upload(
        &s,
        &p,
        "early",
        &[("externalChecksum", "e")],
        &[],
        "e.txt",
        "early",
    )
    .await;
    assert_eq!(resp.status(), 201);
    let meta: Value = resp.json().await.unwrap();
    assert_eq!(meta["objectType"]["currentSyncNumber"], 0);
    assert_eq!(record(&s, &p, "early").await["syncNumber"], 0);

    open(&s, &p, "START_INITIAL").await;
    // If-Match absent: always succeeds for an existing record; differing: 412.
    assert_eq!(touch(&s, &p, "early", 1, None).await.status(), 204);
    expect_problem(touch(&s, &p, "early", 1, Some("\"other\"")).await, 412).await;
    expect_problem(touch(&s, &p, "never", 1, None).await, 404).await;
    assert_eq!(touch(&s, &p, "early", 1, Some("\"e\"")).await.status(), 204);
}

#[tokio::test]
async fn delete_makes_a_tombstone_that_an_upload_revives() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    assert_eq!(
        upload(&s, &p, "d", &[("externalChecksum", "1")], &[], "d.txt", "x")
            .await
            .status(),
        201
    );
    assert_eq!(
        s.req(Method::DELETE, &p.object("d"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    expect_problem(
        s.req(Method::DELETE, &p.object("d")).send().await.unwrap(),
        404,
    )
    .await;
    let meta: Value = metadata(&s, &p, "d").await.json().await.unwrap();
    assert!(meta.get("externalChecksum").is_none());
    assert_eq!(record(&s, &p, "d").await["removed"], true);
    let resp = upload(&s, &p, "d", &[], &[], "d.txt", "x").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<Value>().await.unwrap()["version"], 2);
}

#[tokio::test]
async fn fifty_concurrent_uploads_of_one_external_id_end_at_version_50() {
    let s = std::sync::Arc::new(TestServer::start().await);
    let p = s.record_source().await;
    open(&s, &p, "START_INITIAL").await;
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let (s, p) = (s.clone(), p.clone());
            tokio::spawn(async move {
                let sum = format!("c{i}");
                let resp = upload(
                    &s,
                    &p,
                    "hot",
                    &[("syncNumber", "1"), ("externalChecksum", &sum)],
                    &[],
                    "hot.txt",
                    &format!("version body {i}"),
                )
                .await;
                let status = resp.status().as_u16();
                let v: Value = resp.json().await.unwrap();
                (status, v["version"].as_i64().unwrap())
            })
        })
        .collect();
    let mut versions = Vec::new();
    let mut created = 0;
    for t in tasks {
        let (status, version) = t.await.unwrap();
        assert!(status == 200 || status == 201);
        created += usize::from(status == 201);
        versions.push(version);
    }
    versions.sort_unstable();
    assert_eq!(versions, (1..=50).collect::<Vec<_>>());
    assert_eq!(created, 1);
    let meta: Value = metadata(&s, &p, "hot").await.json().await.unwrap();
    assert_eq!(meta["version"], 50);
}

#[tokio::test]
async fn unreadable_files_are_stored_with_empty_content_and_success() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let mut x: u32 = 0x1234_5678;
    let noise: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("noise")))
        .multipart(file_form("noise.txt", noise))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    // The upload's answer says why the content is empty.
    let answer: Value = resp.json().await.unwrap();
    let failure = answer["extraction"]["failure"].as_str().unwrap_or_default();
    assert!(!failure.is_empty(), "{answer}");
    assert_eq!(answer["extraction"]["characters"], 0);
    let rec = record(&s, &p, "noise").await;
    assert_eq!(rec["content"], "");
    assert_eq!(rec["extraction"]["failure"], failure, "{rec}");
    // A readable file's answer names its format; a checksum skip and a metadata read carry
    // no extraction (no file was read).
    let note = || {
        upload(
            &s,
            &p,
            "note",
            &[("externalChecksum", "c1")],
            &[],
            "n.txt",
            "hello there",
        )
    };
    let answer: Value = note().await.json().await.unwrap();
    assert_eq!(answer["extraction"]["format"], "text", "{answer}");
    assert_eq!(answer["extraction"]["characters"], 11, "{answer}");
    assert!(answer["extraction"].get("failure").is_none(), "{answer}");
    let answer: Value = note().await.json().await.unwrap();
    assert!(answer.get("extraction").is_none(), "{answer}");
    let meta: Value = metadata(&s, &p, "note").await.json().await.unwrap();
    assert!(meta.get("extraction").is_none(), "{meta}");
    let resp = upload(&s, &p, "empty", &[], &[], "empty.pdf", "").await;
    assert_eq!(resp.status(), 201);
    assert_eq!(record(&s, &p, "empty").await["content"], "");
}

#[tokio::test]
async fn file_name_from_rfc5987_filename_star_is_normalized() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let boundary = "XyZbOuNdArY";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"fallback.txt\"; filename*=UTF-8''R%C3%A9sum%C3%A9%20(v2).txt\r\nContent-Type: text/plain\r\n\r\nhello\r\n--{boundary}--\r\n"
    );
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("r")))
        .header(
            "Content-Type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    assert_eq!(record(&s, &p, "r").await["title"], "Resume_v2_.txt");
}

#[tokio::test]
async fn tag_values_are_percent_decoded_and_typed() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let resp = upload(
        &s,
        &p,
        "t",
        &[],
        &["color:caf%C3%A9%20au%20lait", "due:2026-11-22", "size:7"],
        "t.txt",
        "x",
    )
    .await;
    assert_eq!(resp.status(), 201);
    let rec = record(&s, &p, "t").await;
    assert_eq!(rec["tags"]["color"], json!(["café au lait"]));
    assert_eq!(rec["tags"]["due"], json!(["2026-11-22T00:00:00.000+00:00"]));
    assert_eq!(rec["tags"]["size"], json!(["7"]));
}

/// The tag header takes RFC 9110's list syntax: repeated lines, one comma-separated line (what a
/// proxy may merge them into), or both, store the same tags; a comma inside a value is
/// percent-encoded.
#[tokio::test]
async fn tag_headers_take_repeated_lines_and_comma_lists_alike() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let forms: [(&str, &[&str]); 3] = [
        ("repeated", &["color:red", "color:blue"]),
        ("merged", &["color:red, color:blue"]),
        ("both", &["color:red,color:blue", "color:red"]),
    ];
    for (id, tags) in forms {
        let resp = upload(&s, &p, id, &[], tags, "a.txt", "text").await;
        assert_eq!(resp.status(), 201, "{id}");
        assert_eq!(
            record(&s, &p, id).await["tags"]["color"],
            json!(["red", "blue"]),
            "{id}"
        );
    }
    let resp = upload(
        &s,
        &p,
        "encoded",
        &[],
        &["color:red%2C%20white"],
        "a.txt",
        "t",
    )
    .await;
    assert_eq!(resp.status(), 201);
    assert_eq!(
        record(&s, &p, "encoded").await["tags"]["color"],
        json!(["red, white"])
    );
}
