//! End-to-end: webhook registration over HTTP (ADMINs only, URL and event rules, loopback and
//! private targets refused, the per-workspace cap, isolation) and the delivery-time address
//! check: a webhook whose host is private when a delivery is due is not contacted. Signed
//! deliveries, retries and kill -9 are proven from Python (tests/python/test_webhooks.py).

use std::time::{Duration, Instant};

use inlet_core::webhook::{Event, MAX_WEBHOOKS, Webhook};
use inlet_tests::{TestServer, expect_problem, record_source};
use reqwest::Method;
use serde_json::{Value, json};

async fn register(s: &TestServer, body: Value) -> reqwest::Response {
    s.client
        .post(s.url("/webhooks"))
        .basic_auth(inlet_tests::ADMIN_EMAIL, Some(inlet_tests::ADMIN_TOKEN))
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn registration_rules() {
    let s = TestServer::start().await;
    // A public address literal: no DNS needed, never contacted in this test.
    let url = "https://93.184.216.34/inlet-hooks";
    let resp = register(
        &s,
        json!({"url": url, "events": ["sync.completed", "sync.failed"]}),
    )
    .await;
    assert_eq!(resp.status(), 201);
    let hook: Value = resp.json().await.unwrap();
    assert_eq!(hook["url"], url);
    assert_eq!(hook["events"], json!(["sync.completed", "sync.failed"]));
    assert_eq!(hook["secret"].as_str().unwrap().len(), "whsec_".len() + 64);

    for (body, says) in [
        (
            json!({"url": "http://127.0.0.1:9/x", "events": ["sync.failed"]}),
            "loopback or private",
        ),
        (
            json!({"url": "http://localhost:9/x", "events": ["sync.failed"]}),
            "loopback or private",
        ),
        (
            json!({"url": "http://[::1]:9/x", "events": ["sync.failed"]}),
            "loopback or private",
        ),
        (
            json!({"url": "http://169.254.169.254/latest", "events": ["sync.failed"]}),
            "private",
        ),
        (
            json!({"url": "http://10.0.0.8/x", "events": ["sync.failed"]}),
            "private",
        ),
        (
            json!({"url": "ftp://93.184.216.34/x", "events": ["sync.failed"]}),
            "http",
        ),
        (json!({"url": url, "events": []}), "at least one"),
        (
            json!({"url": url, "events": ["sync.done"]}),
            "sync.completed",
        ),
        (json!({"url": url}), "events"),
    ] {
        let detail = expect_problem(register(&s, body.clone()).await, 400).await;
        assert!(detail.contains(says), "{body}: {detail}");
    }

    // Members may not manage webhooks; other workspaces do not see them.
    let member = s.user("member@example.test", "default", false).await;
    let resp = s
        .client
        .get(s.url("/webhooks"))
        .basic_auth(&member.email, Some(&member.api_token))
        .send()
        .await
        .unwrap();
    assert!(expect_problem(resp, 403).await.contains("ADMIN"));
    let stranger = s.user("admin@other.test", "other", true).await;
    let as_stranger = |m: Method, path: String| {
        s.client
            .request(m, s.url(&path))
            .basic_auth(&stranger.email, Some(&stranger.api_token))
    };
    let theirs: Value = as_stranger(Method::GET, "/webhooks".into())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(theirs, json!([]));
    let id = hook["id"].as_str().unwrap();
    for (m, path) in [
        (Method::DELETE, format!("/webhooks/{id}")),
        (Method::GET, format!("/webhooks/{id}/deliveries")),
    ] {
        expect_problem(as_stranger(m, path).send().await.unwrap(), 404).await;
    }

    // Listed without the secret; the cap; deletion.
    let listed: Value = s
        .req(Method::GET, "/webhooks")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed[0]["id"], hook["id"]);
    assert!(listed[0].get("secret").is_none());
    for _ in 1..MAX_WEBHOOKS {
        let resp = register(&s, json!({"url": url, "events": ["sync.failed"]})).await;
        assert_eq!(resp.status(), 201);
    }
    let resp = register(&s, json!({"url": url, "events": ["sync.failed"]})).await;
    assert!(expect_problem(resp, 409).await.contains("at most 20"));
    let resp = s
        .req(Method::DELETE, &format!("/webhooks/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    let resp = s
        .req(Method::DELETE, &format!("/webhooks/{id}"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
}

/// A webhook whose host is loopback when the delivery is due (here: stored as if its name had
/// resolved elsewhere at registration) is never contacted: the attempt is recorded as refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_private_target_is_refused_at_delivery_time() {
    let s = TestServer::start().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let contacted = tokio::spawn(async move { listener.accept().await.is_ok() });
    let admin = s
        .state
        .tokens
        .user_by_email(inlet_tests::ADMIN_EMAIL)
        .await
        .unwrap()
        .unwrap();
    let hook = Webhook {
        id: uuid::Uuid::new_v4(),
        workspace_id: admin.workspace_id,
        url: format!("http://localhost:{port}/hook"),
        events: vec![Event::SourceCreated],
        secret: "whsec_x".into(),
        created_date: inlet_core::time::now(),
    };
    s.state.webhooks.create_webhook(&hook).await.unwrap();
    s.create_source(record_source("announced")).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let delivery = loop {
        let listed: Value = s
            .req(Method::GET, &format!("/webhooks/{}/deliveries", hook.id))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if listed[0]["attempts"].as_u64().unwrap_or(0) >= 1 {
            break listed[0].clone();
        }
        assert!(Instant::now() < deadline, "never attempted: {listed}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(delivery["state"], "PENDING");
    assert_eq!(delivery["event"], "source.created");
    assert!(
        delivery["lastError"]
            .as_str()
            .unwrap()
            .contains("loopback or private"),
        "{delivery}"
    );
    assert!(delivery.get("lastStatus").is_none());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!contacted.is_finished(), "the private target was contacted");
    contacted.abort();
}
