//! Upgrading databases written by earlier versions: records stored under m0003 (before the
//! search window of m0004), or with a PostgreSQL full-text index in m0004's layout, open with
//! this version, lose their SQL full-text tables (m0010), keep their tag rows for folder
//! counts, and are found after the search index is built from them (m0008's write log starts
//! empty; the build scans the records), on SQLite and PostgreSQL. Their records carry no access
//! list: they follow their object type's default, readable by everyone.

use inlet_core::{
    index::{IndexQuery, SearchIndex},
    record::Extraction,
    search::TagFilter,
    store::prelude::*,
    tag::{TagValue, Tags},
};
use inlet_search_tantivy::TantivyIndex;
use inlet_store_seaorm::{Migrator, SeaOrmStore};
use std::{future::Future, pin::Pin};

mod common;

use sea_orm::{ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement, Value};
use sea_orm_migration::MigratorTrait;

#[tokio::test]
async fn sqlite_records_stored_before_the_search_window_are_found_after_the_upgrade() {
    common::on_sqlite(|url| async move {
        upgrade(&url, 3, |_| Box::pin(async {})).await;
    })
    .await;
}

#[tokio::test]
async fn postgres_records_stored_before_the_search_window_are_found_after_the_upgrade() {
    common::on_postgres(|url| async move { upgrade(&url, 3, |_| Box::pin(async {})).await }).await;
}

#[tokio::test]
async fn postgres_index_in_the_m0004_layout_is_found_after_the_upgrade() {
    let Some(schema) = common::PgSchema::create().await else {
        return;
    };
    // Entries as m0004's code wrote them (this version's m0004 leaves the indexing to m0006):
    // words in a TOASTed `vector`, unmarked scope and tag tokens in `meta`, doc 1001 and up.
    upgrade(&schema.url, 4, |db| {
        Box::pin(async move {
            let written = db
                .execute_unprepared(
                    "INSERT INTO record_search (record_id, vector, meta, doc) \
                     SELECT r.id, to_tsvector('simple', r.content), array_to_tsvector(ARRAY[\
                       'w' || replace(o.workspace_id, '-', ''), \
                       's' || replace(r.source_id, '-', ''), \
                       'o' || replace(r.object_type_id, '-', ''), \
                       't' || left(encode(sha256(convert_to('color', 'UTF8') || '\\x00'::bytea \
                         || convert_to(r.tags::json -> 'color' -> 0 ->> 'value', 'UTF8')), 'hex'), 32)]), \
                     1000 + row_number() OVER (ORDER BY r.modified_date) \
                     FROM records r JOIN object_types o ON o.id = r.object_type_id \
                     WHERE NOT r.removed",
                )
                .await
                .unwrap();
            assert_eq!(written.rows_affected(), 2, "the two live records' entries");
        })
    })
    .await;
    common::PgSchema::drop_named(&schema.name).await;
}

#[tokio::test]
async fn sqlite_database_of_the_last_sql_search_version_is_searchable_after_the_upgrade() {
    common::on_sqlite(|url| async move {
        // At m0009 the records' text was in FTS5 too (written with each record).
        upgrade(&url, 9, |db| {
            Box::pin(async move {
                db.execute_unprepared(
                    "INSERT INTO records_fts (record_id, body, meta) \
                     SELECT id, content, '' FROM records WHERE NOT removed",
                )
                .await
                .unwrap();
            })
        })
        .await;
    })
    .await;
}

#[tokio::test]
async fn postgres_database_of_the_last_sql_search_version_is_searchable_after_the_upgrade() {
    let Some(schema) = common::PgSchema::create().await else {
        return;
    };
    upgrade(&schema.url, 9, |db| {
        Box::pin(async move {
            db.execute_unprepared(
                "INSERT INTO record_search (record_id, meta, words) \
                 SELECT id, ''::tsvector, to_tsvector('simple', content) FROM records \
                 WHERE NOT removed",
            )
            .await
            .unwrap();
        })
    })
    .await;
    common::PgSchema::drop_named(&schema.name).await;
}

#[tokio::test]
async fn sqlite_duplicate_source_external_ids_survive_the_upgrade() {
    common::on_sqlite(|url| async move {
        duplicate_external_ids(&url).await;
    })
    .await;
}

#[tokio::test]
async fn postgres_duplicate_source_external_ids_survive_the_upgrade() {
    common::on_postgres(|url| async move { duplicate_external_ids(&url).await }).await;
}

/// Before m0007 a workspace could hold two sources with one externalId. After the upgrade both
/// are read back unchanged, the oldest holds the externalId (a new duplicate conflicts naming
/// it), and the younger can still be corrected and deleted.
async fn duplicate_external_ids(url: &str) {
    let db = Database::connect(url).await.unwrap();
    let backend = db.get_database_backend();
    Migrator::up(&db, Some(6)).await.unwrap();
    let ws = uuid::Uuid::new_v4();
    let sources: Vec<_> = (0..2)
        .map(|_| inlet_core::testkit::test_source(ws))
        .chain([inlet_core::testkit::test_source(uuid::Uuid::new_v4())])
        .collect();
    for (seq, source) in sources.iter().enumerate() {
        db.execute_raw(Statement::from_sql_and_values(
            backend,
            "INSERT INTO sources (id, workspace_id, seq, body) VALUES ($1, $2, $3, $4)",
            vec![
                source.id.to_string().into(),
                source.workspace_id.to_string().into(),
                (seq as i64 + 1).into(),
                serde_json::to_string(source).unwrap().into(),
            ],
        ))
        .await
        .unwrap();
        let ot = &source.object_types[0];
        db.execute_raw(Statement::from_sql_and_values(
            backend,
            "INSERT INTO object_types (id, source_id, workspace_id, name) VALUES ($1, $2, $3, $4)",
            vec![
                ot.id.to_string().into(),
                source.id.to_string().into(),
                source.workspace_id.to_string().into(),
                ot.name.clone().into(),
            ],
        ))
        .await
        .unwrap();
    }
    db.close().await.unwrap();

    let store = SeaOrmStore::connect(url).await.unwrap();
    assert_eq!(store.list_sources(ws).await.unwrap(), sources[..2]);
    let (oldest, younger) = (&sources[0], &sources[1]);
    match store
        .create_source(&inlet_core::testkit::test_source(ws))
        .await
    {
        Err(inlet_core::Error::Conflict(m)) => assert!(m.contains(&oldest.id.to_string()), "{m}"),
        other => panic!("a third source with the externalId must conflict, got {other:?}"),
    }
    let renamed = store
        .update_source(
            ws,
            younger.id,
            Box::new(|s| {
                s.patch(inlet_core::source::SourcePatch {
                    name: Some("Younger".into()),
                    track_status: None,
                })
            }),
        )
        .await
        .unwrap();
    assert_eq!(renamed.name, "Younger");
    store.delete_source(ws, younger.id).await.unwrap();
    assert_eq!(
        store.list_sources(ws).await.unwrap(),
        std::slice::from_ref(oldest)
    );
    // The other workspace's source with the same externalId is untouched.
    let other = &sources[2];
    assert_eq!(
        store
            .get_source(other.workspace_id, other.id)
            .await
            .unwrap(),
        *other
    );
}

/// Changes made to the database once it stands at the old version, before the upgrade.
type Aged = fn(&DatabaseConnection) -> Pin<Box<dyn Future<Output = ()> + '_>>;

/// Stores a source and three records (one removed) in a database at migration `at` (directly,
/// as that version's tables hold them), then opens it with this version and searches.
async fn upgrade(url: &str, at: u32, aged: Aged) {
    // A database as migration `at` left it, with a source and three records (one removed).
    let db = Database::connect(url).await.unwrap();
    let backend = db.get_database_backend();
    Migrator::up(&db, Some(3)).await.unwrap();
    let ws = uuid::Uuid::new_v4();
    let source = inlet_core::testkit::test_source(ws);
    let ot = &source.object_types[0];
    let sql = |sql: &str, values: Vec<Value>| Statement::from_sql_and_values(backend, sql, values);
    db.execute_raw(sql(
        "INSERT INTO sources (id, workspace_id, seq, body) VALUES ($1, $2, 1, $3)",
        vec![
            source.id.to_string().into(),
            ws.to_string().into(),
            serde_json::to_string(&source).unwrap().into(),
        ],
    ))
    .await
    .unwrap();
    db.execute_raw(sql(
        "INSERT INTO object_types (id, source_id, workspace_id, name) VALUES ($1, $2, $3, $4)",
        vec![
            ot.id.to_string().into(),
            source.id.to_string().into(),
            ws.to_string().into(),
            ot.name.clone().into(),
        ],
    ))
    .await
    .unwrap();
    let extraction = serde_json::to_string(&Extraction {
        format: Some("text".into()),
        version: None,
        chars: 20,
        truncated: false,
        failure: None,
        metadata: None,
    })
    .unwrap();
    for (i, (external_id, content, color, removed)) in [
        ("a", "quarterly harbour report", "red", false),
        ("b", "harbour cranes", "blue", false),
        ("gone", "harbour ghost", "red", true),
    ]
    .into_iter()
    .enumerate()
    {
        db.execute_raw(sql(
            "INSERT INTO records (id, object_type_id, external_id, source_id, version, title, url, \
             content, tags, external_checksum, created_date, modified_date, modified_by, \
             sync_number, removed, extraction) \
             VALUES ($1, $2, $3, $4, 1, $3, NULL, $5, $6, NULL, $7, $7, 'old@example.test', 0, $8, $9)",
            vec![
                uuid::Uuid::new_v4().to_string().into(),
                ot.id.to_string().into(),
                external_id.into(),
                source.id.to_string().into(),
                content.into(),
                serde_json::to_string(&Tags::from([(
                    "color".to_string(),
                    vec![TagValue::Text(color.into())],
                )]))
                .unwrap()
                .into(),
                (1_700_000_000_000i64 + i as i64).into(),
                removed.into(),
                extraction.clone().into(),
            ],
        ))
        .await
        .unwrap();
    }
    if at > 3 {
        // The migrations up to `at`, as that version ran them.
        Migrator::up(&db, Some(at - 3)).await.unwrap();
    }
    aged(&db).await;
    db.close().await.unwrap();

    // This version migrates the rest of the way.
    let store = SeaOrmStore::connect(url).await.unwrap();
    // The search index is built from the upgraded database (its records predate the write
    // log: the build scans them), then follows the log.
    let model = inlet_core::testkit::ModelIndex::default();
    inlet_core::index::rebuild(&store, &model, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(model.external_ids(source.id), ["a", "b"]);
    inlet_core::index::catch_up(&store, &model).await.unwrap();
    assert_eq!(model.external_ids(source.id), ["a", "b"]);
    // The change feed opens with them too (they predate the log: its snapshot scans them).
    let scope = inlet_core::index::LogScope {
        workspace_id: ws,
        source_id: None,
    };
    let page = inlet_core::changes::read(&store, &scope, inlet_core::changes::Cursor::Start, None)
        .await
        .unwrap();
    let mut fed: Vec<String> = page
        .changes
        .iter()
        .map(|c| match c {
            inlet_core::changes::FeedChange::Upsert(r) => r.external_id.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    fed.sort();
    assert_eq!(fed, ["a", "b"]);
    // Records from before access lists follow their object type's default: everyone (m0016).
    let key = inlet_core::record::RecordKey {
        scope: inlet_core::record::Scope {
            workspace_id: ws,
            source_id: source.id,
            object_type_id: ot.id,
        },
        external_id: "a".into(),
    };
    let old = store.get_record(&key).await.unwrap();
    assert_eq!(old.access, None);
    // ... and have no original (m0018) nor extractor version: read once, before either was kept.
    assert_eq!(old.original, None);
    assert_eq!(old.extraction.version, None);
    let stored = store.get_source(ws, source.id).await.unwrap();
    assert_eq!(
        stored.object_types[0].default_access,
        inlet_core::access::DefaultAccess::Everyone
    );
    let index = TantivyIndex::in_memory().unwrap();
    inlet_core::index::rebuild(&store, &index, &mut |_| {})
        .await
        .unwrap();
    finds_the_records(&index, ws, &source, ot);

    // The SQL full-text index is gone; the tag rows folder counts read are there, one per
    // live record's tag value.
    let tables: &[&str] = if backend == DbBackend::Postgres {
        &["record_search", "record_words"]
    } else {
        &["records_fts"]
    };
    let catalog = if backend == DbBackend::Postgres {
        "SELECT COUNT(*) AS n FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_name = $1"
    } else {
        "SELECT COUNT(*) AS n FROM sqlite_master WHERE name = $1"
    };
    for table in tables {
        let row = store
            .connection()
            .query_one_raw(Statement::from_sql_and_values(
                backend,
                catalog,
                vec![(*table).into()],
            ))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.try_get::<i64>("", "n").unwrap(), 0, "{table} dropped");
    }
    let row = store
        .connection()
        .query_one_raw(Statement::from_string(
            backend,
            "SELECT COUNT(*) AS n FROM record_tags",
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.try_get::<i64>("", "n").unwrap(), 2);
    drop(store);
}

/// The searches every upgraded database must answer once indexed: words, a tag filter,
/// facets, and browsing order.
fn finds_the_records(
    index: &TantivyIndex,
    ws: uuid::Uuid,
    source: &inlet_core::source::Source,
    ot: &inlet_core::source::ObjectType,
) {
    let query = |q: &str, tags: Vec<TagFilter>| IndexQuery {
        workspace_id: ws,
        text: q.into(),
        source_id: Some(source.id),
        object_type_id: Some(ot.id),
        tags,
        facet_tags: vec!["color".into()],
        limit: 20,
        ..IndexQuery::default()
    };
    let hits = index.search(&query("harbour", vec![])).unwrap();
    let mut found: Vec<&str> = hits.hits.iter().map(|h| h.external_id.as_str()).collect();
    found.sort();
    assert_eq!(found, ["a", "b"]);
    assert_eq!(hits.total, 2);
    assert_eq!(
        hits.facets["color"],
        [("blue".to_string(), 1), ("red".to_string(), 1)]
    );
    let red = TagFilter {
        tag: "color".into(),
        values: vec!["red".into()],
    };
    let hits = index.search(&query("harbour", vec![red])).unwrap();
    assert_eq!(hits.hits.len(), 1);
    assert_eq!(hits.hits[0].external_id, "a");
    // Browsing lists the newest write first: b was modified after a.
    let hits = index.search(&query("", vec![])).unwrap();
    let order: Vec<&str> = hits.hits.iter().map(|h| h.external_id.as_str()).collect();
    assert_eq!(order, ["b", "a"]);
}

/// A SQLite database written at m0003 is migrated when opened for a copy, then copied whole
/// into a fresh database (PostgreSQL when the tests have one, SQLite otherwise): every table
/// compares equal and the records read back.
#[tokio::test]
async fn an_old_database_is_migrated_then_copied() {
    let dir = std::env::temp_dir().join(format!("inlet-upgrade-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("old.db").display());
    upgrade(&url, 3, |_| Box::pin(async {})).await;
    let schema = common::PgSchema::create().await;
    let target_url = match &schema {
        Some(s) => s.url.clone(),
        None => format!("sqlite://{}?mode=rwc", dir.join("copy.db").display()),
    };
    let source = inlet_store_seaorm::register::open_for_copy(&url)
        .await
        .unwrap();
    let target = inlet_store_seaorm::register::open_for_copy(&target_url)
        .await
        .unwrap();
    // Documents (a job, a counter) are carried too.
    let job = inlet_core::store::jobs::JobRow {
        id: uuid::Uuid::new_v4(),
        kind: "reextract".into(),
        workspace_id: None,
        created_at: inlet_core::time::now(),
        finished: false,
        body: serde_json::json!({"done": 0}),
        revision: 0,
    };
    assert!(source.put_job(&job, 0).await.unwrap());
    assert_eq!(
        source.rate_hit("login:x|127.0.0.1", 60_000).await.unwrap(),
        1
    );
    source
        .copy_into(&target, "old.db", &mut |_| {})
        .await
        .unwrap();
    target.finish_copy().await.unwrap();
    assert_eq!(target.copy_mark().await.unwrap(), None);
    assert!(
        source
            .verify_against(&target, &mut |_| {})
            .await
            .unwrap()
            .is_empty()
    );
    let live = target.scan_live(None, 100).await.unwrap();
    let mut ids: Vec<_> = live.iter().map(|(_, r)| r.external_id.clone()).collect();
    ids.sort();
    assert_eq!(ids, ["a", "b"]);
    let copied = target.get_job(job.id).await.unwrap().unwrap();
    assert_eq!((copied.revision, copied.body), (1, job.body));
    assert_eq!(
        target
            .rate_count("login:x|127.0.0.1", 60_000)
            .await
            .unwrap(),
        1
    );
    if let Some(s) = schema {
        common::PgSchema::drop_named(&s.name).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Jobs (m0019) and rate-limit counters kept in tables of their own before m0021 are
/// documents after it: a job reads back whole at its revision and is written on from it, and
/// a counter keeps its count.
async fn jobs_and_counters_become_documents(url: &str) {
    let db = Database::connect(url).await.unwrap();
    let backend = db.get_database_backend();
    Migrator::up(&db, Some(20)).await.unwrap();
    let sql = |sql: &str, values: Vec<Value>| common::statement(backend, sql, values);
    let (id, ws) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    db.execute_raw(sql(
        "INSERT INTO jobs (id, kind, workspace_id, created_ms, finished, body, revision) \
         VALUES ($1, 'reextract', $2, 1700000000123, $3, $4, 7)",
        vec![
            id.to_string().into(),
            ws.to_string().into(),
            false.into(),
            r#"{"state":"running","done":3}"#.into(),
        ],
    ))
    .await
    .unwrap();
    db.execute_raw(sql(
        "INSERT INTO rate_limits (rate_key, window_start, hits) VALUES ($1, $2, 4)",
        vec!["login:old|10.0.0.1".into(), 1_700_000_040_000i64.into()],
    ))
    .await
    .unwrap();
    db.close().await.unwrap();

    let store = SeaOrmStore::connect(url).await.unwrap();
    let job = store.get_job(id).await.unwrap().expect("the job");
    assert_eq!(job.kind, "reextract");
    assert_eq!(job.workspace_id, Some(ws));
    assert_eq!(job.created_at.timestamp_millis(), 1_700_000_000_123);
    assert!(!job.finished);
    assert_eq!(job.body, serde_json::json!({"state": "running", "done": 3}));
    assert_eq!(job.revision, 7);
    assert!(!store.put_job(&job, 6).await.unwrap(), "a stale write");
    assert!(store.put_job(&job, 7).await.unwrap());
    let query = inlet_core::store::jobs::JobQuery {
        kind: "reextract".into(),
        workspace_id: Some(ws),
        open_only: true,
        limit: 10,
    };
    assert_eq!(store.list_jobs(&query).await.unwrap().len(), 1);
    assert_eq!(
        store
            .rate_count("login:old|10.0.0.1", 1_700_000_040_000)
            .await
            .unwrap(),
        4
    );
    assert_eq!(
        store
            .rate_hit("login:old|10.0.0.1", 1_700_000_040_000)
            .await
            .unwrap(),
        5
    );
}

#[tokio::test]
async fn sqlite_jobs_and_counters_become_documents() {
    common::on_sqlite(|url| async move { jobs_and_counters_become_documents(&url).await }).await;
}

#[tokio::test]
async fn postgres_jobs_and_counters_become_documents() {
    common::on_postgres(|url| async move { jobs_and_counters_become_documents(&url).await }).await;
}
