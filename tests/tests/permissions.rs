//! Per-record permissions over HTTP (DESIGN 7a), on SQLite and PostgreSQL: two members in
//! disjoint groups and a third in both read only what their groups allow, through search (hits,
//! total, facets), record and metadata reads, the metadata batch, the listing, folder counts and
//! the change feed; a record they may not read answers word for word as one that does not
//! exist; removing a user from a nested group takes effect within the visibility window; only
//! an administrator's API token sets lists and groups. A member's webhooks hear only of what
//! the member may read, and sync runs (whose counters and COMPLETE close reach every record)
//! are the connector's once permissions are in use in an object type.

use std::time::{Duration, Instant};

use inlet_core::token::DEFAULT_WORKSPACE;
use inlet_tests::{TestServer, file_form, postgres};
use reqwest::Method;
use serde_json::{Value, json};

fn drive_source() -> Value {
    json!({
        "definition": {"type": "CUSTOM"},
        "externalId": "drive",
        "config": {"type": "CUSTOM", "name": "Drive", "trackStatus": true,
            "specification": {"application": {"objectTypes": [{
                "name": "Files", "externalId": "files", "sourceDataType": "RECORD", "fields": [],
                "tagConfigs": [
                    {"type": "HIERARCHICAL", "name": "Folder", "externalId": "folder", "dataType": "TEXT", "allowMultipleValues": false},
                    {"type": "SIMPLE", "name": "Color", "externalId": "color", "dataType": "TEXT", "allowMultipleValues": true}
                ],
                "facets": [
                    {"type": "TAG", "name": "Folder", "tagConfig": {"externalId": "folder"}, "allowMultipleValues": true},
                    {"type": "TAG", "name": "Color", "tagConfig": {"externalId": "color"}, "allowMultipleValues": true}
                ]
            }]}}
        }
    })
}

/// A member of the server's workspace: e-mail and API token.
struct Member {
    email: String,
    token: String,
}

impl Member {
    async fn new(server: &TestServer, email: &str) -> Self {
        let c = server.user(email, DEFAULT_WORKSPACE, false).await;
        Self {
            email: c.email,
            token: c.api_token,
        }
    }

    fn req(&self, server: &TestServer, method: Method, path: &str) -> reqwest::RequestBuilder {
        server
            .client
            .request(method, server.url(path))
            .basic_auth(&self.email, Some(&self.token))
    }

    async fn get(&self, server: &TestServer, path: &str) -> (u16, Value) {
        let resp = self.req(server, Method::GET, path).send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }
}

/// Record externalId → (who may read it, folder, color).
const RECORDS: &[(&str, Option<&[&str]>, &str, &str)] = &[
    ("salary", Some(&["group:hr"]), "people", "red"),
    ("roadmap", Some(&["group:eng"]), "plans", "blue"),
    ("handbook", Some(&["everyone"]), "people", "green"),
    ("sealed", Some(&[]), "plans", "red"),
    ("legacy", None, "plans", "green"),
    (
        "ann-notes",
        Some(&["user:ANN@example.test"]),
        "people",
        "blue",
    ),
];

async fn scenario(server: &TestServer) {
    let source = server.create_source(drive_source()).await;
    let s = source["id"].as_str().unwrap().to_string();
    let ot = source["sourceObjectTypes"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let folder_tag = source["sourceObjectTypes"][0]["tagConfigs"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let folder_facet = source["sourceObjectTypes"][0]["facets"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let objects = format!("/sources/{s}/objecttypes/{ot}/objects");
    for folder in ["people", "plans"] {
        let resp = server
            .req(
                Method::PUT,
                &format!("/sources/{s}/tagconfigs/{folder_tag}/hierarchies/{folder}"),
            )
            .json(&json!({"name": folder}))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success());
    }
    // Groups: hr = {ann, leads}, leads = {cy}, eng = {bob, cy}.
    for (group, members) in [
        ("hr", json!(["user:ann@example.test", "group:leads"])),
        ("leads", json!(["user:cy@example.test"])),
        (
            "eng",
            json!(["user:bob@example.test", "user:cy@example.test"]),
        ),
    ] {
        let resp = server
            .req(Method::PUT, &format!("/sources/{s}/groups/{group}"))
            .json(&json!({"members": members}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    }
    for (id, access, folder, color) in RECORDS {
        let mut req = server
            .req(Method::PUT, &format!("{objects}/{id}/file"))
            .header("X-Service-Object-Tag", format!("folder:{folder}"))
            .header("X-Service-Object-Tag", format!("color:{color}"));
        if let Some(list) = access {
            // Repeated lines and a comma-separated line add up.
            req = req.header("X-Service-Object-Access", list.join(","));
        }
        let resp = req
            .multipart(file_form(
                &format!("{id}.txt"),
                format!("quarterly notes {id}"),
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "{id}: {:?}", resp.text().await);
    }
    let ann = Member::new(server, "ann@example.test").await;
    let bob = Member::new(server, "bob@example.test").await;
    let cy = Member::new(server, "cy@example.test").await;
    server.settle().await;

    let expect: [(&Member, &[&str]); 3] = [
        (&ann, &["ann-notes", "handbook", "legacy", "salary"]),
        (&bob, &["handbook", "legacy", "roadmap"]),
        (&cy, &["handbook", "legacy", "roadmap", "salary"]),
    ];
    let missing = ann.get(server, &format!("{objects}/no-such-record")).await;
    assert_eq!(missing.0, 404);
    let missing_meta = ann
        .get(server, &format!("{objects}/no-such-record/metadata"))
        .await;
    for (who, visible) in expect {
        // Search: hits, total, facets.
        let (status, answer) = who.get(server, "/search?q=quarterly&limit=100").await;
        assert_eq!(status, 200);
        assert_eq!(inlet_tests::result_ids(&answer), visible, "{}", who.email);
        assert_eq!(answer["total"], visible.len(), "{}", who.email);
        let color_counts: u64 = answer["facets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["tagExternalId"] == "color")
            .flat_map(|f| f["values"].as_array().unwrap().clone())
            .map(|v| v["count"].as_u64().unwrap())
            .sum();
        assert_eq!(color_counts, visible.len() as u64, "{}: facets", who.email);
        let browse = who.get(server, "/search?limit=100").await.1;
        assert_eq!(
            inlet_tests::result_ids(&browse),
            visible,
            "{}: browsing",
            who.email
        );
        for (id, ..) in RECORDS {
            let (status, body) = who.get(server, &format!("{objects}/{id}")).await;
            let (meta_status, meta) = who.get(server, &format!("{objects}/{id}/metadata")).await;
            if visible.contains(id) {
                assert_eq!(
                    (status, meta_status),
                    (200, 200),
                    "{} reads {id}",
                    who.email
                );
            } else {
                // Exactly as a record that does not exist.
                assert_eq!(status, 404, "{} reads {id}", who.email);
                let as_missing = |v: &Value| {
                    v.to_string()
                        .replace(id, "ID")
                        .replace("no-such-record", "ID")
                };
                assert_eq!(as_missing(&body), as_missing(&missing.1));
                assert_eq!(as_missing(&meta), as_missing(&missing_meta.1));
            }
        }
        // The metadata batch.
        let ids: Vec<&str> = RECORDS.iter().map(|r| r.0).collect();
        let resp = who
            .req(
                server,
                Method::POST,
                &format!("/sources/{s}/objecttypes/{ot}/batch/metadata"),
            )
            .json(&json!({"externalIds": ids}))
            .send()
            .await
            .unwrap();
        let items: Value = resp.json().await.unwrap();
        let found: Vec<&str> = items["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["status"] == 200)
            .map(|i| i["externalId"].as_str().unwrap())
            .collect();
        let mut found = found;
        found.sort();
        assert_eq!(found, visible, "{}: batch", who.email);
        // The listing, a record a page: cursors name only records the reader saw.
        let mut listed = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut path = format!("{objects}?limit=1");
            if let Some(c) = &cursor {
                path.push_str(&format!("&cursor={c}"));
            }
            let (status, page) = who.get(server, &path).await;
            assert_eq!(status, 200);
            for o in page["objects"].as_array().unwrap() {
                listed.push(o["externalId"].as_str().unwrap().to_string());
            }
            match page["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        assert_eq!(listed, visible, "{}: listing", who.email);
        // Folder counts.
        let (_, roots) = who
            .get(
                server,
                &format!("/sources/{s}/facets/{folder_facet}/hierarchies"),
            )
            .await;
        let counted: u64 = roots
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["count"].as_u64().unwrap())
            .sum();
        assert_eq!(
            counted,
            visible.len() as u64,
            "{}: folder counts",
            who.email
        );
        // The change feed's snapshot.
        let (_, feed) = who.get(server, "/changes?limit=100").await;
        let mut fed: Vec<&str> = feed["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["externalId"].as_str().unwrap())
            .collect();
        fed.sort();
        assert_eq!(fed, visible, "{}: change feed", who.email);
        // Members set no lists or groups.
        let resp = who
            .req(server, Method::PUT, &format!("{objects}/salary/access"))
            .json(&json!({"access": ["everyone"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 403);
    }

    // A member changes only what they may read: a delete or touch of a hidden record answers
    // as one of a record that does not exist, and changes nothing.
    let same = |a: &Value, b: &Value, id: &str| {
        assert_eq!(
            a.to_string().replace(id, "ID"),
            b.to_string().replace("no-such-record", "ID")
        )
    };
    for (method, suffix) in [(Method::PUT, ""), (Method::DELETE, "")] {
        let hidden = ann
            .req(
                server,
                method.clone(),
                &format!("{objects}/roadmap{suffix}"),
            )
            .send()
            .await
            .unwrap();
        let missing = ann
            .req(server, method, &format!("{objects}/no-such-record{suffix}"))
            .send()
            .await
            .unwrap();
        assert_eq!(hidden.status(), 404);
        assert_eq!(missing.status(), 404);
        same(
            &hidden.json().await.unwrap(),
            &missing.json().await.unwrap(),
            "roadmap",
        );
    }
    // Uploads are the connector's once lists are in use: a hidden record and a new externalId
    // answer alike, and nothing is written.
    let mut refused = Vec::new();
    for id in ["roadmap", "brand-new"] {
        let upload = ann
            .req(server, Method::PUT, &format!("{objects}/{id}/file"))
            .multipart(file_form("roadmap.txt", "overwritten"))
            .send()
            .await
            .unwrap();
        refused.push(inlet_tests::expect_problem(upload, 403).await);
    }
    assert_eq!(refused[0], refused[1]);
    assert!(refused[0].contains("access lists"), "{refused:?}");
    let resp = server
        .req(Method::GET, &format!("{objects}/brand-new"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let batch = ann
        .req(
            server,
            Method::POST,
            &format!("/sources/{s}/objecttypes/{ot}/batch/delete"),
        )
        .json(&json!({"externalIds": ["roadmap", "no-such-record"]}))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let statuses: Vec<u64> = batch["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [404, 404]);
    same(
        &batch["items"][0]["problem"],
        &batch["items"][1]["problem"],
        "roadmap",
    );
    let (status, roadmap) = bob.get(server, &format!("{objects}/roadmap")).await;
    assert_eq!(status, 200);
    assert_eq!(roadmap["version"], 1, "the hidden record is unchanged");

    // The administrator's API token (the connector) sees everything.
    let all = server
        .req(Method::GET, "/search?q=quarterly&limit=100")
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(all["total"], RECORDS.len());

    // Cy leaves leads (nested in hr): salary is gone from their search within the window.
    let resp = server
        .req(Method::PUT, &format!("/sources/{s}/groups/leads"))
        .json(&json!({"members": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let deadline = Instant::now() + Duration::from_secs(5);
    let changed_at = Instant::now();
    loop {
        let ids = inlet_tests::result_ids(&cy.get(server, "/search?q=quarterly").await.1);
        if !ids.contains(&"salary".to_string()) {
            assert!(changed_at.elapsed() < Duration::from_secs(2));
            break;
        }
        assert!(Instant::now() < deadline, "cy still sees salary");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(cy.get(server, &format!("{objects}/salary")).await.0, 404);

    // A list changed alone: bob now reads salary, and its version did not move.
    let resp = server
        .req(Method::PUT, &format!("{objects}/salary/access"))
        .json(&json!({"access": ["group:hr", "user:bob@example.test"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let (status, meta) = bob.get(server, &format!("{objects}/salary/metadata")).await;
    assert_eq!(status, 200);
    assert_eq!(meta["version"], 1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !inlet_tests::result_ids(&bob.get(server, "/search?q=quarterly").await.1)
        .contains(&"salary".to_string())
    {
        assert!(Instant::now() < deadline, "bob does not find salary");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // RESTRICTED by default: a record pushed without a list is the administrators' alone.
    let resp = server
        .req(Method::PATCH, &format!("/sources/{s}/objecttypes/{ot}"))
        .json(&json!({"defaultAccess": "RESTRICTED"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let deadline = Instant::now() + Duration::from_secs(5);
    while inlet_tests::result_ids(&ann.get(server, "/search?q=quarterly").await.1)
        .contains(&"legacy".to_string())
    {
        assert!(Instant::now() < deadline, "ann still sees legacy");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(ann.get(server, &format!("{objects}/legacy")).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn members_read_only_what_their_groups_allow_on_sqlite() {
    scenario(&TestServer::start_sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn members_read_only_what_their_groups_allow_on_postgres() {
    let Some(schema) = postgres::Schema::for_test().await else {
        return;
    };
    let server = TestServer::start_on(&schema.url, Default::default()).await;
    scenario(&server).await;
    schema.drop().await;
}

/// Bytes no extractor reads (an extraction failure, so `record.extraction_failed`).
fn unreadable() -> Vec<u8> {
    (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// The events of a webhook's queued deliveries, as its owner lists them.
async fn heard(server: &TestServer, who: &Member, hook: &str) -> Vec<String> {
    let (status, deliveries) = who
        .get(server, &format!("/webhooks/{hook}/deliveries"))
        .await;
    assert_eq!(status, 200, "{deliveries}");
    let mut events: Vec<String> = deliveries
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["event"].as_str().unwrap().to_string())
        .collect();
    events.sort();
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn members_hooks_and_syncs_follow_their_reads() {
    let server = TestServer::start_sqlite().await;
    let source = server.create_source(drive_source()).await;
    let s = source["id"].as_str().unwrap().to_string();
    let ot = source["sourceObjectTypes"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let objects = format!("/sources/{s}/objecttypes/{ot}/objects");
    let syncs = format!("/sources/{s}/objecttypes/{ot}/syncs");
    let bob = Member::new(&server, "bob@example.test").await;

    // A member's webhook: their own, listed to them alone, hearing what bob may read.
    let resp = bob
        .req(&server, Method::POST, "/webhooks")
        .json(&json!({"url": "https://93.184.216.34/bob", "events": [
            "record.extraction_failed", "sync.completed", "source.created"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let hook = resp.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let listed = server
        .req(Method::GET, "/webhooks")
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert!(listed[0]["ownerId"].is_string(), "{listed}");

    // Without permissions in use, bob drives a sync as the spec has it, and hears of it.
    let (status, opened) = {
        let resp = bob
            .req(&server, Method::POST, &syncs)
            .json(&json!({"operation": "START_INITIAL"}))
            .send()
            .await
            .unwrap();
        (resp.status().as_u16(), resp.json::<Value>().await.unwrap())
    };
    assert_eq!(status, 201, "{opened}");
    let n = opened["syncNumber"].as_i64().unwrap();
    let resp = bob
        .req(&server, Method::PUT, &format!("{syncs}/{n}"))
        .json(&json!({"operation": "COMPLETE_INCREMENTAL"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(heard(&server, &bob, &hook).await, ["sync.completed"]);

    // Two unreadable files: one bob may read, one for hr alone. Bob hears of his only.
    for (id, access) in [("bobs", "user:bob@example.test"), ("hrs", "group:hr")] {
        let resp = server
            .req(Method::PUT, &format!("{objects}/{id}/file"))
            .header("X-Service-Object-Access", access)
            .multipart(file_form(&format!("{id}.bin"), unreadable()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
    }
    assert_eq!(
        heard(&server, &bob, &hook).await,
        ["record.extraction_failed", "sync.completed"]
    );
    let admins = server
        .req(Method::POST, "/webhooks")
        .json(&json!({"url": "https://93.184.216.34/all", "events": ["record.extraction_failed"]}))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let admins = admins["id"].as_str().unwrap();

    // With lists in use, a member's sync runs are refused, whatever they may read; a sync
    // the connector closes is not told to bob's webhook.
    let mut refused = Vec::new();
    for (method, path, body) in [
        (Method::POST, syncs.clone(), json!({"operation": "START"})),
        (Method::GET, syncs.clone(), Value::Null),
        (Method::GET, format!("{syncs}/{n}"), Value::Null),
        (
            Method::PUT,
            format!("{syncs}/{n}"),
            json!({"operation": "COMPLETE"}),
        ),
    ] {
        let mut req = bob.req(&server, method, &path);
        if !body.is_null() {
            req = req.json(&body);
        }
        refused.push(inlet_tests::expect_problem(req.send().await.unwrap(), 403).await);
    }
    assert!(
        refused.iter().all(|d| d.contains("access lists")),
        "{refused:?}"
    );
    for (method, path, op) in [
        (Method::POST, syncs.clone(), "START"),
        (
            Method::PUT,
            format!("{syncs}/{}", n + 1),
            "COMPLETE_INCREMENTAL",
        ),
    ] {
        let resp = server
            .req(method, &path)
            .json(&json!({ "operation": op }))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success(), "{op}: {}", resp.status());
    }
    assert_eq!(
        heard(&server, &bob, &hook).await,
        ["record.extraction_failed", "sync.completed"],
        "bob heard of a sync over records he may not read"
    );

    // Bob sees only his webhooks; another's answers as one that does not exist.
    let (_, mine) = bob.get(&server, "/webhooks").await;
    assert_eq!(mine.as_array().unwrap().len(), 1);
    for (method, path) in [
        (Method::GET, format!("/webhooks/{admins}/deliveries")),
        (Method::DELETE, format!("/webhooks/{admins}")),
    ] {
        let resp = bob.req(&server, method, &path).send().await.unwrap();
        inlet_tests::expect_problem(resp, 404).await;
    }
    let resp = bob
        .req(&server, Method::DELETE, &format!("/webhooks/{hook}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
}
