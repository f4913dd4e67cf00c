//! End-to-end: every 4xx speaks the API's language. A walk over every operation of the published
//! document with a malformed value of each parameter kind, malformed and mistyped JSON bodies and
//! a wrong Content-Type; no detail may carry framework words (`string_uuid`, `integer_int64`,
//! `param0`, `Input`). Plus the exact messages of a newcomer's usual mistakes.

use inlet_tests::{ADMIN_EMAIL, ADMIN_TOKEN, TestServer, assert_no_internals, expect_problem};
use reqwest::Method;
use serde_json::{Value, json};

/// Words of the framework's that must never reach a caller.
const FRAMEWORK: &[&str] = &[
    "string_uuid",
    "integer_int64",
    "integer_uint32",
    "param0",
    "param1",
    "Input\"",
    "Expected input type",
    "parse request payload",
    "failed to parse",
    "occurred while parsing",
];

fn assert_our_words(what: &str, body: &str) {
    assert_no_internals(body);
    for word in FRAMEWORK {
        assert!(
            !body.contains(word),
            "{what}: framework words ({word:?}) in {body}"
        );
    }
}

/// A malformed value for a parameter of this schema, when one exists.
fn malformed(schema: &Value) -> Option<&'static str> {
    match (
        schema.get("type").and_then(Value::as_str),
        schema.get("format").and_then(Value::as_str),
    ) {
        (Some("string"), Some("uuid")) => Some("not-a-uuid"),
        (Some("integer"), _) => Some("abc"),
        (Some("boolean"), _) => Some("maybe"),
        (Some("string"), Some("date-time")) => Some("yesterday"),
        _ => None,
    }
}

#[tokio::test]
async fn every_operation_refuses_malformed_input_in_our_words() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let doc: Value = serde_json::from_str(&inlet_server::openapi_json()).unwrap();
    let paths = doc["paths"].as_object().unwrap();
    let mut checked = 0;
    for (template, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            let good = |name: &str| match name {
                "sourceId" => p.source_id.clone(),
                "objectTypeId" => p.object_type_id.clone(),
                "syncNumber" => "1".into(),
                "webhookId" => uuid::Uuid::new_v4().to_string(),
                _ => "x".into(),
            };
            let fill = |bad: Option<&str>| {
                let mut path = template.clone();
                for param in params.iter().filter(|q| q["in"] == "path") {
                    let name = param["name"].as_str().unwrap();
                    let value = if Some(name) == bad {
                        malformed(&param["schema"]).unwrap_or("x").to_string()
                    } else {
                        good(name)
                    };
                    path = path.replace(&format!("{{{name}}}"), &value);
                }
                format!("{}{path}", s.base)
            };
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let send = |url: String| {
                s.client
                    .request(method.clone(), url)
                    .basic_auth(ADMIN_EMAIL, Some(ADMIN_TOKEN))
            };
            // Each malformed path or query parameter.
            for param in &params {
                let (Some(name), Some(bad)) = (param["name"].as_str(), malformed(&param["schema"]))
                else {
                    continue;
                };
                let resp = match param["in"].as_str() {
                    Some("path") => send(fill(Some(name))).send().await.unwrap(),
                    Some("query") => send(format!("{}?{name}={bad}", fill(None)))
                        .send()
                        .await
                        .unwrap(),
                    _ => continue,
                };
                let status = resp.status();
                let body = resp.text().await.unwrap();
                let what = format!("{method} {template} with {name}={bad}");
                assert!(status.is_client_error(), "{what}: {status} {body}");
                assert_our_words(&what, &body);
                if param["in"] == "path" || !template.starts_with("/oauth") {
                    assert!(
                        body.contains(name),
                        "{what}: the detail should name {name}: {body}"
                    );
                }
                checked += 1;
            }
            // Bodies: mistyped JSON, an unknown field, a wrong Content-Type.
            let Some(content) = op
                .pointer("/requestBody/content")
                .and_then(Value::as_object)
            else {
                continue;
            };
            if content.keys().any(|m| m.starts_with("application/json")) {
                for body in ["{\"a\":", "[1,2]", "{\"zzzz_unknown\": 1}"] {
                    let resp = send(fill(None))
                        .header("content-type", "application/json")
                        .body(body)
                        .send()
                        .await
                        .unwrap();
                    let status = resp.status();
                    let text = resp.text().await.unwrap();
                    let what = format!("{method} {template} with body {body}");
                    assert!(
                        status.is_client_error() || status.is_success(),
                        "{what}: {status}"
                    );
                    assert_our_words(&what, &text);
                    checked += 1;
                }
            }
            let resp = send(fill(None))
                .header("content-type", "text/markdown")
                .body("# hello")
                .send()
                .await
                .unwrap();
            let status = resp.status();
            let text = resp.text().await.unwrap();
            let what = format!("{method} {template} with text/markdown");
            assert!(status.is_client_error(), "{what}: {status} {text}");
            assert_our_words(&what, &text);
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} requests were checked");
}

#[tokio::test]
async fn a_newcomers_mistakes_get_messages_that_say_what_to_do() {
    let s = TestServer::start().await;
    let p = s.record_source().await;

    // A source's externalId where its id belongs.
    let resp = s
        .req(Method::GET, "/sources/files/objecttypes/x/syncs")
        .send()
        .await
        .unwrap();
    let d = expect_problem(resp, 400).await;
    assert_eq!(
        d,
        "path parameter sourceId must be a UUID: the source's `id` from the create-source \
         answer, not its externalId (got \"files\")"
    );

    // syncNumber=abc.
    let resp = s
        .req(Method::PUT, &p.object("a"))
        .query(&[("syncNumber", "abc")])
        .send()
        .await
        .unwrap();
    let d = expect_problem(resp, 400).await;
    assert!(
        d.starts_with("query parameter syncNumber must be an integer"),
        "{d}"
    );

    // A close operation that does not exist.
    let resp = s
        .req(Method::PUT, &format!("{}/1", p.syncs()))
        .json(&json!({"operation": "DONE"}))
        .send()
        .await
        .unwrap();
    let d = expect_problem(resp, 400).await;
    assert_eq!(
        d,
        "operation must be one of COMPLETE, COMPLETE_INCREMENTAL, FAIL; found \"DONE\""
    );

    // A close without Content-Type.
    let resp = s
        .req(Method::PUT, &format!("{}/1", p.syncs()))
        .body("{\"operation\": \"COMPLETE\"}")
        .send()
        .await
        .unwrap();
    let d = expect_problem(resp, 415).await;
    assert!(d.contains("send the body as application/json"), "{d}");

    // A raw file body instead of multipart.
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .header("content-type", "text/markdown")
        .body("# notes")
        .send()
        .await
        .unwrap();
    let d = expect_problem(resp, 415).await;
    assert!(
        d.contains("send multipart/form-data with the file in a part named `file`"),
        "{d}"
    );

    // A null where a string belongs, and a wrong-case field.
    let mut body = inlet_tests::record_source("nulls");
    body["config"]["name"] = Value::Null;
    let resp = s
        .req(Method::POST, "/sources")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_problem(resp, 400).await,
        "config.name must be a string; found null"
    );
    let mut body = inlet_tests::record_source("typo");
    let config = body["config"].as_object_mut().unwrap();
    config.remove("trackStatus");
    config.insert("trackstatus".into(), json!(true));
    let resp = s
        .req(Method::POST, "/sources")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_problem(resp, 400).await,
        "unknown field \"trackstatus\" in config; did you mean \"trackStatus\"?"
    );

    // A search tag filter without its tag: blamed on the query parameter, not the header.
    let resp = s
        .req(Method::GET, "/search")
        .query(&[("tag", "finance")])
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_problem(resp, 400).await,
        "query parameter tag 'finance' must have the form <tagExternalId>:<value>"
    );

    // An unknown endpoint.
    let resp = s.req(Method::GET, "/nowhere").send().await.unwrap();
    let d = expect_problem(resp, 404).await;
    assert!(d.contains("/docs"), "{d}");
}

#[tokio::test]
async fn credential_mistakes_say_which_scheme_goes_where() {
    use inlet_tests::oauth::{Browser, auth_params, create_client};
    let s = TestServer::start().await;

    // An API token sent as Bearer.
    let resp = s
        .client
        .get(s.url("/sources"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    let d = expect_problem(resp, 401).await;
    assert!(
        d.contains("this is an API token") && d.contains("HTTP Basic"),
        "{d}"
    );

    // A real access token on the Basic-only client maintenance endpoints.
    let client = create_client(&s, &["*:*"]).await;
    let params = auth_params(&client, "*:*", "st");
    let code = Browser::new(&s).admin_code(&params).await;
    let exchange = |code: String, redirect: &'static str| {
        let client = client.clone();
        let s = &s;
        async move {
            let resp = s
                .client
                .post(format!("{}/oauth/token", s.base))
                .form(&[
                    ("grant_type", "authorization_code"),
                    ("code", code.as_str()),
                    ("client_id", client.id.as_str()),
                    ("client_secret", client.secret.as_str()),
                    ("redirect_uri", redirect),
                ])
                .send()
                .await
                .unwrap();
            (resp.status().as_u16(), resp.json::<Value>().await.unwrap())
        }
    };
    let (status, tokens) = exchange(code, inlet_tests::oauth::REDIRECT_URI).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap().to_string();
    let resp = s
        .client
        .get(s.url("/oauthclients"))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    let d = expect_problem(resp, 401).await;
    assert!(
        d.contains("HTTP Basic only") && d.contains("Bearer tokens are not accepted here"),
        "{d}"
    );

    // A mistyped redirect_uri: the code is used up, and the messages say no tokens came of it.
    let code = Browser::new(&s).admin_code(&params).await;
    let (status, e) = exchange(code.clone(), "https://app.example.test/calback").await;
    assert_eq!(status, 400);
    let d = e["error_description"].as_str().unwrap_or_default();
    assert!(
        d.contains("'https://app.example.test/calback' is not the one of the authorization")
            && d.contains("no tokens were issued"),
        "{d}"
    );
    let (status, e) = exchange(code, inlet_tests::oauth::REDIRECT_URI).await;
    assert_eq!(status, 400);
    let d = e["error_description"].as_str().unwrap_or_default();
    assert!(d.contains("no tokens were issued from it"), "{d}");
    assert!(!d.contains("are revoked"), "{d}");
}

/// Nothing sent is silently dropped (issue 38, point 2): an unknown query parameter or
/// `X-Service-Object-*` header answers 400 naming it and the name probably meant, before
/// anything is written; a JSON body's unknown field is reported before missing ones.
#[tokio::test]
async fn unknown_parameters_and_headers_are_refused_with_the_name_meant() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let upload = |query: &[(&str, &str)], header: Option<(&str, &str)>| {
        let mut req = s
            .req(Method::PUT, &format!("{}/file", p.object("doc")))
            .query(query)
            .multipart(inlet_tests::file_form("doc.txt", b"text".to_vec()));
        if let Some((name, value)) = header {
            req = req.header(name, value);
        }
        req.send()
    };
    let resp = upload(&[("externalChecksum", "v1")], None).await.unwrap();
    assert_eq!(resp.status(), 201);
    // A misspelled parameter would have erased the stored checksum.
    let detail = expect_problem(
        upload(&[("externalchecksum", "v2")], None).await.unwrap(),
        400,
    )
    .await;
    assert_eq!(
        detail,
        "unknown query parameter \"externalchecksum\"; did you mean \"externalChecksum\"?"
    );
    let meta: Value = s
        .req(Method::GET, &format!("{}/metadata", p.object("doc")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(meta["externalChecksum"], "v1", "nothing was written");
    let detail = expect_problem(
        upload(&[], Some(("X-Service-Object-Tags", "color:red")))
            .await
            .unwrap(),
        400,
    )
    .await;
    assert_eq!(
        detail,
        "unknown header \"X-Service-Object-Tags\"; did you mean \"X-Service-Object-Tag\"?"
    );
    // An empty pair (`?=`, what some clients send for no parameters) names nothing.
    let resp = upload(&[("", "")], None).await.unwrap();
    assert_eq!(resp.status(), 200);
    for (query, says) in [
        ("sourceid", "did you mean \"sourceId\"?"),
        ("query", "did you mean \"q\"?"),
    ] {
        let resp = s
            .req(Method::GET, "/search")
            .query(&[(query, "x")])
            .send()
            .await
            .unwrap();
        let detail = expect_problem(resp, 400).await;
        assert!(
            detail.starts_with(&format!("unknown query parameter \"{query}\"")),
            "{detail}"
        );
        if query == "sourceid" {
            assert!(detail.ends_with(says), "{detail}");
        }
    }
    // JSON: the misspelled field, not the required one it hides.
    let resp = s
        .req(Method::POST, &p.syncs())
        .json(&json!({"opration": "START"}))
        .send()
        .await
        .unwrap();
    let detail = expect_problem(resp, 400).await;
    assert_eq!(
        detail,
        "unknown field \"opration\"; did you mean \"operation\"?"
    );
}

/// A second source with an externalId the workspace uses answers 409 with the existing
/// source's id as a field of the problem (`existingSourceId`), not only inside the sentence.
#[tokio::test]
async fn a_duplicate_source_names_the_existing_one_as_a_field() {
    let s = TestServer::start().await;
    let first = s.create_source(inlet_tests::record_source("drive")).await;
    let resp = s
        .req(Method::POST, "/sources")
        .json(&inlet_tests::record_source("drive"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 409);
    let problem: Value = resp.json().await.unwrap();
    assert_eq!(problem["existingSourceId"], first["id"], "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains(first["id"].as_str().unwrap()),
        "{problem}"
    );
}

/// An upload to a source created without `trackStatus` answers 404 (spec) naming the request
/// that turns it on.
#[tokio::test]
async fn an_untracked_source_says_how_to_turn_tracking_on() {
    let s = TestServer::start().await;
    let mut body = inlet_tests::record_source("untracked");
    body["config"]["trackStatus"] = json!(false);
    let source = s.create_source(body).await;
    let p = inlet_tests::SourcePaths::of(&source, 0);
    let resp = s
        .req(Method::PUT, &format!("{}/file", p.object("a")))
        .multipart(inlet_tests::file_form("a.txt", b"text".to_vec()))
        .send()
        .await
        .unwrap();
    let detail = expect_problem(resp, 404).await;
    assert_eq!(
        detail,
        format!(
            "this source was created without trackStatus=true and accepts no uploads; turn it \
             on with PATCH /api/v1/sources/{} and the body {{\"trackStatus\": true}}",
            source["id"].as_str().unwrap()
        )
    );
}

/// A tag header naming the tag by its display name, or misspelled, answers 404 (spec 7) with the
/// object type's tag ids and the one meant.
#[tokio::test]
async fn an_unknown_tag_names_the_tags_there_are() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let send = |tag: &'static str| {
        s.req(Method::PUT, &format!("{}/file", p.object("a")))
            .header("X-Service-Object-Tag", tag)
            .multipart(inlet_tests::file_form("a.txt", b"text".to_vec()))
            .send()
    };
    let detail = expect_problem(send("Colour:red").await.unwrap(), 404).await;
    assert_eq!(
        detail,
        "tag 'Colour' is not configured for object type 'docs'; did you mean 'color'? Its tags \
         are 'color', 'size', 'due'."
    );
    let detail = expect_problem(send("Due:2026-01-01T00:00:00Z").await.unwrap(), 404).await;
    assert!(detail.contains("did you mean 'due'?"), "{detail}");
    let detail = expect_problem(send("owner:me").await.unwrap(), 404).await;
    assert_eq!(
        detail,
        "tag 'owner' is not configured for object type 'docs'. Its tags are 'color', 'size', \
         'due'."
    );
}

/// An externalId with an unencoded `/` makes a path no operation matches: the 404 shows the
/// whole path and says to percent-encode the slash.
#[tokio::test]
async fn an_unencoded_slash_is_named_with_the_fix() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let long = "reports/2026/q3/a-rather-long-folder-name/and-a-long-file-name.pdf";
    let resp = s
        .req(Method::GET, &format!("{}/metadata", p.object(long)))
        .send()
        .await
        .unwrap();
    let detail = expect_problem(resp, 404).await;
    let path = format!("/api/v1{}/metadata", p.object(long));
    assert_eq!(
        detail,
        format!(
            "no endpoint GET \"{path}\"; if externalId is \"{long}\", percent-encode each '/' \
             in it as %2F (/api/v1/sources/{{sourceId}}/objecttypes/{{objectTypeId}}/objects/\
             {}/metadata)",
            long.replace('/', "%2F")
        )
    );
    let resp = s.req(Method::GET, "/nowhere/at/all").send().await.unwrap();
    assert_eq!(
        expect_problem(resp, 404).await,
        "no endpoint GET \"/api/v1/nowhere/at/all\"; the API reference is at /docs"
    );
}

/// An upload skipped by its unchanged checksum says so in `skipped`, including that its tags
/// and externalUrl were not applied; a stored upload has no `skipped`.
#[tokio::test]
async fn a_checksum_skip_says_the_upload_changed_nothing() {
    let s = TestServer::start().await;
    let p = s.record_source().await;
    let upload = |tag: &'static str| {
        s.req(
            Method::PUT,
            &format!("{}/file?externalChecksum=v1", p.object("a")),
        )
        .header("X-Service-Object-Tag", tag)
        .multipart(inlet_tests::file_form("a.txt", b"text".to_vec()))
        .send()
    };
    let first = upload("color:red").await.unwrap();
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    assert!(first.get("skipped").is_none(), "{first}");
    let again = upload("color:blue").await.unwrap();
    assert_eq!(again.status(), 200);
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["skipped"]["reason"], "CHECKSUM_UNCHANGED", "{again}");
    let detail = again["skipped"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("tags and externalUrl were not applied"),
        "{detail}"
    );
    assert_eq!(again["version"], first["version"]);
    let stored: Value = s
        .req(Method::GET, &p.object("a"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stored["tags"]["color"], json!(["red"]), "{stored}");
}
