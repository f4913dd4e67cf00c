//! End-to-end: hostile input gets a 400 naming the field, identically on memory, SQLite and
//! PostgreSQL (the input policy, docs/decisions.md) — NUL and control characters in path ids,
//! query parameters, the tag header, multipart file names and STRUCTURED JSON; malformed
//! percent-encoding; over-long values. Nothing is stored by a refused request, extracted text
//! loses its NUL bytes, and allowed Unicode round-trips exactly.

use inlet_tests::{SourcePaths, TestServer, assert_no_internals, expect_problem, file_form};
use reqwest::{Method, multipart};
use serde_json::{Value, json};

fn structured_source() -> Value {
    json!({
        "definition": {"type": "CUSTOM"},
        "externalId": "tickets-src",
        "config": {"type": "CUSTOM", "name": "Tickets", "trackStatus": true,
            "specification": {"application": {"objectTypes": [{
                "name": "Tickets", "externalId": "tickets", "sourceDataType": "STRUCTURED",
                "dataType": "JSON",
                "fields": [
                    {"name": "title", "contentSelector": "/title", "dataType": "TEXT"},
                    {"name": "body", "contentSelector": "/body", "dataType": "TEXT"}
                ],
                "tagConfigs": [], "facets": [],
                "templates": {"titleTemplate": "${f_title}", "searchTemplate": "${f_body!}"}
            }]}}}
    })
}

async fn upload(
    s: &TestServer,
    p: &SourcePaths,
    external_id: &str,
    query: &[(&str, &str)],
    tag: Option<&str>,
    form: multipart::Form,
) -> reqwest::Response {
    let mut req = s
        .req(Method::PUT, &format!("{}/file", p.object(external_id)))
        .query(query);
    if let Some(t) = tag {
        req = req.header("X-Service-Object-Tag", t);
    }
    req.multipart(form).send().await.unwrap()
}

/// A URL with a raw query string (reqwest would re-encode `%`).
fn raw_query(s: &TestServer, path: &str, query: &str) -> String {
    format!("{}?{query}", s.url(path))
}

async fn assert_400(resp: reqwest::Response, names: &str) -> String {
    let detail = expect_problem(resp, 400).await;
    assert!(
        detail.contains(names),
        "detail should name {names:?}: {detail}"
    );
    detail
}

async fn hostile_input_is_refused(s: TestServer) {
    let p = s.record_source().await;
    let ok = || file_form("a.txt", "plain text");

    // Path ids.
    assert_400(upload(&s, &p, "a%00b", &[], None, ok()).await, "externalId").await;
    assert_400(upload(&s, &p, "a%01b", &[], None, ok()).await, "externalId").await;
    assert_400(upload(&s, &p, "a%ZZ", &[], None, ok()).await, "%25").await;
    assert_400(upload(&s, &p, "a%FF", &[], None, ok()).await, "UTF-8").await;
    let long = "x".repeat(1025);
    assert_400(upload(&s, &p, &long, &[], None, ok()).await, "externalId").await;

    // Query parameters (raw, as an attacker sends them).
    for (query, name) in [
        ("externalUrl=https://x.test/%00", "externalUrl"),
        ("externalChecksum=v1%00", "externalChecksum"),
        ("externalChecksum=v1%0A", "externalChecksum"),
        ("externalChecksum=100%", "%25"),
    ] {
        let resp = s
            .client
            .put(raw_query(&s, &format!("{}/file", p.object("q")), query))
            .basic_auth(inlet_tests::ADMIN_EMAIL, Some(inlet_tests::ADMIN_TOKEN))
            .multipart(ok())
            .send()
            .await
            .unwrap();
        assert_400(resp, name).await;
    }
    let long_url = format!("https://x.test/{}", "u".repeat(9000));
    assert_400(
        upload(&s, &p, "u", &[("externalUrl", &long_url)], None, ok()).await,
        "externalUrl",
    )
    .await;
    // Links are http or https (issue 22, point 8): anything else would be shown as a link.
    for url in [
        "javascript:alert(1)",
        "data:text/html,<b>x</b>",
        "file:///etc/passwd",
        "x.test/a",
    ] {
        let detail = assert_400(
            upload(&s, &p, "u", &[("externalUrl", url)], None, ok()).await,
            "externalUrl",
        )
        .await;
        assert!(detail.contains("http:// or https://"), "{url}: {detail}");
    }
    for url in [" HTTPS://x.test/a", "http://x.test/b"] {
        let resp = upload(&s, &p, "web-link", &[("externalUrl", url)], None, ok()).await;
        assert!(resp.status().is_success(), "{url}: {}", resp.status());
    }

    // The tag header: percent-encoding is strict, values are lines.
    for (tag, says) in [
        ("color:%ZZ%", "write a literal % as %25"),
        ("color:red%", "write a literal % as %25"),
        ("color:a%2", "write a literal % as %25"),
        ("color:%FF", "UTF-8"),
        ("color:a%00b", "U+0000"),
        ("color:a%09b", "U+0009"),
    ] {
        let detail = assert_400(
            upload(&s, &p, "t", &[], Some(tag), ok()).await,
            "X-Service-Object-Tag",
        )
        .await;
        assert!(detail.contains(says), "{tag}: {detail}");
    }
    let long_tag = format!("color:{}", "r".repeat(3000));
    assert_400(
        upload(&s, &p, "t", &[], Some(&long_tag), ok()).await,
        "1024",
    )
    .await;

    // Multipart file names: a raw control character is a malformed part header; an encoded one
    // (RFC 5987) decodes to a refused file name.
    let form = multipart::Form::new().part(
        "file",
        multipart::Part::bytes(b"x".to_vec()).file_name("bad\u{1}name.txt"),
    );
    expect_problem(upload(&s, &p, "f", &[], None, form).await, 400).await;
    let body = "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; \
                filename*=UTF-8''bad%01name.txt\r\n\r\nx\r\n--XyZ--\r\n";
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("f")))
        .header("content-type", "multipart/form-data; boundary=XyZ")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_400(resp, "the file name of multipart part 'file'").await;

    // Search.
    let resp = s
        .client
        .get(raw_query(&s, "/search", "q=a%00"))
        .basic_auth(inlet_tests::ADMIN_EMAIL, Some(inlet_tests::ADMIN_TOKEN))
        .send()
        .await
        .unwrap();
    assert_400(resp, "query parameter q").await;

    // Nothing was stored by any of them.
    for id in ["q", "u", "t", "f"] {
        let resp = s.req(Method::GET, &p.object(id)).send().await.unwrap();
        expect_problem(resp, 404).await;
    }

    // STRUCTURED JSON: NUL anywhere is refused with its JSON pointer; every other character,
    // control characters included, is stored faithfully.
    let src = s.create_source(structured_source()).await;
    let t = SourcePaths::of(&src, 0);
    let push = |id: &'static str, body: Value| {
        s.req(Method::PUT, &format!("{}/content", t.object(id)))
            .json(&body)
            .send()
    };
    assert_400(
        push("n1", json!({"title": "x", "body": "a\u{0}b"}))
            .await
            .unwrap(),
        "/body",
    )
    .await;
    assert_400(
        push(
            "n2",
            json!({"title": "x", "extra": ["ok", {"deep": "\u{0}"}]}),
        )
        .await
        .unwrap(),
        "/extra/1/deep",
    )
    .await;
    let faithful = "tab\tline\ncr\r\u{1}\u{7f} 東京 🙂 %25";
    let resp = push("ok", json!({"title": "T", "body": faithful}))
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let record: Value = s
        .req(Method::GET, &t.object("ok"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(record["content"], faithful);
    // The multipart form of a STRUCTURED write is held to the same rule.
    let field_id = src["sourceObjectTypes"][0]["fields"][1]["id"]
        .as_str()
        .map(str::to_string);
    assert!(field_id.is_some(), "{src}");
    if let Some(field_id) = field_id {
        let form = multipart::Form::new()
            .part(
                "file",
                multipart::Part::bytes(br#"{"title": "x\u0000"}"#.to_vec()).file_name("r.json"),
            )
            .part(
                field_id,
                multipart::Part::bytes(b"attached".to_vec()).file_name("a.txt"),
            );
        let resp = s
            .req(Method::PUT, &format!("{}/file", t.object("m")))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_400(resp, "/title").await;
    }

    // Allowed Unicode round-trips exactly: externalId, tag value (a decoded %25), checksum, url.
    let id = "Résumé 東京 🙂 (1)";
    let encoded: String = id
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let resp = upload(
        &s,
        &p,
        &encoded,
        &[
            ("externalChecksum", "sha256:ü"),
            ("externalUrl", "https://x.test/ü?a=1&b=%25"),
        ],
        Some("color:100%25 r%C3%A9d"),
        ok(),
    )
    .await;
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let record: Value = s
        .req(Method::GET, &p.object(&encoded))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(record["externalId"], id, "{record}");
    assert_eq!(record["tags"]["color"], json!(["100% réd"]), "{record}");
    assert_eq!(record["externalChecksum"], "sha256:ü", "{record}");
    assert_eq!(record["url"], "https://x.test/ü?a=1&b=%25", "{record}");

    // Extracted text keeps everything but NUL bytes.
    let mut bytes = "hello world ".repeat(100).into_bytes();
    bytes.extend_from_slice(b"\0tail");
    let resp = upload(&s, &p, "nul", &[], None, file_form("nul.txt", bytes)).await;
    assert_eq!(resp.status(), 201);
    let record: Value = s
        .req(Method::GET, &p.object("nul"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let content = record["content"].as_str().unwrap_or_default();
    assert!(
        content.contains("hello world") && content.ends_with("tail"),
        "{content:?}"
    );
    assert!(!content.contains('\0'));

    // OAuth token requests: RFC 6749 invalid_request, never a lookup.
    let resp = s
        .client
        .post(format!("{}/oauth/token", s.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=authorization_code&client_id=a%00b&code=x")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let body = resp.text().await.unwrap();
    assert_no_internals(&body);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"], "invalid_request", "{v}");
    assert!(
        v["error_description"]
            .as_str()
            .unwrap_or_default()
            .contains("client_id"),
        "{v}"
    );

    // Over-long and control-laden source fields.
    let mut body = inlet_tests::record_source("bad\u{1}id");
    let resp = s
        .req(Method::POST, "/sources")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_400(resp, "externalId").await;
    body["externalId"] = json!("fine");
    body["config"]["name"] = json!("nul\u{0}name");
    let resp = s
        .req(Method::POST, "/sources")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_400(resp, "/config/name").await;
}

#[tokio::test]
async fn hostile_input_on_memory() {
    hostile_input_is_refused(TestServer::start().await).await;
}

#[tokio::test]
async fn hostile_input_on_sqlite() {
    hostile_input_is_refused(TestServer::start_sqlite().await).await;
}

#[tokio::test]
async fn hostile_input_on_postgres() {
    let Some(schema) = inlet_tests::postgres::Schema::for_test().await else {
        return;
    };
    hostile_input_is_refused(TestServer::start_on(&schema.url, Default::default()).await).await;
    schema.drop().await;
}
