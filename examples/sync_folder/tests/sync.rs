//! `sync-folder` as a child process against a real Inlet on a loopback port: a first run uploads
//! a nested tree (records, folder tags, folders with parents), a second only touches, a third
//! after local changes uploads the changed file and the COMPLETE close removes the deleted one;
//! `--dry-run` changes nothing; a failing file closes the sync with FAIL and exits non-zero; an
//! unusable source, a wrong credential kind and a sync left open are refused clearly.

use std::{collections::BTreeMap, fs, path::Path, process::Output, time::Duration};

use inlet_server::Settings;
use inlet_tests::{
    ADMIN_EMAIL, ADMIN_TOKEN, SourcePaths, TestServer,
    oauth::{Browser, auth_params, create_client},
};
use reqwest::Method;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Files of the test tree: externalId (relative path) → content.
const TREE: &[(&str, &str)] = &[
    ("readme.txt", "Top level notes about zebras."),
    ("docs/guide.md", "# Guide\n\nHow to feed the giraffe."),
    ("docs/api/v1.txt", "Version one endpoints for the walrus."),
    ("docs/api/v2.txt", "Version two endpoints for the narwhal."),
    ("photos/Café menu (2026).txt", "Croissant and espresso."),
    ("odd dir %41/x#y?.txt", "Odd names survive encoding: okapi."),
];

fn write_tree(root: &Path) {
    for (path, content) in TREE {
        let file = root.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, content).unwrap();
    }
    fs::create_dir_all(root.join("photos/empty")).unwrap();
}

fn checksum(content: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(content.as_bytes())))
}

/// What a run of the tool printed, and how it ended.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn summary(&self) -> &str {
        self.stdout
            .lines()
            .rev()
            .find(|l| l.starts_with("summary"))
            .unwrap_or_else(|| panic!("no summary line:\n{}\n{}", self.stdout, self.stderr))
    }

    /// The number after `key` in the summary line (`uploaded 3, ...`).
    fn count(&self, key: &str) -> u64 {
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

    fn assert_ok(&self) {
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
async fn sync_folder(server: &TestServer, args: &[&str]) -> Run {
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
async fn access_token(server: &TestServer) -> String {
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
fn seg(id: &str) -> String {
    percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC).to_string()
}

async fn get(server: &TestServer, path: &str) -> (u16, Value) {
    let resp = server.req(Method::GET, path).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The source with this externalId, if the workspace has one.
async fn source_by_external_id(server: &TestServer, external_id: &str) -> Option<Value> {
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
struct Mirror {
    paths: SourcePaths,
    facet: String,
}

impl Mirror {
    async fn of(server: &TestServer, external_id: &str) -> Self {
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

    async fn metadata(&self, server: &TestServer, id: &str) -> (u16, Value) {
        get(server, &format!("{}/metadata", self.paths.object(&seg(id)))).await
    }

    async fn record(&self, server: &TestServer, id: &str) -> Value {
        let (status, record) = get(server, &self.paths.object(&seg(id))).await;
        assert_eq!(status, 200, "{id}: {record}");
        record
    }

    /// Folder externalId → (name, parent, count) of the roots (`None`) or a folder's children.
    async fn folders(
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

    async fn sync(&self, server: &TestServer, n: i64) -> Value {
        let (status, sync) = get(server, &format!("{}/{n}", self.paths.syncs())).await;
        assert_eq!(status, 200, "{sync}");
        sync
    }

    async fn syncs(&self, server: &TestServer) -> Vec<Value> {
        let (status, syncs) = get(server, &self.paths.syncs()).await;
        assert_eq!(status, 200);
        syncs.as_array().unwrap().clone()
    }

    async fn search(&self, server: &TestServer, q: &str) -> Vec<String> {
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

fn folder(name: &str, parent: Option<&str>, count: u64) -> (String, Option<String>, u64) {
    (name.into(), parent.map(Into::into), count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrors_uploads_then_touches_then_removes() {
    let server = TestServer::start().await;
    let token = access_token(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root);
    let root_arg = root.to_str().unwrap();
    let first = [
        "--token",
        &token,
        "--create-source",
        "mirror",
        "--jobs",
        "3",
    ];

    // First run: the source is created and everything is uploaded.
    let run = sync_folder(&server, &[&first[..], &[root_arg]].concat()).await;
    run.assert_ok();
    assert!(run.stdout.contains("created source"), "{}", run.stdout);
    assert_eq!(run.count("uploaded"), 6, "{}", run.summary());
    assert_eq!(run.count("touched"), 0);
    assert_eq!(run.count("removed"), 0);
    assert_eq!(run.count("failed"), 0);
    assert_eq!(run.count("folders put"), 5);
    let bytes: usize = TREE.iter().map(|(_, c)| c.len()).sum();
    assert_eq!(run.count("bytes sent"), bytes as u64);

    let m = Mirror::of(&server, "mirror").await;
    for (id, content) in TREE {
        let (status, meta) = m.metadata(&server, id).await;
        assert_eq!(status, 200, "{id}: {meta}");
        assert_eq!(meta["externalId"], *id);
        assert_eq!(meta["version"], 1);
        assert_eq!(meta["externalChecksum"], checksum(content).as_str());
        let record = m.record(&server, id).await;
        let folder = id.rsplit_once('/').map(|(f, _)| f);
        match folder {
            Some(f) => assert_eq!(record["tags"]["folder"], serde_json::json!([f]), "{id}"),
            None => assert!(record["tags"].get("folder").is_none(), "{id}: {record}"),
        }
        let word = content
            .split_whitespace()
            .last()
            .unwrap()
            .trim_end_matches('.');
        assert!(
            record["content"].as_str().unwrap().contains(word),
            "{id}: {record}"
        );
        // Without --link-prefix a record has no url (local paths are not links).
        assert!(record.get("url").is_none_or(Value::is_null), "{record}");
    }
    assert_eq!(
        m.record(&server, "photos/Café menu (2026).txt").await["title"],
        "Cafe_menu_2026_.txt"
    );
    assert_eq!(m.search(&server, "okapi").await, ["odd dir %41/x#y?.txt"]);
    assert_eq!(m.search(&server, "giraffe").await, ["docs/guide.md"]);

    let roots = m.folders(&server, None).await;
    assert_eq!(
        roots,
        BTreeMap::from([
            ("docs".into(), folder("docs", None, 3)),
            ("odd dir %41".into(), folder("odd dir %41", None, 1)),
            ("photos".into(), folder("photos", None, 1)),
        ])
    );
    assert_eq!(
        m.folders(&server, Some("docs")).await,
        BTreeMap::from([("docs/api".into(), folder("api", Some("docs"), 2))])
    );
    assert_eq!(
        m.folders(&server, Some("photos")).await,
        BTreeMap::from([("photos/empty".into(), folder("empty", Some("photos"), 0))])
    );
    let sync = m.sync(&server, 1).await;
    assert_eq!(sync["state"], "COMPLETED");
    assert_eq!(sync["uploaded"], 6);

    // Second run, nothing changed: everything is touched, nothing uploaded.
    let run = sync_folder(&server, &[&first[..], &["--quiet", root_arg]].concat()).await;
    run.assert_ok();
    assert_eq!(
        run.stdout.lines().count(),
        1,
        "--quiet prints only the summary: {}",
        run.stdout
    );
    assert_eq!(run.count("uploaded"), 0, "{}", run.summary());
    assert_eq!(run.count("touched"), 6);
    assert_eq!(run.count("removed"), 0);
    assert_eq!(run.count("bytes sent"), 0);
    assert_eq!(run.count("folders put"), 0);
    for (id, _) in TREE {
        assert_eq!(m.metadata(&server, id).await.1["version"], 1, "{id}");
    }
    let sync = m.sync(&server, 2).await;
    assert_eq!(sync["state"], "COMPLETED");
    assert_eq!(
        (sync["uploaded"].as_u64(), sync["touched"].as_u64()),
        (Some(0), Some(6))
    );
    assert_eq!(sync["removed"], 0);

    // Local changes; the third run uses the existing source and an API token over Basic.
    fs::remove_file(root.join("docs/api/v2.txt")).unwrap();
    let changed = "How to feed the giraffe, now with an ocelot.";
    fs::write(root.join("docs/guide.md"), changed).unwrap();
    fs::remove_dir(root.join("photos/empty")).unwrap();
    let run = sync_folder(
        &server,
        &[
            "--user",
            ADMIN_EMAIL,
            "--token",
            ADMIN_TOKEN,
            "--source",
            &m.paths.source_id,
            "--verbose",
            root_arg,
        ],
    )
    .await;
    run.assert_ok();
    assert_eq!(run.count("uploaded"), 1, "{}", run.summary());
    assert_eq!(run.count("touched"), 4);
    assert_eq!(run.count("removed"), 1);
    assert_eq!(run.count("folders removed"), 1);
    assert_eq!(run.count("bytes sent"), changed.len() as u64);
    assert!(
        run.stdout.contains("uploaded docs/guide.md (changed)"),
        "{}",
        run.stdout
    );

    // The deleted file's record is removed: a tombstone whose metadata has no checksum
    // (spec 2.4 / 4.4), that touch does not find, and that search never returns.
    let (status, meta) = m.metadata(&server, "docs/api/v2.txt").await;
    assert_eq!(status, 200);
    assert!(meta.get("externalChecksum").is_none(), "{meta}");
    assert_eq!(m.record(&server, "docs/api/v2.txt").await["removed"], true);
    let touch = server
        .req(Method::PUT, &m.paths.object(&seg("docs/api/v2.txt")))
        .send()
        .await
        .unwrap();
    assert_eq!(touch.status(), 404);
    assert!(m.search(&server, "narwhal").await.is_empty());

    let (_, guide) = m.metadata(&server, "docs/guide.md").await;
    assert_eq!(guide["version"], 2);
    assert_eq!(guide["externalChecksum"], checksum(changed).as_str());
    assert_eq!(m.search(&server, "ocelot").await, ["docs/guide.md"]);
    assert_eq!(m.metadata(&server, "docs/api/v1.txt").await.1["version"], 1);
    assert!(m.folders(&server, Some("photos")).await.is_empty());
    let sync = m.sync(&server, 3).await;
    assert_eq!(sync["state"], "COMPLETED");
    assert_eq!(
        (sync["uploaded"].as_u64(), sync["touched"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(sync["removed"], 1);

    // The per-file procedure (no batch endpoints) comes to the same: all five files touched.
    let run = sync_folder(&server, &[&first[..], &["--per-file", root_arg]].concat()).await;
    run.assert_ok();
    assert_eq!(
        (
            run.count("uploaded"),
            run.count("touched"),
            run.count("removed")
        ),
        (0, 5, 0),
        "{}",
        run.summary()
    );
    let sync = m.sync(&server, 4).await;
    assert_eq!(
        (sync["touched"].as_u64(), sync["removed"].as_u64()),
        (Some(5), Some(0))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_changes_nothing() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root);
    let root_arg = root.to_str().unwrap();
    let auth = ["--user", ADMIN_EMAIL, "--token", ADMIN_TOKEN];
    let args = |extra: &[&'static str]| -> Vec<String> {
        auth.iter()
            .chain(["--create-source", "mirror"].iter())
            .chain(extra)
            .map(|s| s.to_string())
            .chain([root_arg.to_string()])
            .collect()
    };
    let run_with = |extra: &[&'static str]| {
        let args = args(extra);
        let server = &server;
        async move {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            sync_folder(server, &refs).await
        }
    };

    // Without a source: it would be created; nothing is.
    let run = run_with(&["--dry-run"]).await;
    run.assert_ok();
    assert!(
        run.stdout.contains("would create source 'mirror'"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("would upload readme.txt (new)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("would create or update folder docs/api"),
        "{}",
        run.stdout
    );
    assert_eq!(run.count("would upload"), 6, "{}", run.summary());
    assert!(source_by_external_id(&server, "mirror").await.is_none());

    run_with(&[]).await.assert_ok();
    let m = Mirror::of(&server, "mirror").await;

    fs::write(root.join("docs/guide.md"), "Changed text.").unwrap();
    fs::remove_file(root.join("docs/api/v2.txt")).unwrap();
    fs::create_dir_all(root.join("new")).unwrap();
    fs::write(root.join("new/n.txt"), "Brand new.").unwrap();
    fs::remove_dir(root.join("photos/empty")).unwrap();

    let run = run_with(&["--dry-run"]).await;
    run.assert_ok();
    for line in [
        "would upload docs/guide.md (changed)",
        "would upload new/n.txt (new)",
        "would create folder new",
        "would remove folder photos/empty",
        "would remove docs/api/v2.txt",
    ] {
        assert!(
            run.stdout.contains(line),
            "missing '{line}' in:\n{}",
            run.stdout
        );
    }
    assert_eq!(run.count("would upload"), 2, "{}", run.summary());
    assert_eq!(run.count("would touch"), 4);
    assert_eq!(run.count("would remove"), 1);
    assert_eq!(
        run.count("bytes to send"),
        ("Changed text.".len() + "Brand new.".len()) as u64
    );

    // Nothing changed on the server: no sync opened, no record or folder written or removed.
    assert_eq!(m.syncs(&server).await.len(), 1);
    assert_eq!(m.metadata(&server, "new/n.txt").await.0, 404);
    assert_eq!(m.metadata(&server, "docs/guide.md").await.1["version"], 1);
    let (_, v2) = m.metadata(&server, "docs/api/v2.txt").await;
    assert!(v2["externalChecksum"].is_string(), "{v2}");
    let roots = m.folders(&server, None).await;
    assert!(!roots.contains_key("new"), "{roots:?}");
    assert!(
        m.folders(&server, Some("photos"))
            .await
            .contains_key("photos/empty")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_file_closes_the_sync_with_fail() {
    let server = TestServer::start_with(Settings {
        max_upload_bytes: 1024,
        ..Settings::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("b")).unwrap();
    fs::write(root.join("a.txt"), "alpha").unwrap();
    fs::write(root.join("b/c.txt"), "gamma").unwrap();
    let root_arg = root.to_str().unwrap();
    let args = [
        "--user",
        ADMIN_EMAIL,
        "--token",
        ADMIN_TOKEN,
        "--create-source",
        "mirror",
        "--quiet",
        root_arg,
    ];
    sync_folder(&server, &args).await.assert_ok();
    let m = Mirror::of(&server, "mirror").await;

    // Over the server's upload limit: that upload fails, so the sync must not remove a.txt.
    fs::write(root.join("b/big.txt"), "x".repeat(64 * 1024)).unwrap();
    fs::remove_file(root.join("a.txt")).unwrap();
    let run = sync_folder(&server, &args).await;
    assert_eq!(
        run.code,
        Some(1),
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    assert!(run.stderr.contains("b/big.txt"), "{}", run.stderr);
    assert!(run.stderr.contains("closed with FAIL"), "{}", run.stderr);
    assert_eq!(run.count("failed"), 1, "{}", run.summary());
    assert!(
        run.summary()
            .contains("removed none (sync 2 closed with FAIL)"),
        "{}",
        run.summary()
    );
    let sync = m.sync(&server, 2).await;
    assert_eq!(sync["state"], "FAILED");
    assert_eq!(sync["closeOperation"], "FAIL");
    assert_eq!(sync["removed"], 0);
    let (status, a) = m.metadata(&server, "a.txt").await;
    assert_eq!(status, 200);
    assert_eq!(
        a["externalChecksum"],
        checksum("alpha").as_str(),
        "FAIL removes nothing"
    );
    assert_eq!(m.metadata(&server, "b/big.txt").await.0, 404);

    // Without the big file the next run succeeds and removes a.txt.
    fs::remove_file(root.join("b/big.txt")).unwrap();
    let run = sync_folder(&server, &args).await;
    run.assert_ok();
    assert_eq!(run.count("removed"), 1, "{}", run.summary());
    assert_eq!(m.sync(&server, 3).await["state"], "COMPLETED");
    assert!(
        m.metadata(&server, "a.txt")
            .await
            .1
            .get("externalChecksum")
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_files_are_named_and_an_existing_source_is_explained() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("a.txt"), "alpha").unwrap();
    // Bytes no extractor recognizes (xorshift noise): stored with empty content by the server.
    let mut x: u32 = 0x1234_5678;
    let noise: Vec<u8> = (0..16 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    fs::write(root.join("noise.bin"), noise).unwrap();
    let args = [
        "--user",
        ADMIN_EMAIL,
        "--token",
        ADMIN_TOKEN,
        "--create-source",
        "mirror",
        root.to_str().unwrap(),
    ];
    let run = sync_folder(&server, &args).await;
    run.assert_ok();
    assert_eq!(run.count("uploaded"), 2, "{}", run.summary());
    assert!(
        run.stdout.contains(
            "\nunreadable 1 (stored with empty content, not found by search):\n  noise.bin: "
        ),
        "{}",
        run.stdout
    );

    // The second run says the externalId exists and what to do to start over.
    let run = sync_folder(&server, &args).await;
    run.assert_ok();
    assert!(
        run.stdout.contains("source 'mirror' already exists")
            && run.stdout.contains("DELETE /api/v1/sources/")
            && run.stdout.contains("pass another --create-source id"),
        "{}",
        run.stdout
    );
    assert_eq!(run.count("touched"), 2, "{}", run.summary());
    assert!(
        !run.stdout.contains("unreadable"),
        "nothing was read: {}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_sources_credentials_and_open_syncs_are_refused_clearly() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "alpha").unwrap();
    let root_arg = dir.path().to_str().unwrap();
    let basic = ["--user", ADMIN_EMAIL, "--token", ADMIN_TOKEN];

    // A source without a HIERARCHICAL tag config.
    let plain = server.record_source().await;
    let run = sync_folder(
        &server,
        &[&basic[..], &["--source", &plain.source_id, root_arg]].concat(),
    )
    .await;
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .contains("no RECORD object type with a HIERARCHICAL tag config"),
        "{}",
        run.stderr
    );
    assert!(plain_syncs_empty(&server, &plain).await);

    // An API token sent as Bearer (no --user): refused, with the hint.
    let run = sync_folder(
        &server,
        &[
            "--token",
            ADMIN_TOKEN,
            "--create-source",
            "mirror",
            root_arg,
        ],
    )
    .await;
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("--user"), "{}", run.stderr);

    // Neither --source nor --create-source: a usage error.
    let run = sync_folder(&server, &[&basic[..], &[root_arg]].concat()).await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);

    // A sync left open by an interrupted run.
    let create = [&basic[..], &["--create-source", "mirror", root_arg]].concat();
    sync_folder(&server, &create).await.assert_ok();
    let m = Mirror::of(&server, "mirror").await;
    let resp = server
        .req(Method::POST, &m.paths.syncs())
        .json(&serde_json::json!({"operation": "START"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let run = sync_folder(&server, &create).await;
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .contains("sync 2 of object type 'Files' is still open"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--abandon-open-sync"), "{}", run.stderr);
    let run = sync_folder(&server, &[&create[..], &["--abandon-open-sync"]].concat()).await;
    run.assert_ok();
    assert_eq!(m.sync(&server, 2).await["state"], "FAILED");
    assert_eq!(m.sync(&server, 3).await["state"], "COMPLETED");
    assert_eq!(run.count("touched"), 1);
}

async fn plain_syncs_empty(server: &TestServer, paths: &SourcePaths) -> bool {
    let (status, syncs) = get(server, &paths.syncs()).await;
    status == 200 && syncs.as_array().is_some_and(Vec::is_empty)
}

/// One file of every format issue 16 names (legacy Office, e-mail, archives, images and scans,
/// Type 3 PDF, OOXML with embedded files, metafiles) and a few others, from other projects' test
/// suites (origins in the MANIFEST.tsv of `extractors/testdata`, `extractors/ocr/tests/data`,
/// `extractors/archive/tests/data` and `../shared/corpus`; the mail README): the path from
/// the workspace, the file's name in the synced folder, whether its words come from OCR, and
/// words its record must hold.
const EVERY_FORMAT: &[(&str, &str, bool, &str)] = &[
    (
        "extractors/testdata/xls/Test97.xls",
        "budget.xls",
        false,
        "This Data is 'ASC Only'",
    ),
    (
        "extractors/testdata/xls/Test95.xls",
        "excel95.xls",
        false,
        "BIG INTEGER",
    ),
    (
        "extractors/testdata/ppt/master-text-43781.ppt",
        "debates.ppt",
        false,
        "Great Debates in Astronomy",
    ),
    (
        "extractors/testdata/ppt/master-text-43781.ppt",
        "debates-picture.ppt",
        true,
        "ASTROPHYSICS",
    ),
    (
        "extractors/testdata/doc/Word95.doc",
        "word95.doc",
        false,
        "quick brown fox",
    ),
    (
        "../shared/corpus/doc/simple.doc",
        "simple.doc",
        false,
        "favorite things",
    ),
    (
        "extractors/testdata/msg/example_sent_regular.msg",
        "sent.msg",
        false,
        "This is a test message please ignore",
    ),
    (
        "extractors/mail/tests/data/msg_07.txt",
        "dingus.eml",
        false,
        "Here is your dingus fish",
    ),
    (
        "extractors/archive/tests/data/test.zip",
        "test.zip",
        false,
        "This is a test text file",
    ),
    (
        "extractors/archive/tests/data/gnu.tar",
        "gnu.tar",
        false,
        "Kilts",
    ),
    (
        "extractors/ocr/tests/data/crom.png",
        "whiteboard.png",
        true,
        "cromulent word",
    ),
    (
        "extractors/ocr/tests/data/c03-29.pdf",
        "scanned.pdf",
        true,
        "the widow",
    ),
    (
        "extractors/testdata/pdf/multi_font_type3.pdf",
        "type3.pdf",
        false,
        "There are basic characters",
    ),
    (
        "extractors/testdata/xlsx/WithEmbeded.xlsx",
        "embedded.xlsx",
        false,
        "This is a simple excel document",
    ),
    (
        "extractors/testdata/docx/WordWithAttachments.docx",
        "attachments.docx",
        false,
        "this is ooxml",
    ),
    (
        "extractors/testdata/pptx/bar-chart.pptx",
        "chart.pptx",
        false,
        "1st Qtr\t8.2",
    ),
    (
        "../shared/corpus/odt/extraction_test.odt",
        "test.odt",
        false,
        "Comprehensive Extraction Test Document",
    ),
    (
        "../shared/corpus/rtf/extraction_test.rtf",
        "test.rtf",
        false,
        "Comprehensive Extraction Test Document",
    ),
    (
        "../shared/corpus/epub/features.epub",
        "features.epub",
        false,
        "Reflowable EPUB 3",
    ),
    (
        "extractors/testdata/emf/vector_image.emf",
        "diagram.emf",
        false,
        "Frequency of",
    ),
    (
        "extractors/testdata/wmf/testException2.doc-2.wmf",
        "drawing.wmf",
        false,
        "Rotating Coil",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_of_every_format_syncs_with_each_files_text() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (from, name, _, _) in EVERY_FORMAT {
        fs::copy(workspace.join(from), dir.path().join(name))
            .unwrap_or_else(|e| panic!("{from}: {e}"));
    }
    let root = dir.path().to_str().unwrap();
    let auth = ["--user", ADMIN_EMAIL, "--token", ADMIN_TOKEN];
    let args: Vec<&str> = auth
        .iter()
        .copied()
        .chain(["--create-source", "drive", root])
        .collect();
    let run = sync_folder(&server, &args).await;
    run.assert_ok();
    assert_eq!(
        run.count("uploaded"),
        EVERY_FORMAT.len() as u64,
        "{}",
        run.stdout
    );
    let mirror = Mirror::of(&server, "drive").await;
    let ocr = std::process::Command::new("tesseract")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ocr || std::env::var("INLET_REQUIRE_OCR").is_err(),
        "INLET_REQUIRE_OCR is set but tesseract does not run"
    );
    for (_, name, by_ocr, words) in EVERY_FORMAT {
        let record = mirror.record(&server, name).await;
        let content = record["content"].as_str().unwrap_or_default();
        let extraction = &record["extraction"];
        if *by_ocr && !ocr {
            // Without Tesseract: an image is stored with the reason, a document with its text.
            if extraction["format"] == "png" {
                assert_eq!(
                    extraction["failure"], "unsupported: OCR is not available",
                    "{name}: {record}"
                );
            }
            continue;
        }
        assert!(content.contains(words), "{name}: {words:?} in {record}");
        assert!(extraction["failure"].is_null(), "{name}: {record}");
    }
    // Found by search, as people look for them.
    for (q, name) in [
        ("dingus", "dingus.eml"),
        ("Quadruple Beam Balance", "drawing.wmf"),
    ] {
        let found = mirror.search(&server, q).await;
        assert!(found.iter().any(|id| id == name), "{q}: {found:?}");
    }
}
