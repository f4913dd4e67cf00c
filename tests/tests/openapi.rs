//! The published OpenAPI document: the committed file, `inlet openapi` and the served document
//! must be the same; the docs page is served.

use inlet_tests::TestServer;

const COMMITTED: &str = include_str!("../../openapi/openapi.json");

#[test]
fn committed_document_matches_the_handlers() {
    let generated = inlet_server::openapi_json();
    assert!(
        generated.trim_end() == COMMITTED.trim_end(),
        "openapi/openapi.json is stale: run `cargo run -p inlet-server -- openapi > openapi/openapi.json`"
    );
}

#[tokio::test]
async fn served_document_and_docs_page() {
    let s = TestServer::start().await;
    let served = s
        .client
        .get(format!("{}/api/v1/openapi.json", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(served.status(), 200);
    let served: serde_json::Value = served.json().await.unwrap();
    let committed: serde_json::Value = serde_json::from_str(COMMITTED).unwrap();
    assert_eq!(served, committed);
    assert_eq!(committed["servers"][0]["url"], "/api/v1");
    let paths = committed["paths"].as_object().unwrap();
    for path in [
        "/sources",
        "/sources/{sourceId}",
        "/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}/file",
        "/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}/metadata",
        "/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}",
        "/sources/{sourceId}/objecttypes/{objectTypeId}/syncs",
        "/sources/{sourceId}/objecttypes/{objectTypeId}/syncs/{syncNumber}",
    ] {
        assert!(paths.contains_key(path), "missing {path}");
    }
    assert!(committed["components"]["securitySchemes"]["basicAuth"].is_object());
    let docs = s
        .client
        .get(format!("{}/docs", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(docs.status(), 200);
    assert!(docs.text().await.unwrap().to_lowercase().contains("<html"));
}
