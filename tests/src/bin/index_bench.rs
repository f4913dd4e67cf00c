//! Search index benchmark (issue: search on one tantivy index, item 9). Run in release:
//!
//! ```sh
//! cargo run --release -p inlet-tests --bin index-bench -- 100000 50   # records, queries per kind
//! ```
//!
//! Builds the index on disk (as a replica keeps it) from N generated records (~2 KB of
//! Zipf-distributed words each, 5 tags, the corpus of `search-bench`), one commit per 10,000
//! records as the indexer applies a backlog of the write log (`COMMIT_CHANGES`;
//! `INLET_BENCH_BATCH=1000` commits per page, as it applies a log it keeps up with), and reports records/s, the index's size next
//! to the text's, then p50/p95 of each kind of query with 3 facets counted over every match:
//! 1, 3 and 12 words (natural-language style: any word matches, ranked), a phrase, a word with
//! a tag filter, and browsing without words. Each kind runs four times in the same run: as a
//! connector (every record) and trimmed to a user in 50 of 10,000 groups (DESIGN 7a: each
//! record is readable by one group, every tenth by everyone), with the ratio: once as one
//! user searching again and again (their access filter cached), once as each search a new
//! user's first (read from the postings); and the first user's searches again typo tolerant,
//! as the API sends them (DESIGN 7), with the ratio to the same searches without.

use std::time::Instant;

use inlet_core::{
    access::{self, Grantee},
    index::{COMMIT_CHANGES, IndexBatch, SearchIndex, document},
    record::{Extraction, ObjectTypeRef, Record},
    time,
};
use inlet_search_tantivy::TantivyIndex;
use inlet_tests::{
    bench::{Asked, WARMUP, time_queries},
    corpus::{query_kinds, source, tags, text},
};
use rand::{SeedableRng, rngs::StdRng};
use uuid::Uuid;

/// Who may read record `i`: one of 10,000 groups, and every tenth record everyone.
fn grantees(i: usize) -> Vec<Grantee> {
    let mut list = vec![Grantee::Group(format!("grp-{}", (i * 7919) % 10_000))];
    if i.is_multiple_of(10) {
        list.push(Grantee::Everyone);
    }
    list
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let queries: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(50);
    // Records per commit: what the indexer gathers from a backlog (`COMMIT_CHANGES`) unless
    // `INLET_BENCH_BATCH` says otherwise.
    let per_commit: usize = std::env::var("INLET_BENCH_BATCH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(COMMIT_CHANGES);
    // `INLET_BENCH_INDEX=<dir>` keeps the index there; a later run with the same N finds it
    // complete and only runs the queries.
    let temp = tempfile::tempdir().expect("index dir");
    let dir = std::env::var_os("INLET_BENCH_INDEX")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    let (index, _) = TantivyIndex::open(&dir).expect("open index");
    let kept = index.applied().expect("applied") == Some(n as u64);
    let ws = Uuid::from_u128(1);
    // A fixed source id: the access terms name it, and a kept index must meet them again.
    let mut src = source(ws);
    src.id = Uuid::from_u128(2);
    let ot = &src.object_types[0];
    println!("# index-bench: {n} records of ~2 KB, 5 tags, a commit per {per_commit}\n");

    if kept {
        println!("(the index in INLET_BENCH_INDEX already holds the {n} records)\n");
    } else {
        let started = Instant::now();
        let mut text_bytes = 0u64;
        let mut rng = StdRng::seed_from_u64(7);
        let now = time::now();
        let mut batch = Vec::with_capacity(per_commit);
        let mut in_apply = std::time::Duration::ZERO;
        for i in 0..n {
            let content = text(&mut rng);
            text_bytes += content.len() as u64;
            let record = Record {
                id: Uuid::from_u128(i as u128 + 1),
                source_id: src.id,
                object_type: ObjectTypeRef {
                    id: ot.id,
                    name: ot.name.clone(),
                    current_sync_number: 0,
                },
                external_id: format!("doc-{i}"),
                version: 1,
                title: format!("doc-{i}.txt"),
                file_name: Some(format!("doc-{i}.txt")),
                url: None,
                content,
                tags: tags(&mut rng),
                external_checksum: None,
                created_date: now,
                modified_date: now + chrono::Duration::milliseconds(i as i64),
                modified_by: "bench@example.test".into(),
                sync_number: 0,
                removed: false,
                extraction: Extraction {
                    format: Some("text".into()),
                    version: None,
                    chars: 0,
                    truncated: false,
                    failure: None,
                    metadata: None,
                },
                access: Some(grantees(i)),
                original: None,
            };
            batch.push(document(ws, &record, Some(&src)));
            if batch.len() == per_commit || i + 1 == n {
                let t = Instant::now();
                index
                    .apply(IndexBatch {
                        upserts: std::mem::take(&mut batch),
                        deletes: vec![],
                        deleted_sources: vec![],
                        position: Some(i as u64 + 1),
                    })
                    .expect("apply");
                in_apply += t.elapsed();
            }
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "(of which {:.1} s in the index's apply, the rest generating records)",
            in_apply.as_secs_f64()
        );
        println!(
            "indexing: {n} records in {secs:.1} s = {:.0} records/s ({:.1} MB/s of text)",
            n as f64 / secs,
            text_bytes as f64 / secs / 1e6
        );
        println!(
            "size: index {:.1} MB, text {:.1} MB ({:.2}x)\n",
            index.size_bytes() as f64 / 1e6,
            text_bytes as f64 / 1e6,
            index.size_bytes() as f64 / text_bytes as f64
        );
    }
    let mut rng = StdRng::seed_from_u64(99);
    // A user in 50 of the 10,000 groups (nesting is expanded before the query: these are the
    // expanded groups), with `everyone` and their own term.
    // Reader `r` is in groups `r + 3`, `r + 203`, ...: reader 0 searches again and again (its
    // filter is cached after the first search); each search of "first search" is a reader's
    // first, its filter read from the postings.
    let reader = |r: usize| -> Vec<String> {
        (0..50)
            .map(|k| access::group_term(src.id, &format!("grp-{}", (k * 200 + 3 + r) % 10_000)))
            .chain([
                access::EVERYONE_TERM.to_string(),
                access::user_term(&format!("reader-{r}@example.test")),
            ])
            .collect()
    };
    let same_reader = |_: usize| reader(0);
    println!(
        "| query (3 facets) | p50 ms | p95 ms | max ms | mean total | trimmed p50 | trimmed p95 \
         | trimmed total | p95 ratio | first search p95 | ratio | typos p95 | ratio to trimmed |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    // `INLET_BENCH_KIND=<name>` times one kind of query only (to profile it).
    let only = std::env::var("INLET_BENCH_KIND").ok();
    for (kind, (name, make)) in query_kinds().iter().enumerate() {
        // Readers no kind before this one used.
        let new_reader = |i: usize| reader(1 + kind * (WARMUP + queries) + i);
        if only.as_deref().is_some_and(|k| k != *name) {
            continue;
        }
        // The same queries four ways: as a connector, as one reader again and again, each as
        // a new reader's first, and as the one reader with typo tolerance (as the API asks).
        let (mut same, mut first, mut again) = (rng.clone(), rng.clone(), rng.clone());
        let facets = Asked {
            facets: true,
            ..Asked::default()
        };
        let trimmed = Asked {
            viewer: Some(&same_reader),
            ..facets
        };
        let t = time_queries(&index, ws, make, &mut rng, queries, facets);
        let v = time_queries(&index, ws, make, &mut same, queries, trimmed);
        let new = Asked {
            viewer: Some(&new_reader),
            ..facets
        };
        let f = time_queries(&index, ws, make, &mut first, queries, new);
        let typos = Asked {
            typos: true,
            ..trimmed
        };
        let y = time_queries(&index, ws, make, &mut again, queries, typos);
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {} | {:.1} | {:.1} | {} | {:.2} | {:.1} | {:.2} \
             | {:.1} | {:.2} |",
            t.p50,
            t.p95,
            t.max,
            t.mean_total,
            v.p50,
            v.p95,
            v.mean_total,
            v.p95 / t.p95,
            f.p95,
            f.p95 / t.p95,
            y.p95,
            y.p95 / v.p95
        );
    }
}
