//! PostgreSQL search keeps to its access paths: every statement a search runs is planned on the
//! write sequence's b-tree or the GIN indexes, never as a sequential scan of the index tables,
//! whatever the table sizes and statistics say. A sequential scan of `record_search` reads
//! every entry's out-of-row words, which the planner does not price: at 100k records it chose
//! one for a word + tag filter lookup (300 ms instead of 13). On a small, analyzed table, as
//! here, the planner prefers sequential scans for every route, so this fails unless the store
//! rules them out. A forced lookup must also be a GIN bitmap lookup that never walks the write
//! sequence (which would test the same out-of-row words entry by entry). SQLite: the full-text
//! match drives the join.

use inlet_core::{
    RecordStore,
    search::{SearchQuery, TagFilter},
    tag::{TagValue, Tags},
    testkit,
};
use inlet_store_seaorm::{SeaOrmStore, WordRoute};
use sea_orm::ConnectionTrait;

mod common;

#[tokio::test]
async fn postgres_search_never_scans_the_index_tables_sequentially() {
    let Some(schema) = common::PgSchema::create().await else {
        return;
    };
    let store = SeaOrmStore::connect(&schema.url).await.expect("open store");
    let (_, scope) = testkit::new_source(&store).await;
    let words = ["alpha", "beta", "gamma", "delta", "omega"];
    for i in 0..400usize {
        let mut tags = Tags::new();
        tags.insert("color".into(), vec![TagValue::Text(format!("c{}", i % 4))]);
        let mut w = testkit::write(scope, &format!("doc-{i}"), None, None);
        w.content = format!(
            "{} {} {} rare{i}",
            words[i % 5],
            words[(i / 5) % 5],
            words[(i / 25) % 5]
        );
        w.tags = tags;
        store.put_record(w).await.expect("put");
    }
    store
        .connection()
        .execute_unprepared("ANALYZE")
        .await
        .expect("analyze");

    let ws = scope.workspace_id;
    let color = |v: &str| TagFilter {
        tag: "color".into(),
        values: vec![v.into()],
    };
    let queries = [
        ("one word", SearchQuery::new(ws, "alpha"), vec![]),
        ("rare word", SearchQuery::new(ws, "rare7"), vec![]),
        ("phrase", SearchQuery::new(ws, "\"alpha beta\""), vec![]),
        (
            "word + tag",
            SearchQuery::new(ws, "alpha"),
            vec![color("c1")],
        ),
        (
            "phrase + tag",
            SearchQuery::new(ws, "\"beta gamma\""),
            vec![color("c2")],
        ),
        ("browse", SearchQuery::new(ws, ""), vec![]),
        ("browse + tag", SearchQuery::new(ws, ""), vec![color("c3")]),
    ];
    let mut checked = 0;
    let routes = [WordRoute::Auto, WordRoute::Lookup, WordRoute::Scan];
    for route in routes {
        let store = store.clone().with_word_route(route);
        for (name, query, tags) in &queries {
            let query = SearchQuery {
                tags: tags.clone(),
                facet_tags: vec!["color".into()],
                ..query.clone()
            };
            let plan = store.explain_search(&query).await.expect("explain");
            assert!(
                plan.contains("record_search") || plan.contains("record_words"),
                "{name} ({route:?}): not the window statement:\n{plan}"
            );
            for table in ["record_search", "record_words"] {
                assert!(
                    !plan.contains(&format!("Seq Scan on {table}")),
                    "{name} ({route:?}) scans {table} sequentially:\n{plan}"
                );
            }
            // A lookup reads its entries through bitmaps: walking the write sequence instead
            // would test every entry's out-of-row words.
            if route == WordRoute::Lookup && !query.terms.is_empty() {
                assert!(
                    plan.contains("Bitmap Index Scan on record_search_words"),
                    "{name} ({route:?}) is not a lookup:\n{plan}"
                );
                assert!(
                    !plan.contains("Index Scan using record_search_by_doc")
                        && !plan.contains("Index Scan Backward using record_search_by_doc"),
                    "{name} ({route:?}) walks the write sequence in a lookup:\n{plan}"
                );
            }
            // The search itself runs, and finds what the plan was for.
            let page = store.search(&query).await.expect("search");
            assert!(page.total > 0, "{name} ({route:?}) found nothing");
            checked += 1;
        }
    }
    assert_eq!(checked, 21);
    drop(store);
    common::PgSchema::drop_named(&schema.name).await;
}

#[tokio::test]
async fn sqlite_search_is_driven_by_the_full_text_index() {
    let dir = std::env::temp_dir().join(format!("inlet-plans-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let url = format!("sqlite://{}?mode=rwc", dir.join("plans.db").display());
    let store = SeaOrmStore::connect(&url).await.expect("open store");
    let (_, scope) = testkit::new_source(&store).await;
    store
        .put_record(testkit::write(scope, "a", None, None))
        .await
        .expect("put");
    let plan = store
        .explain_search(&SearchQuery::new(scope.workspace_id, "content"))
        .await
        .expect("explain");
    // The full-text match drives, newest entry first, and each hit finds its record by key
    // (left free, SQLite 3.40 read `object_types` first and sorted every match).
    let lines: Vec<&str> = plan.lines().collect();
    assert!(lines[0].starts_with("SCAN f VIRTUAL TABLE INDEX"), "{plan}");
    assert!(
        lines[1..].iter().all(|l| l.starts_with("SEARCH ")),
        "{plan}"
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
