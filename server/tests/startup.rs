//! Start-up and logs of the real `inlet serve` process (issue 20.4, 22.7): a `sqlite://FILE` URL
//! without a mode creates its file; the log has no colour codes when standard error is not a
//! terminal; the start-up line names the bound address as a URL; migrations log one summary line;
//! `--log-format json` writes one JSON object per line with route templates, never raw paths;
//! credentials given in the environment are never printed or logged.

use std::{
    process::{Child, Command, Stdio},
    time::Duration,
};

use inlet_tests::process::InletProcess;
use reqwest::Client;
use serde_json::Value;

const INLET: &str = env!("CARGO_BIN_EXE_inlet");

/// `inlet serve` with standard output and error captured in files.
struct Captured {
    child: Child,
    stdout: tempfile::NamedTempFile,
    stderr: tempfile::NamedTempFile,
}

impl Captured {
    fn spawn(args: &[&str], env: &[(&str, &str)]) -> Self {
        let stdout = tempfile::NamedTempFile::new().unwrap();
        let stderr = tempfile::NamedTempFile::new().unwrap();
        let mut cmd = Command::new(INLET);
        cmd.arg("serve")
            .args(args)
            .env_remove("RUST_LOG")
            .env_remove("INLET_LOG_JSON")
            .env_remove("INLET_LOG_FORMAT")
            .stdout(Stdio::from(stdout.reopen().unwrap()))
            .stderr(Stdio::from(stderr.reopen().unwrap()));
        for (k, v) in env {
            cmd.env(k, v);
        }
        Self {
            child: cmd.spawn().unwrap(),
            stdout,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.stderr.path()).unwrap()
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(self.stdout.path()).unwrap()
    }

    /// Waits for a log line containing `needle` and returns it.
    async fn wait_for_line(&mut self, needle: &str) -> String {
        for _ in 0..300 {
            if let Some(line) = self.stderr().lines().find(|l| l.contains(needle)) {
                return line.to_string();
            }
            assert!(
                self.child.try_wait().unwrap().is_none(),
                "inlet exited; stderr:\n{}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no line with {needle:?} in:\n{}", self.stderr());
    }
}

impl Drop for Captured {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn start_up_creates_the_sqlite_file_and_logs_plain_summary_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fresh.db");
    let db = format!("sqlite://{}", file.display());
    let mut inlet = Captured::spawn(&["--bind", "127.0.0.1:0", "--database", &db], &[]);
    // Port 0: the line names the port the kernel chose, as a URL one can open.
    let line = inlet.wait_for_line("listening on http://").await;
    let url = line
        .split("listening on ")
        .nth(1)
        .unwrap()
        .trim()
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    assert!(!url.ends_with(":0"), "{line}");
    let health = Client::new()
        .get(format!("{url}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert!(
        file.exists(),
        "sqlite:// without a mode did not create the file"
    );

    let log = inlet.stderr();
    assert!(
        !log.contains('\u{1b}'),
        "colour codes in a non-terminal log:\n{log}"
    );
    // No --public-url: the issuer is the bound address, and the log says to set it.
    assert!(
        log.contains(&format!(
            "no --public-url: the OAuth issuer and the service's own links use {url}"
        )),
        "{log}"
    );
    let summary: Vec<&str> = log.lines().filter(|l| l.contains("migration")).collect();
    assert_eq!(summary.len(), 1, "{log}");
    assert!(
        summary[0].contains("database ready: ") && summary[0].contains(" migrations applied"),
        "{log}"
    );
}

#[tokio::test]
async fn json_logs_are_one_object_per_line_with_route_templates() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("inlet.db").display());
    let mut inlet = InletProcess::spawn(
        INLET,
        &db,
        &[
            ("INLET_LOG_FORMAT", "json"),
            ("INLET_ADMIN_EMAIL", "log@example.test"),
            ("INLET_ADMIN_API_TOKEN", "log-token"),
        ],
    );
    let client = Client::new();
    inlet.ready(&client).await;
    let id = "3f9c1b2e-5d4a-4c3b-9a8f-7e6d5c4b3a21";
    let resp = client
        .get(format!("{}/sources/{id}", inlet.api))
        .basic_auth("log@example.test", Some("log-token"))
        .header("x-request-id", "json-log-1")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let log = inlet.log();
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let access = lines
        .iter()
        .find(|l| l["span"]["request_id"] == "json-log-1" && l["fields"]["message"] == "request")
        .unwrap_or_else(|| panic!("no access line in {log}"));
    assert_eq!(
        access["fields"]["route"], "/api/v1/sources/{sourceId}",
        "{access}"
    );
    assert_eq!(access["fields"]["status"], 404, "{access}");
    assert!(!log.contains(id), "the raw path is in the log:\n{log}");
    assert!(!log.contains(":param"), "{log}");
    assert!(
        lines
            .iter()
            .any(|l| l["fields"]["message"] == "admin user created"),
        "{log}"
    );
}

#[tokio::test]
async fn credentials_from_the_environment_are_never_printed_or_logged() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("inlet.db").display());
    let password = "pw-Secret-7d1e0c2b";
    let token = "tok-Secret-a8f3e6d94c";
    let env = [
        ("INLET_ADMIN_EMAIL", "boot@example.test"),
        ("INLET_ADMIN_PASSWORD", password),
        ("INLET_ADMIN_API_TOKEN", token),
        ("RUST_LOG", "debug"),
    ];
    for (start, expected) in [(1, "admin user created"), (2, "admin user present")] {
        let mut inlet = Captured::spawn(&["--bind", "127.0.0.1:0", "--database", &db], &env);
        let line = inlet.wait_for_line("listening on http://").await;
        let url = line
            .split("listening on ")
            .nth(1)
            .unwrap()
            .trim()
            .to_string();
        let resp = Client::new()
            .get(format!("{url}/api/v1/sources"))
            .basic_auth("boot@example.test", Some(token))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "start {start}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (stdout, stderr) = (inlet.stdout(), inlet.stderr());
        assert!(stderr.contains(expected), "start {start}:\n{stderr}");
        for secret in [password, token] {
            assert!(
                !stderr.contains(secret) && !stdout.contains(secret),
                "start {start} shows {secret}:\nstdout:\n{stdout}\nstderr:\n{stderr}"
            );
        }
    }
}
