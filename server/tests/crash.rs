//! Crash safety on SQLite: `kill -9` in the middle of a streamed upload, of a sync close and of
//! search indexing; after a restart there is no half-written record, nothing of a closed sync is
//! lost, versions are consistent, and search counts every live record once.

use std::{sync::Arc, time::Duration};

use inlet_core::{
    record::Scope,
    source::{CUSTOM, NewObjectType, NewSource, SourceDataType},
    store::prelude::*,
    sync::{CloseOperation, OpenOperation, SyncState},
    testkit,
};
use inlet_store_seaorm::SeaOrmStore;
use inlet_tests::process::InletProcess;
use reqwest::Client;
use sea_orm::{ConnectionTrait, DbBackend, Statement};

const INLET: &str = env!("CARGO_BIN_EXE_inlet");
const EMAIL: &str = "crash@example.test";
const TOKEN: &str = "crash-token";
const ADMIN_ENV: [(&str, &str); 2] = [
    ("INLET_ADMIN_EMAIL", EMAIL),
    ("INLET_ADMIN_API_TOKEN", TOKEN),
];

struct Fixture {
    dir: std::path::PathBuf,
    db: String,
    scope: Scope,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A SQLite file with the crash admin and one RECORD source whose sync 1 is closed with `n`
/// records and sync 2 is open with none of them touched.
async fn fixture(n: i64) -> Fixture {
    let dir = std::env::temp_dir().join(format!("inlet-crash-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.join("inlet.db").display());
    let stores = inlet_server::open_stores(&db).await.unwrap();
    inlet_server::auth::bootstrap(
        &stores.tokens,
        inlet_server::auth::AdminEnv {
            email: Some(EMAIL.into()),
            password: None,
            api_token: Some(TOKEN.into()),
        },
    )
    .await
    .unwrap();
    let admin = stores.tokens.user_by_email(EMAIL).await.unwrap().unwrap();
    let store = Arc::new(SeaOrmStore::connect(&db).await.unwrap());
    let source = NewSource {
        definition_type: CUSTOM.into(),
        config_type: CUSTOM.into(),
        external_id: "crash".into(),
        name: "Crash".into(),
        track_status: true,
        object_types: vec![NewObjectType {
            default_access: Default::default(),
            complete_max_removal: None,
            name: "Docs".into(),
            external_id: "docs".into(),
            source_data_type: SourceDataType::Record,
            data_type: None,
            fields: vec![],
            tag_configs: vec![],
            facets: vec![],
            templates: None,
        }],
    }
    .build(admin.workspace_id, inlet_core::time::now())
    .unwrap();
    store.create_source(&source).await.unwrap();
    let scope = Scope {
        workspace_id: admin.workspace_id,
        source_id: source.id,
        object_type_id: source.object_types[0].id,
    };
    store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    store
        .put_record(testkit::write(scope, "seed", Some(1), Some("s")))
        .await
        .unwrap();
    // Bulk rows for the close to chew on, in one statement.
    inlet_tests::bulk_records(store.connection(), scope, n, 1)
        .await
        .unwrap();
    store
        .close_sync(scope, 1, CloseOperation::Complete)
        .await
        .unwrap();
    store.open_sync(scope, OpenOperation::Start).await.unwrap();
    Fixture { dir, db, scope }
}

async fn live_count(store: &SeaOrmStore, scope: Scope) -> i64 {
    let row = store
        .connection()
        .query_one_raw(Statement::from_string(
            DbBackend::Sqlite,
            format!(
                "SELECT COUNT(*) AS n FROM records WHERE object_type_id = '{ot}' AND NOT removed \
                 AND sync_number >= (SELECT complete_floor FROM object_types WHERE id = '{ot}')",
                ot = scope.object_type_id
            ),
        ))
        .await
        .unwrap()
        .unwrap();
    row.try_get("", "n").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_during_close_is_all_or_nothing() {
    let n = 200_000;
    let f = fixture(n).await;
    let mut server = InletProcess::spawn(INLET, &f.db, &ADMIN_ENV);
    let client = Client::new();
    server.ready(&client).await;
    let url = format!(
        "{}/sources/{}/objecttypes/{}/syncs/2",
        server.api, f.scope.source_id, f.scope.object_type_id
    );
    let close = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .put(url)
                .basic_auth(EMAIL, Some(TOKEN))
                .json(&serde_json::json!({"operation": "COMPLETE"}))
                .send()
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(60)).await;
    server.kill();
    let _ = close.await;

    let store = SeaOrmStore::connect(&f.db).await.unwrap();
    let run = store.get_sync(f.scope, 2).await.unwrap();
    let live = live_count(&store, f.scope).await;
    match run.state {
        SyncState::Open => {
            println!("killed mid-close: the close rolled back");
            assert_eq!(live, n + 1, "an interrupted close removed records");
            let run = store
                .close_sync(f.scope, 2, CloseOperation::Complete)
                .await
                .unwrap();
            assert_eq!(run.counters.removed as i64, n + 1);
        }
        SyncState::Completed => {
            println!("the close finished before the kill");
            assert_eq!(live, 0);
            assert_eq!(run.counters.removed as i64, n + 1);
        }
        SyncState::Failed => panic!("unexpected FAILED"),
    }
    assert_eq!(live_count(&store, f.scope).await, 0);
    // Sync 1's data is intact: the seed record keeps its version and checksum.
    let seed = store
        .get_record(&testkit::key(f.scope, "seed"))
        .await
        .unwrap();
    assert_eq!(seed.version, 1);
    assert_eq!(seed.external_checksum.as_deref(), Some("s"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_during_a_streamed_upload_leaves_no_record() {
    let f = fixture(10).await;
    let mut server = InletProcess::spawn(INLET, &f.db, &ADMIN_ENV);
    let client = Client::new();
    server.ready(&client).await;
    let object = format!(
        "{}/sources/{}/objecttypes/{}/objects",
        server.api, f.scope.source_id, f.scope.object_type_id
    );
    // The seed record is updated with a new version first (sync 2), and stays at that version.
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"seed v2".to_vec()).file_name("seed.txt"),
    );
    let resp = client
        .put(format!(
            "{object}/seed/file?syncNumber=2&externalChecksum=s2"
        ))
        .basic_auth(EMAIL, Some(TOKEN))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    // A slow multipart body: half the file, then the server dies.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    let boundary = "crashboundary";
    let body = reqwest::Body::wrap_stream(tokio_stream_from(rx));
    let upload = tokio::spawn({
        let client = client.clone();
        let url = format!("{object}/half/file?syncNumber=2");
        async move {
            client
                .put(url)
                .basic_auth(EMAIL, Some(TOKEN))
                .header(
                    "Content-Type",
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(body)
                .send()
                .await
        }
    });
    tx.send(Ok(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"half.txt\"\r\n\r\n").into_bytes())).await.unwrap();
    tx.send(Ok(vec![b'x'; 256 * 1024])).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.kill();
    drop(tx);
    let _ = upload.await;

    let store = SeaOrmStore::connect(&f.db).await.unwrap();
    assert!(
        store
            .get_record(&testkit::key(f.scope, "half"))
            .await
            .is_err(),
        "a half-uploaded record exists"
    );
    let seed = store
        .get_record(&testkit::key(f.scope, "seed"))
        .await
        .unwrap();
    assert_eq!(seed.version, 2);
    assert_eq!(seed.content, "seed v2");
    assert_eq!(seed.external_checksum.as_deref(), Some("s2"));
    let run = store.get_sync(f.scope, 2).await.unwrap();
    assert_eq!(run.state, SyncState::Open);
    assert_eq!(run.counters.uploaded, 1);
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<Result<Vec<u8>, std::io::Error>>,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// Polls `/readyz` until the search index has caught up (at most 120 s).
async fn index_ready(server: &InletProcess, client: &Client) {
    let base = server.api.trim_end_matches("/api/v1");
    for _ in 0..1200 {
        if let Ok(r) = client.get(format!("{base}/readyz")).send().await
            && r.status() == 200
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the search index did not catch up; log:\n{}", server.log());
}

/// Live records search lists (browsing the object type), and how many distinct ones.
async fn searched(server: &InletProcess, client: &Client, scope: Scope) -> (u64, usize) {
    let resp: serde_json::Value = client
        .get(format!("{}/search", server.api))
        .basic_auth(EMAIL, Some(TOKEN))
        .query(&[
            ("objectTypeId", scope.object_type_id.to_string()),
            ("limit", "100".to_string()),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: std::collections::HashSet<String> = resp["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["externalId"].as_str().unwrap().to_string())
        .collect();
    (resp["total"].as_u64().unwrap(), ids.len())
}

/// `kill -9` while the search index is being built, and again while it follows uploads: after
/// a restart search counts every live record once (the index resumes or rebuilds from the
/// database; a commit is all or nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_during_indexing_loses_and_duplicates_nothing() {
    let n = 3_000;
    let f = fixture(n).await;
    let client = Client::new();
    let mut server = InletProcess::spawn(INLET, &f.db, &ADMIN_ENV);
    server.ready(&client).await;
    // The index of a database it has never seen is being built from its 3,001 records.
    tokio::time::sleep(Duration::from_millis(150)).await;
    server.kill();

    let mut server = InletProcess::spawn(INLET, &f.db, &ADMIN_ENV);
    server.ready(&client).await;
    index_ready(&server, &client).await;
    let store = SeaOrmStore::connect(&f.db).await.unwrap();
    assert_eq!(
        searched(&server, &client, f.scope).await.0 as i64,
        live_count(&store, f.scope).await
    );

    // Uploads the indexer follows, then a kill right after them.
    let object = format!(
        "{}/sources/{}/objecttypes/{}/objects",
        server.api, f.scope.source_id, f.scope.object_type_id
    );
    for i in 0..40 {
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(format!("fresh {i}").into_bytes())
                .file_name(format!("fresh-{i}.txt")),
        );
        let resp = client
            .put(format!("{object}/fresh-{i}/file?syncNumber=2"))
            .basic_auth(EMAIL, Some(TOKEN))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
    }
    server.kill();
    let mut server = InletProcess::spawn(INLET, &f.db, &ADMIN_ENV);
    server.ready(&client).await;
    index_ready(&server, &client).await;
    let live = live_count(&store, f.scope).await;
    assert_eq!(live, n + 1 + 40);
    // The follower may still be applying the last uploads: poll until the count settles.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (total, distinct) = searched(&server, &client, f.scope).await;
        assert_eq!(distinct, 100, "a page lists distinct records");
        if total as i64 == live {
            break;
        }
        assert!(
            total as i64 <= live,
            "search counts a record twice: {total} > {live}"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "search found {total} of {live}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
