//! Upgrading a SQLite database written before the search window (migration m0004): records
//! stored under m0003 are found after the upgrade, with the new index's scope and tag filters.

use inlet_core::{
    RecordStore,
    record::Extraction,
    search::{SearchQuery, TagFilter},
    source::{CUSTOM, DataType, NewObjectType, NewSource, NewTagConfig, SourceDataType, TagType},
    tag::{TagValue, Tags},
    time,
};
use inlet_store_seaorm::{Migrator, SeaOrmStore};
use sea_orm::{ConnectionTrait, Database, DbBackend, Statement, Value};
use sea_orm_migration::MigratorTrait;

#[tokio::test]
async fn records_stored_before_the_search_window_are_found_after_the_upgrade() {
    let dir = std::env::temp_dir().join(format!("inlet-upgrade-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("old.db").display());

    // A database as m0003 left it, with a source and three records (one removed).
    let db = Database::connect(url.as_str()).await.unwrap();
    Migrator::up(&db, Some(3)).await.unwrap();
    let ws = uuid::Uuid::new_v4();
    let source = NewSource {
        definition_type: CUSTOM.into(),
        config_type: CUSTOM.into(),
        external_id: "old".into(),
        name: "Old".into(),
        track_status: true,
        object_types: vec![NewObjectType {
            name: "Docs".into(),
            external_id: "docs".into(),
            source_data_type: SourceDataType::Record,
            data_type: None,
            fields: vec![],
            tag_configs: vec![NewTagConfig {
                tag_type: TagType::Simple,
                name: "color".into(),
                external_id: "color".into(),
                data_type: DataType::Text,
                allow_multiple_values: true,
            }],
            facets: vec![],
            templates: None,
        }],
    }
    .build(ws, time::now())
    .unwrap();
    let ot = &source.object_types[0];
    let sql = |sql: &str, values: Vec<Value>| {
        Statement::from_sql_and_values(DbBackend::Sqlite, sql, values)
    };
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
        "INSERT INTO object_types (id, source_id, workspace_id, name) VALUES ($1, $2, $3, 'Docs')",
        vec![
            ot.id.to_string().into(),
            source.id.to_string().into(),
            ws.to_string().into(),
        ],
    ))
    .await
    .unwrap();
    let extraction = serde_json::to_string(&Extraction {
        format: Some("text".into()),
        chars: 20,
        truncated: false,
        failure: None,
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
    db.close().await.unwrap();

    // The new version migrates (m0004 indexes the live records) and finds them.
    let store = SeaOrmStore::connect(&url).await.unwrap();
    let query = |q: &str, tags: Vec<TagFilter>| SearchQuery {
        source_id: Some(source.id),
        object_type_id: Some(ot.id),
        tags,
        facet_tags: vec!["color".into()],
        ..SearchQuery::new(ws, q)
    };
    let page = store.search(&query("harbour", vec![])).await.unwrap();
    let mut found: Vec<&str> = page
        .records
        .iter()
        .map(|r| r.external_id.as_str())
        .collect();
    found.sort();
    assert_eq!(found, ["a", "b"]);
    assert!(page.exhaustive);
    assert_eq!(
        page.facets["color"],
        [("blue".to_string(), 1), ("red".to_string(), 1)]
    );
    let red = TagFilter {
        tag: "color".into(),
        values: vec!["red".into()],
    };
    let page = store.search(&query("harbour", vec![red])).await.unwrap();
    assert_eq!(page.records.len(), 1);
    assert_eq!(page.records[0].external_id, "a");
    // Browsing lists the newest write first: b was modified after a.
    let page = store.search(&query("", vec![])).await.unwrap();
    let order: Vec<&str> = page
        .records
        .iter()
        .map(|r| r.external_id.as_str())
        .collect();
    assert_eq!(order, ["b", "a"]);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
