//! Shared pieces of the benchmark binaries: a fresh database to run on and its removal, the
//! shared corpus as files, the disk a folder uses, and
//! timing queries of one kind through a search index.

use std::path::Path;
use std::time::Instant;

use inlet_core::index::{IndexQuery, SearchIndex};
use rand::rngs::StdRng;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

use crate::corpus::QueryMaker;

/// Untimed queries per kind before the timed ones (caches warm up as on a serving instance).
pub const WARMUP: usize = 5;

/// The tags the benches count facets of.
pub const FACETS: [&str; 3] = ["color", "team", "status"];

/// Latency of one kind of query, in milliseconds, and the mean `total` it answered.
pub struct Timing {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Slowest.
    pub max: f64,
    /// Mean number of matches.
    pub mean_total: u64,
}

/// How [`time_queries`] asks: what its queries count, whose records they see, and whether they
/// are typo tolerant.
#[derive(Clone, Copy, Default)]
pub struct Asked<'a> {
    /// [`FACETS`] counted over every match.
    pub facets: bool,
    /// The terms of the `i`th query's reader (trimmed); `None`: every record.
    pub viewer: Option<&'a dyn Fn(usize) -> Vec<String>>,
    /// `IndexQuery::typos` (off in the index by default; the API turns it on).
    pub typos: bool,
}

/// Runs [`WARMUP`] + `queries` queries made by `make` (page of 20), asked as `asked` says, and
/// times the last `queries`.
pub fn time_queries(
    index: &dyn SearchIndex,
    workspace_id: uuid::Uuid,
    make: &QueryMaker,
    rng: &mut StdRng,
    queries: usize,
    asked: Asked,
) -> Timing {
    let mut times = Vec::with_capacity(queries);
    let mut total = 0u64;
    // `INLET_BENCH_SHOW=1` prints each timed query's time, total and text (to find a slow tail).
    let show = std::env::var("INLET_BENCH_SHOW").is_ok_and(|v| v == "1");
    for i in 0..WARMUP + queries {
        let (text, tags) = make(rng);
        let query = IndexQuery {
            workspace_id,
            text,
            tags,
            limit: 20,
            facet_tags: if asked.facets {
                FACETS.iter().map(|f| f.to_string()).collect()
            } else {
                vec![]
            },
            viewer: asked.viewer.map(|v| v(i)),
            typos: asked.typos,
            ..IndexQuery::default()
        };
        let t = Instant::now();
        let hits = index.search(&query).expect("search");
        if i >= WARMUP {
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            if show {
                eprintln!(
                    "{:8.1} ms {:>9} {:?}",
                    t.elapsed().as_secs_f64() * 1000.0,
                    hits.total,
                    query.text
                );
            }
            total += hits.total;
        }
    }
    times.sort_by(f64::total_cmp);
    Timing {
        p50: percentile(&times, 0.5),
        p95: percentile(&times, 0.95),
        max: times[times.len() - 1],
        mean_total: total / queries as u64,
    }
}

/// Removes a benchmark's database once its pool is handed back.
pub type Cleanup =
    Box<dyn FnOnce(DatabaseConnection) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>>;

/// The database URL to bench on, its label, and how to remove it afterwards.
pub async fn database(which: &str) -> (String, String, Cleanup) {
    match which {
        "memory" => (
            "memory:".into(),
            "memory".into(),
            Box::new(|_| Box::pin(async {})),
        ),
        "postgres" => {
            let base = std::env::var("INLET_TEST_POSTGRES_URL")
                .expect("set INLET_TEST_POSTGRES_URL for the postgres bench");
            let schema = crate::postgres::Schema::create(&base, "inlet_bench").await;
            let url = schema.url.clone();
            let version = schema
                .admin()
                .query_one_raw(Statement::from_string(
                    sea_orm::DbBackend::Postgres,
                    "SHOW server_version",
                ))
                .await
                .ok()
                .flatten()
                .and_then(|r| r.try_get::<String>("", "server_version").ok())
                .unwrap_or_default();
            (
                url,
                format!("PostgreSQL {version}"),
                Box::new(move |pool: DatabaseConnection| {
                    Box::pin(async move {
                        let _ = pool.close().await;
                        schema.drop().await;
                    })
                }),
            )
        }
        _ => {
            let dir = std::env::temp_dir().join(format!("inlet-bench-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&dir).expect("dir");
            let url = format!("sqlite://{}?mode=rwc", dir.join("bench.db").display());
            (
                url,
                "SQLite (WAL, synchronous=FULL)".into(),
                Box::new(move |pool: DatabaseConnection| {
                    Box::pin(async move {
                        let _ = pool.close().await;
                        let _ = std::fs::remove_dir_all(&dir);
                    })
                }),
            )
        }
    }
}

/// The `p` quantile (0–1) of ascending `sorted` values, nearest rank.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Bytes of the files below `dir`.
pub fn disk_use(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                disk_use(&p)
            } else {
                p.metadata().map_or(0, |m| m.len())
            }
        })
        .sum()
}

fn corpus(dir: &Path, max_bytes: u64, out: &mut Vec<(String, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            corpus(&p, max_bytes, out);
        } else if p.metadata().is_ok_and(|m| m.len() <= max_bytes)
            && !p.to_string_lossy().ends_with(".expected.txt")
        {
            let name = p.file_name().map(|n| n.to_string_lossy().to_string());
            if let (Some(name), Ok(bytes)) = (name, std::fs::read(&p)) {
                out.push((name, bytes));
            }
        }
    }
}

/// Every file of `../shared/corpus` up to `max_bytes` (expected-text files aside), with its
/// name, in path order.
pub fn corpus_files(max_bytes: u64) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    corpus(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"),
        max_bytes,
        &mut out,
    );
    out
}
