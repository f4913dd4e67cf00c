//! Blob stores for originals ([`inlet_core::blob`]) over the `object_store` crate, registered by
//! URL: `file://DIR` (a local folder, created when missing; writes land in a temporary file
//! renamed into place, so a blob is whole or absent), `memory:` (for the memory store and
//! tests), and `s3://BUCKET[/PREFIX]` (S3-compatible object storage, shared by replicas; the
//! endpoint, region and credentials come from the usual `AWS_*` variables, e.g.
//! `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, and
//! `AWS_ALLOW_HTTP=true` for a plain-HTTP endpoint).

use std::{ops::Range, sync::Arc, time::Duration};

use async_trait::async_trait;
use futures_util::TryStreamExt;
use inlet_core::{
    Error, Result,
    blob::{BlobBackendInfo, BlobKey, BlobMeta, BlobOpenFuture, BlobStore},
};
use object_store::{
    ClientConfigKey, GetOptions, GetRange, ObjectStore, PutPayload, RetryConfig,
    aws::{AmazonS3Builder, AmazonS3ConfigKey},
    local::LocalFileSystem,
    memory::InMemory,
    path::Path,
};

/// Attempts after the first of an S3 request that failed for a reason worth retrying.
pub const S3_RETRIES: usize = 3;
/// How long an S3 request is retried at most: an upload fails with 503 after about this when
/// the store is unreachable, rather than hanging.
pub const S3_RETRY_TIMEOUT: Duration = Duration::from_secs(15);
/// Time to connect to the S3 endpoint.
pub const S3_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Time for one S3 request (a put of the largest upload included).
pub const S3_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

inventory::submit! {
    BlobBackendInfo {
        name: "file",
        schemes: &["file://"],
        example: "file://DIR",
        open: open_file,
    }
}

inventory::submit! {
    BlobBackendInfo {
        name: "memory",
        schemes: &["memory:"],
        example: "memory:",
        open: open_memory,
    }
}

inventory::submit! {
    BlobBackendInfo {
        name: "s3",
        schemes: &["s3://"],
        example: "s3://BUCKET/PREFIX",
        open: open_s3,
    }
}

fn open_file(url: &str) -> BlobOpenFuture {
    let dir = url.trim_start_matches("file://").to_string();
    Box::pin(async move {
        if dir.is_empty() {
            return Err(Error::invalid("a file:// blob store URL names a folder"));
        }
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| Error::Unavailable(format!("cannot create the blob folder: {e}")))?;
        let fs = LocalFileSystem::new_with_prefix(&dir)
            .map_err(|e| Error::invalid(format!("blob folder {dir}: {e}")))?;
        Ok(Arc::new(Blobs::new(Arc::new(fs), None, "file")) as Arc<dyn BlobStore>)
    })
}

fn open_memory(_url: &str) -> BlobOpenFuture {
    Box::pin(async {
        Ok(Arc::new(Blobs::new(Arc::new(InMemory::new()), None, "memory")) as Arc<dyn BlobStore>)
    })
}

fn open_s3(url: &str) -> BlobOpenFuture {
    let url = url.to_string();
    Box::pin(async move { s3(&url, &[]) })
}

/// The S3-compatible store `s3://BUCKET[/PREFIX]` names, configured from the `AWS_*` variables
/// and then from `options`: `object_store`'s S3 keys as text (`aws_endpoint`,
/// `aws_access_key_id`, `aws_secret_access_key`, `aws_region`, `aws_allow_http`, ...). Lets a
/// program or a test point at a store without changing its process's environment.
pub fn s3(url: &str, options: &[(&str, &str)]) -> Result<Arc<dyn BlobStore>> {
    let rest = url.trim_start_matches("s3://");
    let (bucket, prefix) = match rest.split_once('/') {
        Some((b, p)) => (b, p.trim_matches('/')),
        None => (rest, ""),
    };
    if bucket.is_empty() {
        return Err(Error::invalid("an s3:// blob store URL names a bucket"));
    }
    let mut builder = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_retry(RetryConfig {
            max_retries: S3_RETRIES,
            retry_timeout: S3_RETRY_TIMEOUT,
            ..RetryConfig::default()
        })
        // Set key by key: the client options read from the environment (AWS_ALLOW_HTTP) stay.
        .with_config(
            AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout),
            format!("{}s", S3_CONNECT_TIMEOUT.as_secs()),
        )
        .with_config(
            AmazonS3ConfigKey::Client(ClientConfigKey::Timeout),
            format!("{}s", S3_REQUEST_TIMEOUT.as_secs()),
        );
    for (key, value) in options {
        let key: AmazonS3ConfigKey = key
            .parse()
            .map_err(|_| Error::invalid(format!("s3 blob store: unknown option {key}")))?;
        builder = builder.with_config(key, *value);
    }
    let s3 = builder
        .build()
        .map_err(|e| Error::invalid(format!("s3 blob store: {e}")))?;
    let prefix = (!prefix.is_empty()).then(|| Path::from(prefix));
    Ok(Arc::new(Blobs::new(Arc::new(s3), prefix, "s3")) as Arc<dyn BlobStore>)
}

/// A blob store over any `object_store` implementation, below an optional prefix.
pub struct Blobs {
    store: Arc<dyn ObjectStore>,
    prefix: Option<Path>,
    kind: &'static str,
}

impl Blobs {
    /// Blobs kept in `store` below `prefix`; `kind` names it in errors.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: Option<Path>, kind: &'static str) -> Self {
        Self {
            store,
            prefix,
            kind,
        }
    }

    fn location(&self, key: &BlobKey) -> Path {
        let path = key.path();
        match &self.prefix {
            Some(p) => Path::from(format!("{p}/{path}")),
            None => Path::from(path),
        }
    }

    /// The key of a listed location (`None` for anything else below the prefix).
    fn key_of(&self, location: &Path) -> Option<BlobKey> {
        let full = location.as_ref();
        let rel = match &self.prefix {
            Some(p) => full.strip_prefix(p.as_ref())?.strip_prefix('/')?,
            None => full,
        };
        BlobKey::parse(rel)
    }

    /// A store failure, without its paths or provider text in anything a client sees.
    fn failed(&self, what: &str, e: object_store::Error) -> Error {
        Error::Unavailable(format!(
            "the {} blob store failed to {what}: {e}",
            self.kind
        ))
    }
}

#[async_trait]
impl BlobStore for Blobs {
    async fn put(&self, key: &BlobKey, bytes: Vec<u8>) -> Result<()> {
        self.store
            .put(&self.location(key), PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|e| self.failed("write", e))
    }

    async fn get(&self, key: &BlobKey, range: Option<Range<u64>>) -> Result<Option<Vec<u8>>> {
        let options = GetOptions {
            range: range.map(GetRange::Bounded),
            ..GetOptions::default()
        };
        match self.store.get_opts(&self.location(key), options).await {
            Ok(got) => {
                let bytes = got.bytes().await.map_err(|e| self.failed("read", e))?;
                Ok(Some(bytes.to_vec()))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed("read", e)),
        }
    }

    async fn delete(&self, key: &BlobKey) -> Result<()> {
        match self.store.delete(&self.location(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.failed("delete", e)),
        }
    }

    async fn list(&self) -> Result<Vec<BlobMeta>> {
        let metas: Vec<object_store::ObjectMeta> = self
            .store
            .list(self.prefix.as_ref())
            .try_collect()
            .await
            .map_err(|e| self.failed("list", e))?;
        Ok(metas
            .into_iter()
            .filter_map(|m| {
                Some(BlobMeta {
                    key: self.key_of(&m.location)?,
                    size: m.size,
                    written: m.last_modified,
                })
            })
            .collect())
    }

    async fn check(&self) -> Result<()> {
        let mut listing = self.store.list(self.prefix.as_ref());
        listing
            .try_next()
            .await
            .map(|_| ())
            .map_err(|e| self.failed("answer", e))
    }
}

#[cfg(test)]
mod tests {
    use inlet_core::blob;

    #[tokio::test]
    async fn memory_blobs_follow_the_contract() {
        let store = blob::open("memory:").await.unwrap();
        inlet_core::testkit::blob_store_contract(&*store).await;
    }

    #[tokio::test]
    async fn file_blobs_follow_the_contract() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}", dir.path().join("blobs").display());
        let store = blob::open(&url).await.unwrap();
        inlet_core::testkit::blob_store_contract(&*store).await;
        // Blobs are files below the folder, named by their keys.
        let found = walk(&dir.path().join("blobs"));
        assert_eq!(found.len(), 2, "{found:?}");
    }

    #[tokio::test]
    async fn unknown_schemes_name_the_known_ones() {
        let err = blob::open("ftp://x").await.err().unwrap().to_string();
        assert!(err.contains("file://DIR") && err.contains("s3://"), "{err}");
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
    }
}
