//! Search and folder trees over HTTP, on the in-memory, SQLite and PostgreSQL stores.

use inlet_server::auth::{self, NewUserOptions};
use inlet_tests::{SourcePaths, TestServer, expect_problem, file_form, result_ids as ids};
use reqwest::Method;
use serde_json::{Value, json};

fn folder_source() -> Value {
    json!({
        "definition": {"type": "CUSTOM"},
        "externalId": "drive",
        "config": {"type": "CUSTOM", "name": "Drive", "trackStatus": true,
            "specification": {"application": {"objectTypes": [{
                "name": "Files", "externalId": "files", "sourceDataType": "RECORD", "fields": [],
                "tagConfigs": [
                    {"type": "HIERARCHICAL", "name": "Folder", "externalId": "folder", "dataType": "TEXT", "allowMultipleValues": false},
                    {"type": "SIMPLE", "name": "Color", "externalId": "color", "dataType": "TEXT", "allowMultipleValues": true}
                ],
                "facets": [
                    {"type": "TAG", "name": "Folder", "tagConfig": {"externalId": "folder"}, "allowMultipleValues": true},
                    {"type": "TAG", "name": "Color", "tagConfig": {"externalId": "color"}, "allowMultipleValues": true}
                ]
            }]}}
        }
    })
}

struct Drive {
    paths: SourcePaths,
    folder_tag: String,
    color_tag: String,
    folder_facet: String,
}

async fn drive(server: &TestServer) -> Drive {
    let source = server.create_source(folder_source()).await;
    let ot = &source["sourceObjectTypes"][0];
    Drive {
        paths: SourcePaths::of(&source, 0),
        folder_tag: ot["tagConfigs"][0]["id"].as_str().unwrap().into(),
        color_tag: ot["tagConfigs"][1]["id"].as_str().unwrap().into(),
        folder_facet: ot["facets"][0]["id"].as_str().unwrap().into(),
    }
}

async fn put_folder(
    server: &TestServer,
    d: &Drive,
    id: &str,
    name: &str,
    parent: Option<&str>,
) -> reqwest::Response {
    server
        .req(
            Method::PUT,
            &format!(
                "/sources/{}/tagconfigs/{}/hierarchies/{id}",
                d.paths.source_id, d.folder_tag
            ),
        )
        .json(&json!({"name": name, "parentExternalId": parent}))
        .send()
        .await
        .unwrap()
}

async fn upload(server: &TestServer, d: &Drive, id: &str, text: &str, tags: &[&str]) -> u16 {
    let mut req = server
        .req(Method::PUT, &format!("{}/file", d.paths.object(id)))
        .multipart(file_form(&format!("{id}.txt"), text.to_string()));
    for t in tags {
        req = req.header("X-Service-Object-Tag", *t);
    }
    req.send().await.unwrap().status().as_u16()
}

async fn folders_and_search(server: TestServer) {
    let d = drive(&server).await;
    assert_eq!(
        put_folder(&server, &d, "root", "Projects", None)
            .await
            .status(),
        201
    );
    assert_eq!(
        put_folder(&server, &d, "alpha", "Alpha", Some("root"))
            .await
            .status(),
        201
    );
    let renamed = put_folder(&server, &d, "alpha", "Alpha (2026)", Some("root")).await;
    assert_eq!(renamed.status(), 200);
    assert_eq!(
        renamed.json::<Value>().await.unwrap()["name"],
        "Alpha (2026)"
    );
    expect_problem(put_folder(&server, &d, "x", "X", Some("nope")).await, 404).await;
    expect_problem(
        put_folder(&server, &d, "root", "Loop", Some("alpha")).await,
        400,
    )
    .await;
    let not_folder = server
        .req(
            Method::PUT,
            &format!(
                "/sources/{}/tagconfigs/{}/hierarchies/x",
                d.paths.source_id, d.color_tag
            ),
        )
        .json(&json!({"name": "X"}))
        .send()
        .await
        .unwrap();
    expect_problem(not_folder, 400).await;

    assert_eq!(
        upload(&server, &d, "ghost", "text", &["folder:missing"]).await,
        404
    );
    assert_eq!(
        upload(
            &server,
            &d,
            "a",
            "The quarterly sales report for the Café",
            &["folder:alpha", "color:red"]
        )
        .await,
        201
    );
    assert_eq!(
        upload(
            &server,
            &d,
            "b",
            "Quarterly numbers and more sales",
            &["folder:root", "color:blue"]
        )
        .await,
        201
    );
    assert_eq!(
        upload(&server, &d, "c", "東京都の売上報告書", &["color:red"]).await,
        201
    );

    let roots: Value = server
        .req(
            Method::GET,
            &format!(
                "/sources/{}/facets/{}/hierarchies",
                d.paths.source_id, d.folder_facet
            ),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        roots,
        json!([{"externalId": "root", "name": "Projects", "count": 2}])
    );
    let children: Value = server
        .req(
            Method::GET,
            &format!(
                "/sources/{}/facets/{}/hierarchies/root/children",
                d.paths.source_id, d.folder_facet
            ),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        children,
        json!([{"externalId": "alpha", "name": "Alpha (2026)", "parentExternalId": "root", "count": 1}])
    );

    // Search: words, snippet marks, facets with folder names, filters.
    let found = server.search(&[("q", "quarterly sales")]).await;
    assert_eq!(found["total"], 2);
    assert_eq!(found["exhaustive"], true);
    assert_eq!(ids(&found), ["a", "b"]);
    let a = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["externalId"] == "a")
        .unwrap();
    assert!(
        a["snippet"]
            .as_str()
            .unwrap()
            .contains("<mark>sales</mark>"),
        "{a}"
    );
    assert_eq!(a["tags"]["folder"], json!(["alpha"]));
    assert!(a["createdDate"].as_str().unwrap().ends_with("+00:00"));
    let folder_facet = found["facets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["tagExternalId"] == "folder")
        .unwrap();
    assert_eq!(folder_facet["name"], "Folder");
    let alpha = folder_facet["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["value"] == "alpha")
        .unwrap();
    assert_eq!(alpha["name"], "Alpha (2026)");
    assert_eq!(alpha["count"], 1);
    assert_eq!(ids(&server.search(&[("q", "cafe")]).await), ["a"]);
    assert_eq!(ids(&server.search(&[("q", "売上")]).await), ["c"]);
    assert_eq!(
        ids(&server.search(&[("tag", "color:red")]).await),
        ["a", "c"]
    );
    assert_eq!(
        ids(&server
            .search(&[("tag", "color:red"), ("tag", "color:blue")])
            .await),
        ["a", "b", "c"]
    );
    assert_eq!(
        ids(&server
            .search(&[("tag", "color:red"), ("tag", "folder:alpha")])
            .await),
        ["a"]
    );
    assert_eq!(
        ids(&server
            .search(&[("q", "sales"), ("modifiedFrom", "2999-01-01")])
            .await),
        Vec::<String>::new()
    );

    // Paging with cursors.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut q = vec![("limit", "1".to_string())];
        if let Some(c) = &cursor {
            q.push(("cursor", c.clone()));
        }
        let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let page = server.search(&q).await;
        seen.extend(ids(&page));
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    seen.sort();
    assert_eq!(seen, ["a", "b", "c"]);

    for bad in [
        vec![("limit", "0")],
        vec![("limit", "101")],
        vec![("cursor", "garbage")],
        // A cursor past result 10,000 (`o:10000`): never issued, refused.
        vec![("cursor", "bzoxMDAwMA")],
        vec![("tag", "nope:1")],
        vec![("createdFrom", "yesterday")],
    ] {
        let resp = server
            .req(Method::GET, "/search")
            .query(&bad)
            .send()
            .await
            .unwrap();
        expect_problem(resp, 400).await;
    }

    // Delete rules: children and records block; a removed record frees the folder.
    let del = |id: &'static str| {
        server
            .req(
                Method::DELETE,
                &format!(
                    "/sources/{}/tagconfigs/{}/hierarchies/{id}",
                    d.paths.source_id, d.folder_tag
                ),
            )
            .send()
    };
    expect_problem(del("root").await.unwrap(), 409).await;
    expect_problem(del("alpha").await.unwrap(), 409).await;
    let gone = server
        .req(Method::DELETE, &d.paths.object("a"))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 204);
    assert_eq!(
        ids(&server.search(&[("q", "quarterly")]).await),
        ["b"],
        "deleted records leave search"
    );
    assert_eq!(del("alpha").await.unwrap().status(), 204);
    expect_problem(del("alpha").await.unwrap(), 404).await;

    // Another workspace finds nothing and cannot see the folders.
    let other = auth::create_user(
        server.state.tokens.as_ref(),
        NewUserOptions {
            email: "x@other.test".into(),
            workspace: "other".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let theirs: Value = server
        .client
        .get(server.url("/search"))
        .basic_auth(&other.email, Some(&other.api_token))
        .query(&[("q", "quarterly")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["total"], 0);
    let resp = server
        .client
        .get(server.url(&format!(
            "/sources/{}/facets/{}/hierarchies",
            d.paths.source_id, d.folder_facet
        )))
        .basic_auth(&other.email, Some(&other.api_token))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
}

#[tokio::test]
async fn folders_and_search_in_memory() {
    folders_and_search(TestServer::start().await).await;
}

#[tokio::test]
async fn folders_and_search_on_sqlite() {
    folders_and_search(TestServer::start_sqlite().await).await;
}

#[tokio::test]
async fn folders_and_search_on_postgres() {
    let Some(schema) = inlet_tests::postgres::Schema::for_test().await else {
        return;
    };
    folders_and_search(TestServer::start_on(&schema.url, Default::default()).await).await;
    schema.drop().await;
}
