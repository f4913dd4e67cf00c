//! Upload throughput with and without originals (issue 41: keeping them may cost at most 10%).
//! Run in release:
//!
//! ```sh
//! cargo run --release -p inlet-tests --bin upload-bench -- sqlite 3
//! ```
//!
//! Two servers over their own database of the same kind, one keeping originals in a folder
//! (`file://`), one keeping none; each round uploads the same workloads to both (alternating
//! which goes first), 8 uploads at a time, and the best round of each is reported with the
//! ratio. Workloads: every file of `../shared/corpus` up to 4 MB (real documents, extraction
//! included), and 2,000 small text files (where the blob write weighs most). Every round
//! uploads the same files again (a drive with duplicates): the blob folder's size against the
//! bytes uploaded ends the report.

use std::time::{Duration, Instant};

use futures_util::{StreamExt, stream};
use inlet_server::Settings;
use inlet_tests::{
    SourcePaths, TestServer,
    bench::{corpus_files, database, disk_use},
    file_form,
};

/// Uploads in flight at once.
const CONCURRENCY: usize = 8;
/// Largest corpus file uploaded.
const MAX_FILE: u64 = 4 << 20;

/// Uploads `files` under `prefix` and answers how long it took.
async fn upload(
    server: &TestServer,
    paths: &SourcePaths,
    prefix: &str,
    files: &[(String, Vec<u8>)],
) -> Duration {
    let started = Instant::now();
    stream::iter(files.iter().enumerate())
        .for_each_concurrent(CONCURRENCY, |(i, (name, bytes))| async move {
            let resp = server
                .req(
                    reqwest::Method::PUT,
                    &format!("{}/file", paths.object(&format!("{prefix}-{i}"))),
                )
                .multipart(file_form(name, bytes.clone()))
                .send()
                .await
                .expect("upload");
            assert!(resp.status().is_success(), "{name}: {}", resp.status());
        })
        .await;
    started.elapsed()
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map(String::as_str).unwrap_or("sqlite");
    let rounds: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let real = corpus_files(MAX_FILE);
    let small: Vec<(String, Vec<u8>)> = (0..2000)
        .map(|i| {
            let text = format!("Note {i}: the harbour board met on the {i}th. ").repeat(40);
            (format!("note-{i}.txt"), text.into_bytes())
        })
        .collect();
    let blobs = tempfile::tempdir().expect("temporary folder");
    let blob_url = format!("file://{}", blobs.path().join("blobs").display());
    let (url_keep, label, _a) = database(which).await;
    let (url_none, _, _b) = database(which).await;
    let settings = Settings {
        extraction_concurrency: CONCURRENCY,
        ..Settings::default()
    };
    let keeping = TestServer::start_keeping(&url_keep, settings.clone(), Some(&blob_url)).await;
    let plain = TestServer::start_keeping(&url_none, settings, None).await;
    let (paths_keep, paths_none) = (keeping.record_source().await, plain.record_source().await);
    let bytes = |files: &[(String, Vec<u8>)]| files.iter().map(|f| f.1.len()).sum::<usize>();
    println!(
        "# upload-bench: {label}, {CONCURRENCY} at a time, best of {rounds} rounds\n\n\
         | workload | files | MB | with originals (files/s) | without (files/s) | cost |\n\
         |---|---|---|---|---|---|"
    );
    let mut uploaded = 0;
    for (name, files) in [("corpus", &real), ("small text", &small)] {
        uploaded += bytes(files) * rounds;
        let (mut best_keep, mut best_none) = (Duration::MAX, Duration::MAX);
        for round in 0..rounds {
            let prefix = format!("{name}-{round}");
            if round % 2 == 0 {
                best_keep = best_keep.min(upload(&keeping, &paths_keep, &prefix, files).await);
                best_none = best_none.min(upload(&plain, &paths_none, &prefix, files).await);
            } else {
                best_none = best_none.min(upload(&plain, &paths_none, &prefix, files).await);
                best_keep = best_keep.min(upload(&keeping, &paths_keep, &prefix, files).await);
            }
        }
        let rate = |d: Duration| files.len() as f64 / d.as_secs_f64();
        println!(
            "| {name} | {} | {:.1} | {:.1} | {:.1} | {:+.1}% |",
            files.len(),
            bytes(files) as f64 / 1e6,
            rate(best_keep),
            rate(best_none),
            (best_keep.as_secs_f64() / best_none.as_secs_f64() - 1.0) * 100.0
        );
    }
    let kept = disk_use(&blobs.path().join("blobs"));
    println!(
        "\nuploaded {:.1} MB (every file {rounds} times); the blob folder holds {:.1} MB ({:.0}%)",
        uploaded as f64 / 1e6,
        kept as f64 / 1e6,
        kept as f64 * 100.0 / uploaded as f64
    );
}
