//! Search benchmark (issue: STRUCTURED records, folders and search). Run in release:
//!
//! ```sh
//! cargo run --release -p inlet-tests --bin search-bench -- sqlite 100000 50   # records, queries per kind
//! INLET_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo run --release -p inlet-tests --bin search-bench -- postgres 100000
//! ```
//!
//! Fills a fresh database with N records of ~2 KB generated text (a 5000-word vocabulary with a
//! Zipf-like frequency, fixed seed) and 5 tags each, through the store's own write path (8
//! writers; the full-text and tag indexes are written in each record's transaction), then runs
//! queries through `RecordStore::search` — common words, two-word queries, rare words, a phrase,
//! a tag-filtered query — each with and without facets (3 TAG facets), and prints p50/p95/max.
//!
//! `INLET_BENCH_KEEP=1` keeps the filled database and prints its URL; `INLET_BENCH_URL=<url>`
//! runs the queries against such a kept database without filling it again (the bench's
//! workspace id is fixed, so a kept database is found again).

use std::{sync::Arc, time::Instant};

use inlet_core::{
    RecordStore,
    record::{Extraction, RecordKey, RecordWrite, Scope},
    search::{SearchQuery, TagFilter},
};
use inlet_tests::{
    bench::{database, percentile},
    corpus::{source, tags, text, word},
};
use rand::{Rng, SeedableRng, rngs::StdRng};
use sea_orm::ConnectionTrait;

const WRITERS: usize = 8;
/// Untimed queries per kind before the timed ones.
const WARMUP: usize = 5;

/// Makes one query of a kind: its text and tag filters.
type QueryMaker = Box<dyn Fn(&mut StdRng) -> (String, Vec<TagFilter>)>;

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
    // Fresh statistics, as autovacuum (PostgreSQL) would have them a minute after a bulk load.
    if let Some(db) = stores_connection(&url).await {
        let t = Instant::now();
        db.execute_unprepared("ANALYZE").await.expect("analyze");
        println!("ANALYZE: {:.1} s\n", t.elapsed().as_secs_f64());
        let _ = db.close().await;
    }
    run_queries(&store, ws, queries).await;
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
                            chars: content.len() as u64,
                            truncated: false,
                            failure: None,
                        },
                        content,
                        tags: tags(&mut rng),
                        external_checksum: None,
                        modified_by: "bench@example.test".into(),
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

/// Runs `queries` queries of each kind, without and with facets, and prints the table.
async fn run_queries(store: &Arc<dyn RecordStore>, ws: uuid::Uuid, queries: usize) {
    let mut rng = StdRng::seed_from_u64(99);
    let kinds: Vec<(&str, QueryMaker)> = vec![
        (
            "common word",
            Box::new(|r: &mut StdRng| (word(r.random_range(0..5)), vec![])),
        ),
        (
            "two words",
            Box::new(|r: &mut StdRng| {
                (
                    format!(
                        "{} {}",
                        word(r.random_range(0..50)),
                        word(r.random_range(0..50))
                    ),
                    vec![],
                )
            }),
        ),
        (
            "rare word",
            Box::new(|r: &mut StdRng| (word(r.random_range(2000..5000)), vec![])),
        ),
        (
            "phrase",
            Box::new(|r: &mut StdRng| {
                (
                    format!(
                        "\"{} {}\"",
                        word(r.random_range(0..10)),
                        word(r.random_range(0..10))
                    ),
                    vec![],
                )
            }),
        ),
        (
            "word + tag filter",
            Box::new(|r: &mut StdRng| {
                (
                    word(r.random_range(0..50)),
                    vec![TagFilter {
                        tag: "team".into(),
                        values: vec![format!("team-{}", r.random_range(0..20))],
                    }],
                )
            }),
        ),
        (
            "no words (browse)",
            Box::new(|_: &mut StdRng| (String::new(), vec![])),
        ),
    ];
    println!("| query | facets | p50 ms | p95 ms | max ms | mean hits |");
    println!("|---|---|---|---|---|---|");
    for (name, make) in &kinds {
        for facets in [false, true] {
            let mut times = Vec::with_capacity(queries);
            let mut hits = 0u64;
            // The first WARMUP queries of each kind are run but not timed (caches warm up as
            // they would on a serving instance).
            for i in 0..WARMUP + queries {
                let (q, tags) = make(&mut rng);
                let query = SearchQuery {
                    tags,
                    facet_tags: if facets {
                        vec!["color".into(), "team".into(), "status".into()]
                    } else {
                        vec![]
                    },
                    ..SearchQuery::new(ws, &q)
                };
                let t = Instant::now();
                let page = store.search(&query).await.expect("search");
                if i < WARMUP {
                    continue;
                }
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                hits += page.total;
            }
            times.sort_by(f64::total_cmp);
            println!(
                "| {name} | {} | {:.1} | {:.1} | {:.1} | {} |",
                if facets { "3" } else { "–" },
                percentile(&times, 0.5),
                percentile(&times, 0.95),
                times[times.len() - 1],
                hits / queries as u64
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
