//! `sync-folder` as a child process against a real Inlet on a loopback port: a first run uploads
//! a nested tree (records, folder tags, folders with parents), a second only touches, a third
//! after local changes uploads the changed file and the COMPLETE close removes the deleted one;
//! `--dry-run` changes nothing; a failing file closes the sync with FAIL and exits non-zero; an
//! unusable source, a wrong credential kind and a sync left open are refused clearly.

mod common;

use std::{collections::BTreeMap, fs};

use inlet_server::Settings;
use inlet_tests::{ADMIN_EMAIL, ADMIN_TOKEN, SourcePaths, TestServer};
use reqwest::Method;
use serde_json::Value;

use common::*;

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
