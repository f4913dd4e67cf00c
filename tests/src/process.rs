//! `inlet serve` as a real child process, for tests of the binary (restarts, crashes, replicas).

use std::{
    process::{Child, Command, Stdio},
    time::Duration,
};

/// A running `inlet serve`; killed with SIGKILL when dropped.
pub struct InletProcess {
    child: Child,
    /// `http://127.0.0.1:<port>/api/v1`.
    pub api: String,
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free loopback port")
}

impl InletProcess {
    /// Starts `bin serve` on a free loopback port over `database`, with `env` added.
    pub fn spawn(bin: &str, database: &str, env: &[(&str, &str)]) -> Self {
        let port = free_port();
        let mut cmd = Command::new(bin);
        cmd.args([
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--database",
            database,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        Self {
            child: cmd.spawn().expect("spawn inlet"),
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
                "inlet exited during start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("inlet at {} did not come up", self.api);
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
