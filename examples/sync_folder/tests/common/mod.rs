//! What the sync-folder tests share: the test tree, running the binary against a server, and
//! reading back what it mirrored. Each test file uses part of it.
#![allow(dead_code)]

use std::{collections::BTreeMap, fs, path::Path, process::Output, time::Duration};

use inlet_tests::{
    SourcePaths, TestServer,
    oauth::{Browser, auth_params, create_client},
};
use reqwest::Method;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Files of the test tree: externalId (relative path) → content.
pub const TREE: &[(&str, &str)] = &[
    ("readme.txt", "Top level notes about zebras."),
    ("docs/guide.md", "# Guide\n\nHow to feed the giraffe."),
    ("docs/api/v1.txt", "Version one endpoints for the walrus."),
    ("docs/api/v2.txt", "Version two endpoints for the narwhal."),
    ("photos/Café menu (2026).txt", "Croissant and espresso."),
    ("odd dir %41/x#y?.txt", "Odd names survive encoding: okapi."),
];

pub fn write_tree(root: &Path) {
    for (path, content) in TREE {
        let file = root.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, content).unwrap();
    }
    fs::create_dir_all(root.join("photos/empty")).unwrap();
}

pub fn checksum(content: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(content.as_bytes())))
}

/// What a run of the tool printed, and how it ended.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn summary(&self) -> &str {
        self.stdout
            .lines()
            .rev()
            .find(|l| l.starts_with("summary"))
            .unwrap_or_else(|| panic!("no summary line:\n{}\n{}", self.stdout, self.stderr))
    }

    /// The number after `key` in the summary line (`uploaded 3, ...`).
    pub fn count(&self, key: &str) -> u64 {
        let summary = self.summary();
        let at = summary
            .find(&format!("{key} "))
            .unwrap_or_else(|| panic!("no '{key}' in {summary}"));
        summary[at + key.len() + 1..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no number after '{key}' in {summary}"))
    }

    pub fn assert_ok(&self) {
        assert_eq!(
            self.code,
            Some(0),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
    }
}

/// Runs `sync-folder` with `args` against `server`.
pub async fn sync_folder(server: &TestServer, args: &[&str]) -> Run {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_sync-folder"));
    cmd.args(["--url", &server.base])
        .args(args)
        .env_remove("INLET_URL")
        .env_remove("INLET_TOKEN")
        .env_remove("INLET_USER")
        .kill_on_drop(true);
    let Output {
        status,
        stdout,
        stderr,
    } = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("sync-folder finished in time")
        .expect("sync-folder runs");
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// An OAuth2 access token of the administrator (the tool's default credential is Bearer).
pub async fn access_token(server: &TestServer) -> String {
    let client = create_client(server, &["default"]).await;
    let params = auth_params(&client, "default", "state-1");
    let code = Browser::new(server).admin_code(&params).await;
    let resp = server
        .client
        .post(format!("{}/oauth/token", server.base))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", client.redirect_uri.as_str()),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let tokens: Value = resp.json().await.unwrap();
    tokens["access_token"].as_str().unwrap().to_string()
}

/// Percent-encodes an externalId as one path segment.
pub fn seg(id: &str) -> String {
    percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC).to_string()
}

pub async fn get(server: &TestServer, path: &str) -> (u16, Value) {
    let resp = server.req(Method::GET, path).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The source with this externalId, if the workspace has one.
pub async fn source_by_external_id(server: &TestServer, external_id: &str) -> Option<Value> {
    let (status, sources) = get(server, "/sources").await;
    assert_eq!(status, 200);
    sources
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["externalId"] == external_id)
        .cloned()
}

/// A mirrored source's paths and folder ids.
pub struct Mirror {
    pub paths: SourcePaths,
    pub facet: String,
}

impl Mirror {
    pub async fn of(server: &TestServer, external_id: &str) -> Self {
        let source = source_by_external_id(server, external_id)
            .await
            .expect("the tool created the source");
        let ot = &source["sourceObjectTypes"][0];
        assert_eq!(ot["sourceDataType"], "RECORD");
        assert_eq!(ot["tagConfigs"][0]["type"], "HIERARCHICAL");
        Self {
            facet: ot["facets"][0]["id"].as_str().unwrap().into(),
            paths: SourcePaths::of(&source, 0),
        }
    }

    pub async fn metadata(&self, server: &TestServer, id: &str) -> (u16, Value) {
        get(server, &format!("{}/metadata", self.paths.object(&seg(id)))).await
    }

    pub async fn record(&self, server: &TestServer, id: &str) -> Value {
        let (status, record) = get(server, &self.paths.object(&seg(id))).await;
        assert_eq!(status, 200, "{id}: {record}");
        record
    }

    /// Folder externalId → (name, parent, count) of the roots (`None`) or a folder's children.
    pub async fn folders(
        &self,
        server: &TestServer,
        parent: Option<&str>,
    ) -> BTreeMap<String, (String, Option<String>, u64)> {
        let base = format!(
            "/sources/{}/facets/{}/hierarchies",
            self.paths.source_id, self.facet
        );
        let path = match parent {
            Some(p) => format!("{base}/{}/children", seg(p)),
            None => base,
        };
        let (status, folders) = get(server, &path).await;
        assert_eq!(status, 200, "{folders}");
        folders
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["externalId"].as_str().unwrap().to_string(),
                    (
                        f["name"].as_str().unwrap().to_string(),
                        f["parentExternalId"].as_str().map(str::to_string),
                        f["count"].as_u64().unwrap(),
                    ),
                )
            })
            .collect()
    }

    pub async fn sync(&self, server: &TestServer, n: i64) -> Value {
        let (status, sync) = get(server, &format!("{}/{n}", self.paths.syncs())).await;
        assert_eq!(status, 200, "{sync}");
        sync
    }

    pub async fn syncs(&self, server: &TestServer) -> Vec<Value> {
        let (status, syncs) = get(server, &self.paths.syncs()).await;
        assert_eq!(status, 200);
        syncs.as_array().unwrap().clone()
    }

    pub async fn search(&self, server: &TestServer, q: &str) -> Vec<String> {
        server.settle().await;
        let resp = server
            .req(Method::GET, "/search")
            .query(&[("q", q), ("sourceId", self.paths.source_id.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let found: Value = resp.json().await.unwrap();
        found["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["externalId"].as_str().unwrap().to_string())
            .collect()
    }
}

pub fn folder(name: &str, parent: Option<&str>, count: u64) -> (String, Option<String>, u64) {
    (name.into(), parent.map(Into::into), count)
}
