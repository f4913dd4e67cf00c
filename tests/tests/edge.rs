//! The server's edge over real loopback sockets: the start page at `/`; an upload whose declared
//! length exceeds the limit is refused before its body is sent; `/metrics` labels stay bounded
//! whatever methods and paths clients invent; every response carries `X-Content-Type-Options:
//! nosniff`; `/readyz` says `database unavailable` without the database's own words (PostgreSQL
//! behind a proxy the test cuts; runs when `INLET_TEST_POSTGRES_URL` is set).

use std::time::Duration;

use base64::Engine;
use inlet_server::Settings;
use inlet_tests::{ADMIN_EMAIL, ADMIN_TOKEN, TestServer, assert_no_internals, postgres};
use reqwest::Method;
use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

#[tokio::test]
async fn the_start_page_links_docs_document_and_health_checks() {
    let s = TestServer::start().await;
    let html = s.client.get(format!("{}/", s.base)).send().await.unwrap();
    assert_eq!(html.status(), 200);
    let ct = html.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("text/html"), "{ct}");
    let page = html.text().await.unwrap();
    for link in ["/docs", "/api/v1/openapi.json", "/healthz", "/readyz"] {
        assert!(page.contains(&format!("href=\"{link}\"")), "{page}");
    }
    assert!(page.contains(env!("CARGO_PKG_VERSION")), "{page}");

    let json: Value = s
        .client
        .get(format!("{}/", s.base))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(json["version"], env!("CARGO_PKG_VERSION"), "{json}");
    assert_eq!(json["links"]["docs"], "/docs", "{json}");
    assert_eq!(json["links"]["openapi"], "/api/v1/openapi.json", "{json}");
    assert_eq!(json["links"]["healthz"], "/healthz", "{json}");
    assert_eq!(json["links"]["readyz"], "/readyz", "{json}");
}

#[tokio::test]
async fn an_upload_declared_too_large_is_refused_before_its_body() {
    let s = TestServer::start_with(Settings {
        max_upload_bytes: 1000,
        ..Settings::default()
    })
    .await;
    let paths = s.record_source().await;
    let creds =
        base64::engine::general_purpose::STANDARD.encode(format!("{ADMIN_EMAIL}:{ADMIN_TOKEN}"));
    let mut c = TcpStream::connect(s.base.trim_start_matches("http://"))
        .await
        .unwrap();
    // Only the head: the answer must come without a byte of the 50 MB body.
    let head = format!(
        "PUT /api/v1{}/file HTTP/1.1\r\nHost: inlet.test\r\nAuthorization: Basic {creds}\r\n\
         Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 50000000\r\n\r\n",
        paths.object("big")
    );
    c.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(3), c.read(&mut buf))
            .await
            .expect("an answer before the body was sent")
            .unwrap();
        assert!(n > 0, "closed without an answer");
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).to_string();
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("application/problem+json"), "{text}");

    // At the limit (file + multipart overhead) the upload is read and stored.
    let resp = s
        .req(Method::PUT, &format!("{}/file", paths.object("small")))
        .multipart(inlet_tests::file_form("a.txt", vec![b'a'; 1000]))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
}

async fn metrics_text(s: &TestServer) -> String {
    s.client
        .get(format!("{}/metrics", s.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test]
async fn invented_methods_and_paths_do_not_grow_the_metrics() {
    let s = TestServer::start().await;
    // One request of each kind first (the scrape too), so their series exist before measuring.
    let warm = Method::from_bytes(b"WARMUP").unwrap();
    let _ = s.client.request(warm, format!("{}/x", s.base)).send().await;
    let _ = s.req(Method::GET, "/sources/some-id").send().await;
    let _ = metrics_text(&s).await;
    let before = metrics_text(&s).await;
    for i in 0..200 {
        let invented = format!("M{i:03}{}", "X".repeat(1000));
        let method = Method::from_bytes(invented.as_bytes()).unwrap();
        let path = format!("/invented/{i}/{}", "p".repeat(200));
        let resp = s
            .client
            .request(method, format!("{}{path}", s.base))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_client_error(), "{}", resp.status());
        // Known routes with ids that differ every time.
        let resp = s
            .req(Method::GET, &format!("/sources/source-{i}"))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_client_error(), "{}", resp.status());
    }
    let after = metrics_text(&s).await;
    // The series stay the same; only counts and the scrape's own request change.
    let growth = after.len() as i64 - before.len() as i64;
    assert!(
        growth < 500,
        "/metrics grew by {growth} bytes over 400 requests:\n{after}"
    );
    eprintln!(
        "/metrics: {} bytes before, {} after 400 requests",
        before.len(),
        after.len()
    );
    // The invented methods reached the application and were counted, under OTHER.
    let other: f64 = after
        .lines()
        .filter(|l| l.starts_with("inlet_http_requests_total{method=\"OTHER\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(
        other >= 201.0,
        "{other} requests counted as OTHER:\n{after}"
    );
    assert!(!after.contains("XXXXXXXX"), "an invented method is a label");
    assert!(!after.contains("/invented/"), "a raw path is a label");
    assert!(!after.contains("source-1"), "a raw id is a label");
    assert!(after.contains("method=\"OTHER\""), "{after}");
    assert!(
        after.contains("route=\"/api/v1/sources/{sourceId}\""),
        "{after}"
    );
}

/// Responses that carry a secret (a client's secret, a new API token, OAuth tokens) say
/// `Cache-Control: no-store`; ordinary ones are left to the client.
#[tokio::test]
async fn responses_with_secrets_are_not_stored() {
    let s = TestServer::start().await;
    let client = s
        .req(Method::POST, "/oauthclients")
        .json(&serde_json::json!({
            "name": "Cache test", "description": "d",
            "redirectUris": ["https://app.test/cb"], "scopes": ["default"]
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(client.status(), 201);
    assert_eq!(client.headers()["cache-control"], "no-store");
    let listed = s.req(Method::GET, "/oauthclients").send().await.unwrap();
    assert_eq!(listed.headers()["cache-control"], "no-store");
    let token = s.req(Method::POST, "/apitokens").send().await.unwrap();
    assert_eq!(token.status(), 201);
    assert_eq!(token.headers()["cache-control"], "no-store");
    let refused = s
        .client
        .post(format!("{}/oauth/token", s.base))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(refused.headers()["cache-control"], "no-store");
    let sources = s.req(Method::GET, "/sources").send().await.unwrap();
    assert!(sources.headers().get("cache-control").is_none());
}

#[tokio::test]
async fn every_response_says_nosniff() {
    let s = TestServer::start().await;
    let paths = s.record_source().await;
    let responses = [
        s.client.get(format!("{}/", s.base)).send().await.unwrap(),
        s.client
            .get(format!("{}/healthz", s.base))
            .send()
            .await
            .unwrap(),
        s.client
            .get(format!("{}/metrics", s.base))
            .send()
            .await
            .unwrap(),
        s.client
            .get(format!("{}/docs", s.base))
            .send()
            .await
            .unwrap(),
        s.client.get(s.url("/openapi.json")).send().await.unwrap(),
        s.client
            .get(format!("{}/nowhere", s.base))
            .send()
            .await
            .unwrap(),
        s.client.get(s.url("/sources")).send().await.unwrap(),
        s.req(Method::GET, &paths.object("missing"))
            .send()
            .await
            .unwrap(),
        s.req(Method::POST, "/sources")
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap(),
    ];
    for resp in responses {
        assert_eq!(
            resp.headers()
                .get("x-content-type-options")
                .map(|v| v.to_str().unwrap()),
            Some("nosniff"),
            "{} {}",
            resp.url(),
            resp.status()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_says_database_unavailable_in_words() {
    let Some(base) = postgres::base_url() else {
        return;
    };
    let schema = postgres::Schema::create(&base, "inlet_ready").await;
    // A forwarder to PostgreSQL that the test stops: afterwards the port refuses connections.
    let rest = base.split_once("://").unwrap().1;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, upstream) = authority
        .rsplit_once('@')
        .map_or(("", authority), |(u, h)| (u, h));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_addr = listener.local_addr().unwrap();
    let upstream = upstream.to_string();
    let conns = std::sync::Arc::new(tokio::sync::Mutex::new(Vec::new()));
    let accept = tokio::spawn({
        let conns = conns.clone();
        async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let upstream = upstream.clone();
                conns.lock().await.push(tokio::spawn(async move {
                    if let Ok(mut out) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                    }
                }));
            }
        }
    });
    let at = if userinfo.is_empty() {
        String::new()
    } else {
        format!("{userinfo}@")
    };
    let url = postgres::url_in_schema(&format!("postgres://{at}{proxy_addr}/{path}"), &schema.name);
    let s = TestServer::start_on(&url, Settings::default()).await;
    let ready = s
        .client
        .get(format!("{}/readyz", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);

    accept.abort();
    for conn in conns.lock().await.drain(..) {
        conn.abort();
    }
    let ready = s
        .client
        .get(format!("{}/readyz", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);
    let body = ready.text().await.unwrap();
    assert_no_internals(&body);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "unavailable", "{body}");
    assert_eq!(v["detail"], "database unavailable", "{body}");
    for word in ["refused", "connection", "error", "timed out", "pool"] {
        assert!(!body.to_lowercase().contains(word), "{word} in {body}");
    }
    drop(s);
    schema.drop().await;
}

#[tokio::test]
async fn oversized_heads_and_json_bodies_are_refused() {
    let s = TestServer::start().await;
    // A request head beyond 64 KiB.
    let resp = s
        .client
        .get(format!("{}/healthz", s.base))
        .header("x-padding", "a".repeat(70 * 1024))
        .send()
        .await;
    match resp {
        Ok(resp) => assert_eq!(resp.status(), 431),
        Err(e) => panic!("no answer to an oversized head: {e}"),
    }
    // Just under it is fine.
    let resp = s
        .client
        .get(format!("{}/healthz", s.base))
        .header("x-padding", "a".repeat(60 * 1024))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    // More than 100 header lines (`conn::MAX_HEADERS`), however short.
    let many = |n: usize| {
        let mut req = s.client.get(format!("{}/healthz", s.base));
        for i in 0..n {
            req = req.header(format!("x-h{i}"), "1");
        }
        req.send()
    };
    match many(120).await {
        Ok(resp) => assert_eq!(resp.status(), 431),
        Err(e) => panic!("no answer to 120 header lines: {e}"),
    }
    assert_eq!(many(90).await.unwrap().status(), 200);
    // A JSON body beyond 1 MiB.
    let big = format!("{{\"externalId\": \"{}\"}}", "a".repeat(1024 * 1024 + 10));
    let resp = s
        .req(Method::POST, "/sources")
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    inlet_tests::expect_problem(resp, 413).await;
    // The same streamed (chunked, no length): 413 too, as docs/security.md says.
    let chunks =
        futures_util::stream::iter((0..1100).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1024])));
    let resp = s
        .req(Method::POST, "/sources")
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    inlet_tests::expect_problem(resp, 413).await;
    // The OAuth endpoints read at most 16 KiB, declared or streamed, before knowing who asks.
    let form = format!("grant_type=client_credentials&x={}", "a".repeat(20 * 1024));
    for path in [
        "/oauth/token",
        "/oauth/revoke",
        "/oauth/introspect",
        "/oauth/authorize",
    ] {
        let resp = s
            .client
            .post(format!("{}{path}", s.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 413, "{path}");
        let stream =
            futures_util::stream::iter((0..20).map(|_| Ok::<_, std::io::Error>(vec![b'a'; 1024])));
        let resp = s
            .client
            .post(format!("{}{path}", s.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(reqwest::Body::wrap_stream(stream))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_client_error(), "{path}: {}", resp.status());
        // The same under the cap is an ordinary OAuth answer.
        let resp = s
            .client
            .post(format!("{}{path}", s.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials")
            .send()
            .await
            .unwrap();
        assert_ne!(resp.status(), 413, "{path}");
    }
}

#[tokio::test]
async fn an_extraction_over_its_time_budget_stores_empty_content() {
    // A budget already spent when the extraction starts: the record is stored (spec 2.4), empty,
    // and the answer says why.
    let s = TestServer::start_with(Settings {
        extraction_timeout: Duration::ZERO,
        ..Settings::default()
    })
    .await;
    let p = s.record_source().await;
    let text = "budget words ".repeat(200_000);
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("slow")))
        .multipart(inlet_tests::file_form("slow.txt", text))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let answer: Value = resp.json().await.unwrap();
    let failure = answer["extraction"]["failure"].as_str().unwrap_or_default();
    assert!(failure.contains("time"), "{answer}");
    assert_eq!(answer["extraction"]["characters"], 0, "{answer}");
}
