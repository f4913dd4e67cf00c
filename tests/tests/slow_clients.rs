//! Slow and silent clients cannot hold the server (issue 18.5): connections that never finish
//! their request head are closed after the header timeout while normal requests keep being
//! answered; a request body that stalls is answered 408 and its connection closed; an idle
//! kept-alive connection is closed after the keep-alive timeout (not the shorter header timeout);
//! connections beyond the cap wait until one closes. Raw TCP sockets on a loopback port.

use std::time::{Duration, Instant};

use base64::Engine;
use inlet_server::Settings;
use inlet_tests::{ADMIN_EMAIL, ADMIN_TOKEN, TestServer, file_form};
use reqwest::{Client, Method};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

fn addr(s: &TestServer) -> String {
    s.base.trim_start_matches("http://").to_string()
}

fn basic() -> String {
    let creds =
        base64::engine::general_purpose::STANDARD.encode(format!("{ADMIN_EMAIL}:{ADMIN_TOKEN}"));
    format!("Basic {creds}")
}

/// Reads until the peer closes the connection (or `limit` passes): what it sent, and whether it
/// closed.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, bool) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&got).into(), true),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&got).into(), false),
        }
    }
}

/// Reads one response with a Content-Length body.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("a response within 5 s")
            .expect("read");
        assert!(n > 0, "closed before a whole response: {got:?}");
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let len: usize = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().ok())?
                })
                .unwrap_or(0);
            if got.len() >= end + 4 + len {
                return text;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn silent_connections_are_closed_while_others_are_served() {
    let s = TestServer::start_with(Settings {
        header_timeout: Duration::from_secs(1),
        max_connections: 1000,
        ..Settings::default()
    })
    .await;
    let paths = s.record_source().await;
    let started = Instant::now();
    let mut slow = Vec::new();
    for _ in 0..300 {
        let mut c = TcpStream::connect(addr(&s)).await.unwrap();
        c.write_all(b"GET /api/v1/sources HTTP/1.1\r\nHost: inlet.test\r\n")
            .await
            .unwrap();
        slow.push(c);
    }

    // The service answers during the attack: a health check and an upload.
    let fresh = Client::new();
    let health = fresh
        .get(format!("{}/healthz", s.base))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let upload = s
        .req(
            Method::PUT,
            &format!("{}/file", paths.object("during-attack")),
        )
        .multipart(file_form("a.txt", "uploaded while 300 clients stall"))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .unwrap();
    assert_eq!(upload.status(), 201, "{:?}", upload.text().await);

    // Every stalled connection is closed by the server soon after the header timeout.
    let closes = slow.into_iter().map(|mut c| {
        tokio::spawn(async move {
            let (_, closed) = read_until_closed(&mut c, Duration::from_secs(6)).await;
            (closed, Instant::now())
        })
    });
    let mut last = started;
    for close in futures_util::future::join_all(closes).await {
        let (closed, at) = close.unwrap();
        assert!(closed, "a silent connection was still open after 6 s");
        last = last.max(at);
    }
    let took = last - started;
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "the last silent connection closed after {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_body_is_answered_408_and_closed() {
    let s = TestServer::start_with(Settings {
        body_idle_timeout: Duration::from_secs(1),
        ..Settings::default()
    })
    .await;
    let paths = s.record_source().await;

    // A multipart upload that stops half-way.
    let mut c = TcpStream::connect(addr(&s)).await.unwrap();
    let head = format!(
        "PUT /api/v1{}/file HTTP/1.1\r\nHost: inlet.test\r\nAuthorization: {}\r\n\
         Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 5000\r\n\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nthe first",
        paths.object("stalled"),
        basic()
    );
    let sent = Instant::now();
    c.write_all(head.as_bytes()).await.unwrap();
    let (response, closed) = read_until_closed(&mut c, Duration::from_secs(5)).await;
    let took = sent.elapsed();
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(response.contains("application/problem+json"), "{response}");
    assert!(closed, "the connection stayed open after 408: {response}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(4),
        "408 after {took:?}"
    );
    let missing = s
        .req(Method::GET, &paths.object("stalled"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404, "a stalled upload was stored");

    // A JSON body that stops half-way.
    let mut c = TcpStream::connect(addr(&s)).await.unwrap();
    let head = format!(
        "POST /api/v1/sources HTTP/1.1\r\nHost: inlet.test\r\nAuthorization: {}\r\n\
         Content-Type: application/json\r\nContent-Length: 400\r\n\r\n{{\"externalId\":",
        basic()
    );
    c.write_all(head.as_bytes()).await.unwrap();
    let (response, closed) = read_until_closed(&mut c, Duration::from_secs(5)).await;
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(closed, "{response}");

    // A body that trickles in with pauses shorter than the idle timeout is fine.
    let body = serde_json::to_vec(&inlet_tests::record_source("trickled")).unwrap();
    let mut c = TcpStream::connect(addr(&s)).await.unwrap();
    let head = format!(
        "POST /api/v1/sources HTTP/1.1\r\nHost: inlet.test\r\nAuthorization: {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        basic(),
        body.len()
    );
    c.write_all(head.as_bytes()).await.unwrap();
    for piece in body.chunks(body.len() / 4 + 1) {
        tokio::time::sleep(Duration::from_millis(600)).await;
        c.write_all(piece).await.unwrap();
    }
    let response = read_response(&mut c).await;
    assert!(response.starts_with("HTTP/1.1 201"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_keep_alive_connections_close_after_the_keep_alive_timeout() {
    let s = TestServer::start_with(Settings {
        header_timeout: Duration::from_secs(1),
        keep_alive_timeout: Duration::from_secs(3),
        ..Settings::default()
    })
    .await;
    let mut c = TcpStream::connect(addr(&s)).await.unwrap();
    let get = b"GET /healthz HTTP/1.1\r\nHost: inlet.test\r\n\r\n";
    c.write_all(get).await.unwrap();
    assert!(read_response(&mut c).await.starts_with("HTTP/1.1 200"));
    // Idle longer than the header timeout: still open for the next request.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    c.write_all(get).await.unwrap();
    assert!(read_response(&mut c).await.starts_with("HTTP/1.1 200"));
    let idle = Instant::now();
    let (_, closed) = read_until_closed(&mut c, Duration::from_secs(6)).await;
    assert!(closed, "an idle kept-alive connection stayed open");
    let took = idle.elapsed();
    assert!(
        took >= Duration::from_millis(2500) && took < Duration::from_secs(5),
        "closed after {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_cap_wait_for_a_free_slot() {
    let s = TestServer::start_with(Settings {
        max_connections: 4,
        header_timeout: Duration::from_secs(8),
        ..Settings::default()
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(addr(&s)).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let over = Client::new()
        .get(format!("{}/healthz", s.base))
        .timeout(Duration::from_secs(1))
        .send()
        .await;
    assert!(
        over.is_err(),
        "a fifth connection was served beyond a cap of four"
    );
    drop(held.pop());
    let freed = Client::new()
        .get(format!("{}/healthz", s.base))
        .timeout(Duration::from_secs(3))
        .send()
        .await
        .expect("served once a slot was free");
    assert_eq!(freed.status(), 200);
}
