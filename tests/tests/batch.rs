//! End-to-end: the batch endpoints (metadata, touch, delete), the record listing and the
//! mass-removal guard, over HTTP against a real server: per-item answers in order, the limits,
//! the whole-batch sync rules, workspace isolation and read-only credentials.

use inlet_tests::{
    SourcePaths, TestServer, expect_problem, file_form,
    oauth::{Browser, REDIRECT_URI, auth_params, create_client},
};
use reqwest::Method;
use serde_json::{Value, json};

fn batch(p: &SourcePaths, op: &str) -> String {
    format!("{}/batch/{op}", p.object_type())
}

fn listing(p: &SourcePaths) -> String {
    format!("{}/objects", p.object_type())
}

async fn post(s: &TestServer, path: &str, body: Value) -> reqwest::Response {
    s.req(Method::POST, path).json(&body).send().await.unwrap()
}

async fn ok_json(resp: reqwest::Response) -> Value {
    let status = resp.status();
    let body = resp.text().await.unwrap();
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

async fn upload(s: &TestServer, p: &SourcePaths, id: &str, sync: Option<i64>, checksum: &str) {
    let mut query = vec![("externalChecksum", checksum.to_string())];
    if let Some(n) = sync {
        query.push(("syncNumber", n.to_string()));
    }
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object(id)))
        .query(&query)
        .multipart(file_form(&format!("{id}.txt"), format!("text of {id}")))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());
}

/// `(externalId, status)` of every item, in order.
fn statuses(answer: &Value) -> Vec<(String, u64)> {
    answer["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["externalId"].as_str().unwrap().to_string(),
                i["status"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, u64)]) -> Vec<(String, u64)> {
    list.iter().map(|(id, s)| (id.to_string(), *s)).collect()
}

async fn each_item_answers_as_its_single_call(s: TestServer) {
    let p = s.record_source().await;
    let n = s.sync(&p, "START_INITIAL", None).await;
    for id in ["a", "b", "c"] {
        upload(&s, &p, id, Some(n), &format!("sum-{id}")).await;
    }
    s.sync(&p, "COMPLETE", Some(n)).await;

    // Metadata: records in the shape getMetadata answers; problems for the rest.
    let meta = ok_json(
        post(
            &s,
            &batch(&p, "metadata"),
            json!({"externalIds": ["c", "missing", "a", "bad\u{1}id"]}),
        )
        .await,
    )
    .await;
    assert_eq!(
        statuses(&meta),
        pairs(&[
            ("c", 200),
            ("missing", 404),
            ("a", 200),
            ("bad\u{1}id", 400)
        ])
    );
    let single: Value = s
        .req(Method::GET, &format!("{}/metadata", p.object("c")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(meta["items"][0]["record"], single);
    assert!(meta["items"][0].get("problem").is_none());
    let problem = &meta["items"][1]["problem"];
    assert_eq!(problem["status"], 404);
    assert!(problem["detail"].as_str().unwrap().contains("missing"));
    assert!(meta["items"][1].get("record").is_none());
    assert!(
        meta["items"][3]["problem"]["detail"]
            .as_str()
            .unwrap()
            .contains("externalId")
    );

    // Touch: 204 / 412 / 404 / 400 per item; only the passing ones join the sync.
    let n = s.sync(&p, "START", None).await;
    let touched = ok_json(
        post(
            &s,
            &batch(&p, "touch"),
            json!({"syncNumber": n, "objects": [
                {"externalId": "a", "ifMatch": "\"sum-a\""},
                {"externalId": "b", "ifMatch": "stale"},
                {"externalId": "nope"},
                {"externalId": "c"},
            ]}),
        )
        .await,
    )
    .await;
    assert_eq!(
        statuses(&touched),
        pairs(&[("a", 204), ("b", 412), ("nope", 404), ("c", 204)])
    );
    assert_eq!(touched["items"][1]["problem"]["status"], 412);
    let run: Value = s
        .req(Method::GET, &format!("{}/{n}", p.syncs()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(run["touched"], 2, "{run}");

    // The sync rules are the whole batch's: a wrong number is 409 and changes nothing.
    let resp = post(
        &s,
        &batch(&p, "touch"),
        json!({"syncNumber": n + 1, "objects": [{"externalId": "b"}]}),
    )
    .await;
    let detail = expect_problem(resp, 409).await;
    assert!(detail.contains("not the open sync"), "{detail}");
    let closed = s.sync(&p, "COMPLETE", Some(n)).await;
    assert_eq!(closed, n);
    let b = s
        .req(Method::GET, &format!("{}/metadata", p.object("b")))
        .send()
        .await
        .unwrap();
    let b: Value = b.json().await.unwrap();
    assert!(
        b.get("externalChecksum").is_none(),
        "b failed its touch and the close removed it: {b}"
    );

    // Delete: tombstones, 404 for what is not live.
    let deleted = ok_json(
        post(
            &s,
            &batch(&p, "delete"),
            json!({"externalIds": ["a", "b", "a"]}),
        )
        .await,
    )
    .await;
    assert_eq!(
        statuses(&deleted),
        pairs(&[("a", 204), ("b", 404), ("a", 404)])
    );

    // The listing: live records only, or every record with tombstones marked.
    let live = ok_json(s.req(Method::GET, &listing(&p)).send().await.unwrap()).await;
    let ids: Vec<&str> = live["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["externalId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c"]);
    assert!(live.get("nextCursor").is_none());
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut query = vec![
            ("limit", "2".to_string()),
            ("includeRemoved", "true".into()),
        ];
        if let Some(c) = &cursor {
            query.push(("cursor", c.clone()));
        }
        let page = ok_json(
            s.req(Method::GET, &listing(&p))
                .query(&query)
                .send()
                .await
                .unwrap(),
        )
        .await;
        for o in page["objects"].as_array().unwrap() {
            seen.push((
                o["externalId"].as_str().unwrap().to_string(),
                o.get("removed").is_some(),
            ));
        }
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(
        seen,
        [
            ("a".to_string(), true),
            ("b".to_string(), true),
            ("c".to_string(), false)
        ]
    );
}

#[tokio::test]
async fn each_item_answers_as_its_single_call_memory() {
    each_item_answers_as_its_single_call(TestServer::start().await).await;
}

#[tokio::test]
async fn each_item_answers_as_its_single_call_sqlite() {
    each_item_answers_as_its_single_call(TestServer::start_sqlite().await).await;
}

#[tokio::test]
async fn limits_and_malformed_bodies_are_named() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let ids: Vec<String> = (0..1001).map(|i| format!("id-{i}")).collect();
    for (op, body) in [
        ("metadata", json!({ "externalIds": ids })),
        ("delete", json!({ "externalIds": ids })),
        (
            "touch",
            json!({"objects": ids.iter().map(|i| json!({"externalId": i})).collect::<Vec<_>>()}),
        ),
    ] {
        let detail = expect_problem(post(&s, &batch(&p, op), body).await, 400).await;
        assert!(detail.contains("at most 1000"), "{op}: {detail}");
    }
    let full: Vec<String> = (0..1000).map(|i| format!("id-{i}")).collect();
    let answer =
        ok_json(post(&s, &batch(&p, "metadata"), json!({ "externalIds": full })).await).await;
    assert_eq!(answer["items"].as_array().unwrap().len(), 1000);
    // 1,000 items of the longest externalId and checksum fit in a batch body.
    let longest: Vec<Value> = (0..1000)
        .map(|i| json!({"externalId": format!("{i:04}{}", "x".repeat(1020)), "ifMatch": "c".repeat(1024)}))
        .collect();
    let answer = ok_json(post(&s, &batch(&p, "touch"), json!({ "objects": longest })).await).await;
    assert!(
        answer["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["status"] == 404)
    );
    let empty = ok_json(post(&s, &batch(&p, "delete"), json!({ "externalIds": [] })).await).await;
    assert_eq!(empty["items"], json!([]));

    for body in [json!({"externalIds": [1, 2]}), json!({}), json!(["a"])] {
        expect_problem(post(&s, &batch(&p, "metadata"), body).await, 400).await;
    }
    for query in [
        [("limit", "0")],
        [("limit", "1001")],
        [("cursor", "not-a-cursor")],
        [("modifiedSince", "yesterday")],
    ] {
        let resp = s
            .req(Method::GET, &listing(&p))
            .query(&query)
            .send()
            .await
            .unwrap();
        expect_problem(resp, 400).await;
    }
}

#[tokio::test]
async fn other_workspaces_and_read_only_credentials() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    upload(&s, &p, "a", None, "x").await;

    let other = s.user("x@other.test", "other", false).await;
    for (method, path, body) in [
        (
            Method::POST,
            batch(&p, "metadata"),
            json!({"externalIds": ["a"]}),
        ),
        (
            Method::POST,
            batch(&p, "touch"),
            json!({"objects": [{"externalId": "a"}]}),
        ),
        (
            Method::POST,
            batch(&p, "delete"),
            json!({"externalIds": ["a"]}),
        ),
        (Method::GET, listing(&p), Value::Null),
    ] {
        let mut req = s
            .client
            .request(method, s.url(&path))
            .basic_auth(&other.email, Some(&other.api_token));
        if !body.is_null() {
            req = req.json(&body);
        }
        expect_problem(req.send().await.unwrap(), 404).await;
    }

    // A read-only Bearer token reads in batches and lists, and cannot touch or delete.
    let client = create_client(&s, &["default"]).await;
    let params = auth_params(&client, "read:*", "s");
    let code = Browser::new(&s).admin_code(&params).await;
    let tokens: Value = s
        .client
        .post(format!("{}/oauth/token", s.base))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT_URI),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let access = tokens["access_token"].as_str().unwrap();
    let bearer =
        |method: Method, path: String| s.client.request(method, s.url(&path)).bearer_auth(access);
    let read = bearer(Method::POST, batch(&p, "metadata"))
        .json(&json!({"externalIds": ["a"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(statuses(&ok_json(read).await), pairs(&[("a", 200)]));
    let listed = ok_json(bearer(Method::GET, listing(&p)).send().await.unwrap()).await;
    assert_eq!(listed["objects"][0]["externalId"], "a");
    for (op, body) in [
        ("touch", json!({"objects": [{"externalId": "a"}]})),
        ("delete", json!({"externalIds": ["a"]})),
    ] {
        let resp = bearer(Method::POST, batch(&p, op))
            .json(&body)
            .send()
            .await
            .unwrap();
        expect_problem(resp, 403).await;
    }
    let still: Value = ok_json(
        s.req(Method::GET, &format!("{}/metadata", p.object("a")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(still["externalChecksum"], "x");
}

#[tokio::test]
async fn a_mass_removal_needs_to_be_allowed() {
    let s = TestServer::start_with(inlet_server::Settings {
        complete_max_removal: Some(50.0),
        ..Default::default()
    })
    .await;
    let p = s.record_source().await;
    let n = s.sync(&p, "START_INITIAL", None).await;
    for id in ["a", "b", "c", "d"] {
        upload(&s, &p, id, Some(n), "x").await;
    }
    s.sync(&p, "COMPLETE", Some(n)).await;
    // A listing that came back nearly empty: only one file uploaded again.
    let n = s.sync(&p, "START", None).await;
    upload(&s, &p, "a", Some(n), "y").await;
    let close = |body: Value| {
        s.req(Method::PUT, &format!("{}/{n}", p.syncs()))
            .json(&body)
            .send()
    };
    let detail = expect_problem(close(json!({"operation": "COMPLETE"})).await.unwrap(), 409).await;
    assert!(
        detail.contains("remove 3 of")
            && detail.contains("4 live")
            && detail.contains("allowMassRemoval"),
        "{detail}"
    );
    let run: Value = ok_json(
        s.req(Method::GET, &format!("{}/{n}", p.syncs()))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        run["state"], "OPEN",
        "the refused close leaves the sync open: {run}"
    );
    let closed = ok_json(
        close(json!({"operation": "COMPLETE", "allowMassRemoval": true}))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(closed["removed"], 3, "{closed}");
    let live = ok_json(s.req(Method::GET, &listing(&p)).send().await.unwrap()).await;
    assert_eq!(live["objects"].as_array().unwrap().len(), 1);
}

/// An object type's own guard overrides the operator's: stricter, looser, and removed again.
#[tokio::test]
async fn an_object_type_overrides_the_guard() {
    // On SQLite: the override is stored with the source.
    let db = std::env::temp_dir().join(format!("inlet-guard-{}.db", uuid::Uuid::new_v4()));
    let s = TestServer::start_on(
        &format!("sqlite://{}?mode=rwc", db.display()),
        inlet_server::Settings {
            complete_max_removal: Some(90.0),
            ..Default::default()
        },
    )
    .await;
    let p = s.record_source().await;
    let patch = |body: Value| s.req(Method::PATCH, &p.object_type()).json(&body).send();
    let ot = ok_json(patch(json!({"completeMaxRemoval": 10})).await.unwrap()).await;
    assert_eq!(ot["completeMaxRemoval"], 10.0);
    let source = ok_json(
        s.req(Method::GET, &format!("/sources/{}", p.source_id))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(source["sourceObjectTypes"][0]["completeMaxRemoval"], 10.0);
    for bad in [
        json!({"completeMaxRemoval": 101}),
        json!({"completeMaxRemoval": -1}),
        json!({"completeMaxRemoval": "x"}),
    ] {
        expect_problem(patch(bad).await.unwrap(), 400).await;
    }
    let n = s.sync(&p, "START_INITIAL", None).await;
    for id in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"] {
        upload(&s, &p, id, Some(n), "x").await;
    }
    s.sync(&p, "COMPLETE", Some(n)).await;
    // Two of ten go: 20%, within the operator's 90% but beyond the object type's 10%.
    let n = s.sync(&p, "START", None).await;
    for id in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        upload(&s, &p, id, Some(n), "y").await;
    }
    let close = || {
        s.req(Method::PUT, &format!("{}/{n}", p.syncs()))
            .json(&json!({"operation": "COMPLETE"}))
            .send()
    };
    let detail = expect_problem(close().await.unwrap(), 409).await;
    assert!(detail.contains("remove 2 of"), "{detail}");
    // Removing the override brings back the operator's 90%.
    let ot = ok_json(patch(json!({"completeMaxRemoval": null})).await.unwrap()).await;
    assert!(ot.get("completeMaxRemoval").is_none(), "{ot}");
    let closed = ok_json(close().await.unwrap()).await;
    assert_eq!(closed["removed"], 2, "{closed}");
    // An absent field keeps the setting; an unknown object type is 404.
    ok_json(patch(json!({"completeMaxRemoval": 5})).await.unwrap()).await;
    let ot = ok_json(patch(json!({})).await.unwrap()).await;
    assert_eq!(ot["completeMaxRemoval"], 5.0);
    let resp = s
        .req(
            Method::PATCH,
            &format!(
                "/sources/{}/objecttypes/{}",
                p.source_id,
                uuid::Uuid::new_v4()
            ),
        )
        .json(&json!({"completeMaxRemoval": 5}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
}

/// A `batch/delete` whose database fails midway (a trigger refuses the 47th record's delete on
/// SQLite) answers the items done: the first 46 deleted (204), the rest 503 and still there; a
/// retry of those deletes them.
#[tokio::test]
async fn a_delete_batch_failing_midway_answers_the_items_done() {
    use sea_orm::ConnectionTrait;
    let path = std::env::temp_dir().join(format!("inlet-batch-{}.db", uuid::Uuid::new_v4()));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let s = TestServer::start_on(&url, inlet_server::Settings::default()).await;
    let p = s.record_source().await;
    let ids: Vec<String> = (0..60).map(|i| format!("r{i:02}")).collect();
    for id in &ids {
        upload(&s, &p, id, None, "c1").await;
    }
    let db = sea_orm::Database::connect(&url).await.unwrap();
    db.execute_unprepared(
        "CREATE TRIGGER refuse_r46 BEFORE UPDATE OF removed ON records \
         WHEN NEW.external_id = 'r46' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END",
    )
    .await
    .unwrap();
    let answer = ok_json(post(&s, &batch(&p, "delete"), json!({"externalIds": ids})).await).await;
    let got = statuses(&answer);
    assert_eq!(got.len(), 60);
    assert!(got[..46].iter().all(|(_, st)| *st == 204), "{got:?}");
    assert!(got[46..].iter().all(|(_, st)| *st == 503), "{got:?}");
    let problem = &answer["items"][46]["problem"];
    assert!(!problem.to_string().contains("disk I/O"), "{problem}");
    // What the answer says is what happened: the live records are the ones answered 503.
    let listed = ok_json(
        s.req(Method::GET, &listing(&p))
            .query(&[("limit", "1000")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    let live: Vec<&str> = listed["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["externalId"].as_str().unwrap())
        .collect();
    assert_eq!(
        live,
        ids[46..].iter().map(String::as_str).collect::<Vec<_>>()
    );
    db.execute_unprepared("DROP TRIGGER refuse_r46")
        .await
        .unwrap();
    let rest: Vec<&String> = ids[46..].iter().collect();
    let answer = ok_json(post(&s, &batch(&p, "delete"), json!({"externalIds": rest})).await).await;
    assert!(statuses(&answer).iter().all(|(_, st)| *st == 204));
}
