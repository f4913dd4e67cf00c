//! The server serves a backend it was never told about: linking this crate is enough.

// Linking the crate is what registers `toy:` (a binary does the same in its `main.rs`).
use inlet_example_toy_backend as _;
use inlet_server::Settings;
use inlet_tests::{TestServer, file_form};
use reqwest::Method;

#[tokio::test]
async fn the_server_opens_toy_urls() {
    let backends = inlet_core::backend::Backends::from_inventory().unwrap();
    assert!(backends.entries().iter().any(|b| b.name == "toy"));
    assert!(inlet_server::open_stores("toy:").await.is_err());

    // Two servers over one toy database: what one writes, the other reads.
    let a = TestServer::start_on("toy:shared", Settings::default()).await;
    let b = TestServer::start_on("toy:shared", Settings::default()).await;
    let p = a.record_source().await;
    let resp = a
        .req(Method::PUT, &format!("{}/file", p.object("note-1")))
        .multipart(file_form("note.txt", b"a toy backend stores this".to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let resp = b
        .req(Method::GET, &p.object("note-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let record: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(record["externalId"], "note-1");
    assert_eq!(record["content"], "a toy backend stores this");
}
