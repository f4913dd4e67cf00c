//! Search benchmark: a store filled through its own write path, the search index rebuilt from
//! it, and queries through the index. Run in release:
//!
//! ```sh
//! cargo run --release -p inlet-tests --bin search-bench -- sqlite 100000 50   # records, queries per kind
//! INLET_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo run --release -p inlet-tests --bin search-bench -- postgres 100000
//! ```
//!
//! Fills a fresh database with N records of ~2 KB generated text (a 5000-word vocabulary with a
//! Zipf-like frequency, fixed seed) and 5 tags each, through the store's own write path (8
//! writers), rebuilds a search index on disk from the store (as a replica with an empty index
//! directory does: timed), and runs queries through it — common words, two-word queries, rare
//! words, 3- and 12-word questions, a phrase, a tag-filtered query, browsing — each with and
//! without facets (3 TAG facets), and prints p50/p95/max. (Until the SQL stores' own search was
//! removed, the same run timed it on the same queries: docs/performance.md's appendix sums up
//! the comparison; both columns are in `git show cd630ac:docs/performance.md`.)
//!
//! `INLET_BENCH_INDEX=<dir>` keeps the index in that directory, so a later run over a kept
//! database catches up instead of rebuilding.
//!
//! `INLET_BENCH_KEEP=1` keeps the filled database and prints its URL; `INLET_BENCH_URL=<url>`
//! runs the queries against such a kept database without filling it again (the bench's
//! workspace id is fixed, so a kept database is found again).

use std::{sync::Arc, time::Instant};

use inlet_core::{
    RecordStore,
    index::{SearchIndex, catch_up, rebuild},
    record::{Extraction, RecordKey, RecordWrite, Scope},
};
use inlet_search_tantivy::TantivyIndex;
use inlet_tests::{
    bench::{Asked, database, time_queries},
    corpus::{query_kinds, source, tags, text},
};
use rand::{SeedableRng, rngs::StdRng};

const WRITERS: usize = 8;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map(String::as_str).unwrap_or("sqlite");
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let queries: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);
    let reuse = std::env::var("INLET_BENCH_URL").ok();
    let keep = reuse.is_some() || std::env::var_os("INLET_BENCH_KEEP").is_some();
    let (url, label, cleanup) = match reuse {
        Some(url) => (url, format!("{which} (kept database)"), None),
        None => {
            let (url, label, cleanup) = database(which).await;
            (url, label, Some(cleanup))
        }
    };
    let t = Instant::now();
    let stores = inlet_server::open_stores(&url).await.expect("open store");
    if cleanup.is_none() {
        // A kept database may have been written by an earlier version: this includes its
        // migrations.
        println!("opened in {:.1} s\n", t.elapsed().as_secs_f64());
    }
    let store: Arc<dyn RecordStore> = stores.records;
    let ws = BENCH_WORKSPACE;
    if cleanup.is_some() {
        fill(&store, &label, n).await;
    }
    // `INLET_BENCH_INDEX=<dir>` keeps the index there: a later run over the kept database
    // catches up instead of rebuilding.
    let temp = tempfile::tempdir().expect("index dir");
    let dir = std::env::var_os("INLET_BENCH_INDEX")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    let (index, _) = TantivyIndex::open(&dir).expect("open index");
    let t = Instant::now();
    if index.applied().expect("applied").is_some() {
        let progress = catch_up(&*store, &index).await.expect("catch up");
        println!(
            "kept index caught up: {} changes in {:.1} s\n",
            progress.changes,
            t.elapsed().as_secs_f64()
        );
    } else {
        let mut last_report = Instant::now();
        let records = rebuild(&*store, &index, &mut |done| {
            if last_report.elapsed().as_secs() >= 30 {
                last_report = Instant::now();
                eprintln!(
                    "  rebuilding: {done} records, {:.0} s",
                    t.elapsed().as_secs_f64()
                );
            }
        })
        .await
        .expect("rebuild");
        let secs = t.elapsed().as_secs_f64();
        println!(
            "index rebuilt from {label}: {records} records in {secs:.1} s = {:.0} records/s; \
             index {:.1} MB on disk\n",
            records as f64 / secs,
            index.size_bytes() as f64 / 1e6
        );
    }
    run_queries(&index, ws, queries);
    drop(store);
    if keep {
        println!("\nkept: INLET_BENCH_URL='{url}'");
    } else if let (Some(cleanup), Some(db)) = (cleanup, stores_connection(&url).await) {
        cleanup(db).await;
    }
}

/// The bench's fixed workspace, so that a kept database can be queried again.
const BENCH_WORKSPACE: uuid::Uuid = uuid::Uuid::from_u128(0x1e7_be4c_0000_4000_8000_0000_0000_0001);

/// Creates the source and writes `n` records through the store's write path.
async fn fill(store: &Arc<dyn RecordStore>, label: &str, n: usize) {
    let ws = BENCH_WORKSPACE;
    let src = source(ws);
    store.create_source(&src).await.expect("create source");
    let scope = Scope {
        workspace_id: ws,
        source_id: src.id,
        object_type_id: src.object_types[0].id,
    };
    println!("# search-bench: {label}, {n} records of ~2 KB, 5 tags, {WRITERS} writers\n");

    let t = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(w as u64);
            for i in (w..n).step_by(WRITERS) {
                let content = text(&mut rng);
                store
                    .put_record(RecordWrite {
                        key: RecordKey {
                            scope,
                            external_id: format!("doc-{i}"),
                        },
                        sync_number: None,
                        title: format!("doc-{i}.txt"),
                        file_name: Some(format!("doc-{i}.txt")),
                        url: None,
                        extraction: Extraction {
                            format: Some("text".into()),
                            version: None,
                            chars: content.len() as u64,
                            truncated: false,
                            failure: None,
                            metadata: None,
                        },
                        content,
                        tags: tags(&mut rng),
                        external_checksum: None,
                        modified_by: "bench@example.test".into(),
                        access: None,
                        original: None,
                    })
                    .await
                    .expect("put");
            }
        }));
    }
    for t in tasks {
        t.await.expect("writer");
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "indexing: {n} records in {secs:.1} s = {:.0} records/s ({:.1} MB/s of text)\n",
        n as f64 / secs,
        n as f64 * 2000.0 / secs / 1e6
    );
}

/// Times `queries` queries of each kind, without and with facets, and prints the table. The
/// queries are the same in every run (a fixed seed).
fn run_queries(index: &dyn SearchIndex, ws: uuid::Uuid, queries: usize) {
    println!("{queries} timed queries per row, through the search index (every match, ranked)\n");
    println!("| query | facets | p50 ms | p95 ms | max ms | mean total |");
    println!("|---|---|---|---|---|---|");
    let mut rng = StdRng::seed_from_u64(99);
    for (name, make) in query_kinds() {
        for facets in [false, true] {
            let asked = Asked {
                facets,
                ..Asked::default()
            };
            let t = time_queries(index, ws, &make, &mut rng, queries, asked);
            println!(
                "| {name} | {} | {:.1} | {:.1} | {:.1} | {} |",
                if facets { "3" } else { "–" },
                t.p50,
                t.p95,
                t.max,
                t.mean_total
            );
        }
    }
}

/// A connection to hand to the cleanup (which closes it and drops the schema or file).
async fn stores_connection(url: &str) -> Option<sea_orm::DatabaseConnection> {
    if url.starts_with("memory") {
        return None;
    }
    sea_orm::Database::connect(url).await.ok()
}
