//! Operations endpoints over HTTP: `/healthz`, `/readyz`, Prometheus `/metrics` counting
//! requests by route and status, extractions by format, sync closes and removed records; request
//! ids on every response. (Readiness during a database outage is in `unavailable.rs`; graceful
//! shutdown and JSON logs, which need the real process, in the server crate's `shutdown.rs`.)

use inlet_tests::{TestServer, file_form};
use reqwest::Method;
use serde_json::{Value, json};

fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

async fn metrics(s: &TestServer) -> String {
    let resp = s
        .client
        .get(format!("{}/metrics", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("application/openmetrics-text"), "{ct}");
    resp.text().await.unwrap()
}

#[tokio::test]
async fn health_and_readiness() {
    for s in [TestServer::start().await, TestServer::start_sqlite().await] {
        let resp = s
            .client
            .get(format!("{}/healthz", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let resp = s
            .client
            .get(format!("{}/readyz", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["status"], "ok");
        assert_eq!(body["database"], "ok");
    }
}

#[tokio::test]
async fn request_ids_are_echoed_or_assigned() {
    let s = TestServer::start().await;
    let resp = s
        .req(Method::GET, "/sources")
        .header("x-request-id", "trace-42.a:b")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-request-id"], "trace-42.a:b");

    // An unusable id (spaces) is replaced; errors carry an id too.
    let resp = s
        .client
        .get(s.url("/sources"))
        .header("x-request-id", "not a token")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let id = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_ne!(id, "not a token");
    assert_eq!(id.len(), 32, "{id}");
    let resp = s
        .client
        .get(format!("{}/no/such/page", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert!(resp.headers().contains_key("x-request-id"));
}

#[tokio::test]
async fn metrics_count_requests_extractions_syncs_and_removals() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let resp = s
        .req(Method::POST, &p.syncs())
        .json(&json!({"operation": "START_INITIAL"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    for (id, body) in [("a", "alpha text"), ("b", "beta text")] {
        let resp = s
            .req(Method::PUT, &format!("{}/file", p.object(id)))
            .query(&[("syncNumber", "1")])
            .multipart(file_form(&format!("{id}.txt"), body))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
    }
    let resp = s
        .req(Method::PUT, &format!("{}/1", p.syncs()))
        .json(&json!({"operation": "COMPLETE"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    // Second full sync sees only `a`: `b` is removed at close.
    let resp = s
        .req(Method::POST, &p.syncs())
        .json(&json!({"operation": "START"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .query(&[("syncNumber", "2")])
        .multipart(file_form("a.txt", "alpha text again"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "a new version of an existing record");
    let resp = s
        .req(Method::PUT, &format!("{}/2", p.syncs()))
        .json(&json!({"operation": "COMPLETE"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let resp = s.req(Method::DELETE, &p.object("a")).send().await.unwrap();
    assert_eq!(resp.status(), 204);
    // A request no route matches.
    let _ = s
        .client
        .get(format!("{}/nowhere", s.base))
        .send()
        .await
        .unwrap();

    let text = metrics(&s).await;
    let upload_route =
        "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}/file";
    assert_eq!(
        metric(
            &text,
            &format!(
                "inlet_http_requests_total{{method=\"PUT\",route=\"{upload_route}\",status=\"201\"}}"
            )
        ),
        2.0,
        "{text}"
    );
    assert_eq!(
        metric(
            &text,
            "inlet_http_requests_total{method=\"POST\",route=\"/api/v1/sources\",status=\"201\"}"
        ),
        1.0,
        "{text}"
    );
    assert_eq!(
        metric(
            &text,
            "inlet_http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"}"
        ),
        1.0,
        "{text}"
    );
    assert!(
        metric(
            &text,
            &format!(
                "inlet_http_request_duration_seconds_count{{method=\"PUT\",route=\"{upload_route}\"}}"
            )
        ) >= 3.0,
        "{text}"
    );
    assert_eq!(
        metric(
            &text,
            "inlet_extractions_total{format=\"text\",outcome=\"ok\"}"
        ),
        3.0,
        "{text}"
    );
    assert_eq!(
        metric(&text, "inlet_sync_closes_total{operation=\"COMPLETE\"}"),
        2.0,
        "{text}"
    );
    assert_eq!(
        metric(&text, "inlet_records_removed_total{reason=\"sync\"}"),
        1.0,
        "{text}"
    );
    assert_eq!(
        metric(&text, "inlet_records_removed_total{reason=\"delete\"}"),
        1.0,
        "{text}"
    );
}
