//! The abuse suite (issue 22, point 10): what an anonymous or low-value caller tried against a
//! real `inlet serve` process, on SQLite and PostgreSQL, with the figures read from the
//! process (`/proc/<pid>`) and the database. Each figure is printed (`--nocapture` shows them)
//! and bounded by an assertion with a wide margin; docs/security.md records measured values.
//! The rest of the list is pinned where its code lives: lockouts from a second address and the
//! sign-in timing (tests/tests/oauth.rs), cross-site sign-in posts (oauth.rs), withdrawn access
//! (oauth.rs), invented metrics labels (tests/tests/edge.rs).

use std::time::Duration;

use inlet_tests::process::InletProcess;
use reqwest::{Client, Method, multipart};
use serde_json::json;

const INLET: &str = env!("CARGO_BIN_EXE_inlet");
const EMAIL: &str = "abuse@example.test";
const TOKEN: &str = "abuse-token";
const ENV: [(&str, &str); 2] = [
    ("INLET_ADMIN_EMAIL", EMAIL),
    ("INLET_ADMIN_API_TOKEN", TOKEN),
];

/// A `/proc/<pid>/status` value in KiB (`VmHWM`: peak resident memory; `VmRSS`: now).
fn status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a KiB value")
}

/// Open file descriptors of the process.
fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// A 100 KB STRUCTURED push through a template that names its field 100 times (the most a
/// template may): the rendering would be 10 MB of searchable text, over the 4,000,000-byte
/// limit, so it stops there and answers 400. Returns the growth of the peak resident memory.
async fn template_bomb(server: &InletProcess, http: &Client) -> u64 {
    let field = "${f_body}".repeat(100);
    let source: serde_json::Value = http
        .post(format!("{}/sources", server.api))
        .basic_auth(EMAIL, Some(TOKEN))
        .json(&json!({
            "definition": {"type": "CUSTOM"}, "externalId": "bomb",
            "config": {"type": "CUSTOM", "name": "Bomb", "trackStatus": true,
                "specification": {"application": {"objectTypes": [{
                    "name": "T", "externalId": "t", "sourceDataType": "STRUCTURED",
                    "dataType": "JSON",
                    "fields": [{"name": "body", "contentSelector": "/body", "dataType": "TEXT"}],
                    "tagConfigs": [], "facets": [],
                    "templates": {"titleTemplate": "x", "searchTemplate": field}
                }]}}}
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let path = format!(
        "{}/sources/{}/objecttypes/{}/objects/one/content",
        server.api,
        source["id"].as_str().expect("source id"),
        source["sourceObjectTypes"][0]["id"]
            .as_str()
            .expect("type id")
    );
    let before = status_kib(server.pid(), "VmHWM");
    let body = json!({"body": "word ".repeat(20_000)});
    for _ in 0..5 {
        let resp = http
            .put(&path)
            .basic_auth(EMAIL, Some(TOKEN))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400);
        let detail = resp.text().await.unwrap();
        assert!(detail.contains("searchTemplate"), "{detail}");
    }
    status_kib(server.pid(), "VmHWM").saturating_sub(before)
}

/// Six uploads of 4,000 parts each at once, beside a normal upload: every many-part upload is
/// refused, the normal one is stored, and the open descriptors stay near where they were.
/// Returns (descriptors before, most seen while the uploads ran).
async fn many_part_uploads(server: &InletProcess, http: &Client) -> (usize, usize) {
    let source: serde_json::Value = http
        .post(format!("{}/sources", server.api))
        .basic_auth(EMAIL, Some(TOKEN))
        .json(&inlet_tests::record_source("parts"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let object = |id: &str| {
        format!(
            "{}/sources/{}/objecttypes/{}/objects/{id}/file",
            server.api,
            source["id"].as_str().expect("source id"),
            source["sourceObjectTypes"][0]["id"]
                .as_str()
                .expect("type id")
        )
    };
    let before = open_files(server.pid());
    let pid = server.pid();
    let watching = tokio::spawn(async move {
        let mut most = 0;
        for _ in 0..200 {
            most = most.max(open_files(pid));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        most
    });
    let bombs = (0..6).map(|i| {
        let mut form = multipart::Form::new();
        for p in 0..4000 {
            form = form.part(
                format!("p{p}"),
                multipart::Part::bytes(vec![b'x'; 64]).file_name("x.txt"),
            );
        }
        http.request(Method::PUT, object(&format!("bomb{i}")))
            .basic_auth(EMAIL, Some(TOKEN))
            .multipart(form)
            .send()
    });
    let normal = http
        .request(Method::PUT, object("normal"))
        .basic_auth(EMAIL, Some(TOKEN))
        .multipart(inlet_tests::file_form("normal.txt", "an ordinary file"))
        .send();
    let (bombs, normal) = tokio::join!(futures_util::future::join_all(bombs), normal);
    let mut answered = 0;
    for resp in bombs {
        match resp {
            Ok(resp) => {
                assert_eq!(resp.status(), 400, "a 4,000-part upload");
                let detail = resp.text().await.unwrap();
                assert!(detail.contains("parts"), "{detail}");
                answered += 1;
            }
            // Refused while the client was still sending its parts: the server answered and
            // closed the connection, which the sender sees as a broken pipe.
            Err(e) => assert!(e.is_request(), "{e}"),
        }
    }
    assert_eq!(normal.expect("answered").status(), 201);
    let health = http
        .get(server.api.replace("/api/v1", "/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    // The server's access log shows each refusal, whether or not the sender read it.
    let log = server.log();
    let refused = log
        .lines()
        .filter(|l| l.contains("status=400") && l.contains("/objects/{externalId}/file"))
        .count();
    assert_eq!(refused, 6, "{log}");
    println!("many-part uploads: 6 refused with 400 ({answered} read before the close)");
    (before, watching.await.unwrap())
}

/// Rows in the failure-counter table of the database at `url`.
async fn counter_rows(url: &str) -> u64 {
    use sea_orm::{ConnectionTrait, Database, Statement};
    let db = Database::connect(url).await.expect("connect");
    let backend = db.get_database_backend();
    let row = db
        .query_one_raw(Statement::from_string(
            backend,
            "SELECT COUNT(*) AS n FROM documents WHERE collection = 'rate_limits'",
        ))
        .await
        .expect("count")
        .expect("a row");
    let n: i64 = row.try_get("", "n").expect("n");
    let _ = db.close().await;
    u64::try_from(n).unwrap_or(0)
}

/// 300 failed token requests under invented client ids (8 KB, or 300 bytes): the counter rows
/// they add. Returns the rows before and after.
async fn invented_ids(server: &InletProcess, http: &Client, database: &str) -> (u64, u64) {
    let before = counter_rows(database).await;
    let token = format!("{}/oauth/token", server.api.trim_end_matches("/api/v1"));
    for i in 0..300 {
        let id = if i % 2 == 0 {
            format!("{i}-{}", "z".repeat(8 * 1024))
        } else {
            format!("{i}-{}", "y".repeat(300))
        };
        let resp = http
            .post(&token)
            .form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", "x"),
                ("client_id", id.as_str()),
                ("client_secret", "x"),
            ])
            .send()
            .await
            .unwrap();
        assert!(
            resp.status() == 401 || resp.status() == 429,
            "{}",
            resp.status()
        );
    }
    (before, counter_rows(database).await)
}

async fn abuse_is_bounded(database: &str) {
    let mut server = InletProcess::spawn(INLET, database, &ENV);
    let http = Client::new();
    server.ready(&http).await;
    let rss = status_kib(server.pid(), "VmRSS");
    let grown = template_bomb(&server, &http).await;
    println!("template bomb: resident {rss} KiB at start, peak grew by {grown} KiB");
    assert!(grown < 64 * 1024, "peak memory grew by {grown} KiB");
    let (before, most) = many_part_uploads(&server, &http).await;
    println!("many-part uploads: {before} descriptors before, at most {most} during");
    assert!(most < before + 200, "{before} -> {most} descriptors");
    let (before, after) = invented_ids(&server, &http, database).await;
    println!("300 invented-id failures: counter rows {before} -> {after}");
    assert!(after <= before + 152, "{before} -> {after} counter rows");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abuse_is_bounded_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("abuse.db").display()
    );
    abuse_is_bounded(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abuse_is_bounded_on_postgres() {
    let Some(schema) = inlet_tests::postgres::Schema::for_test().await else {
        return;
    };
    abuse_is_bounded(&schema.url).await;
    schema.drop().await;
}

/// With `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` set for the process, a webhook delivery
/// still goes straight to the checked address: the proxy (which would resolve the name again
/// and reach what the check refused) is never contacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_deliveries_never_go_through_an_environment_proxy() {
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let proxied = tokio::spawn(async move { proxy.accept().await.is_ok() });
    let (port, mut arrivals) = inlet_tests::hooks::endpoint(Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let mut env = ENV.to_vec();
    env.extend([
        ("INLET_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("HTTP_PROXY", proxy_url.as_str()),
        ("HTTPS_PROXY", proxy_url.as_str()),
        ("ALL_PROXY", proxy_url.as_str()),
        ("http_proxy", proxy_url.as_str()),
    ]);
    let mut server = InletProcess::spawn(INLET, &db, &env);
    let http = Client::new();
    server.ready(&http).await;
    let resp = server
        .request(&http, Method::POST, "/webhooks", (EMAIL, TOKEN))
        .json(
            &json!({"url": format!("http://127.0.0.1:{port}/hook"), "events": ["source.created"]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
    server
        .record_source(&http, (EMAIL, TOKEN), "announced")
        .await;
    tokio::time::timeout(Duration::from_secs(20), arrivals.recv())
        .await
        .expect("the delivery arrives at the endpoint itself")
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!proxied.is_finished(), "the proxy was contacted");
    proxied.abort();
}

/// A refused request's log line says why (the problem's detail), so an operator sees why a
/// connector fails; a wrong token's line does not carry the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_logged_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let mut server = InletProcess::spawn(INLET, &db, &ENV);
    let http = Client::new();
    server.ready(&http).await;
    let resp = server
        .request(&http, Method::GET, "/search", (EMAIL, TOKEN))
        .query(&[("sourceid", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let resp = server
        .request(
            &http,
            Method::GET,
            "/sources",
            (EMAIL, "secret-wrong-token"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let log = server.log();
    let line = log
        .lines()
        .find(|l| l.contains("status=400") && l.contains("route=/api/v1/search"))
        .unwrap_or_else(|| panic!("no 400 line:\n{log}"));
    assert!(
        line.contains("reason=unknown query parameter \"sourceid\""),
        "{line}"
    );
    assert!(log.contains("status=401"), "{log}");
    assert!(!log.contains("secret-wrong-token"), "{log}");
}
