//! Every string the API stores has a maximum length, checked at the edge (issue 22, point 2):
//! a value at the maximum is stored, one byte or character more is refused with 400 naming
//! the field, and nothing of the refused request is stored. Run on memory, SQLite and
//! PostgreSQL, so the maxima are also within what PostgreSQL's indexes accept. The table of
//! maxima is in docs/security.md.

use inlet_tests::{TestServer, expect_problem, file_form};
use reqwest::Method;
use serde_json::{Value, json};

/// The object type inside a create-source body.
const OT: &str = "/config/specification/application/objectTypes/0";

/// A STRUCTURED source with a spare field, a HIERARCHICAL tag and a facet over it.
fn definition(external_id: &str) -> Value {
    json!({
        "definition": {"type": "CUSTOM"},
        "externalId": external_id,
        "config": {"type": "CUSTOM", "name": "Tickets", "trackStatus": true,
            "specification": {"application": {"objectTypes": [{
                "name": "Tickets", "externalId": "tickets", "sourceDataType": "STRUCTURED",
                "dataType": "JSON",
                "fields": [
                    {"name": "title", "contentSelector": "/title", "dataType": "TEXT"},
                    {"name": "spare", "contentSelector": "/spare", "dataType": "TEXT"}
                ],
                "tagConfigs": [{"type": "HIERARCHICAL", "name": "Folder", "externalId": "folder",
                    "dataType": "TEXT", "allowMultipleValues": false}],
                "facets": [{"type": "TAG", "name": "Folder", "tagConfig": {"externalId": "folder"},
                    "allowMultipleValues": false}],
                "templates": {"titleTemplate": "${f_title}", "searchTemplate": "${f_title}"}
            }]}}}
    })
}

fn unique() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `n` letters; for a JSON pointer field, `/` and `n - 1` letters.
fn text(n: usize, pointer: bool) -> String {
    if pointer {
        format!("/{}", "a".repeat(n - 1))
    } else {
        "a".repeat(n)
    }
}

/// Answers `at_max` (a request carrying the longest allowed value) and `over` (one more): the
/// first must succeed, the second must be a 400 whose detail names `field`.
async fn at_and_over(field: &str, at_max: reqwest::Response, over: reqwest::Response) {
    let status = at_max.status();
    let body = at_max.text().await.unwrap_or_default();
    assert!(
        status.is_success(),
        "{field} at its maximum: {status} {body}"
    );
    let detail = expect_problem(over, 400).await;
    assert!(
        detail.contains(field),
        "the refusal should name {field:?}: {detail}"
    );
}

async fn maxima_hold(s: TestServer) {
    // The source definition's strings: 1024 bytes each.
    let cases: [(&str, &[&str], bool); 9] = [
        ("externalId", &["/externalId"], false),
        ("config.name", &["/config/name"], false),
        ("objectTypes[0].name", &["~/name"], false),
        ("objectTypes[0].externalId", &["~/externalId"], false),
        (
            "tagConfigs[0].externalId",
            &[
                "~/tagConfigs/0/externalId",
                "~/facets/0/tagConfig/externalId",
            ],
            false,
        ),
        ("tagConfigs[0].name", &["~/tagConfigs/0/name"], false),
        ("facets[0].name", &["~/facets/0/name"], false),
        ("fields[1].name", &["~/fields/1/name"], false),
        (
            "fields[1].contentSelector",
            &["~/fields/1/contentSelector"],
            true,
        ),
    ];
    for (field, pointers, pointer) in cases {
        let body = |n: usize| {
            let mut body = definition(&unique());
            for p in pointers {
                // `~` stands for the object type's pointer.
                let at = p.replace('~', OT);
                *body.pointer_mut(&at).expect("pointer") = json!(text(n, pointer));
            }
            body
        };
        let at_max = s.req(Method::POST, "/sources").json(&body(1024));
        let over = s.req(Method::POST, "/sources").json(&body(1025));
        at_and_over(
            field,
            at_max.send().await.unwrap(),
            over.send().await.unwrap(),
        )
        .await;
    }
    let created: Value = s
        .req(Method::POST, "/sources")
        .json(&definition(&unique()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let source_id = created["id"].as_str().unwrap().to_string();
    let folder_tag = created["sourceObjectTypes"][0]["tagConfigs"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let sources_before = s.get_json("/sources").await;

    // A source's new name.
    let patch = |n: usize| {
        s.req(Method::PATCH, &format!("/sources/{source_id}"))
            .json(&json!({"name": "a".repeat(n)}))
            .send()
    };
    at_and_over(
        "name",
        patch(1024).await.unwrap(),
        patch(1025).await.unwrap(),
    )
    .await;

    // Folders: externalId 1024 bytes, name 500 characters (a 2-byte character counts once).
    let folder = |id: String, name: String| {
        s.req(
            Method::PUT,
            &format!("/sources/{source_id}/tagconfigs/{folder_tag}/hierarchies/{id}"),
        )
        .json(&json!({ "name": name }))
        .send()
    };
    at_and_over(
        "externalId",
        folder("f".repeat(1024), "F".into()).await.unwrap(),
        folder("f".repeat(1025), "F".into()).await.unwrap(),
    )
    .await;
    at_and_over(
        "name",
        folder("g".into(), "é".repeat(500)).await.unwrap(),
        folder("h".into(), "é".repeat(501)).await.unwrap(),
    )
    .await;
    // The published document states the same maximum (it said 1024 while the server took 500).
    let doc = s.get_json("/openapi.json").await;
    assert_eq!(
        doc.pointer("/components/schemas/FolderIn/properties/name/maxLength"),
        Some(&json!(500))
    );

    // Byte limits are stated as such: every externalId in a path (records and folders) says
    // `maxLength` in characters and `x-maxBytes` in bytes.
    let path_ids: Vec<&Value> = doc["paths"]
        .as_object()
        .expect("paths")
        .values()
        .flat_map(|item| item.as_object().into_iter().flatten())
        .flat_map(|(_, op)| op["parameters"].as_array().into_iter().flatten())
        .filter(|p| p["name"] == "externalId" && p["in"] == "path")
        .collect();
    assert!(
        path_ids.len() >= 10,
        "{} externalId parameters",
        path_ids.len()
    );
    for p in path_ids {
        assert_eq!(p["schema"]["maxLength"], json!(1024), "{p}");
        assert_eq!(p["schema"]["x-maxBytes"], json!(1024), "{p}");
    }
    for field in ["titleTemplate", "externalUrlTemplate", "searchTemplate"] {
        assert_eq!(
            doc.pointer(&format!(
                "/components/schemas/Templates/properties/{field}/maxLength"
            )),
            Some(&json!(10_000)),
            "{field}"
        );
    }

    // A record's strings: path externalId, tag value, checksum (1024 bytes), url (8192 bytes),
    // file name (1024 bytes).
    let p = s.record_source().await;
    let put =
        |id: String, query: Vec<(&'static str, String)>, tag: Option<String>, name: String| {
            let mut req = s
                .req(Method::PUT, &format!("{}/file", p.object(&id)))
                .query(&query)
                .multipart(file_form(&name, "text"));
            if let Some(t) = tag {
                req = req.header("X-Service-Object-Tag", t);
            }
            req.send()
        };
    let plain = || "a.txt".to_string();
    at_and_over(
        "externalId",
        put("i".repeat(1024), vec![], None, plain()).await.unwrap(),
        put("i".repeat(1025), vec![], None, plain()).await.unwrap(),
    )
    .await;
    // The limit is in bytes: 512 two-byte characters fit, 513 do not, though the document's
    // maxLength (characters) admits both; its `x-maxBytes` says so (checked above).
    at_and_over(
        "externalId",
        put("é".repeat(512), vec![], None, plain()).await.unwrap(),
        put("é".repeat(513), vec![], None, plain()).await.unwrap(),
    )
    .await;
    let tag = |n: usize| Some(format!("color:{}", "t".repeat(n)));
    at_and_over(
        "color",
        put(unique(), vec![], tag(1024), plain()).await.unwrap(),
        put(unique(), vec![], tag(1025), plain()).await.unwrap(),
    )
    .await;
    let sum = |n: usize| vec![("externalChecksum", "c".repeat(n))];
    at_and_over(
        "externalChecksum",
        put(unique(), sum(1024), None, plain()).await.unwrap(),
        put(unique(), sum(1025), None, plain()).await.unwrap(),
    )
    .await;
    let url = |n: usize| {
        let base = "https://x.test/";
        vec![(
            "externalUrl",
            format!("{base}{}", "u".repeat(n - base.len())),
        )]
    };
    at_and_over(
        "externalUrl",
        put(unique(), url(8192), None, plain()).await.unwrap(),
        put(unique(), url(8193), None, plain()).await.unwrap(),
    )
    .await;
    let name = |n: usize| format!("{}.txt", "n".repeat(n - 4));
    at_and_over(
        "file name",
        put(unique(), vec![], None, name(1024)).await.unwrap(),
        put(unique(), vec![], None, name(1025)).await.unwrap(),
    )
    .await;

    // An OAuth client's strings: name 200 and descriptions 4000 characters, 20 redirect URIs
    // of 2048 bytes.
    let client = |name: usize, description: usize, uri: usize, uris: usize| {
        let one = |i: usize| {
            let base = format!("https://app{i}.test/");
            format!("{base}{}", "r".repeat(uri - base.len()))
        };
        s.req(Method::POST, "/oauthclients")
            .json(&json!({
                "name": "é".repeat(name),
                "description": "d".repeat(description),
                "bottomDescription": "b".repeat(description),
                "redirectUris": (0..uris).map(one).collect::<Vec<_>>(),
                "scopes": ["default"],
            }))
            .send()
    };
    let ok = || client(200, 4000, 2048, 20);
    at_and_over(
        "name",
        ok().await.unwrap(),
        client(201, 1, 100, 1).await.unwrap(),
    )
    .await;
    at_and_over(
        "description",
        ok().await.unwrap(),
        client(1, 4001, 100, 1).await.unwrap(),
    )
    .await;
    at_and_over(
        "redirect",
        ok().await.unwrap(),
        client(1, 1, 2049, 1).await.unwrap(),
    )
    .await;
    at_and_over(
        "redirect",
        ok().await.unwrap(),
        client(1, 1, 100, 21).await.unwrap(),
    )
    .await;

    // Nothing a refused request carried was stored: the sources are as they were, apart from
    // the patch at the maximum and the record source made since.
    let sources_after = s.get_json("/sources").await;
    let ids = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let mut expected = ids(&sources_before);
    expected.push(p.source_id.clone());
    let mut got = ids(&sources_after);
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
}

#[tokio::test]
async fn maxima_hold_on_memory() {
    maxima_hold(TestServer::start().await).await;
}

#[tokio::test]
async fn maxima_hold_on_sqlite() {
    maxima_hold(TestServer::start_sqlite().await).await;
}

#[tokio::test]
async fn maxima_hold_on_postgres() {
    let Some(schema) = inlet_tests::postgres::Schema::for_test().await else {
        return;
    };
    maxima_hold(TestServer::start_on(&schema.url, Default::default()).await).await;
    schema.drop().await;
}
