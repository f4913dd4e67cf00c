//! End-to-end on memory, SQLite and PostgreSQL: a source can be corrected after it is created
//! (`PATCH /sources/{sourceId}`, added object types, tag configs and facets), deleted with
//! everything it holds (409 while a sync is open), and its externalId is unique per workspace.
//! Typos in field names are refused with the field meant.

use std::time::{Duration, Instant};

use inlet_tests::{SourcePaths, TestServer, expect_problem, file_form, record_source};
use reqwest::Method;
use serde_json::{Value, json};

async fn upload(s: &TestServer, p: &SourcePaths, id: &str, tag: Option<&str>) -> reqwest::Response {
    let mut req = s
        .req(Method::PUT, &format!("{}/file", p.object(id)))
        .multipart(file_form(
            &format!("{id}.txt"),
            format!("marmalade notes of {id}"),
        ));
    if let Some(t) = tag {
        req = req.header("X-Service-Object-Tag", t);
    }
    req.send().await.unwrap()
}

async fn send(
    s: &TestServer,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> reqwest::Response {
    let mut req = s.req(method, path);
    if let Some(b) = body {
        req = req.json(&b);
    }
    req.send().await.unwrap()
}

async fn json_of(resp: reqwest::Response, status: u16) -> Value {
    let got = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    assert_eq!(got, status, "{text}");
    serde_json::from_str(&text).unwrap()
}

/// The externalIds search finds for `q`, polled until `want` holds or 5 s pass (search may trail
/// a write by up to 1 s, DESIGN 7).
async fn search_until(s: &TestServer, q: &str, want: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let page = json_of(
            s.req(Method::GET, "/search")
                .query(&[("q", q)])
                .send()
                .await
                .unwrap(),
            200,
        )
        .await;
        let ids = inlet_tests::result_ids(&page);
        if want(&ids) || Instant::now() > deadline {
            return ids;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn sources_are_corrected(s: TestServer) {
    // A typo in a field name is refused with the field meant, and nothing is created.
    let mut typo = record_source("drive");
    let config = typo["config"].as_object_mut().unwrap();
    config.remove("trackStatus");
    config.insert("trackstatus".into(), json!(true));
    let detail = expect_problem(send(&s, Method::POST, "/sources", Some(typo)).await, 400).await;
    assert!(
        detail.contains(r#"unknown field "trackstatus""#)
            && detail.contains(r#"did you mean "trackStatus"?"#),
        "{detail}"
    );

    // Created without trackStatus: uploads are refused until a PATCH turns it on.
    let mut body = record_source("drive");
    body["config"]["trackStatus"] = json!(false);
    let source = s.create_source(body.clone()).await;
    let p = SourcePaths::of(&source, 0);
    let id = p.source_id.clone();
    expect_problem(upload(&s, &p, "a", None).await, 404).await;
    let detail = expect_problem(send(&s, Method::POST, "/sources", Some(body)).await, 409).await;
    assert!(
        detail.contains(&id),
        "the conflict names the existing source: {detail}"
    );

    let path = format!("/sources/{id}");
    let patched = json_of(
        send(
            &s,
            Method::PATCH,
            &path,
            Some(json!({"trackStatus": true, "name": "Drive"})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(patched["config"]["trackStatus"], true);
    assert_eq!(patched["config"]["name"], "Drive");
    assert_eq!(patched["externalId"], "drive");
    let detail = expect_problem(
        send(
            &s,
            Method::PATCH,
            &path,
            Some(json!({"trackstatus": false})),
        )
        .await,
        400,
    )
    .await;
    assert!(
        detail.contains(r#"did you mean "trackStatus"?"#),
        "{detail}"
    );
    let detail = expect_problem(
        send(&s, Method::PATCH, &path, Some(json!({"name": "  "}))).await,
        400,
    )
    .await;
    assert!(detail.contains("name"), "{detail}");
    let stored = json_of(send(&s, Method::GET, &path, None).await, 200).await;
    assert_eq!(stored["config"], patched["config"]);
    assert_eq!(upload(&s, &p, "a", None).await.status(), 201);

    // An object type added later takes uploads at once; its externalId must be new.
    let notes = json!({"name": "Notes", "externalId": "notes", "sourceDataType": "RECORD"});
    let added = json_of(
        send(
            &s,
            Method::POST,
            &format!("{path}/objecttypes"),
            Some(notes.clone()),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(added["externalId"], "notes");
    expect_problem(
        send(
            &s,
            Method::POST,
            &format!("{path}/objecttypes"),
            Some(notes),
        )
        .await,
        409,
    )
    .await;
    let np = SourcePaths {
        object_type_id: added["id"].as_str().unwrap().into(),
        ..p.clone()
    };
    assert_eq!(upload(&s, &np, "n", None).await.status(), 201);

    // A tag config added later is accepted on uploads; a facet can be put over it.
    let tags = format!("{}/tagconfigs", np.object_type());
    let tag = json!({"type": "SIMPLE", "name": "Team", "externalId": "team", "dataType": "TEXT"});
    expect_problem(upload(&s, &np, "t", Some("team:red")).await, 404).await;
    let added = json_of(send(&s, Method::POST, &tags, Some(tag.clone())).await, 201).await;
    assert_eq!(added["externalId"], "team");
    assert!(added["id"].is_string());
    expect_problem(send(&s, Method::POST, &tags, Some(tag)).await, 409).await;
    assert_eq!(upload(&s, &np, "t", Some("team:red")).await.status(), 201);
    let facets = format!("{}/facets", np.object_type());
    let facet =
        |tag: &str| json!({"type": "TAG", "name": "Team", "tagConfig": {"externalId": tag}});
    let detail = expect_problem(
        send(&s, Method::POST, &facets, Some(facet("nope"))).await,
        400,
    )
    .await;
    assert!(detail.contains("nope"), "{detail}");
    let added = json_of(
        send(&s, Method::POST, &facets, Some(facet("team"))).await,
        201,
    )
    .await;
    assert_eq!(added["tagConfig"]["externalId"], "team");
    let stored = json_of(send(&s, Method::GET, &path, None).await, 200).await;
    let ot = &stored["sourceObjectTypes"][1];
    assert_eq!(ot["externalId"], "notes");
    assert_eq!(ot["tagConfigs"][0]["externalId"], "team");
    assert_eq!(ot["facets"][0]["tagConfig"]["externalId"], "team");

    // Delete: refused while a sync is open, then everything goes.
    assert_eq!(
        search_until(&s, "marmalade", |ids| ids.len() == 3).await,
        ["a", "n", "t"]
    );
    let sync = json_of(
        send(
            &s,
            Method::POST,
            &np.syncs(),
            Some(json!({"operation": "START_INITIAL"})),
        )
        .await,
        201,
    )
    .await;
    let detail = expect_problem(send(&s, Method::DELETE, &path, None).await, 409).await;
    assert!(detail.contains("open"), "{detail}");
    let close = format!("{}/{}", np.syncs(), sync["syncNumber"]);
    let resp = send(&s, Method::PUT, &close, Some(json!({"operation": "FAIL"}))).await;
    assert!(resp.status().is_success(), "{:?}", resp.text().await);
    let resp = send(&s, Method::DELETE, &path, None).await;
    assert_eq!(resp.status(), 204);
    expect_problem(send(&s, Method::GET, &path, None).await, 404).await;
    expect_problem(send(&s, Method::GET, &p.object("a"), None).await, 404).await;
    expect_problem(send(&s, Method::DELETE, &path, None).await, 404).await;
    assert!(
        search_until(&s, "marmalade", |ids| ids.is_empty())
            .await
            .is_empty()
    );
    let listed = json_of(send(&s, Method::GET, "/sources", None).await, 200).await;
    assert_eq!(listed, json!([]));
    // The externalId is free again.
    s.create_source(record_source("drive")).await;
}

#[tokio::test]
async fn sources_are_corrected_in_memory() {
    sources_are_corrected(TestServer::start().await).await;
}

#[tokio::test]
async fn sources_are_corrected_on_sqlite() {
    sources_are_corrected(TestServer::start_sqlite().await).await;
}

#[tokio::test]
async fn sources_are_corrected_on_postgres() {
    let Some(schema) = inlet_tests::postgres::Schema::for_test().await else {
        return;
    };
    sources_are_corrected(TestServer::start_on(&schema.url, Default::default()).await).await;
    schema.drop().await;
}
