//! End-to-end: STRUCTURED records — JSON push and attaching a file to a record (spec 4.4).

use inlet_tests::{SourcePaths, TestServer, expect_problem};
use reqwest::{Method, multipart};
use serde_json::{Value, json};

fn tickets_source(data_type: Option<&str>) -> Value {
    let mut ot = json!({
        "name": "Tickets",
        "externalId": "tickets",
        "sourceDataType": "STRUCTURED",
        "fields": [
            {"name": "id", "contentSelector": "/id", "dataType": "LONG"},
            {"name": "title", "contentSelector": "/title", "dataType": "TEXT"},
            {"name": "body", "contentSelector": "/detail/body", "dataType": "TEXT"}
        ],
        "tagConfigs": [{"type": "SIMPLE", "name": "Queue", "externalId": "queue", "dataType": "TEXT", "allowMultipleValues": false}],
        "facets": [],
        "templates": {
            "titleTemplate": "#${f_id} ${f_title}",
            "externalUrlTemplate": "https://tickets.test/${f_id}",
            "searchTemplate": "${f_title}\n${f_body!}"
        }
    });
    if let Some(dt) = data_type {
        ot["dataType"] = json!(dt);
    }
    json!({
        "definition": {"type": "CUSTOM"},
        "externalId": "helpdesk",
        "config": {"type": "CUSTOM", "name": "Helpdesk", "trackStatus": true,
                   "specification": {"application": {"objectTypes": [ot]}}}
    })
}

async fn push(
    s: &TestServer,
    p: &SourcePaths,
    id: &str,
    query: &[(&str, &str)],
    body: Value,
) -> reqwest::Response {
    s.req(Method::PUT, &format!("{}/content", p.object(id)))
        .query(query)
        .header("X-Service-Object-Tag", "queue:it")
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn record(s: &TestServer, p: &SourcePaths, id: &str) -> Value {
    s.req(Method::GET, &p.object(id))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn json_push_builds_the_record_from_templates() {
    let s = TestServer::start().await;
    let p = SourcePaths::of(&s.create_source(tickets_source(None)).await, 0);
    let resp = push(
        &s,
        &p,
        "t-1",
        &[("externalChecksum", "v1")],
        json!({"id": 7, "title": "Printer jammed", "detail": {"body": "Paper stuck in tray 2"}}),
    )
    .await;
    assert_eq!(resp.status(), 201);
    let meta: Value = resp.json().await.unwrap();
    assert_eq!(meta["version"], 1);
    let rec = record(&s, &p, "t-1").await;
    assert_eq!(rec["title"], "#7 Printer jammed");
    assert_eq!(rec["url"], "https://tickets.test/7");
    assert_eq!(rec["content"], "Printer jammed\nPaper stuck in tray 2");
    assert_eq!(rec["tags"], json!({"queue": ["it"]}));
    // Searchable by its searchTemplate text (once the index has caught up, within a second),
    // with the tag as a filter.
    s.settle().await;
    let found: Value = s
        .req(Method::GET, "/search")
        .query(&[("q", "paper tray"), ("tag", "queue:it")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(found["total"], 1);
    assert_eq!(found["results"][0]["title"], "#7 Printer jammed");

    // Same checksum: touched, not rebuilt.
    let resp = push(
        &s,
        &p,
        "t-1",
        &[("externalChecksum", "v1")],
        json!({"id": 7, "title": "Changed"}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<Value>().await.unwrap()["version"], 1);
    assert_eq!(record(&s, &p, "t-1").await["title"], "#7 Printer jammed");

    // New checksum: rebuilt, version 2; the optional body renders empty.
    let resp = push(
        &s,
        &p,
        "t-1",
        &[("externalChecksum", "v2")],
        json!({"id": 7, "title": "Changed"}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<Value>().await.unwrap()["version"], 2);
    assert_eq!(record(&s, &p, "t-1").await["content"], "Changed\n");
}

#[tokio::test]
async fn json_push_errors() {
    let s = TestServer::start().await;
    let p = SourcePaths::of(&s.create_source(tickets_source(None)).await, 0);
    let detail = expect_problem(push(&s, &p, "t", &[], json!({"id": 1})).await, 400).await;
    assert!(detail.contains("'title'"), "{detail}");
    expect_problem(push(&s, &p, "t", &[], json!([1, 2])).await, 400).await;
    let resp = s
        .req(Method::PUT, &format!("{}/content", p.object("t")))
        .header("Content-Type", "application/json")
        .body("{oops")
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    expect_problem(
        s.req(Method::GET, &format!("{}/metadata", p.object("t")))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    // A RECORD object type takes files, not JSON.
    let files = s.record_source().await;
    let resp = s
        .req(Method::PUT, &format!("{}/content", files.object("t")))
        .json(&json!({"title": "x"}))
        .send()
        .await
        .unwrap();
    assert!(expect_problem(resp, 400).await.contains("STRUCTURED"));
}

#[tokio::test]
async fn attached_file_text_lands_at_the_field_before_templates_run() {
    let s = TestServer::start().await;
    let p = SourcePaths::of(&s.create_source(tickets_source(Some("JSON"))).await, 0);
    let body_field = p.source["sourceObjectTypes"][0]["fields"][2]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let form = multipart::Form::new()
        .part(
            "file",
            multipart::Part::bytes(br#"{"id": 9, "title": "Contract"}"#.to_vec())
                .mime_str("application/json")
                .unwrap(),
        )
        .part(
            body_field,
            multipart::Part::bytes(b"The attached contract text.".to_vec())
                .file_name("contract.txt"),
        );
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("c-9")))
        .query(&[("externalChecksum", "a")])
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let rec = record(&s, &p, "c-9").await;
    assert_eq!(rec["title"], "#9 Contract");
    assert_eq!(rec["content"], "Contract\nThe attached contract text.");
    // The record JSON must be JSON.
    let field = p.source["sourceObjectTypes"][0]["fields"][2]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let form = multipart::Form::new()
        .part("file", multipart::Part::bytes(b"not json".to_vec()))
        .part(
            field,
            multipart::Part::bytes(b"x".to_vec()).file_name("x.txt"),
        );
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("c-10")))
        .multipart(form)
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
}

/// A template is bounded when it is defined (length, references) and while it renders: the
/// template bomb of the abuse review (one field repeated thousands of times over a large push)
/// is refused without building the record (docs/security.md).
#[tokio::test]
async fn template_bombs_are_refused_and_rendering_is_bounded() {
    let s = TestServer::start().await;
    let with_search = |template: String| {
        let mut source = tickets_source(None);
        source["config"]["specification"]["application"]["objectTypes"][0]["templates"]["searchTemplate"] =
            json!(template);
        source
    };
    let resp = s
        .req(Method::POST, "/sources")
        .json(&with_search("${f_body!}".repeat(150)))
        .send()
        .await
        .unwrap();
    let detail = expect_problem(resp, 400).await;
    assert!(
        detail.contains("searchTemplate references fields 150 times; at most 100"),
        "{detail}"
    );
    let resp = s
        .req(Method::POST, "/sources")
        .json(&with_search("${f_body!}".repeat(3000)))
        .send()
        .await
        .unwrap();
    let detail = expect_problem(resp, 400).await;
    assert!(
        detail.contains("searchTemplate is longer than 10000 characters"),
        "{detail}"
    );

    // 100 references to a 100 KB field would render 10 MB: refused, nothing stored.
    let p = SourcePaths::of(
        &s.create_source(with_search("${f_body!} ".repeat(100)))
            .await,
        0,
    );
    let big = "word ".repeat(20_000);
    let body = json!({"id": 1, "title": "Bomb", "detail": {"body": big}});
    let detail = expect_problem(push(&s, &p, "bomb", &[], body).await, 400).await;
    assert!(
        detail.starts_with("searchTemplate renders more than 4000000 bytes"),
        "{detail}"
    );
    let resp = s
        .req(Method::GET, &format!("{}/metadata", p.object("bomb")))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
    // The title has its own, smaller bound.
    let body = json!({"id": 2, "title": "t".repeat(5000), "detail": {"body": "small"}});
    let detail = expect_problem(push(&s, &p, "long-title", &[], body).await, 400).await;
    assert!(
        detail.starts_with("titleTemplate renders more than 4096 bytes"),
        "{detail}"
    );
    // Within the bounds the push is stored.
    let body = json!({"id": 3, "title": "Fine", "detail": {"body": "small"}});
    assert_eq!(push(&s, &p, "fine", &[], body).await.status(), 201);
}
