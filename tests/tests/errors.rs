//! End-to-end: the error rows of spec section 7, sync misuse, authentication, workspace isolation
//! and malformed requests — every one a 4xx problem+json, never a 5xx.

use inlet_server::{Settings, auth};
use inlet_tests::{TestServer, expect_problem, file_form, record_source};
use reqwest::{Method, multipart};
use serde_json::{Value, json};

async fn open(s: &TestServer, path: &str, op: &str) -> reqwest::Response {
    s.req(Method::POST, path)
        .json(&json!({"operation": op}))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn upload_to_a_source_without_track_status_is_404() {
    let s = TestServer::start().await;
    let mut body = record_source("untracked");
    body["config"]["trackStatus"] = json!(false);
    let source = s.create_source(body).await;
    let p = inlet_tests::SourcePaths::of(&source, 0);
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .multipart(file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
    // trackStatus omitted means false as well.
    let mut body = record_source("untracked2");
    body["config"]
        .as_object_mut()
        .unwrap()
        .remove("trackStatus");
    let p = inlet_tests::SourcePaths::of(&s.create_source(body).await, 0);
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .multipart(file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
}

#[tokio::test]
async fn unknown_tag_is_404_and_bad_tag_values_are_400() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let put = |tag: &'static str| {
        s.req(Method::PUT, &format!("{}/file", p.object("a")))
            .header("X-Service-Object-Tag", tag)
            .multipart(file_form("a.txt", "x"))
            .send()
    };
    let detail = expect_problem(put("nope:1").await.unwrap(), 404).await;
    assert!(detail.contains("nope"), "{detail}");
    expect_problem(put("size:big").await.unwrap(), 400).await;
    expect_problem(put("due:someday").await.unwrap(), 400).await;
    expect_problem(put("no-colon").await.unwrap(), 400).await;
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .header("X-Service-Object-Tag", "due:2026-01-01")
        .header("X-Service-Object-Tag", "due:2026-01-02")
        .multipart(file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    // Nothing was stored by the refused uploads.
    let resp = s
        .req(Method::GET, &format!("{}/metadata", p.object("a")))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
}

#[tokio::test]
async fn metadata_and_touch_of_unknown_external_ids_are_404() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    expect_problem(
        s.req(Method::GET, &format!("{}/metadata", p.object("never")))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    expect_problem(
        s.req(Method::PUT, &p.object("never")).send().await.unwrap(),
        404,
    )
    .await;
    expect_problem(
        s.req(Method::GET, &p.object("never")).send().await.unwrap(),
        404,
    )
    .await;
}

#[tokio::test]
async fn touch_with_a_different_if_match_is_412() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .query(&[("externalChecksum", "abc")])
        .multipart(file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let resp = s
        .req(Method::PUT, &p.object("a"))
        .header("If-Match", "\"abd\"")
        .send()
        .await
        .unwrap();
    expect_problem(resp, 412).await;
    let resp = s
        .req(Method::PUT, &p.object("a"))
        .header("If-Match", "\"abc\"")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
}

fn structured_source(data_type: Option<&str>) -> Value {
    let mut ot = json!({
        "name": "Tickets",
        "externalId": "tickets",
        "sourceDataType": "STRUCTURED",
        "fields": [
            {"name": "title", "contentSelector": "/title", "dataType": "TEXT"},
            {"name": "body", "contentSelector": "/body", "dataType": "TEXT"}
        ],
        "tagConfigs": [],
        "facets": [],
        "templates": {"titleTemplate": "${f_title}", "searchTemplate": "${f_title} ${f_body!}"}
    });
    if let Some(dt) = data_type {
        ot["dataType"] = json!(dt);
    }
    json!({
        "definition": {"type": "CUSTOM"},
        // One source per data type: a source's externalId is unique in its workspace.
        "externalId": format!("structured-{}", data_type.unwrap_or("plain")),
        "config": {"type": "CUSTOM", "name": "Tickets", "trackStatus": true,
                   "specification": {"application": {"objectTypes": [ot]}}}
    })
}

#[tokio::test]
async fn structured_attachment_errors_carry_the_spec_texts() {
    let s = TestServer::start().await;
    let json_part = || {
        multipart::Part::bytes(br#"{"title":"T"}"#.to_vec())
            .mime_str("application/json")
            .unwrap()
    };
    let doc_part = || multipart::Part::bytes(b"document text".to_vec()).file_name("d.txt");

    let p = inlet_tests::SourcePaths::of(&s.create_source(structured_source(None)).await, 0);
    let form = multipart::Form::new()
        .part("file", json_part())
        .part("x", doc_part());
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("t1")))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_problem(resp, 400).await,
        "Object DataType must be of type JSON"
    );

    let p =
        inlet_tests::SourcePaths::of(&s.create_source(structured_source(Some("JSON"))).await, 0);
    let body_field = p.source["sourceObjectTypes"][0]["fields"][1]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let url = format!("{}/file", p.object("t1"));
    let form = multipart::Form::new().part("file", json_part());
    let resp = s
        .req(Method::PUT, &url)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_problem(resp, 400).await,
        "Expected exactly 2 parts in the multipart request"
    );
    let form = multipart::Form::new()
        .part("file", json_part())
        .part(body_field.clone(), doc_part())
        .part("extra", doc_part());
    let resp = s
        .req(Method::PUT, &url)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_problem(resp, 400).await,
        "Expected exactly 2 parts in the multipart request"
    );
    let form = multipart::Form::new()
        .part("file", json_part())
        .part("body", doc_part());
    let resp = s
        .req(Method::PUT, &url)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(expect_problem(resp, 400).await, "ID is invalid");
    let form = multipart::Form::new()
        .part("file", json_part())
        .part(uuid::Uuid::new_v4().to_string(), doc_part());
    let resp = s
        .req(Method::PUT, &url)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(expect_problem(resp, 400).await, "ID is invalid");
}

#[tokio::test]
async fn sync_state_machine_misuse_is_409() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let syncs = p.syncs();
    expect_problem(open(&s, &syncs, "START").await, 409).await;
    assert_eq!(open(&s, &syncs, "START_INITIAL").await.status(), 201);
    expect_problem(open(&s, &syncs, "START").await, 409).await;
    expect_problem(open(&s, &syncs, "START_INITIAL").await, 409).await;
    // Upload and touch naming a sync that is not the open one.
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .query(&[("syncNumber", "2")])
        .multipart(file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 409).await;
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .query(&[("syncNumber", "1")])
        .multipart(file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    expect_problem(
        s.req(Method::PUT, &p.object("a"))
            .query(&[("syncNumber", "5")])
            .send()
            .await
            .unwrap(),
        409,
    )
    .await;
    // Closing: unknown sync 404, then twice 409.
    let close = |n: i64| {
        s.req(Method::PUT, &format!("{syncs}/{n}"))
            .json(&json!({"operation": "COMPLETE"}))
            .send()
    };
    expect_problem(close(9).await.unwrap(), 404).await;
    assert_eq!(close(1).await.unwrap().status(), 200);
    expect_problem(close(1).await.unwrap(), 409).await;
    expect_problem(open(&s, &syncs, "START_INITIAL").await, 409).await;
    // After the close, syncNumber 1 is no longer open.
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .query(&[("syncNumber", "1")])
        .multipart(file_form("a.txt", "y"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 409).await;
}

#[tokio::test]
async fn source_validation_errors_are_400() {
    let s = TestServer::start().await;
    let post = |body: Value| s.req(Method::POST, "/sources").json(&body).send();
    let mut b = record_source("v");
    b["config"]["specification"]["application"]["objectTypes"][0]["facets"][0]["tagConfig"]["externalId"] =
        json!("missing");
    assert!(
        expect_problem(post(b).await.unwrap(), 400)
            .await
            .contains("missing")
    );
    let mut b = record_source("v");
    b["config"]["specification"]["application"]["objectTypes"][0]["facets"][0]["targetType"] =
        json!("CREATED_DATE");
    assert!(
        expect_problem(post(b).await.unwrap(), 400)
            .await
            .contains("DATE_TIME")
    );
    let mut b = record_source("v");
    let ot = b["config"]["specification"]["application"]["objectTypes"][0].clone();
    b["config"]["specification"]["application"]["objectTypes"] = json!([ot.clone(), ot]);
    assert!(
        expect_problem(post(b).await.unwrap(), 400)
            .await
            .contains("duplicate")
    );
    let mut b = record_source("v");
    b["config"]["specification"]["application"]["objectTypes"][0]["fields"] =
        json!([{"name": "author", "contentSelector": "/a", "dataType": "TEXT"}]);
    assert!(
        expect_problem(post(b).await.unwrap(), 400)
            .await
            .contains("author")
    );
    let mut b = structured_source(Some("JSON"));
    b["config"]["specification"]["application"]["objectTypes"][0]["templates"]["titleTemplate"] =
        json!("${f_nope}");
    assert!(
        expect_problem(post(b).await.unwrap(), 400)
            .await
            .contains("nope")
    );
    // Wrong enum value, wrong types, missing fields, malformed JSON.
    let mut b = record_source("v");
    b["definition"]["type"] = json!("OTHER");
    expect_problem(post(b).await.unwrap(), 400).await;
    let mut b = record_source("v");
    b["config"]["trackStatus"] = json!("yes");
    expect_problem(post(b).await.unwrap(), 400).await;
    expect_problem(post(json!({"externalId": "x"})).await.unwrap(), 400).await;
    let resp = s
        .req(Method::POST, "/sources")
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    let resp = s
        .req(Method::POST, "/sources")
        .header("Content-Type", "text/plain")
        .body("x")
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    assert!((400..500).contains(&status));
    expect_problem(resp, status).await;
}

#[tokio::test]
async fn malformed_requests_get_4xx_problem_json() {
    let s = TestServer::start_with(Settings {
        max_upload_bytes: 4096,
        ..Settings::default()
    })
    .await;
    let p = s.record_source().await;
    let file = format!("{}/file", p.object("a"));
    // Bad UUIDs in the path.
    expect_problem(
        s.req(Method::GET, "/sources/not-a-uuid")
            .send()
            .await
            .unwrap(),
        400,
    )
    .await;
    let resp = s
        .req(
            Method::PUT,
            &format!("/sources/{}/objecttypes/xyz/objects/a/file", p.source_id),
        )
        .multipart(file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    // Unknown but well-formed ids.
    let other = uuid::Uuid::new_v4();
    expect_problem(
        s.req(Method::GET, &format!("/sources/{other}"))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    let resp = s
        .req(
            Method::PUT,
            &format!(
                "/sources/{}/objecttypes/{other}/objects/a/file",
                p.source_id
            ),
        )
        .multipart(file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
    // Non-numeric and negative syncNumber.
    for bad in ["abc", "-1", "1.5"] {
        let resp = s
            .req(Method::PUT, &file)
            .query(&[("syncNumber", bad)])
            .multipart(file_form("a.txt", "x"))
            .send()
            .await
            .unwrap();
        expect_problem(resp, 400).await;
    }
    // Missing multipart part, wrong part name, no boundary, not multipart at all.
    let form = multipart::Form::new().part(
        "other",
        multipart::Part::bytes(b"x".to_vec()).file_name("a.txt"),
    );
    let detail = expect_problem(
        s.req(Method::PUT, &file)
            .multipart(form)
            .send()
            .await
            .unwrap(),
        400,
    )
    .await;
    assert!(detail.contains("'file'"), "{detail}");
    let resp = s
        .req(Method::PUT, &file)
        .header("Content-Type", "multipart/form-data")
        .body("x")
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    let resp = s
        .req(Method::PUT, &file)
        .header("Content-Type", "multipart/form-data; boundary=zz")
        .body("garbage")
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    let resp = s
        .req(Method::PUT, &file)
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    assert!((400..500).contains(&status), "{status}");
    expect_problem(resp, status).await;
    // Oversized body: 413, and nothing stored.
    let resp = s
        .req(Method::PUT, &file)
        .multipart(file_form("big.txt", vec![b'a'; 5000]))
        .send()
        .await
        .unwrap();
    let detail = expect_problem(resp, 413).await;
    assert!(detail.contains("4096"), "{detail}");
    expect_problem(
        s.req(Method::GET, &format!("{}/metadata", p.object("a")))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    // Exactly at the limit is fine.
    let resp = s
        .req(Method::PUT, &file)
        .multipart(file_form("ok.txt", vec![b'a'; 4096]))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    // Bad sync bodies.
    let resp = s
        .req(Method::POST, &p.syncs())
        .json(&json!({"operation": "BEGIN"}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    let resp = s
        .req(Method::PUT, &format!("{}/abc", p.syncs()))
        .json(&json!({"operation": "COMPLETE"}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    // Unknown route.
    expect_problem(
        s.client
            .get(format!("{}/api/v1/nothing-here", s.base))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
}

#[tokio::test]
async fn missing_or_wrong_credentials_are_401_with_a_challenge() {
    let s = TestServer::start().await;
    let resp = s.client.get(s.url("/sources")).send().await.unwrap();
    assert!(
        resp.headers()
            .get("www-authenticate")
            .is_some_and(|v| v.to_str().unwrap().starts_with("Basic"))
    );
    expect_problem(resp, 401).await;
    let resp = s
        .client
        .get(s.url("/sources"))
        .basic_auth(inlet_tests::ADMIN_EMAIL, Some("wrong"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 401).await;
    // The right token with another user's e-mail is refused too.
    let resp = s
        .client
        .get(s.url("/sources"))
        .basic_auth("other@example.test", Some(inlet_tests::ADMIN_TOKEN))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 401).await;
    // The e-mail is matched case-insensitively.
    let resp = s
        .client
        .get(s.url("/sources"))
        .basic_auth(
            inlet_tests::ADMIN_EMAIL.to_uppercase(),
            Some(inlet_tests::ADMIN_TOKEN),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn another_workspace_sees_404_for_every_id() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .multipart(file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    assert_eq!(open(&s, &p.syncs(), "START_INITIAL").await.status(), 201);
    let other = auth::create_user(
        s.state.tokens.as_ref(),
        auth::NewUserOptions {
            email: "eve@other.test".into(),
            admin: true,
            workspace: "other".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let as_other = |m: Method, path: &str| {
        s.client
            .request(m, s.url(path))
            .basic_auth(&other.email, Some(&other.api_token))
    };
    expect_problem(
        as_other(Method::GET, &format!("/sources/{}", p.source_id))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    let list: Value = as_other(Method::GET, "/sources")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list, json!([]));
    expect_problem(
        as_other(Method::GET, &format!("{}/metadata", p.object("a")))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    expect_problem(
        as_other(Method::GET, &p.object("a")).send().await.unwrap(),
        404,
    )
    .await;
    expect_problem(
        as_other(Method::PUT, &p.object("a")).send().await.unwrap(),
        404,
    )
    .await;
    expect_problem(
        as_other(Method::DELETE, &p.object("a"))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    let resp = as_other(Method::PUT, &format!("{}/file", p.object("a")))
        .multipart(file_form("a.txt", "evil"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
    expect_problem(as_other(Method::GET, &p.syncs()).send().await.unwrap(), 404).await;
    expect_problem(
        as_other(Method::GET, &format!("{}/1", p.syncs()))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    let resp = as_other(Method::PUT, &format!("{}/1", p.syncs()))
        .json(&json!({"operation": "COMPLETE"}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
    let resp = as_other(Method::POST, &p.syncs())
        .json(&json!({"operation": "START"}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
    // The owner's data is untouched.
    let rec: Value = s
        .req(Method::GET, &p.object("a"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rec["content"], "x");
}
