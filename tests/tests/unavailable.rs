//! Storage outages answer 503 problem+json (never a panic or a 500), and the server serves again
//! once the database is back. PostgreSQL is reached through a loopback TCP proxy the test cuts
//! and restores. Runs when `INLET_TEST_POSTGRES_URL` is set (required with
//! `INLET_REQUIRE_POSTGRES=1`).

use std::{net::SocketAddr, sync::Arc};

use inlet_server::Settings;
use inlet_tests::{TestServer, expect_problem, postgres};
use reqwest::Method;
use tokio::{net::TcpListener, sync::Mutex, task::JoinHandle};

/// A TCP forwarder to PostgreSQL that can be cut (every connection dropped) and restored.
struct Proxy {
    addr: SocketAddr,
    upstream: String,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    async fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let p = Self {
            addr: listener.local_addr().unwrap(),
            upstream: upstream.into(),
            tasks: Default::default(),
        };
        p.serve(listener).await;
        p
    }

    async fn serve(&self, listener: TcpListener) {
        let (upstream, tasks) = (self.upstream.clone(), self.tasks.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let conn = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                tasks.lock().await.push(conn);
            }
        });
        self.tasks.lock().await.push(accept);
    }

    async fn cut(&self) {
        for t in self.tasks.lock().await.drain(..) {
            t.abort();
        }
    }

    async fn restore(&self) {
        let listener = TcpListener::bind(self.addr).await.unwrap();
        self.serve(listener).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn database_outage_is_503_and_service_resumes() {
    let Some(base) = postgres::base_url() else {
        return;
    };
    let schema = postgres::Schema::create(&base, "inlet_t").await;

    let rest = base.split_once("://").unwrap().1;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hostport) = authority
        .rsplit_once('@')
        .map_or(("", authority), |(u, h)| (u, h));
    let proxy = Proxy::start(hostport).await;
    let at = if userinfo.is_empty() {
        String::new()
    } else {
        format!("{userinfo}@")
    };
    let url = postgres::url_in_schema(
        &format!("postgres://{at}{}/{path}", proxy.addr),
        &schema.name,
    );

    let s = TestServer::start_on(&url, Settings::default()).await;
    let p = s.record_source().await;

    proxy.cut().await;
    let resp = s
        .req(Method::GET, &format!("/sources/{}", p.source_id))
        .send()
        .await
        .unwrap();
    let request_id = resp
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .expect("every answer carries X-Request-Id");
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["status"], 503);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("storage unavailable"),
        "{body}"
    );
    // The generic body names the request, whose log lines hold the database's words.
    assert_eq!(body["requestId"], request_id.as_str(), "{body}");
    inlet_tests::assert_no_internals(&body.to_string());
    // Readiness follows the database; liveness does not.
    let ready = s
        .client
        .get(format!("{}/readyz", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);
    let live = s
        .client
        .get(format!("{}/healthz", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(live.status(), 200);
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .multipart(inlet_tests::file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 503).await;

    proxy.restore().await;
    let mut back = false;
    for _ in 0..50 {
        let resp = s
            .req(Method::GET, &format!("/sources/{}", p.source_id))
            .send()
            .await
            .unwrap();
        if resp.status() == 200 {
            back = true;
            break;
        }
        expect_problem(resp, 503).await;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert!(
        back,
        "the server did not serve again after the database came back"
    );
    let ready = s
        .client
        .get(format!("{}/readyz", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .multipart(inlet_tests::file_form("a.txt", "x"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    schema.drop().await;
}
