//! End-to-end: webhook registration over HTTP (members see only their own, URL and event rules, loopback and
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

    // A member lists only their own webhooks (none); other workspaces see none either.
    let member = s.user("member@example.test", "default", false).await;
    let resp = s
        .client
        .get(s.url("/webhooks"))
        .basic_auth(&member.email, Some(&member.api_token))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<Value>().await.unwrap(), json!([]));
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
        owner: None,
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

/// Registers a webhook for `source.created` of `workspace_id` at loopback `port` (through the
/// store: registration over HTTP refuses loopback targets).
async fn loopback_hook(s: &TestServer, workspace_id: uuid::Uuid, port: u16) -> Webhook {
    let hook = Webhook {
        id: uuid::Uuid::new_v4(),
        workspace_id,
        url: format!("http://127.0.0.1:{port}/hook"),
        events: vec![Event::SourceCreated],
        secret: "whsec_x".into(),
        created_date: inlet_core::time::now(),
        owner: None,
    };
    s.state.webhooks.create_webhook(&hook).await.unwrap();
    hook
}

/// Twenty webhooks of one workspace at an endpoint that takes 8 s to answer, each with five
/// deliveries queued; another workspace's delivery to a quick endpoint still arrives within a
/// second of its event (the sender used to wait for a whole batch, the slowest included).
async fn a_slow_endpoint_delays_only_its_own_workspace(database: &str) {
    let settings = inlet_server::Settings {
        webhook_allow_private: true,
        ..Default::default()
    };
    let s = TestServer::start_on(database, settings).await;
    let (slow_port, mut slow_arrivals) = inlet_tests::hooks::endpoint(Duration::from_secs(8)).await;
    let (fast_port, mut fast_arrivals) = inlet_tests::hooks::endpoint(Duration::ZERO).await;
    let admin = s
        .state
        .tokens
        .user_by_email(inlet_tests::ADMIN_EMAIL)
        .await
        .unwrap()
        .unwrap();
    for _ in 0..MAX_WEBHOOKS {
        loopback_hook(&s, admin.workspace_id, slow_port).await;
    }
    for i in 0..5 {
        s.create_source(record_source(&format!("slow-{i}"))).await;
    }
    // The slow endpoint is busy with the first workspace's deliveries.
    tokio::time::timeout(Duration::from_secs(10), slow_arrivals.recv())
        .await
        .expect("the slow endpoint is reached")
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;

    let other = s.user("b@example.test", "other", true).await;
    let b = s
        .state
        .tokens
        .user_by_email("b@example.test")
        .await
        .unwrap()
        .unwrap();
    loopback_hook(&s, b.workspace_id, fast_port).await;
    let started = Instant::now();
    let resp = s
        .client
        .post(s.url("/sources"))
        .basic_auth(&other.email, Some(&other.api_token))
        .json(&record_source("quick"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let arrived = tokio::time::timeout(Duration::from_secs(20), fast_arrivals.recv())
        .await
        .expect("the other workspace's delivery arrives")
        .unwrap();
    let latency = arrived.duration_since(started);
    println!("{database}: the other workspace's delivery arrived after {latency:?}");
    assert!(latency < Duration::from_secs(1), "{latency:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_slow_endpoint_delays_only_its_own_workspace_on_sqlite() {
    let path = std::env::temp_dir().join(format!("inlet-hooks-{}.db", uuid::Uuid::new_v4()));
    a_slow_endpoint_delays_only_its_own_workspace(&format!("sqlite://{}?mode=rwc", path.display()))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_slow_endpoint_delays_only_its_own_workspace_on_postgres() {
    let Some(schema) = inlet_tests::postgres::Schema::for_test().await else {
        return;
    };
    a_slow_endpoint_delays_only_its_own_workspace(&schema.url).await;
    schema.drop().await;
}
