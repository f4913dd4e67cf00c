//! Moving a deployment (DESIGN 7c) with the real `inlet admin` commands: SQLite → PostgreSQL →
//! SQLite answers every API read as the original did (records, versions, dates, checksums,
//! tags, extraction outcomes, downloads, sources, sync runs, webhooks, clients, the change
//! feed), an API token, an OAuth refresh token and a feed cursor issued before the move work
//! after it; an interrupted copy leaves a target the service refuses until the copy is run
//! again; a backup taken while a connector writes restores to a serving deployment (SQLite's
//! `inlet admin backup`, PostgreSQL's `pg_dump`).

use std::{
    path::Path,
    process::{Command, Output},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use inlet_server::Settings;
use inlet_tests::{
    ADMIN_EMAIL, SourcePaths, TestServer, bulk_records, file_form,
    oauth::{Browser, auth_params, create_client, token_form},
    postgres::Schema,
};
use reqwest::Method;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const INLET: &str = env!("CARGO_BIN_EXE_inlet");

fn inlet(args: &[&str]) -> Output {
    Command::new(INLET).args(args).output().unwrap()
}

/// `out`, asserting its command succeeded (else failing with its standard error).
fn ran(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn ok(out: Output) -> Value {
    serde_json::from_slice(&ran(out).stdout).unwrap()
}

fn sqlite(dir: &Path, name: &str) -> String {
    format!("sqlite://{}?mode=rwc", dir.join(name).display())
}

fn blobs(dir: &Path, name: &str) -> String {
    format!("file://{}", dir.join(name).display())
}

async fn get(server: &TestServer, path: &str) -> Value {
    let resp = server.req(Method::GET, path).send().await.unwrap();
    let status = resp.status();
    let body = resp.text().await.unwrap();
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// Everything the API answers about the deployment, as the administrator reads it.
async fn view(server: &TestServer, paths: &SourcePaths) -> Value {
    let mut records = Vec::new();
    let listing = get(
        server,
        &format!("{}/objects?limit=1000", paths.object_type()),
    )
    .await;
    for r in listing["objects"].as_array().unwrap() {
        let id = r["externalId"].as_str().unwrap();
        let object = get(server, &paths.object(id)).await;
        let file = server
            .req(Method::GET, &format!("{}/file", paths.object(id)))
            .send()
            .await
            .unwrap();
        let status = file.status().as_u16();
        let sha = hex(&Sha256::digest(file.bytes().await.unwrap()));
        records.push(json!({"object": object, "file": [status, sha]}));
    }
    let sources = get(server, "/sources").await;
    let syncs = get(server, &paths.syncs()).await;
    let webhooks = get(server, "/webhooks").await;
    let clients = get(server, "/oauthclients").await;
    let feed = get(server, "/changes?limit=1000").await;
    server.settle().await;
    let search = get(server, "/search?q=harbour&limit=50").await;
    json!({
        "listing": listing, "records": records, "sources": sources, "syncs": syncs,
        "webhooks": webhooks, "clients": clients, "feed": feed,
        "search": search["results"], "total": search["total"],
    })
}

/// A second source shaped like a file share: folders (a hierarchical tag with its facet), groups
/// mirrored from the share (nested), and records whose access lists name a user, a group,
/// `everyone` or nobody.
struct Drive {
    source: String,
    objects: String,
    folder_tag: String,
    folder_facet: String,
}

async fn drive(server: &TestServer) -> Drive {
    let source = server
        .create_source(json!({
            "definition": {"type": "CUSTOM"},
            "externalId": "drive",
            "config": {"type": "CUSTOM", "name": "Drive", "trackStatus": true,
                "specification": {"application": {"objectTypes": [{
                    "name": "Files", "externalId": "files", "sourceDataType": "RECORD",
                    "fields": [], "defaultAccess": "RESTRICTED",
                    "tagConfigs": [{"type": "HIERARCHICAL", "name": "Folder",
                        "externalId": "folder", "dataType": "TEXT", "allowMultipleValues": false}],
                    "facets": [{"type": "TAG", "name": "Folder",
                        "tagConfig": {"externalId": "folder"}, "allowMultipleValues": true}]
                }]}}
            }
        }))
        .await;
    let id = |v: &Value| v.as_str().unwrap().to_string();
    let object_type = &source["sourceObjectTypes"][0];
    let drive = Drive {
        source: id(&source["id"]),
        objects: format!(
            "/sources/{}/objecttypes/{}/objects",
            id(&source["id"]),
            id(&object_type["id"])
        ),
        folder_tag: id(&object_type["tagConfigs"][0]["id"]),
        folder_facet: id(&object_type["facets"][0]["id"]),
    };
    for (folder, parent) in [("people", None), ("people-hr", Some("people"))] {
        let mut body = json!({"name": folder});
        if let Some(parent) = parent {
            body["parentExternalId"] = json!(parent);
        }
        let resp = server
            .req(
                Method::PUT,
                &format!(
                    "/sources/{}/tagconfigs/{}/hierarchies/{folder}",
                    drive.source, drive.folder_tag
                ),
            )
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success(), "{:?}", resp.text().await);
    }
    for (group, members) in [
        ("staff", json!(["group:hr"])),
        ("hr", json!(["user:member@example.com"])),
    ] {
        let resp = server
            .req(
                Method::PUT,
                &format!("/sources/{}/groups/{group}", drive.source),
            )
            .json(&json!({"members": members}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    }
    for (id, access, folder) in [
        ("salaries", Some("group:staff"), "people-hr"),
        ("handbook", Some("everyone"), "people"),
        ("board", Some("user:chair@example.com"), "people"),
        ("unlisted", None, "people"),
    ] {
        let mut req = server
            .req(Method::PUT, &format!("{}/{id}/file", drive.objects))
            .header("X-Service-Object-Tag", format!("folder:{folder}"));
        if let Some(access) = access {
            req = req.header("X-Service-Object-Access", access);
        }
        let resp = req
            .multipart(file_form(&format!("{id}.txt"), format!("harbour {id}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "{id}: {:?}", resp.text().await);
    }
    drive
}

/// What the drive answers: to the administrator its groups, folders and every record's access
/// list; to `member` (an API token acting as its user) what search, the listing and the folder
/// counts let it see.
async fn drive_view(server: &TestServer, drive: &Drive, member: (&str, &str)) -> Value {
    let mut access = Vec::new();
    for id in ["salaries", "handbook", "board", "unlisted"] {
        access.push(get(server, &format!("{}/{id}/access", drive.objects)).await);
    }
    let groups = get(server, &format!("/sources/{}/groups", drive.source)).await;
    let folder = get(
        server,
        &format!(
            "/sources/{}/facets/{}/hierarchies/people/children",
            drive.source, drive.folder_facet
        ),
    )
    .await;
    server.settle().await;
    let as_member = |path: String| {
        let req = server
            .client
            .get(server.url(&path))
            .basic_auth(member.0, Some(member.1));
        async move {
            let resp = req.send().await.unwrap();
            assert_eq!(resp.status(), 200, "{path}");
            resp.json::<Value>().await.unwrap()
        }
    };
    let search = as_member("/search?q=harbour&limit=50".into()).await;
    let mut seen: Vec<String> = search["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["externalId"].as_str().unwrap().to_string())
        .collect();
    seen.sort();
    let listing = as_member(format!("{}?limit=100", drive.objects)).await;
    let folders = as_member(format!(
        "/sources/{}/facets/{}/hierarchies",
        drive.source, drive.folder_facet
    ))
    .await;
    json!({
        "access": access, "groups": groups, "folder": folder,
        "member": {"search": seen, "total": search["total"], "listing": listing,
            "folders": folders},
    })
}

/// A connector uploading `during-0` … `during-{n-1}` one after another in the background; the
/// count of uploads answered 201 so far.
fn connector(
    server: &TestServer,
    paths: &SourcePaths,
    n: usize,
) -> (tokio::task::JoinHandle<()>, Arc<AtomicUsize>) {
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let (base, client, paths) = (server.base.clone(), server.client.clone(), paths.clone());
    let counted = acknowledged.clone();
    let writer = tokio::spawn(async move {
        for i in 0..n {
            let resp = client
                .put(format!(
                    "{base}/api/v1{}/file",
                    paths.object(&format!("during-{i}"))
                ))
                .basic_auth(ADMIN_EMAIL, Some(inlet_tests::ADMIN_TOKEN))
                .multipart(file_form("d.txt", format!("harbour during {i}")))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 201);
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    (writer, acknowledged)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn upload(server: &TestServer, paths: &SourcePaths, id: &str, sync: i64, text: &str) {
    let sync = if sync > 0 {
        format!("syncNumber={sync}&")
    } else {
        String::new()
    };
    let resp = server
        .req(
            Method::PUT,
            &format!(
                "{}/file?{sync}externalChecksum=c-{id}-{}",
                paths.object(id),
                text.len()
            ),
        )
        .header("X-Service-Object-Tag", "color:blue")
        .multipart(file_form(&format!("{id}.txt"), text.to_string()))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{id}: {}", resp.status());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_to_postgres_to_sqlite_answers_as_before() {
    let Some(schema) = Schema::for_test().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (db_a, blobs_a) = (sqlite(dir.path(), "a.db"), blobs(dir.path(), "a-blobs"));
    let settings = Settings {
        webhook_allow_private: true,
        ..Settings::default()
    };
    let a = TestServer::start_keeping(&db_a, settings, Some(&blobs_a)).await;
    let paths = a.record_source().await;

    // Two syncs: the second removes one record; another record is deleted.
    let first = a.sync(&paths, "START_INITIAL", None).await;
    for (id, text) in [
        ("keep", "harbour minutes of March"),
        ("gone", "harbour budget draft"),
        ("del", "harbour notes to delete"),
    ] {
        upload(&a, &paths, id, first, text).await;
    }
    a.sync(&paths, "COMPLETE", Some(first)).await;
    let second = a.sync(&paths, "START", None).await;
    upload(
        &a,
        &paths,
        "keep",
        second,
        "harbour minutes of March, revised",
    )
    .await;
    upload(&a, &paths, "del", second, "harbour notes to delete").await;
    a.sync(&paths, "COMPLETE", Some(second)).await;
    let resp = a
        .req(Method::DELETE, &paths.object("del"))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
    let resp = a
        .req(Method::POST, "/webhooks")
        .json(&json!({"url": "http://127.0.0.1:9/hooks", "events": ["source.created"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());

    // A member's API token, an OAuth grant with its refresh token, and a feed cursor.
    let member = a.user("member@example.com", "default", false).await;
    let client = create_client(&a, &["default"]).await;
    let params = auth_params(&client, "default", "s1");
    let code = Browser::new(&a).admin_code(&params).await;
    let (status, tokens) = token_form(
        &a,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &client.redirect_uri),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
        ],
    )
    .await;
    assert_eq!(status, 200, "{tokens}");
    let refresh = tokens["refresh_token"].as_str().unwrap().to_string();
    let cursor = get(&a, "/changes?limit=1").await["cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let share = drive(&a).await;
    let before = view(&a, &paths).await;
    // "keep" at version 2; "gone" removed by the second COMPLETE, "del" deleted.
    let live = before["records"].as_array().unwrap();
    assert_eq!(live.len(), 1, "{before}");
    assert_eq!(live[0]["object"]["version"], 2, "{before}");
    let member_key = (member.email.as_str(), member.api_token.as_str());
    let drive_before = drive_view(&a, &share, member_key).await;
    // The member reads the drive through the nested group and `everyone`, nothing else (and
    // the first source's record, which follows the default, `EVERYONE`).
    assert_eq!(
        drive_before["member"]["search"],
        json!(["handbook", "keep", "salaries"]),
        "{drive_before}"
    );

    // SQLite → PostgreSQL (while A serves), then PostgreSQL → SQLite.
    let (db_c, blobs_b, blobs_c) = (
        sqlite(dir.path(), "c.db"),
        blobs(dir.path(), "b-blobs"),
        blobs(dir.path(), "c-blobs"),
    );
    let summary = ok(inlet(&[
        "admin",
        "copy",
        "--from",
        &db_a,
        "--from-blobs",
        &blobs_a,
        "--to",
        &schema.url,
        "--to-blobs",
        &blobs_b,
    ]));
    // Every blob is copied, those waiting out their grace too: three files and a revision,
    // and the drive's four.
    assert_eq!(summary["originalsCopied"], 8, "{summary}");
    ok(inlet(&[
        "admin",
        "copy",
        "--from",
        &schema.url,
        "--from-blobs",
        &blobs_b,
        "--to",
        &db_c,
        "--to-blobs",
        &blobs_c,
    ]));
    ok(inlet(&[
        "admin",
        "verify",
        "--database",
        &db_a,
        "--against",
        &db_c,
    ]));
    // A copy into a store that holds data is refused.
    let refused = inlet(&["admin", "copy", "--from", &db_a, "--to", &db_c]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not empty"));

    for (db, blob_url) in [(&schema.url, &blobs_b), (&db_c, &blobs_c)] {
        let moved = TestServer::start_keeping(db, Settings::default(), Some(blob_url)).await;
        let after = view(&moved, &paths).await;
        assert_eq!(after, before, "{db}");
        assert_eq!(
            drive_view(&moved, &share, member_key).await,
            drive_before,
            "{db}"
        );
        // Credentials issued before the move work after it.
        let resp = moved
            .client
            .get(moved.url("/sources"))
            .basic_auth("member@example.com", Some(&member.api_token))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let resp = moved
            .client
            .get(moved.url("/changes"))
            .query(&[("cursor", cursor.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "the feed needs credentials");
        let feed = get(&moved, &format!("/changes?cursor={cursor}")).await;
        assert!(feed["changes"].is_array());
        let _ = ADMIN_EMAIL;
    }
    // The refresh token (used once: it rotates) works against the last copy.
    let c = TestServer::start_keeping(&db_c, Settings::default(), Some(&blobs_c)).await;
    let (status, refreshed) = token_form(
        &c,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
        ],
    )
    .await;
    assert_eq!(status, 200, "{refreshed}");
    schema.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_copy_is_refused_then_finished() {
    let dir = tempfile::tempdir().unwrap();
    let (from, to) = (sqlite(dir.path(), "from.db"), sqlite(dir.path(), "to.db"));
    {
        let server = TestServer::start_keeping(&from, Settings::default(), None).await;
        let paths = server.record_source().await;
        let scope = inlet_core::record::Scope {
            workspace_id: server
                .state
                .tokens
                .user_by_email(ADMIN_EMAIL)
                .await
                .unwrap()
                .unwrap()
                .workspace_id,
            source_id: paths.source_id.parse().unwrap(),
            object_type_id: paths.object_type_id.parse().unwrap(),
        };
        let db = sea_orm::Database::connect(&from).await.unwrap();
        bulk_records(&db, scope, 40_000, 0).await.unwrap();
    }
    // Killed while it copies.
    let mut child = Command::new(INLET)
        .args(["admin", "copy", "--from", &from, "--to", &to])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let to_file = dir.path().join("to.db");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !to_file.exists() || std::fs::metadata(&to_file).unwrap().len() < 1 << 20 {
        assert!(std::time::Instant::now() < deadline, "the copy never wrote");
        if child.try_wait().unwrap().is_some() {
            panic!("the copy ended before it could be interrupted");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    // The service refuses the half copy.
    let out = inlet(&["serve", "--database", &to, "--bind", "127.0.0.1:0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unfinished copy"), "{err}");

    // Run again: it starts over and finishes; the target then serves.
    let out = Command::new(INLET)
        .args(["admin", "copy", "--from", &from, "--to", &to])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("starting over"));
    ok(inlet(&[
        "admin",
        "verify",
        "--database",
        &from,
        "--against",
        &to,
    ]));
    let server = TestServer::start_keeping(&to, Settings::default(), None).await;
    let records = get(&server, "/search?limit=1").await;
    server.settle().await;
    let _ = records;
    let total = get(&server, "/search?limit=1").await["total"]
        .as_u64()
        .unwrap();
    assert_eq!(total, 40_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_while_writing_restores_and_serves() {
    let dir = tempfile::tempdir().unwrap();
    let (db, blob_url) = (
        sqlite(dir.path(), "live.db"),
        blobs(dir.path(), "live-blobs"),
    );
    let server = TestServer::start_keeping(&db, Settings::default(), Some(&blob_url)).await;
    let paths = server.record_source().await;
    for i in 0..20 {
        upload(
            &server,
            &paths,
            &format!("before-{i}"),
            0,
            &format!("harbour file {i}"),
        )
        .await;
    }
    // A connector keeps writing while the backup runs.
    let (writer, _) = connector(&server, &paths, 200);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let file = dir.path().join("backup.db");
    let file_arg = file.display().to_string();
    ok(inlet(&[
        "admin",
        "backup",
        "--database",
        &db,
        "--blob-store",
        &blob_url,
        "--to",
        &file_arg,
    ]));
    writer.await.unwrap();
    assert!(dir.path().join("backup-blobs").is_dir());
    let refused = inlet(&["admin", "backup", "--database", &db, "--to", &file_arg]);
    assert!(
        !refused.status.success(),
        "a backup never overwrites a file"
    );

    let (restored, restored_blobs) = (
        sqlite(dir.path(), "restored.db"),
        blobs(dir.path(), "r-blobs"),
    );
    ok(inlet(&[
        "admin",
        "restore",
        "--from",
        &file_arg,
        "--to",
        &restored,
        "--to-blobs",
        &restored_blobs,
    ]));
    let back =
        TestServer::start_keeping(&restored, Settings::default(), Some(&restored_blobs)).await;
    // Everything acknowledged before the backup began is there, with its original.
    for i in 0..20 {
        let id = format!("before-{i}");
        let resp = back
            .req(Method::GET, &format!("{}/file", paths.object(&id)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{id}");
        assert_eq!(resp.text().await.unwrap(), format!("harbour file {i}"));
    }
    let listing = get(
        &back,
        &format!("{}/objects?limit=1000", paths.object_type()),
    )
    .await;
    let n = listing["objects"].as_array().unwrap().len();
    assert!((20..=220).contains(&n), "{n}");
    // Whatever the backup holds downloads whole.
    for r in listing["objects"].as_array().unwrap() {
        let id = r["externalId"].as_str().unwrap();
        let resp = back
            .req(Method::GET, &format!("{}/file", paths.object(id)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{id}");
    }
}

/// `base` (a PostgreSQL URL) naming database `name` instead of its own.
fn other_database(base: &str, name: &str) -> String {
    let (url, query) = match base.split_once('?') {
        Some((u, q)) => (u, format!("?{q}")),
        None => (base, String::new()),
    };
    let (server, _) = url.rsplit_once('/').unwrap();
    format!("{server}/{name}{query}")
}

/// Copies folder `from` into `to` (made), every subfolder too.
fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The PostgreSQL backup procedure of docs/operators.md: `pg_dump -Fc` taken while a connector
/// uploads, the blob folder saved after it, both restored (`pg_restore` into a new database).
/// The restored deployment serves every write acknowledged before the dump began: records with
/// their versions, tags and originals, the sync run, and a member's API token.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pg_dump_taken_during_ingest_restores_with_nothing_lost() {
    let Some(base) = inlet_tests::postgres::base_url() else {
        return;
    };
    let tools = ["pg_dump", "pg_restore"].iter().all(|tool| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !tools {
        assert!(
            std::env::var("INLET_REQUIRE_POSTGRES").as_deref() != Ok("1"),
            "pg_dump and pg_restore are required (INLET_REQUIRE_POSTGRES=1)"
        );
        return;
    }
    let schema = Schema::create(&base, "inlet_dump").await;
    let dir = tempfile::tempdir().unwrap();
    let live_blobs = dir.path().join("live-blobs");
    let blob_url = format!("file://{}", live_blobs.display());
    let server = TestServer::start_keeping(&schema.url, Settings::default(), Some(&blob_url)).await;
    let paths = server.record_source().await;
    let sync = server.sync(&paths, "START_INITIAL", None).await;
    for i in 0..30 {
        upload(
            &server,
            &paths,
            &format!("before-{i}"),
            sync,
            &format!("harbour file {i}"),
        )
        .await;
    }
    server.sync(&paths, "COMPLETE", Some(sync)).await;
    upload(&server, &paths, "before-0", 0, "harbour file 0, revised").await;
    let member = server.user("member@example.com", "default", false).await;

    // A connector keeps uploading; `acknowledged` counts its answered uploads, in order.
    let (writer, acknowledged) = connector(&server, &paths, 300);
    while acknowledged.load(Ordering::SeqCst) < 20 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let dump = dir.path().join("inlet.dump");
    let before_dump = acknowledged.load(Ordering::SeqCst);
    ran(Command::new("pg_dump")
        .args(["-Fc", "-n", &schema.name, "-f"])
        .arg(&dump)
        .args(["-d", &base])
        .output()
        .unwrap());
    // The blob store is saved after the dump: every original the dump names is in it.
    let saved_blobs = dir.path().join("saved-blobs");
    copy_folder(&live_blobs, &saved_blobs);
    writer.await.unwrap();
    assert!(
        acknowledged.load(Ordering::SeqCst) > before_dump,
        "the connector wrote on during the dump"
    );

    let restored_db = format!("inlet_restored_{}", uuid::Uuid::new_v4().simple());
    use sea_orm::ConnectionTrait;
    schema
        .admin()
        .execute_unprepared(&format!("CREATE DATABASE {restored_db}"))
        .await
        .unwrap();
    let restored_base = other_database(&base, &restored_db);
    ran(Command::new("pg_restore")
        .args(["--no-owner", "-d", &restored_base])
        .arg(&dump)
        .output()
        .unwrap());
    let url = inlet_tests::postgres::url_in_schema(&restored_base, &schema.name);
    let restored_blobs = format!("file://{}", saved_blobs.display());
    let back = TestServer::start_keeping(&url, Settings::default(), Some(&restored_blobs)).await;

    let mut expected: Vec<(String, String, i64)> = (0..30)
        .map(|i| (format!("before-{i}"), format!("harbour file {i}"), 1))
        .collect();
    expected[0] = ("before-0".into(), "harbour file 0, revised".into(), 2);
    expected.extend(
        (0..before_dump).map(|i| (format!("during-{i}"), format!("harbour during {i}"), 1)),
    );
    for (id, text, version) in &expected {
        let record = get(&back, &paths.object(id)).await;
        assert_eq!(record["version"], *version, "{id}: {record}");
        let file = back
            .req(Method::GET, &format!("{}/file", paths.object(id)))
            .send()
            .await
            .unwrap();
        assert_eq!(file.status(), 200, "{id}");
        assert_eq!(file.text().await.unwrap(), *text, "{id}");
    }
    let tagged = get(&back, &paths.object("before-7")).await;
    assert_eq!(
        tagged["tags"],
        get(&server, &paths.object("before-7")).await["tags"]
    );
    // The sync run, closed before the dump (uploads without a sync number leave it alone).
    assert_eq!(
        get(&back, &paths.syncs()).await,
        get(&server, &paths.syncs()).await
    );
    let resp = back
        .client
        .get(back.url("/sources"))
        .basic_auth(&member.email, Some(&member.api_token))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "the member's API token works");
    back.settle().await;
    let total = get(&back, "/search?q=harbour&limit=1").await["total"]
        .as_u64()
        .unwrap();
    assert!(total >= expected.len() as u64, "{total}");

    let _ = schema
        .admin()
        .execute_unprepared(&format!(
            "DROP DATABASE IF EXISTS {restored_db} WITH (FORCE)"
        ))
        .await;
    schema.drop().await;
}

/// Every table of the schema is either copied or left out on purpose: a migration that adds a
/// table must teach the copy about it.
#[tokio::test]
async fn the_copy_knows_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = inlet_store_seaorm::register::open_for_copy(&sqlite(dir.path(), "t.db"))
        .await
        .unwrap();
    assert_eq!(store.uncopied_tables().await.unwrap(), Vec::<String>::new());
    if let Some(schema) = Schema::for_test().await {
        let store = inlet_store_seaorm::register::open_for_copy(&schema.url)
            .await
            .unwrap();
        assert_eq!(store.uncopied_tables().await.unwrap(), Vec::<String>::new());
        schema.drop().await;
    }
}
