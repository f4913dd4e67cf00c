//! OCR through the real `inlet serve` process (issue 16 point 4): without the tesseract command
//! the service starts, says once that OCR is off (log, `/readyz`, `/metrics`) and stores images
//! with empty content and the reason; with it, an uploaded scan is searchable text. Images from
//! OCRmyPDF's test suite (extractors/ocr/tests/data/MANIFEST.tsv).

use inlet_tests::process::InletProcess;
use reqwest::{
    Client,
    multipart::{Form, Part},
};
use serde_json::{Value, json};

const INLET: &str = env!("CARGO_BIN_EXE_inlet");
const EMAIL: &str = "ocr@example.test";
const TOKEN: &str = "ocr-test-token-0123456789abcdef";

fn image(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../extractors/ocr/tests/data/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

async fn start(env: &[(&str, &str)]) -> (InletProcess, Client) {
    let dir = std::env::temp_dir().join(format!("inlet-ocr-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.join("inlet.db").display());
    let mut all = vec![
        ("INLET_ADMIN_EMAIL", EMAIL),
        ("INLET_ADMIN_API_TOKEN", TOKEN),
    ];
    all.extend_from_slice(env);
    let mut server = InletProcess::spawn(INLET, &db, &all);
    let client = Client::new();
    server.ready(&client).await;
    (server, client)
}

/// Uploads `bytes` as a file of a new source and answers the stored record.
async fn upload(server: &InletProcess, client: &Client, bytes: Vec<u8>) -> Value {
    let (_, _, object) = upload_as(&server.api, client, (EMAIL, TOKEN), "scan.png", bytes).await;
    client
        .get(object)
        .basic_auth(EMAIL, Some(TOKEN))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn readyz(server: &InletProcess, client: &Client) -> Value {
    let base = server.api.trim_end_matches("/api/v1");
    client
        .get(format!("{base}/readyz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn metrics(server: &InletProcess, client: &Client) -> String {
    let base = server.api.trim_end_matches("/api/v1");
    client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test]
async fn without_tesseract_the_service_runs_and_says_ocr_is_off() {
    let (server, client) = start(&[("INLET_OCR_COMMAND", "/nonexistent/tesseract")]).await;
    let ready = readyz(&server, &client).await;
    assert_eq!(ready["status"], "ok", "{ready}");
    assert_eq!(ready["ocr"]["status"], "off", "{ready}");
    assert!(
        metrics(&server, &client)
            .await
            .contains("inlet_ocr_available 0")
    );
    let record = upload(&server, &client, image("crom.png")).await;
    assert_eq!(record["content"], "", "{record}");
    assert_eq!(
        record["extraction"]["failure"], "unsupported: OCR is not available",
        "{record}"
    );
    // The log says it once, with the reason for the operator; callers see no path.
    let log = server.log();
    assert_eq!(log.matches("OCR is off").count(), 1, "{log}");
    assert!(log.contains("/nonexistent/tesseract"), "{log}");
    assert!(!ready.to_string().contains("/nonexistent"), "{ready}");
    assert!(!record.to_string().contains("/nonexistent"), "{record}");
}

#[tokio::test]
async fn with_tesseract_an_uploaded_scan_is_text() {
    let probe = std::process::Command::new("tesseract")
        .arg("--version")
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var("INLET_REQUIRE_OCR").is_err(),
            "INLET_REQUIRE_OCR is set but tesseract does not run"
        );
        println!("skipped: tesseract is not installed");
        return;
    }
    let (server, client) = start(&[("INLET_OCR_LANGUAGES", "eng")]).await;
    let ready = readyz(&server, &client).await;
    assert_eq!(ready["ocr"]["status"], "ok", "{ready}");
    assert_eq!(ready["ocr"]["languages"], json!(["eng"]), "{ready}");
    assert!(
        metrics(&server, &client)
            .await
            .contains("inlet_ocr_available 1")
    );
    let record = upload(&server, &client, image("crom.png")).await;
    assert_eq!(
        record["content"].as_str().unwrap().trim(),
        "Covfefe is a perfectly cromulent word.",
        "{record}"
    );
    assert_eq!(record["extraction"]["format"], "png", "{record}");
    // A picture in a document: POI's presentation names its institute only in a picture.
    let record = upload(&server, &client, presentation()).await;
    let content = record["content"].as_str().unwrap();
    assert!(content.contains("Great Debates in Astronomy"), "{record}");
    assert!(content.contains("ASTROPHYSICS"), "{record}");
    drop(server);
    // Turned off, the presentation keeps its text and leaves the picture unread.
    let (server, client) = start(&[
        ("INLET_OCR_LANGUAGES", "eng"),
        ("INLET_OCR_DOCUMENT_PICTURES", "false"),
    ])
    .await;
    let record = upload(&server, &client, presentation()).await;
    let content = record["content"].as_str().unwrap();
    assert!(content.contains("Great Debates in Astronomy"), "{record}");
    assert!(!content.contains("ASTROPHYSICS"), "{record}");
    assert_eq!(record["extraction"]["truncated"], false, "{record}");
}

/// Whether tesseract runs here (a skip is a failure under `INLET_REQUIRE_OCR`).
fn tesseract_runs() -> bool {
    let probe = std::process::Command::new("tesseract")
        .arg("--version")
        .output();
    if probe.is_ok_and(|o| o.status.success()) {
        return true;
    }
    assert!(
        std::env::var("INLET_REQUIRE_OCR").is_err(),
        "INLET_REQUIRE_OCR is set but tesseract does not run"
    );
    println!("skipped: tesseract is not installed");
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn images_too_large_for_ocr_are_refused_at_once_and_tesseract_is_memory_bound() {
    if !tesseract_runs() {
        return;
    }
    let (server, client) = start(&[("INLET_OCR_LANGUAGES", "eng")]).await;
    // OCRmyPDF's crom.png with its header claiming 30,000 × 30,000 pixels (what a 948 KB PNG
    // of one colour can be): refused from the header, before Tesseract or a decoder runs.
    let mut bomb = image("crom.png");
    bomb[16..20].copy_from_slice(&30_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&30_000u32.to_be_bytes());
    let started = std::time::Instant::now();
    let (refused, small) = tokio::join!(
        upload(&server, &client, bomb),
        upload(&server, &client, image("crom.png"))
    );
    // Both answered in about the small image's own OCR time (Tesseract took 34-44 s on such a
    // bomb, and the small image waited behind it).
    let took = started.elapsed();
    println!("a bomb beside a small image: both answered in {took:?}");
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    let failure = refused["extraction"]["failure"]
        .as_str()
        .unwrap_or_default();
    assert!(
        failure.contains("30000 × 30000 pixels") && failure.contains("--ocr-max-pixels"),
        "{refused}"
    );
    assert_eq!(refused["content"], "", "{refused}");
    assert!(
        small["content"].as_str().unwrap().contains("cromulent"),
        "{small}"
    );
    drop(server);
    // Tesseract runs under the memory limit: 20 MB is too little for it to start, and the
    // record says it could not be read, rather than the machine running out.
    let (server, client) = start(&[
        ("INLET_OCR_LANGUAGES", "eng"),
        ("INLET_OCR_MEMORY_LIMIT_MB", "20"),
    ])
    .await;
    let record = upload(&server, &client, image("crom.png")).await;
    assert_eq!(record["content"], "", "{record}");
    assert!(
        record["extraction"]["failure"]
            .as_str()
            .is_some_and(|f| f.contains("tesseract could not read")),
        "{record}"
    );
}

/// The characters an upload's answer says were read.
fn read_chars(answer: &Value) -> u64 {
    answer["extraction"]["characters"].as_u64().unwrap_or(0)
}

/// Uploads `bytes` as `name` to a new source of the user `(email, token)` through the API at
/// `api`: the answer (asserted 201), how long it took, and the record's URL.
async fn upload_as(
    api: &str,
    client: &Client,
    (email, token): (&str, &str),
    name: &str,
    bytes: Vec<u8>,
) -> (Value, std::time::Duration, String) {
    let source: Value = client
        .post(format!("{api}/sources"))
        .basic_auth(email, Some(token))
        .json(&json!({
            "definition": {"type": "CUSTOM"},
            "externalId": format!("files-{}", uuid::Uuid::new_v4()),
            "config": {"type": "CUSTOM", "name": "Files", "trackStatus": true,
                "specification": {"application": {"objectTypes": [
                    {"name": "Files", "externalId": "files", "sourceDataType": "RECORD"}]}}}
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ot = format!(
        "{api}/sources/{}/objecttypes/{}",
        source["id"].as_str().unwrap(),
        source["sourceObjectTypes"][0]["id"].as_str().unwrap()
    );
    let form = Form::new().part("file", Part::bytes(bytes).file_name(name.to_string()));
    let started = std::time::Instant::now();
    let object = format!("{ot}/objects/f");
    let resp = client
        .put(format!("{object}/file"))
        .basic_auth(email, Some(token))
        .multipart(form)
        .send()
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    (resp.json().await.unwrap(), took, object)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_workspaces_scans_hold_up_anothers_files_by_one_job_at_most() {
    if !tesseract_runs() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("inlet.db").display()
    );
    let a = (EMAIL, TOKEN);
    let mut server = InletProcess::spawn(
        INLET,
        &db,
        &[
            ("INLET_ADMIN_EMAIL", EMAIL),
            ("INLET_ADMIN_API_TOKEN", TOKEN),
            ("INLET_OCR_LANGUAGES", "eng"),
            ("INLET_EXTRACTION_CONCURRENCY", "2"),
            ("INLET_OCR_CONCURRENCY", "1"),
            // Seven scans queue for one Tesseract; the time budget counts the queue, so the
            // last would run out of it on a slow machine. This test is about fairness.
            ("INLET_EXTRACTION_TIMEOUT_SECS", "300"),
            ("INLET_OCR_TIMEOUT_SECS", "300"),
        ],
    );
    let client = Client::new();
    server.ready(&client).await;
    let out = std::process::Command::new(INLET)
        .args(["admin", "create-user", "--email", "b@example.test"])
        .args(["--workspace", "other", "--database", &db])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let user: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = ("b@example.test", user["apiToken"].as_str().unwrap());

    // How long one scanned page takes here (OCRmyPDF's ccitt.pdf).
    let api = server.api.clone();
    let (_, one_job, _) = upload_as(&api, &client, a, "scan.pdf", image("ccitt.pdf")).await;
    // Workspace a sends six scans at once; b then sends a small text file and a small image.
    let scans: Vec<_> = (0..6)
        .map(|i| {
            let (api, client) = (api.clone(), client.clone());
            let bytes = image(if i % 2 == 0 {
                "ccitt.pdf"
            } else {
                "c03-29.pdf"
            });
            tokio::spawn(async move { upload_as(&api, &client, a, "scan.pdf", bytes).await })
        })
        .collect();
    tokio::time::sleep(one_job / 2).await;
    let (text, text_took, _) = upload_as(
        &api,
        &client,
        b,
        "note.txt",
        b"Minutes of the harbour board, second quarter.".to_vec(),
    )
    .await;
    let (picture, picture_took, _) =
        upload_as(&api, &client, b, "crom.png", image("crom.png")).await;
    for scan in scans {
        let (record, _, _) = scan.await.unwrap();
        assert!(read_chars(&record) > 100, "{record}");
    }
    assert!(read_chars(&text) > 20, "{text}");
    assert!(read_chars(&picture) > 20, "{picture}");
    println!(
        "one scan alone {one_job:?}; beside six: b's text {text_took:?}, b's image {picture_took:?}"
    );
    // Waiting for OCR holds no extraction slot: the text file does not wait for the scans.
    assert!(
        text_took < one_job,
        "b's text file took {text_took:?}; one scan takes {one_job:?}"
    );
    // b's image waits for the scan being read at most (then its own, short, read).
    assert!(
        picture_took < one_job * 2 + std::time::Duration::from_secs(2),
        "b's image took {picture_took:?}; one scan takes {one_job:?}"
    );
}

/// Apache POI's master-text-43781.ppt (extractors/testdata/MANIFEST.tsv).
fn presentation() -> Vec<u8> {
    let path = format!(
        "{}/../extractors/testdata/ppt/master-text-43781.ppt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
