//! The few Inlet endpoints the tool calls, over `reqwest`.
//!
//! Paths follow spec 4.4 and DESIGN 5–7. Every caller-chosen id in a path is percent-encoded as
//! one segment (a `/` in an externalId becomes `%2F`), and tag header values are percent-encoded
//! UTF-8, which the server decodes.

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use futures_util::{Stream, stream};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::{Method, RequestBuilder, Response, StatusCode, multipart};
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

use crate::local::{CHECKSUM_PREFIX, READ_CHUNK};

pub use crate::wire::{
    Extraction, Facet, Folder, FolderDeleted, Metadata, ObjectType, Source, SourceConfig, Sync,
    TagConfig, TagRef, Touched,
};

/// The tag header of spec 4.4.
pub const TAG_HEADER: &str = "X-Service-Object-Tag";

/// Attempts of an idempotent request that failed in transit or got 502/503/504.
const ATTEMPTS: u32 = 3;
/// Wait before the first retry; doubled for each further one.
const RETRY_DELAY: Duration = Duration::from_millis(500);
/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything but RFC 3986 unreserved characters: safe for a path segment, a query value and a
/// tag header half.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes one path segment (or tag header half).
pub fn encode(value: &str) -> String {
    utf8_percent_encode(value, SEGMENT).to_string()
}

/// The `X-Service-Object-Tag` value that puts a record in `folder` of tag `tag`.
pub fn tag_header_value(tag: &str, folder: &str) -> String {
    format!("{}:{}", encode(tag), encode(folder))
}

/// How requests authenticate.
#[derive(Debug, Clone)]
pub enum Credentials {
    /// `Authorization: Bearer <OAuth2 access token>`.
    Bearer(String),
    /// HTTP Basic with a user's e-mail and API token (spec 5).
    Basic {
        /// The user's e-mail.
        user: String,
        /// The API token.
        token: String,
    },
}

/// A failed call.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The server answered with an unexpected status.
    #[error("{what}: {status}{}", detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Status {
        /// The call, e.g. `upload docs/a.txt`.
        what: String,
        /// The status.
        status: StatusCode,
        /// The problem+json `detail`, or the start of the body.
        detail: Option<String>,
    },
    /// The request did not complete (the reason is the error's source).
    #[error("{what}")]
    Transport {
        /// The call.
        what: String,
        /// Why.
        #[source]
        source: reqwest::Error,
    },
    /// An answer that does not have the expected shape.
    #[error("{what}: unexpected answer: {message}")]
    Decode {
        /// The call.
        what: String,
        /// Why.
        message: String,
    },
}

impl ApiError {
    /// The status the server answered, if it answered.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether going on with other files is pointless: bad credentials or rights, a sync that
    /// is no longer open, or a server that cannot be reached.
    pub fn is_fatal(&self) -> bool {
        match self {
            Self::Status { status, .. } => matches!(
                *status,
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::CONFLICT
            ),
            Self::Transport { source, .. } => source.is_connect(),
            Self::Decode { .. } => false,
        }
    }

    /// Whether the same (idempotent) request may simply be sent again: 502/503/504, or a
    /// request that failed in transit (e.g. on a pooled connection the server had just closed),
    /// unless the failure came from reading the file being uploaded.
    fn is_transient(&self) -> bool {
        match self {
            Self::Status { status, .. } => matches!(
                *status,
                StatusCode::BAD_GATEWAY
                    | StatusCode::SERVICE_UNAVAILABLE
                    | StatusCode::GATEWAY_TIMEOUT
            ),
            Self::Transport { source, .. } => !from_file(source),
            Self::Decode { .. } => false,
        }
    }
}

/// Whether a transport error was caused by the upload's own file stream ([`FileError`]).
fn from_file(e: &reqwest::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.is::<FileError>() {
            return true;
        }
        cause = c.source();
    }
    false
}

/// Reading the uploaded file failed, or its bytes are no longer the ones checksummed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FileError(String);

/// One file to upload.
#[derive(Debug, Clone)]
pub struct Upload<'a> {
    /// The record's externalId.
    pub external_id: &'a str,
    /// Where the bytes are.
    pub path: PathBuf,
    /// The name sent as the part's filename (becomes the title).
    pub file_name: &'a str,
    /// Bytes to send: exactly what the checksum covers.
    pub len: u64,
    /// The checksum of those bytes.
    pub checksum: &'a str,
    /// The record's url, if it has one.
    pub external_url: Option<&'a str>,
    /// Tag header values.
    pub tags: &'a [String],
}

/// An object type of a source, addressed by ids.
#[derive(Debug, Clone)]
pub struct Target {
    /// Source id.
    pub source_id: String,
    /// Object type id.
    pub object_type_id: String,
}

impl Target {
    fn path(&self) -> String {
        format!(
            "/sources/{}/objecttypes/{}",
            encode(&self.source_id),
            encode(&self.object_type_id)
        )
    }

    fn object(&self, external_id: &str) -> String {
        format!("{}/objects/{}", self.path(), encode(external_id))
    }

    fn batch(&self, operation: &str) -> String {
        format!("{}/batch/{operation}", self.path())
    }
}

/// Most items one batch request carries (the server's limit).
pub const BATCH: usize = 1000;

/// The error of a batch item that failed: its status and its problem's `detail`.
fn item_error(what: String, status: u16, problem: Option<&Value>) -> ApiError {
    ApiError::Status {
        what,
        status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        detail: problem
            .and_then(|p| p["detail"].as_str())
            .map(str::to_string),
    }
}

/// Inlet's API at one address, with one credential.
#[derive(Debug, Clone)]
pub struct Inlet {
    http: reqwest::Client,
    api: String,
    credentials: Credentials,
}

impl Inlet {
    /// A client for the service at `url` (with or without the `/api/v1` suffix).
    pub fn new(url: &str, credentials: Credentials) -> anyhow::Result<Self> {
        let base = url.trim_end_matches('/');
        let base = base.strip_suffix("/api/v1").unwrap_or(base);
        let parsed = reqwest::Url::parse(base)
            .map_err(|e| anyhow::anyhow!("--url '{url}' is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            anyhow::bail!("--url '{url}' must be http:// or https://");
        }
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("inlet-sync-folder/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            http,
            api: format!("{base}/api/v1"),
            credentials,
        })
    }

    /// The credential kind, for error hints.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let req = self.http.request(method, format!("{}{path}", self.api));
        match &self.credentials {
            Credentials::Bearer(token) => req.bearer_auth(token),
            Credentials::Basic { user, token } => req.basic_auth(user, Some(token)),
        }
    }

    /// Sends what `build` makes, again after a transient failure (see [`ApiError`]), and
    /// returns the response if its status is one of `ok`.
    async fn send<F>(&self, what: &str, ok: &[StatusCode], build: F) -> Result<Response, ApiError>
    where
        F: Fn() -> RequestBuilder,
    {
        self.send_with(what, ok, || std::future::ready(Ok(build())))
            .await
    }

    /// [`Self::send`] with a builder that may fail and is awaited for each attempt (an upload
    /// opens its file again, since the body is a stream over it).
    async fn send_with<F, Fut>(
        &self,
        what: &str,
        ok: &[StatusCode],
        mut build: F,
    ) -> Result<Response, ApiError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<RequestBuilder, ApiError>>,
    {
        let mut delay = RETRY_DELAY;
        let mut attempt = 1;
        loop {
            let result = match build().await?.send().await {
                Ok(resp) if ok.contains(&resp.status()) => return Ok(resp),
                Ok(resp) => Err(status_error(what, resp).await),
                Err(source) => Err(ApiError::Transport {
                    what: what.to_string(),
                    source,
                }),
            };
            match result {
                Err(e) if attempt < ATTEMPTS && e.is_transient() => {
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn get_json<T: DeserializeOwned>(&self, what: &str, path: &str) -> Result<T, ApiError> {
        let resp = self
            .send(what, &[StatusCode::OK], || self.request(Method::GET, path))
            .await?;
        decode(what, resp).await
    }

    /// `GET /sources/{id}`.
    pub async fn source(&self, id: &str) -> Result<Source, ApiError> {
        self.get_json(
            &format!("read source {id}"),
            &format!("/sources/{}", encode(id)),
        )
        .await
    }

    /// `GET /sources`.
    pub async fn sources(&self) -> Result<Vec<Source>, ApiError> {
        self.get_json("list sources", "/sources").await
    }

    /// `POST /sources` (never retried: it is not idempotent).
    pub async fn create_source(&self, body: &Value) -> Result<Source, ApiError> {
        let what = "create source";
        let resp = self
            .request(Method::POST, "/sources")
            .json(body)
            .send()
            .await
            .map_err(|source| ApiError::Transport {
                what: what.into(),
                source,
            })?;
        if resp.status() != StatusCode::CREATED {
            return Err(status_error(what, resp).await);
        }
        decode(what, resp).await
    }

    /// `GET .../syncs`, newest first.
    pub async fn syncs(&self, target: &Target) -> Result<Vec<Sync>, ApiError> {
        self.get_json("list syncs", &format!("{}/syncs", target.path()))
            .await
    }

    /// `POST .../syncs` with `START_INITIAL` or `START` (not retried: a lost answer would leave
    /// an open sync that a second attempt collides with).
    pub async fn open_sync(&self, target: &Target, first: bool) -> Result<Sync, ApiError> {
        let what = "open sync";
        let operation = if first { "START_INITIAL" } else { "START" };
        let resp = self
            .request(Method::POST, &format!("{}/syncs", target.path()))
            .json(&json!({ "operation": operation }))
            .send()
            .await
            .map_err(|source| ApiError::Transport {
                what: what.into(),
                source,
            })?;
        if resp.status() != StatusCode::CREATED {
            return Err(status_error(what, resp).await);
        }
        decode(what, resp).await
    }

    /// `PUT .../syncs/{n}` with `COMPLETE` or `FAIL`. A 409 after a repeated attempt is checked
    /// against the sync's state, in case the first attempt closed it and only its answer was lost.
    pub async fn close_sync(
        &self,
        target: &Target,
        sync_number: i64,
        complete: bool,
    ) -> Result<Sync, ApiError> {
        let (operation, closed_state) = if complete {
            ("COMPLETE", "COMPLETED")
        } else {
            ("FAIL", "FAILED")
        };
        let what = format!("close sync {sync_number} with {operation}");
        let path = format!("{}/syncs/{sync_number}", target.path());
        let body = json!({ "operation": operation });
        let attempts = std::sync::atomic::AtomicU32::new(0);
        let result = self
            .send(&what, &[StatusCode::OK], || {
                attempts.fetch_add(1, Ordering::Relaxed);
                self.request(Method::PUT, &path).json(&body)
            })
            .await;
        match result {
            Ok(resp) => decode(&what, resp).await,
            Err(e)
                if e.status() == Some(StatusCode::CONFLICT)
                    && attempts.load(Ordering::Relaxed) > 1 =>
            {
                let sync: Sync = self.get_json(&what, &path).await?;
                if sync.state == closed_state {
                    Ok(sync)
                } else {
                    Err(e)
                }
            }
            Err(e) => Err(e),
        }
    }

    /// `GET .../objects/{externalId}/metadata`; `None` for an externalId never uploaded.
    pub async fn metadata(
        &self,
        target: &Target,
        external_id: &str,
    ) -> Result<Option<Metadata>, ApiError> {
        let what = format!("read metadata of {external_id}");
        let path = format!("{}/metadata", target.object(external_id));
        let resp = self
            .send(&what, &[StatusCode::OK, StatusCode::NOT_FOUND], || {
                self.request(Method::GET, &path)
            })
            .await?;
        if resp.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        decode(&what, resp).await.map(Some)
    }

    /// Metadata of up to [`BATCH`] records in one request (`POST .../batch/metadata`): the
    /// stored metadata by externalId; records that do not exist are absent.
    pub async fn metadata_batch(
        &self,
        target: &Target,
        external_ids: &[&str],
    ) -> Result<HashMap<String, Metadata>, ApiError> {
        #[derive(Deserialize)]
        struct Answer {
            items: Vec<Item>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Item {
            external_id: String,
            status: u16,
            record: Option<Metadata>,
            problem: Option<Value>,
        }
        let what = format!("read metadata of {} files", external_ids.len());
        let path = target.batch("metadata");
        let body = json!({ "externalIds": external_ids });
        let resp = self
            .send(&what, &[StatusCode::OK], || {
                self.request(Method::POST, &path).json(&body)
            })
            .await?;
        let answer: Answer = decode(&what, resp).await?;
        let mut found = HashMap::with_capacity(answer.items.len());
        for item in answer.items {
            match (item.status, item.record) {
                (200, Some(record)) => {
                    found.insert(item.external_id, record);
                }
                (404, _) => {}
                (status, _) => {
                    return Err(item_error(
                        format!("read metadata of {}", item.external_id),
                        status,
                        item.problem.as_ref(),
                    ));
                }
            }
        }
        Ok(found)
    }

    /// Touches up to [`BATCH`] records in one request (`POST .../batch/touch`), each expected
    /// to hold its checksum: one answer per item, in order.
    pub async fn touch_batch(
        &self,
        target: &Target,
        sync_number: i64,
        items: &[(&str, &str)],
    ) -> Result<Vec<Touched>, ApiError> {
        #[derive(Deserialize)]
        struct Answer {
            items: Vec<Item>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Item {
            external_id: String,
            status: u16,
            problem: Option<Value>,
        }
        let what = format!("touch {} files", items.len());
        let path = target.batch("touch");
        let objects: Vec<Value> = items
            .iter()
            .map(|(id, checksum)| json!({"externalId": id, "ifMatch": checksum}))
            .collect();
        let body = json!({"syncNumber": sync_number, "objects": objects});
        let resp = self
            .send(&what, &[StatusCode::OK], || {
                self.request(Method::POST, &path).json(&body)
            })
            .await?;
        let answer: Answer = decode(&what, resp).await?;
        if answer.items.len() != items.len() {
            return Err(ApiError::Decode {
                what,
                message: format!("{} answers for {} items", answer.items.len(), items.len()),
            });
        }
        answer
            .items
            .into_iter()
            .map(|item| match item.status {
                204 => Ok(Touched::Yes),
                412 => Ok(Touched::Changed),
                404 => Ok(Touched::Missing),
                status => Err(item_error(
                    format!("touch {}", item.external_id),
                    status,
                    item.problem.as_ref(),
                )),
            })
            .collect()
    }

    /// Touch (`PUT .../objects/{externalId}?syncNumber=n` with `If-Match: "<checksum>"`).
    pub async fn touch(
        &self,
        target: &Target,
        sync_number: i64,
        external_id: &str,
        checksum: &str,
    ) -> Result<Touched, ApiError> {
        let what = format!("touch {external_id}");
        let path = target.object(external_id);
        let n = sync_number.to_string();
        let if_match = format!("\"{checksum}\"");
        let resp = self
            .send(
                &what,
                &[
                    StatusCode::NO_CONTENT,
                    StatusCode::PRECONDITION_FAILED,
                    StatusCode::NOT_FOUND,
                ],
                || {
                    self.request(Method::PUT, &path)
                        .query(&[("syncNumber", &n)])
                        .header(reqwest::header::IF_MATCH, &if_match)
                },
            )
            .await?;
        Ok(match resp.status() {
            StatusCode::NO_CONTENT => Touched::Yes,
            StatusCode::PRECONDITION_FAILED => Touched::Changed,
            _ => Touched::Missing,
        })
    }

    /// Upload (`PUT .../objects/{externalId}/file`) with the sync number, checksum, url and tags;
    /// the file is streamed from disk. Bytes handed to the connection are added to `sent`.
    /// Returns the stored record's metadata.
    pub async fn upload(
        &self,
        target: &Target,
        sync_number: i64,
        file: &Upload<'_>,
        sent: &Arc<AtomicU64>,
    ) -> Result<Metadata, ApiError> {
        let what = format!("upload {}", file.external_id);
        let path = format!("{}/file", target.object(file.external_id));
        let mut query = vec![
            ("syncNumber", sync_number.to_string()),
            ("externalChecksum", file.checksum.to_string()),
        ];
        if let Some(url) = file.external_url {
            query.push(("externalUrl", url.to_string()));
        }
        let (what_ref, path_ref, query_ref) = (&what, &path, &query);
        let resp = self
            .send_with(
                &what,
                &[StatusCode::OK, StatusCode::CREATED],
                || async move {
                    // The body is a stream over the file, so each attempt opens it again.
                    let opened =
                        tokio::fs::File::open(&file.path)
                            .await
                            .map_err(|e| ApiError::Decode {
                                what: what_ref.clone(),
                                message: format!("cannot open {}: {e}", file.path.display()),
                            })?;
                    let body = reqwest::Body::wrap_stream(file_stream(
                        opened,
                        file.len,
                        file.checksum.to_string(),
                        sent.clone(),
                    ));
                    let part = multipart::Part::stream_with_length(body, file.len)
                        .file_name(file.file_name.to_string())
                        .mime_str("application/octet-stream")
                        .map_err(|source| ApiError::Transport {
                            what: what_ref.clone(),
                            source,
                        })?;
                    let mut req = self
                        .request(Method::PUT, path_ref)
                        .query(query_ref)
                        .multipart(multipart::Form::new().part("file", part));
                    for tag in file.tags {
                        req = req.header(TAG_HEADER, tag);
                    }
                    Ok(req)
                },
            )
            .await?;
        decode(&what, resp).await
    }

    /// `PUT /sources/{s}/tagconfigs/{tc}/hierarchies/{externalId}`: creates or updates a folder.
    pub async fn put_folder(
        &self,
        source_id: &str,
        tag_config_id: &str,
        folder: &Folder,
    ) -> Result<(), ApiError> {
        let what = format!("put folder {}", folder.external_id);
        let path = format!(
            "/sources/{}/tagconfigs/{}/hierarchies/{}",
            encode(source_id),
            encode(tag_config_id),
            encode(&folder.external_id)
        );
        let body = json!({"name": folder.name, "parentExternalId": folder.parent_external_id});
        self.send(&what, &[StatusCode::OK, StatusCode::CREATED], || {
            self.request(Method::PUT, &path).json(&body)
        })
        .await?;
        Ok(())
    }

    /// `DELETE /sources/{s}/tagconfigs/{tc}/hierarchies/{externalId}`.
    pub async fn delete_folder(
        &self,
        source_id: &str,
        tag_config_id: &str,
        external_id: &str,
    ) -> Result<FolderDeleted, ApiError> {
        let what = format!("delete folder {external_id}");
        let path = format!(
            "/sources/{}/tagconfigs/{}/hierarchies/{}",
            encode(source_id),
            encode(tag_config_id),
            encode(external_id)
        );
        let resp = self
            .send(
                &what,
                &[StatusCode::NO_CONTENT, StatusCode::CONFLICT],
                || self.request(Method::DELETE, &path),
            )
            .await?;
        Ok(if resp.status() == StatusCode::CONFLICT {
            FolderDeleted::InUse
        } else {
            FolderDeleted::Yes
        })
    }

    /// Every folder of the facet's HIERARCHICAL tag: the roots, then their children level by
    /// level (the API lists one level per call).
    pub async fn folders(&self, source_id: &str, facet_id: &str) -> Result<Vec<Folder>, ApiError> {
        let base = format!(
            "/sources/{}/facets/{}/hierarchies",
            encode(source_id),
            encode(facet_id)
        );
        let mut all: Vec<Folder> = self.get_json("list folders", &base).await?;
        let mut next = 0;
        while next < all.len() {
            let parent = all[next].external_id.clone();
            let children: Vec<Folder> = self
                .get_json(
                    &format!("list folders in {parent}"),
                    &format!("{base}/{}/children", encode(&parent)),
                )
                .await?;
            all.extend(children);
            next += 1;
        }
        Ok(all)
    }

    /// The externalIds of the object type's live records, from the record listing
    /// (`GET .../objects`, a page of [`BATCH`] at a time).
    pub async fn live_external_ids(&self, target: &Target) -> Result<Vec<String>, ApiError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Page {
            objects: Vec<Listed>,
            next_cursor: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Listed {
            external_id: String,
        }
        let what = "list records";
        let path = format!("{}/objects", target.path());
        let mut ids = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut query = vec![("limit", BATCH.to_string())];
            if let Some(c) = &cursor {
                query.push(("cursor", c.clone()));
            }
            let resp = self
                .send(what, &[StatusCode::OK], || {
                    self.request(Method::GET, &path).query(&query)
                })
                .await?;
            let page: Page = decode(what, resp).await?;
            ids.extend(page.objects.into_iter().map(|o| o.external_id));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(ids),
            }
        }
    }
}

async fn decode<T: DeserializeOwned>(what: &str, resp: Response) -> Result<T, ApiError> {
    let bytes = resp.bytes().await.map_err(|source| ApiError::Transport {
        what: what.into(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| ApiError::Decode {
        what: what.into(),
        message: e.to_string(),
    })
}

/// The error for an unexpected status, with the problem+json `detail` when there is one.
async fn status_error(what: &str, resp: Response) -> ApiError {
    let status = resp.status();
    let body = resp.text().await.unwrap_or_default();
    let detail = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v.get("detail").and_then(Value::as_str).map(str::to_string))
        .or_else(|| {
            let text: String = body.trim().chars().take(200).collect();
            (!text.is_empty()).then_some(text)
        });
    ApiError::Status {
        what: what.into(),
        status,
        detail,
    }
}

/// The file's first `len` bytes in chunks, counted into `sent`. If the bytes are not the ones
/// `checksum` was computed over (the file changed since), the stream ends with an error instead
/// of its last chunk, so the request is cut short and the server stores nothing.
fn file_stream(
    file: tokio::fs::File,
    len: u64,
    checksum: String,
    sent: Arc<AtomicU64>,
) -> impl Stream<Item = Result<Vec<u8>, FileError>> + Send + 'static {
    struct State {
        file: tokio::fs::File,
        left: u64,
        hasher: Option<Sha256>,
        checksum: String,
        sent: Arc<AtomicU64>,
    }
    let state = State {
        file,
        left: len,
        hasher: Some(Sha256::new()),
        checksum,
        sent,
    };
    stream::unfold(state, |mut s| async move {
        let mut hasher = s.hasher.take()?;
        // Still hashing with nothing left to read: the file is empty.
        if s.left == 0 {
            return verify(hasher, &s.checksum).err().map(|e| (Err(e), s));
        }
        let want = usize::try_from(s.left.min(READ_CHUNK as u64)).unwrap_or(READ_CHUNK);
        let mut buf = vec![0; want];
        if let Err(e) = s.file.read_exact(&mut buf).await {
            let e = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                changed()
            } else {
                FileError(format!("cannot read the file: {e}"))
            };
            return Some((Err(e), s));
        }
        hasher.update(&buf);
        s.left -= want as u64;
        if s.left == 0 {
            if let Err(e) = verify(hasher, &s.checksum) {
                return Some((Err(e), s));
            }
        } else {
            s.hasher = Some(hasher);
        }
        s.sent.fetch_add(want as u64, Ordering::Relaxed);
        Some((Ok(buf), s))
    })
}

fn verify(hasher: Sha256, checksum: &str) -> Result<(), FileError> {
    let got = format!("{CHECKSUM_PREFIX}{}", hex::encode(hasher.finalize()));
    if got == checksum {
        Ok(())
    } else {
        Err(changed())
    }
}

fn changed() -> FileError {
    FileError("the file changed while it was being uploaded; run again".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_one_percent_encoded_segment() {
        assert_eq!(encode("docs/a b.txt"), "docs%2Fa%20b.txt");
        assert_eq!(encode("100%#?x"), "100%25%23%3Fx");
        assert_eq!(encode("Café"), "Caf%C3%A9");
        assert_eq!(encode("a-b_c.d~e"), "a-b_c.d~e");
    }

    #[test]
    fn tag_header_encodes_both_halves() {
        assert_eq!(
            tag_header_value("folder", "odd dir %41, x:y"),
            "folder:odd%20dir%20%2541%2C%20x%3Ay"
        );
    }

    #[test]
    fn url_accepts_the_api_suffix() {
        let c = Credentials::Bearer("t".into());
        for url in [
            "http://h:1",
            "http://h:1/",
            "http://h:1/api/v1",
            "http://h:1/api/v1/",
        ] {
            assert_eq!(Inlet::new(url, c.clone()).unwrap().api, "http://h:1/api/v1");
        }
        assert!(Inlet::new("ftp://h", c.clone()).is_err());
        assert!(Inlet::new("not a url", c).is_err());
    }
}
