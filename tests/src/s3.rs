//! A real S3-compatible server for tests: moto's standalone server (from PyPI, installed by
//! `tests/python/requirements.txt`), started as a child process on a free loopback port with
//! one bucket. Missing moto skips a test, unless `INLET_REQUIRE_S3=1` (CI) makes it a failure.

use std::{
    process::{Child, Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use inlet_core::blob::BlobStore;

use crate::process::free_port;

/// The bucket every [`S3Server`] holds.
pub const BUCKET: &str = "inlet-originals";

/// A running moto server; stopped when dropped.
pub struct S3Server {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
}

impl S3Server {
    /// Starts the server and creates [`BUCKET`]; `None` when moto is not installed (a failure
    /// instead when `INLET_REQUIRE_S3=1`).
    pub async fn start() -> Option<Self> {
        let installed = Command::new("python3")
            .args(["-c", "import moto.server"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            assert!(
                std::env::var("INLET_REQUIRE_S3").as_deref() != Ok("1"),
                "moto's S3 server is required (INLET_REQUIRE_S3=1) but not installed"
            );
            eprintln!(
                "skipped: moto is not installed (pip install -r tests/python/requirements.txt)"
            );
            return None;
        }
        let port = free_port();
        let child = Command::new("python3")
            .args([
                "-c",
                "import sys; from moto.server import main; main(sys.argv[1:])",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start moto's server");
        let server = Self {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let created = client
                .put(format!("{}/{BUCKET}", server.endpoint))
                .send()
                .await;
            if created.as_ref().is_ok_and(|r| r.status().is_success()) {
                return Some(server);
            }
            assert!(
                Instant::now() < deadline,
                "moto's server did not start: {created:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The blob store `s3://BUCKET/prefix` on this server, as a replica would open it.
    pub fn store(&self, prefix: &str) -> Arc<dyn BlobStore> {
        inlet_blobs::s3(
            &format!("s3://{BUCKET}/{prefix}"),
            &[
                ("aws_endpoint", &self.endpoint),
                ("aws_allow_http", "true"),
                ("aws_region", "us-east-1"),
                ("aws_access_key_id", "test"),
                ("aws_secret_access_key", "test"),
            ],
        )
        .expect("open the S3 blob store")
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
