//! The `inlet` binary's command-line contract (DESIGN 2), run as a real process.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    time::Duration,
};

const INLET: &str = env!("CARGO_BIN_EXE_inlet");

use inlet_tests::process::InletProcess;

#[test]
fn openapi_command_prints_the_committed_document() {
    let out = Command::new(INLET).arg("openapi").output().unwrap();
    assert!(out.status.success());
    let committed = include_str!("../../openapi/openapi.json");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim_end(),
        committed.trim_end()
    );
}

#[test]
fn extract_command_prints_format_count_and_text() {
    let dir = std::env::temp_dir().join(format!("inlet-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("note.bin");
    std::fs::write(&file, "hello extractor\n").unwrap();
    let out = Command::new(INLET)
        .arg("extract")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("format: text"), "{stdout}");
    assert!(stdout.contains("characters: 16"), "{stdout}");
    assert!(stdout.contains("hello extractor"), "{stdout}");
    let missing = Command::new(INLET)
        .arg("extract")
        .arg(dir.join("missing"))
        .output()
        .unwrap();
    assert!(!missing.status.success());
}

#[test]
fn extract_into_a_reader_that_stops_early_ends_quietly() {
    // `inlet extract big.txt | head -1`: the pipe closes while the text is being written.
    let dir = std::env::temp_dir().join(format!("inlet-cli-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.txt");
    std::fs::write(&file, "many words\n".repeat(200_000)).unwrap();
    let mut child = Command::new(INLET)
        .arg("extract")
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("== "), "{first}");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn admin_create_user_prints_one_json_object() {
    let out = Command::new(INLET)
        .args([
            "admin",
            "create-user",
            "--email",
            "u@example.test",
            "--admin",
            "--workspace",
            "w1",
            "--database",
            "memory:",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["workspace"], "w1");
    assert_eq!(v["email"], "u@example.test");
    assert_eq!(v["password"].as_str().unwrap().len(), 24);
    assert_eq!(v["apiToken"].as_str().unwrap().len(), 64);
}

#[tokio::test]
async fn serve_prints_the_generated_administrator_once_and_answers() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut child = Command::new(INLET)
        .args([
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--database",
            "memory:",
        ])
        .env_remove("INLET_ADMIN_EMAIL")
        .env_remove("INLET_ADMIN_PASSWORD")
        .env_remove("INLET_ADMIN_API_TOKEN")
        .env_remove("INLET_DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let lines: Vec<String> = BufReader::new(stdout)
        .lines()
        .take(5)
        .map(Result::unwrap)
        .collect();
    let field = |name: &str| {
        lines
            .iter()
            .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
            .unwrap_or_else(|| panic!("no {name} in {lines:?}"))
    };
    let (email, token) = (field("e-mail:"), field("API token:"));
    assert_eq!(email, "admin@inlet.local");
    assert_eq!(token.len(), 64);
    assert_eq!(field("password:").len(), 24);

    let url = format!("http://127.0.0.1:{port}/api/v1/sources");
    let client = reqwest::Client::new();
    let mut status = None;
    for _ in 0..50 {
        match client
            .get(&url)
            .basic_auth(&email, Some(&token))
            .send()
            .await
        {
            Ok(resp) => {
                status = Some(resp.status().as_u16());
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(status, Some(200));
}

#[tokio::test]
async fn sqlite_data_survives_a_restart() {
    let dir = std::env::temp_dir().join(format!("inlet-restart-{}", uuid_like()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.join("inlet.db").display());
    let env = [
        ("INLET_ADMIN_EMAIL", "ops@example.test"),
        ("INLET_ADMIN_API_TOKEN", "restart-token"),
    ];
    let client = reqwest::Client::new();

    let mut first = InletProcess::spawn(INLET, &db, &env);
    first.ready(&client).await;
    let base = first.api.clone();
    let paths = first
        .record_source(&client, ("ops@example.test", "restart-token"), "s")
        .await;
    let object = format!("{base}{}", paths.object("a"));
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"durable text".to_vec()).file_name("a.txt"),
    );
    let resp = client
        .put(format!("{object}/file?externalChecksum=k1"))
        .basic_auth("ops@example.test", Some("restart-token"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    first.kill();

    let mut second = InletProcess::spawn(INLET, &db, &env);
    second.ready(&client).await;
    let object = object.replace(&base, &second.api);
    let record: serde_json::Value = client
        .get(&object)
        .basic_auth("ops@example.test", Some("restart-token"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    second.kill();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(record["content"], "durable text");
    assert_eq!(record["externalChecksum"], "k1");
    assert_eq!(record["version"], 1);
}

fn uuid_like() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// A lost administrator password: `inlet admin reset-password` sets a new one (generated, or the
/// one given) and keeps the API tokens; a later start whose `INLET_ADMIN_PASSWORD` differs from
/// the stored password says in the log that it was not applied and how to change it, without
/// the password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_password_is_reset_and_a_different_env_password_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let env = |password: &'static str| {
        [
            ("INLET_ADMIN_EMAIL", "root@example.test"),
            ("INLET_ADMIN_API_TOKEN", "reset-test-token"),
            ("INLET_ADMIN_PASSWORD", password),
        ]
    };
    let client = reqwest::Client::new();
    let mut first = InletProcess::spawn(INLET, &db, &env("first-password"));
    first.ready(&client).await;
    first.kill();

    let reset = |password: Option<&str>, email: &str| {
        let mut cmd = Command::new(INLET);
        cmd.args([
            "admin",
            "reset-password",
            "--email",
            email,
            "--database",
            &db,
        ]);
        if let Some(p) = password {
            cmd.args(["--password", p]);
        }
        cmd.output().unwrap()
    };
    let out = reset(None, "root@example.test");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["email"], "root@example.test");
    assert_eq!(v["password"].as_str().unwrap().len(), 24);
    let out = reset(Some("second-password"), "root@example.test");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["password"], "second-password");
    let out = reset(None, "nobody@example.test");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no user with e-mail 'nobody@example.test'")
    );

    // The stored password is the one set: a start with it says nothing, one with another
    // password says it was not applied.
    const NOTICE: &str = "INLET_ADMIN_PASSWORD differs from the stored password";
    let mut same = InletProcess::spawn(INLET, &db, &env("second-password"));
    same.ready(&client).await;
    let resp = same
        .request(
            &client,
            reqwest::Method::GET,
            "/sources",
            ("root@example.test", "reset-test-token"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "the API token is kept");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!same.log().contains(NOTICE), "{}", same.log());
    same.kill();
    let mut other = InletProcess::spawn(INLET, &db, &env("third-password"));
    other.ready(&client).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = other.log();
    assert!(
        log.contains(NOTICE) && log.contains("inlet admin reset-password"),
        "{log}"
    );
    assert!(!log.contains("third-password"), "{log}");
}
