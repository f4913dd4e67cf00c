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
    let paths = committed["paths"].as_object().unwrap();
    for path in [
        "/api/v1/sources",
        "/api/v1/sources/{sourceId}",
        "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}/file",
        "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}/metadata",
        "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/objects/{externalId}",
        "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/syncs",
        "/api/v1/sources/{sourceId}/objecttypes/{objectTypeId}/syncs/{syncNumber}",
        "/api/v1/oauthclients",
        "/api/v1/oauthclients/{clientId}",
        "/api/v1/oauthclients/{clientId}/logoUrl",
        "/oauth/token",
        "/oauth/revoke",
        "/oauth/introspect",
        "/.well-known/oauth-authorization-server",
    ] {
        assert!(paths.contains_key(path), "missing {path}");
    }
    let schemes = &committed["components"]["securitySchemes"];
    assert_eq!(schemes["basicAuth"]["scheme"], "basic");
    assert_eq!(schemes["bearerAuth"]["scheme"], "bearer");
    let flow = &schemes["oauth2"]["flows"]["authorizationCode"];
    assert_eq!(flow["tokenUrl"], "/oauth/token");
    assert_eq!(flow["authorizationUrl"], "/oauth/authorize");
    for scope in ["default", "*:*", "read:*"] {
        assert!(flow["scopes"][scope].is_string(), "scope {scope}");
    }
    // Per operation: reads need read:*, writes default; client maintenance is Basic only.
    let security = |path: &str, method: &str| paths[path][method]["security"].clone();
    assert_eq!(
        security("/api/v1/sources", "get"),
        serde_json::json!([{"basicAuth": []}, {"bearerAuth": []}, {"oauth2": ["read:*"]}])
    );
    assert_eq!(
        security("/api/v1/sources", "post"),
        serde_json::json!([{"basicAuth": []}, {"bearerAuth": []}, {"oauth2": ["default"]}])
    );
    assert_eq!(
        security("/api/v1/oauthclients", "post"),
        serde_json::json!([{"basicAuth": []}])
    );
    let docs = s
        .client
        .get(format!("{}/docs", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(docs.status(), 200);
    assert!(docs.text().await.unwrap().to_lowercase().contains("<html"));
}
