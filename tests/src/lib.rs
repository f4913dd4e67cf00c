//! Shared helpers for the cross-crate tests: a real `inlet` server on a loopback port with a
//! known administrator, and small request helpers.

pub mod bench;
pub mod corpus;
pub mod hooks;
pub mod oauth;
pub mod postgres;
pub mod process;
pub mod s3;

use std::sync::Arc;

use inlet_server::{AppState, Settings, auth, open_stores};
use poem::listener::{Acceptor, Listener, TcpListener};
use reqwest::{Client, RequestBuilder, Response, multipart};
use serde_json::{Value, json};

/// E-mail of the administrator every test server starts with.
pub const ADMIN_EMAIL: &str = "admin@example.test";
/// API token of that administrator.
pub const ADMIN_TOKEN: &str = "test-admin-token-0123456789abcdef";

/// A running server.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// HTTP client.
    pub client: Client,
    /// The server's state (stores), for setting up other workspaces' users.
    pub state: AppState,
}

impl TestServer {
    /// Starts a server on the in-memory store with default settings.
    pub async fn start() -> Self {
        Self::start_with(Settings::default()).await
    }

    /// Starts a server with these settings.
    pub async fn start_with(settings: Settings) -> Self {
        Self::start_on("memory:", settings).await
    }

    /// Starts a server over a fresh SQLite file in the temporary directory.
    pub async fn start_sqlite() -> Self {
        let path = std::env::temp_dir().join(format!("inlet-http-{}.db", uuid::Uuid::new_v4()));
        Self::start_on(
            &format!("sqlite://{}?mode=rwc", path.display()),
            Settings::default(),
        )
        .await
    }

    /// Starts a server over the stores `database` names, its search index and originals in
    /// memory (an in-process server is never stopped: restarts are tested on the real process,
    /// see [`process`]).
    pub async fn start_on(database: &str, settings: Settings) -> Self {
        Self::start_keeping(database, settings, Some("memory:")).await
    }

    /// [`TestServer::start_on`] keeping originals in the blob store `blobs` names (`None`:
    /// keeping none, as `--keep-originals=false`).
    pub async fn start_keeping(database: &str, settings: Settings, blobs: Option<&str>) -> Self {
        Self::start_reading(
            database,
            settings,
            blobs,
            std::sync::Arc::new(inlet_server::reader::Linked),
        )
        .await
    }

    /// [`TestServer::start_keeping`] reading files with `reader` (a stand-in for extractors
    /// whose versions change).
    pub async fn start_reading(
        database: &str,
        settings: Settings,
        blobs: Option<&str>,
        reader: std::sync::Arc<dyn inlet_server::reader::Reader>,
    ) -> Self {
        let blobs = match blobs {
            Some(url) => Some(
                inlet_core::blob::open(url)
                    .await
                    .expect("open the blob store"),
            ),
            None => None,
        };
        Self::start_serving(database, settings, blobs, reader).await
    }

    /// [`TestServer::start_reading`] with a blob store already opened (e.g. [`s3::S3Server`]'s).
    pub async fn start_serving(
        database: &str,
        settings: Settings,
        blobs: Option<Arc<dyn inlet_core::blob::BlobStore>>,
        reader: std::sync::Arc<dyn inlet_server::reader::Reader>,
    ) -> Self {
        let stores = open_stores(database).await.expect("open stores");
        auth::bootstrap(
            &stores.tokens,
            auth::AdminEnv {
                email: Some(ADMIN_EMAIL.into()),
                password: Some("admin-password".into()),
                api_token: Some(ADMIN_TOKEN.into()),
            },
        )
        .await
        .expect("bootstrap");
        let index = inlet_server::indexer::open_index(None).expect("open the search index");
        let state = AppState::new(stores, settings)
            .with_index(index.index)
            .with_blobs(blobs)
            .with_reader(reader);
        let acceptor = TcpListener::bind("127.0.0.1:0")
            .into_acceptor()
            .await
            .expect("bind loopback");
        let addr = acceptor.local_addr()[0]
            .as_socket_addr()
            .copied()
            .expect("socket address");
        let served = state.clone();
        tokio::spawn(async move {
            let _ = inlet_server::serve(acceptor, served, std::future::pending()).await;
        });
        // Started means ready: the search index has been built from the store (`/readyz`).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !state.indexer.is_ready() {
            assert!(
                std::time::Instant::now() < deadline,
                "the search index was not built"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        Self {
            base: format!("http://{addr}"),
            client: Client::new(),
            state,
        }
    }

    /// Waits (polling, at most 10 s) until search reflects every write made so far: search
    /// trails writes by up to a second (DESIGN 7).
    pub async fn settle(&self) {
        self.state
            .indexer
            .settle(&*self.state.records, std::time::Duration::from_secs(10))
            .await
            .expect("the search index catches up");
    }

    /// `GET /search` with `query` as the administrator, once search has caught up
    /// ([`TestServer::settle`]): the answer, which must be 200.
    pub async fn search(&self, query: &[(&str, &str)]) -> serde_json::Value {
        self.settle().await;
        let resp = self
            .req(reqwest::Method::GET, "/search")
            .query(query)
            .send()
            .await
            .expect("search");
        assert_eq!(resp.status(), 200);
        resp.json().await.expect("the search answer")
    }

    /// `GET path` (under `/api/v1`) as the administrator: the JSON answer, which must be 200.
    pub async fn get_json(&self, path: &str) -> serde_json::Value {
        let resp = self
            .req(reqwest::Method::GET, path)
            .send()
            .await
            .expect("GET");
        assert_eq!(resp.status(), 200, "GET {path}");
        resp.json().await.expect("a JSON answer")
    }

    /// Uploads `text` as `<id>.txt` to the record `id` of `paths`' object type as the
    /// administrator; the upload must succeed.
    pub async fn upload_text(&self, paths: &SourcePaths, id: &str, text: &str) {
        let resp = self
            .req(reqwest::Method::PUT, &format!("{}/file", paths.object(id)))
            .multipart(file_form(&format!("{id}.txt"), text.as_bytes().to_vec()))
            .send()
            .await
            .expect("upload");
        let status = resp.status();
        assert!(
            status.is_success(),
            "upload {id}: {status} {}",
            resp.text().await.unwrap_or_default()
        );
    }

    /// `base + /api/v1 + path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/api/v1{path}", self.base)
    }

    /// A request as the administrator.
    pub fn req(&self, method: reqwest::Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(path))
            .basic_auth(ADMIN_EMAIL, Some(ADMIN_TOKEN))
    }

    /// Creates a source from a JSON body and returns the response JSON (asserting 201).
    pub async fn create_source(&self, body: Value) -> Value {
        let resp = self
            .req(reqwest::Method::POST, "/sources")
            .json(&body)
            .send()
            .await
            .expect("send");
        assert_eq!(resp.status(), 201, "create source: {:?}", resp.text().await);
        resp.json().await.expect("json")
    }

    /// Creates the standard test source (see [`record_source`]) and returns its paths.
    pub async fn record_source(&self) -> SourcePaths {
        let source = self.create_source(record_source("files")).await;
        SourcePaths::of(&source, 0)
    }

    /// Creates a user (an ADMIN when `admin`) in workspace `workspace` (made when missing);
    /// answers their e-mail and API token.
    pub async fn user(
        &self,
        email: &str,
        workspace: &str,
        admin: bool,
    ) -> inlet_server::auth::NewCredentials {
        inlet_server::auth::create_user(
            self.state.tokens.as_ref(),
            inlet_server::auth::NewUserOptions {
                email: email.into(),
                workspace: workspace.into(),
                admin,
                ..Default::default()
            },
        )
        .await
        .expect("create user")
    }

    /// Opens a sync (`close` absent: `op` is START_INITIAL or START) or closes sync `close`
    /// with `op`, asserting success; answers the sync number.
    pub async fn sync(&self, p: &SourcePaths, op: &str, close: Option<i64>) -> i64 {
        let resp = match close {
            None => self.req(reqwest::Method::POST, &p.syncs()),
            Some(n) => self.req(reqwest::Method::PUT, &format!("{}/{n}", p.syncs())),
        }
        .json(&serde_json::json!({ "operation": op }))
        .send()
        .await
        .expect("send");
        assert!(resp.status().is_success(), "{op}: {}", resp.status());
        resp.json::<Value>().await.expect("json")["syncNumber"]
            .as_i64()
            .expect("syncNumber")
    }
}

/// Ids of one object type of a created source, and the paths built from them.
#[derive(Debug, Clone)]
pub struct SourcePaths {
    /// Source id.
    pub source_id: String,
    /// Object type id.
    pub object_type_id: String,
    /// The create-source response.
    pub source: Value,
}

impl SourcePaths {
    /// Paths of the `index`th object type of `source`.
    pub fn of(source: &Value, index: usize) -> Self {
        Self {
            source_id: source["id"].as_str().expect("source id").into(),
            object_type_id: source["sourceObjectTypes"][index]["id"]
                .as_str()
                .expect("object type id")
                .into(),
            source: source.clone(),
        }
    }

    /// `/sources/{s}/objecttypes/{o}`.
    pub fn object_type(&self) -> String {
        format!(
            "/sources/{}/objecttypes/{}",
            self.source_id, self.object_type_id
        )
    }

    /// `.../objects/{externalId}`.
    pub fn object(&self, external_id: &str) -> String {
        format!("{}/objects/{external_id}", self.object_type())
    }

    /// `.../syncs`.
    pub fn syncs(&self) -> String {
        format!("{}/syncs", self.object_type())
    }
}

/// A create-source body with one RECORD object type carrying tags `color` (TEXT, multi), `size`
/// (LONG), `due` (DATE_TIME, single) and facets over `color` and `due` (MODIFIED_DATE).
pub fn record_source(external_id: &str) -> Value {
    json!({
        "definition": {"type": "CUSTOM"},
        "externalId": external_id,
        "config": {
            "type": "CUSTOM",
            "name": "Files",
            "trackStatus": true,
            "specification": {"application": {"objectTypes": [{
                "name": "Documents",
                "externalId": "docs",
                "sourceDataType": "RECORD",
                "fields": [],
                "tagConfigs": [
                    {"type": "SIMPLE", "name": "Color", "externalId": "color", "dataType": "TEXT", "allowMultipleValues": true},
                    {"type": "SIMPLE", "name": "Size", "externalId": "size", "dataType": "LONG", "allowMultipleValues": false},
                    {"type": "SIMPLE", "name": "Due", "externalId": "due", "dataType": "DATE_TIME", "allowMultipleValues": false}
                ],
                "facets": [
                    {"type": "TAG", "name": "Color", "tagConfig": {"externalId": "color"}, "allowMultipleValues": true},
                    {"type": "TAG", "name": "Due", "tagConfig": {"externalId": "due"}, "targetType": "MODIFIED_DATE", "allowMultipleValues": false}
                ]
            }]}}
        }
    })
}

/// A multipart body with one `file` part.
pub fn file_form(file_name: &str, bytes: impl Into<Vec<u8>>) -> multipart::Form {
    multipart::Form::new().part(
        "file",
        multipart::Part::bytes(bytes.into()).file_name(file_name.to_string()),
    )
}

/// Six short texts about a harbour (four hold `harbour`, one `"quarterly report"`), uploaded
/// as `doc-0` … `doc-5` by the search index tests.
pub const HARBOUR_TEXTS: [&str; 6] = [
    "harbour cranes unload containers at night",
    "the quarterly report on harbour traffic",
    "cranes and containers: a maintenance plan",
    "night shift schedule for the harbour",
    "annual budget with a harbour expansion",
    "minutes of the planning meeting",
];

/// What a search response says that must not depend on the replica or on a restart: the total,
/// the result ids in order, the facets.
pub fn search_answer(response: &Value) -> Value {
    let ids: Vec<Value> = response["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {response}"))
        .iter()
        .map(|r| r["externalId"].clone())
        .collect();
    json!({"total": response["total"], "ids": ids, "facets": response["facets"]})
}

/// The externalIds of a search answer's results, sorted.
pub fn result_ids(answer: &serde_json::Value) -> Vec<String> {
    let mut ids: Vec<String> = answer["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["externalId"].as_str().expect("externalId").to_string())
        .collect();
    ids.sort();
    ids
}

/// Asserts a problem+json error with this status and returns its detail.
pub async fn expect_problem(resp: Response, status: u16) -> String {
    let got = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = resp.text().await.unwrap_or_default();
    assert_no_internals(&body);
    assert_eq!(got, status, "unexpected status; body: {body}");
    assert_eq!(content_type, "application/problem+json", "body: {body}");
    let v: Value = serde_json::from_str(&body).expect("problem body is JSON");
    assert_eq!(v["status"], status, "{v}");
    assert!(v["title"].is_string() && v["type"].is_string(), "{v}");
    v["detail"].as_str().expect("detail").to_string()
}

/// Words that only appear in an error body when it leaks internals: database and driver text,
/// SQL, source file paths and panics. Lower-case; matched case-insensitively.
pub const INTERNALS: &[&str] = &[
    "postgres",
    "sqlite",
    "sqlx",
    "sea_orm",
    "seaorm",
    "syntax error",
    "violates",
    "invalid byte sequence",
    "insert into",
    "update records",
    " from records",
    ".rs:",
    "src/",
    "/home/",
    "/tmp/",
    "/root/",
    "panicked",
    "backtrace",
    "rustc",
    "string_uuid",
    "integer_int64",
    "param0",
];

/// Fails when an error body shows internals ([`INTERNALS`]). Every problem body the suites read
/// with [`expect_problem`] passes through it.
pub fn assert_no_internals(body: &str) {
    let lower = body.to_lowercase();
    if let Some(word) = INTERNALS.iter().find(|w| lower.contains(*w)) {
        panic!("an error body shows internals ({word:?}): {body}");
    }
}

/// The state's stores, shared.
pub fn stores(
    server: &TestServer,
) -> (
    Arc<dyn inlet_core::RecordStore>,
    Arc<dyn inlet_core::TokenStore>,
) {
    (server.state.records.clone(), server.state.tokens.clone())
}

/// Inserts `n` live records `bulk-1..=n` of sync `sync_number` into an object type with one
/// set-based statement (for benchmarks and crash tests that need many rows fast).
pub async fn bulk_records(
    db: &sea_orm::DatabaseConnection,
    scope: inlet_core::record::Scope,
    n: i64,
    sync_number: i64,
) -> Result<u64, sea_orm::DbErr> {
    use sea_orm::{ConnectionTrait, DbBackend, Statement};
    let backend = db.get_database_backend();
    let numbers = match backend {
        DbBackend::Postgres => format!("SELECT generate_series(1, {n}) AS i"),
        _ => format!(
            "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {n}) SELECT i FROM s"
        ),
    };
    // Ids are UUIDs (a fresh prefix, the number as the last group), as the stores read them.
    let prefix = &uuid::Uuid::new_v4().to_string()[..24];
    let counter = match backend {
        DbBackend::Postgres => "lpad(i::text, 12, '0')",
        _ => "printf('%012d', i)",
    };
    let extraction = serde_json::to_string(&inlet_core::record::Extraction {
        format: Some("text".into()),
        version: None,
        chars: 0,
        truncated: false,
        failure: None,
        metadata: None,
    })
    .expect("extraction json");
    let sql = format!(
        "INSERT INTO records (id, object_type_id, external_id, source_id, version, title, url, content, tags, \
           external_checksum, created_date, modified_date, modified_by, sync_number, removed, extraction) \
         SELECT '{prefix}' || {counter}, '{ot}', 'bulk-' || i, '{src}', 1, 'bulk.txt', NULL, 'text of record ' || i, '{{}}', \
           'c', 0, 0, 'bench@example.test', {sync_number}, FALSE, '{extraction}' FROM ({numbers}) AS numbers",
        ot = scope.object_type_id,
        src = scope.source_id,
    );
    let res = db.execute_raw(Statement::from_string(backend, sql)).await?;
    Ok(res.rows_affected())
}

/// The bytes of `../shared/corpus/<path>` (beside the checkout); panics naming the file when
/// it cannot be read.
pub fn corpus_file(path: &str) -> Vec<u8> {
    let full = format!("{}/../../shared/corpus/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// Files below `dir`, in every subfolder (0 when it does not exist): blobs of a folder store.
pub fn files_under(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => files_under(&e.path()),
            Ok(t) if t.is_file() => 1,
            _ => 0,
        })
        .sum()
}
