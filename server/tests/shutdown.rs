//! The real `inlet serve` process: SIGTERM stops accepting connections but lets an upload in
//! flight finish (201, stored) before the process exits 0; `--log-json` writes one JSON object per
//! line, each request's lines carrying its request id.

use std::time::Duration;

use inlet_tests::process::InletProcess;
use reqwest::{Client, Method, multipart};
use serde_json::Value;

const INLET: &str = env!("CARGO_BIN_EXE_inlet");
const EMAIL: &str = "ops@example.test";
const TOKEN: &str = "ops-token";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_the_upload_in_flight_then_exits() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let mut inlet = InletProcess::spawn(
        INLET,
        &db,
        &[
            ("INLET_ADMIN_EMAIL", EMAIL),
            ("INLET_ADMIN_API_TOKEN", TOKEN),
            ("INLET_LOG_JSON", "1"),
            ("INLET_SHUTDOWN_GRACE_SECS", "20"),
        ],
    );
    let client = Client::new();
    inlet.ready(&client).await;
    let api = inlet.api.clone();
    let req = |m: Method, path: &str| {
        client
            .request(m, format!("{api}{path}"))
            .basic_auth(EMAIL, Some(TOKEN))
    };
    let source: Value = req(Method::POST, "/sources")
        .json(&inlet_tests::record_source("ops"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let object = inlet_tests::SourcePaths::of(&source, 0).object("slow");

    // An upload whose body arrives in two parts, with SIGTERM in between.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    let body = reqwest::Body::wrap_stream(futures_util::stream::unfold(rx, |mut rx| async {
        rx.recv().await.map(|chunk| (chunk, rx))
    }));
    let form =
        multipart::Form::new().part("file", multipart::Part::stream(body).file_name("slow.txt"));
    let upload = tokio::spawn(
        req(Method::PUT, &format!("{object}/file"))
            .header("x-request-id", "slow-upload-1")
            .multipart(form)
            .send(),
    );
    tx.send(Ok(b"first half of a slow upload, ".to_vec()))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    inlet.terminate();
    tokio::time::sleep(Duration::from_millis(500)).await;
    if let Some(status) = inlet.wait_exit(Duration::ZERO) {
        panic!(
            "inlet exited ({status:?}) with an upload in flight; its log:\n{}",
            inlet.log()
        );
    }
    // No new connections are taken while draining.
    let fresh = Client::new();
    assert!(
        fresh
            .get(format!("{api}/openapi.json"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            .is_err(),
        "a new connection was served after SIGTERM"
    );
    tx.send(Ok(b"and the second half.".to_vec())).await.unwrap();
    drop(tx);
    let resp = upload
        .await
        .unwrap()
        .expect("the upload in flight was answered");
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let record: Value = resp.json().await.unwrap();
    assert_eq!(record["version"], 1, "{record}");
    let status = inlet
        .wait_exit(Duration::from_secs(15))
        .expect("inlet did not exit after draining");
    assert!(status.success(), "{status:?}");

    // JSON logs: every line an object; the upload's access line carries its request id.
    let log = inlet.log();
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!lines.is_empty(), "no JSON log lines: {log}");
    let access = lines
        .iter()
        .find(|l| l["span"]["request_id"] == "slow-upload-1" && l["fields"]["message"] == "request")
        .unwrap_or_else(|| panic!("no access line for the upload in {log}"));
    assert_eq!(access["fields"]["status"], 201, "{access}");
    assert_eq!(access["span"]["method"], "PUT", "{access}");
    assert!(
        lines
            .iter()
            .any(|l| l["fields"]["message"] == "inlet stopped"),
        "{log}"
    );

    // The record survived the restart.
    let mut again = InletProcess::spawn(INLET, &db, &[]);
    again.ready(&client).await;
    let meta = client
        .get(format!("{}{object}", again.api))
        .basic_auth(EMAIL, Some(TOKEN))
        .send()
        .await
        .unwrap();
    assert_eq!(meta.status(), 200);
}
