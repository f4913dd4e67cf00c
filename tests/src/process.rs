//! `inlet serve` as a real child process, for tests of the binary (restarts, crashes, replicas).

use std::{
    process::{Child, Command, Stdio},
    time::Duration,
};

/// A running `inlet serve`; killed with SIGKILL when dropped.
pub struct InletProcess {
    child: Child,
    /// Where the child's standard error (its log) goes.
    log: tempfile::NamedTempFile,
    /// The search index directory of a child over PostgreSQL (whose default, `./inlet-index`,
    /// replicas started from one directory would share); removed with the process.
    _index_dir: Option<tempfile::TempDir>,
    /// Likewise its blob folder of originals (default `./inlet-blobs/`); removed with it.
    _blob_dir: Option<tempfile::TempDir>,
    /// `http://127.0.0.1:<port>/api/v1`.
    pub api: String,
}

/// A loopback port that was free a moment ago and that this process has not handed out before
/// (the kernel may offer a just-released port again, and two servers spawned together must not
/// race for one).
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free loopback port");
        let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

impl InletProcess {
    /// Starts `bin serve` on a free loopback port over `database`, with `env` added.
    pub fn spawn(bin: &str, database: &str, env: &[(&str, &str)]) -> Self {
        Self::start(bin, database, env, None)
    }

    /// Starts `bin serve` as [`InletProcess::spawn`] does, from the working directory `dir`,
    /// with the default index folder (the operator's obvious way to start replicas).
    pub fn spawn_in(
        bin: &str,
        database: &str,
        env: &[(&str, &str)],
        dir: &std::path::Path,
    ) -> Self {
        Self::start(bin, database, env, Some(dir))
    }

    fn start(
        bin: &str,
        database: &str,
        env: &[(&str, &str)],
        cwd: Option<&std::path::Path>,
    ) -> Self {
        let port = free_port();
        let log = tempfile::NamedTempFile::new().expect("log file");
        let mut cmd = Command::new(bin);
        cmd.args([
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--database",
            database,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::from(log.reopen().expect("reopen log")));
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        // A SQLite database keeps its index beside it; every other gets one of its own here.
        let index_dir = (!database.starts_with("sqlite")
            && cwd.is_none()
            && !env.iter().any(|(k, _)| *k == "INLET_INDEX_DIR"))
        .then(|| tempfile::tempdir().expect("index dir"));
        if let Some(dir) = &index_dir {
            cmd.arg("--index-dir").arg(dir.path());
        }
        let blob_dir = (index_dir.is_some() && !env.iter().any(|(k, _)| *k == "INLET_BLOB_STORE"))
            .then(|| tempfile::tempdir().expect("blob dir"));
        if let Some(dir) = &blob_dir {
            cmd.arg("--blob-store")
                .arg(format!("file://{}", dir.path().display()));
        }
        Self {
            child: cmd.spawn().expect("spawn inlet"),
            log,
            _index_dir: index_dir,
            _blob_dir: blob_dir,
            api: format!("http://127.0.0.1:{port}/api/v1"),
        }
    }

    /// Waits until the server answers (at most 60 s: CI machines can be slow on a cold start); panics if it exits first.
    pub async fn ready(&mut self, client: &reqwest::Client) {
        for _ in 0..600 {
            if client
                .get(format!("{}/openapi.json", self.api))
                .send()
                .await
                .is_ok()
            {
                return;
            }
            assert!(
                self.child.try_wait().expect("child status").is_none(),
                "inlet exited during start; its log:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("inlet at {} did not come up", self.api);
    }

    /// A request to `path` of the API (`/sources`, …) as the user `credentials` (e-mail, API
    /// token) authenticates.
    pub fn request(
        &self,
        client: &reqwest::Client,
        method: reqwest::Method,
        path: &str,
        (email, token): (&str, &str),
    ) -> reqwest::RequestBuilder {
        client
            .request(method, format!("{}{path}", self.api))
            .basic_auth(email, Some(token))
    }

    /// Creates the standard test source ([`crate::record_source`]) as `credentials`, asserting
    /// 201; its paths.
    pub async fn record_source(
        &self,
        client: &reqwest::Client,
        credentials: (&str, &str),
        external_id: &str,
    ) -> crate::SourcePaths {
        let resp = self
            .request(client, reqwest::Method::POST, "/sources", credentials)
            .json(&crate::record_source(external_id))
            .send()
            .await
            .expect("send");
        assert_eq!(resp.status(), 201, "create source: {:?}", resp.text().await);
        crate::SourcePaths::of(&resp.json().await.expect("json"), 0)
    }

    /// What the child has logged so far (its standard error).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM: asks for a graceful stop.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits up to `timeout` for the child to exit: its exit status, or `None` if it still runs.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("child status") {
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL: no destructors, no graceful shutdown; waits for the process to be gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for InletProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
