//! Search through the index over what the store logs: words, liveness, ranking, paging, filters and facets.

use uuid::Uuid;

use crate::{
    RecordStore, WorkspaceId,
    index::{Hits, IndexQuery, SearchIndex},
    record::Scope,
    search::TagFilter,
    source::{
        CUSTOM, DataType, FacetTargetType, FacetType, NewFacet, NewObjectType, NewSource,
        NewTagConfig, Source, SourceDataType, TagType,
    },
    sync::{CloseOperation, OpenOperation},
    tag::TagValue,
    time,
};

use super::*;

/// A source for the search cases: tags `color` (TEXT, multi), `due` (DATE_TIME, mapped onto
/// the modified-date filter by a facet) and `folder` (HIERARCHICAL).
pub(super) async fn search_source(
    store: &dyn RecordStore,
    workspace_id: WorkspaceId,
) -> (Source, Scope) {
    stored(store, search_source_in(workspace_id)).await
}

/// The search test source (RECORD type `docs`: tags color, due, folder with facets), built but
/// not stored.
pub(super) fn search_source_in(workspace_id: WorkspaceId) -> Source {
    let tag = |name: &str, tag_type, data_type, multi| NewTagConfig {
        tag_type,
        name: name.into(),
        external_id: name.into(),
        data_type,
        allow_multiple_values: multi,
    };
    let facet = |name: &str, target| NewFacet {
        facet_type: FacetType::Tag,
        name: name.into(),
        tag_external_id: name.into(),
        target_type: target,
        allow_multiple_values: true,
    };
    NewSource {
        definition_type: CUSTOM.into(),
        config_type: CUSTOM.into(),
        external_id: "search".into(),
        name: "Search".into(),
        track_status: true,
        object_types: vec![NewObjectType {
            default_access: Default::default(),
            complete_max_removal: None,
            name: "Docs".into(),
            external_id: "docs".into(),
            source_data_type: SourceDataType::Record,
            data_type: None,
            fields: vec![],
            tag_configs: vec![
                tag("color", TagType::Simple, DataType::Text, true),
                tag("due", TagType::Simple, DataType::DateTime, false),
                tag("folder", TagType::Hierarchical, DataType::Text, false),
            ],
            facets: vec![
                facet("color", None),
                facet("due", Some(FacetTargetType::ModifiedDate)),
                facet("folder", None),
            ],
            templates: None,
        }],
    }
    .build(workspace_id, time::now())
    .expect("valid search source")
}

pub(super) async fn put_doc(
    store: &dyn RecordStore,
    scope: Scope,
    id: &str,
    content: &str,
    tags: &[(&str, TagValue)],
) {
    let mut w = write(scope, id, None, None);
    w.content = content.into();
    for (tag, value) in tags {
        w.tags
            .entry((*tag).to_string())
            .or_default()
            .push(value.clone());
    }
    store.put_record(w).await.unwrap();
}

pub(super) fn query(workspace_id: WorkspaceId, q: &str) -> IndexQuery {
    IndexQuery {
        workspace_id,
        text: q.into(),
        limit: 20,
        ..IndexQuery::default()
    }
}

/// Brings `index` up to the store's write log (building it first when it is new), then
/// searches it: what a server does between a write and a search, at once.
pub(super) async fn searched(
    store: &dyn RecordStore,
    index: &dyn SearchIndex,
    query: &IndexQuery,
) -> Hits {
    if index.applied().unwrap().is_none() {
        crate::index::rebuild(store, index, &mut |_| {})
            .await
            .unwrap();
    }
    crate::index::catch_up(store, index).await.unwrap();
    index.search(query).unwrap()
}

pub(super) fn ids(hits: &Hits) -> Vec<String> {
    let mut v: Vec<String> = hits.hits.iter().map(|h| h.external_id.clone()).collect();
    v.sort();
    v
}

pub(super) fn text(s: &str) -> TagValue {
    TagValue::Text(s.into())
}

pub(super) fn millis(y: i32, m: u32, d: u32) -> i64 {
    chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, y, m, d, 0, 0, 0)
        .unwrap()
        .timestamp_millis()
}

/// Words, phrases, accents and CJK are found; removed and other workspaces' records never are;
/// every kind of write reaches the index through the write log.
pub async fn search_finds_words_and_respects_liveness(
    store: &dyn RecordStore,
    index: &dyn SearchIndex,
) {
    let ws = Uuid::new_v4();
    let (_, scope) = search_source(store, ws).await;
    put_doc(
        store,
        scope,
        "a",
        "The quarterly sales report for the Café in Zürich",
        &[],
    )
    .await;
    put_doc(
        store,
        scope,
        "b",
        "Sales figures, quarterly. Report follows.",
        &[],
    )
    .await;
    put_doc(store, scope, "c", "東京都の売上報告書", &[]).await;
    put_doc(store, scope, "d", "", &[]).await;
    let (_, other) = search_source(store, Uuid::new_v4()).await;
    put_doc(store, other, "x", "quarterly sales report", &[]).await;
    let find = |q: &str| {
        let q = query(ws, q);
        async move { searched(store, index, &q).await }
    };

    let hits = find("quarterly sales").await;
    assert_eq!(ids(&hits), ["a", "b"]);
    assert_eq!(hits.total, 2);
    assert_eq!(ids(&find("\"sales report\"").await), ["a"]);
    assert_eq!(ids(&find("cafe zurich").await), ["a"]);
    assert_eq!(ids(&find("CAFÉ").await), ["a"]);
    assert_eq!(ids(&find("売上").await), ["c"]);
    assert_eq!(ids(&find("東京").await), ["c"]);
    assert!(find("京東").await.hits.is_empty());
    assert!(find("nothing-here").await.hits.is_empty());
    // Browsing without words lists every live record, empty content included.
    assert_eq!(find("").await.total, 4);

    // Replaced content is what is found; a deleted record is gone from search.
    put_doc(store, scope, "b", "entirely different words", &[]).await;
    assert_eq!(ids(&find("quarterly").await), ["a"]);
    store.delete_record(&key(scope, "a")).await.unwrap();
    assert!(find("quarterly").await.hits.is_empty());
    // Revived by an upload: found again.
    put_doc(store, scope, "a", "quarterly again", &[]).await;
    assert_eq!(ids(&find("quarterly").await), ["a"]);

    // A COMPLETE close removes the unvisited records from search.
    let run = store
        .open_sync(scope, OpenOperation::StartInitial)
        .await
        .unwrap();
    let mut w = write(scope, "c", Some(run.sync_number), None);
    w.content = "東京都の売上報告書".into();
    store.put_record(w).await.unwrap();
    store
        .close_sync(scope, run.sync_number, CloseOperation::Complete)
        .await
        .unwrap();
    assert!(find("quarterly").await.hits.is_empty());
    assert_eq!(ids(&find("").await), ["c"]);
}

/// Ranking puts the better match first; cursor pages follow each other without overlap.
pub async fn search_ranks_and_pages(store: &dyn RecordStore, index: &dyn SearchIndex) {
    let ws = Uuid::new_v4();
    let (_, scope) = search_source(store, ws).await;
    put_doc(
        store,
        scope,
        "weak",
        &format!("apple {}", "filler ".repeat(200)),
        &[],
    )
    .await;
    put_doc(store, scope, "strong", "apple apple apple pie", &[]).await;
    put_doc(store, scope, "both", "apple pie with cream", &[]).await;
    for i in 0..25 {
        put_doc(
            store,
            scope,
            &format!("p{i:02}"),
            &format!("banana number {i}"),
            &[],
        )
        .await;
    }
    let hits = searched(store, index, &query(ws, "apple")).await;
    assert_eq!(hits.hits[0].external_id, "strong");
    // Every word outranks one word said often.
    let hits = searched(store, index, &query(ws, "apple cream")).await;
    assert_eq!(hits.hits[0].external_id, "both");
    assert_eq!(hits.total, 3);
    let mut q = query(ws, "banana");
    q.limit = 10;
    let mut seen = Vec::new();
    loop {
        let hits = searched(store, index, &q).await;
        assert_eq!(hits.total, 25);
        seen.extend(hits.hits.into_iter().map(|h| h.external_id));
        match hits.next_cursor {
            Some(cursor) => q.cursor = Some(cursor),
            None => break,
        }
    }
    assert_eq!(seen.len(), 25);
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 25);
}

/// Totals and facets count every match, and the best match is found however many newer ones
/// there are (the SQL stores once ranked only the newest 1,000 matches).
pub async fn search_counts_and_ranks_every_match(store: &dyn RecordStore, index: &dyn SearchIndex) {
    let ws = Uuid::new_v4();
    let (_, scope) = search_source(store, ws).await;
    put_doc(
        store,
        scope,
        "oldest",
        "zeta zeta zeta",
        &[("color", text("old"))],
    )
    .await;
    for i in 0..1010 {
        put_doc(
            store,
            scope,
            &format!("n{i:04}"),
            &format!("zeta and a longer text about other things, number {i}"),
            &[("color", text("new"))],
        )
        .await;
    }
    for i in 0..10 {
        store
            .delete_record(&key(scope, &format!("n{i:04}")))
            .await
            .unwrap();
    }
    let mut q = query(ws, "zeta");
    q.facet_tags = vec!["color".into()];
    let hits = searched(store, index, &q).await;
    assert_eq!(hits.total, 1001);
    assert_eq!(hits.hits[0].external_id, "oldest");
    assert_eq!(
        hits.facets["color"],
        [("new".to_string(), 1000), ("old".to_string(), 1)]
    );
    q.text.clear();
    assert_eq!(searched(store, index, &q).await.total, 1001);
    q.tags = vec![TagFilter {
        tag: "color".into(),
        values: vec!["old".into()],
    }];
    let hits = searched(store, index, &q).await;
    assert_eq!(ids(&hits), ["oldest"]);
    assert_eq!(hits.facets["color"], [("old".to_string(), 1)]);
}

/// Tag filters (OR within a tag, AND across tags), facets over the filtered set, and a DATE_TIME
/// tag mapped onto the modified-date filter.
pub async fn search_filters_and_facets(store: &dyn RecordStore, index: &dyn SearchIndex) {
    let ws = Uuid::new_v4();
    let (source, scope) = search_source(store, ws).await;
    let day = |d: u32| {
        TagValue::DateTime(
            chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2024, 1, d, 0, 0, 0).unwrap(),
        )
    };
    put_doc(
        store,
        scope,
        "r1",
        "report one",
        &[
            ("color", text("red")),
            ("color", text("blue")),
            ("due", day(1)),
        ],
    )
    .await;
    put_doc(
        store,
        scope,
        "r2",
        "report two",
        &[("color", text("red")), ("due", day(10))],
    )
    .await;
    put_doc(
        store,
        scope,
        "r3",
        "report three",
        &[("color", text("green"))],
    )
    .await;

    let mut q = query(ws, "report");
    q.facet_tags = vec!["color".into()];
    let hits = searched(store, index, &q).await;
    assert_eq!(hits.total, 3);
    assert_eq!(
        hits.facets["color"],
        vec![
            ("red".to_string(), 2),
            ("blue".to_string(), 1),
            ("green".to_string(), 1)
        ]
    );

    q.tags = vec![TagFilter {
        tag: "color".into(),
        values: vec!["blue".into(), "green".into()],
    }];
    let hits = searched(store, index, &q).await;
    assert_eq!(ids(&hits), ["r1", "r3"]);
    assert_eq!(
        hits.facets["color"],
        vec![
            ("blue".to_string(), 1),
            ("green".to_string(), 1),
            ("red".to_string(), 1)
        ]
    );
    q.tags.push(TagFilter {
        tag: "color".into(),
        values: vec!["red".into()],
    });
    assert_eq!(ids(&searched(store, index, &q).await), ["r1"]);

    // `due` is mapped onto the modified filter: r1 (Jan 1) and r2 (Jan 10) by their tag, r3 by its
    // real modification time (now).
    let mut q = query(ws, "");
    q.modified_to = Some(millis(2024, 1, 5));
    assert_eq!(ids(&searched(store, index, &q).await), ["r1"]);
    q.modified_to = None;
    q.modified_from = Some(millis(2024, 1, 5));
    assert_eq!(ids(&searched(store, index, &q).await), ["r2", "r3"]);
    q.modified_from = None;
    q.source_id = Some(source.id);
    q.object_type_id = Some(scope.object_type_id);
    assert_eq!(searched(store, index, &q).await.total, 3);
    q.source_id = Some(Uuid::new_v4());
    assert_eq!(searched(store, index, &q).await.total, 0);
}

/// [`crate::query::prepare`] as a table: what a search request is refused for, and how a valid
/// one becomes the index query (typed tag values, folder filters widened to the folders below,
/// one facet per tag, named folder values in the answer).
pub async fn search_requests_are_checked_and_built(
    store: &dyn RecordStore,
    index: &dyn SearchIndex,
) {
    use crate::{Error, folder::Folder, query};

    let ws = Uuid::new_v4();
    let (_, scope) = search_source(store, ws).await;
    for (id, parent) in [("top", None), ("sub", Some("top"))] {
        let folder = Folder {
            external_id: id.into(),
            name: format!("Folder {id}"),
            parent_external_id: parent.map(str::to_string),
        };
        store
            .put_folder(ws, scope.source_id, "folder", &folder)
            .await
            .unwrap();
    }
    let long = "w ".repeat(600);
    let none: &[String] = &[];
    let unknown_tag = ["size:3".to_string()];
    let bad_due = ["due:someday".to_string()];
    type Refusal<'a> = (&'a str, query::Request<'a>, fn(&Error) -> bool);
    let refused: [Refusal<'_>; 6] = [
        (
            "q too long",
            query::Request {
                workspace_id: ws,
                text: &long,
                ..Default::default()
            },
            |e| matches!(e, Error::Invalid(m) if m.contains("longer than")),
        ),
        (
            "limit 0",
            query::Request {
                workspace_id: ws,
                limit: Some(0),
                tags: none,
                ..Default::default()
            },
            |e| matches!(e, Error::Invalid(m) if m.contains("limit")),
        ),
        (
            "limit 101",
            query::Request {
                workspace_id: ws,
                limit: Some(101),
                ..Default::default()
            },
            |e| matches!(e, Error::Invalid(m) if m.contains("limit")),
        ),
        (
            "unknown tag",
            query::Request {
                workspace_id: ws,
                tags: &unknown_tag,
                ..Default::default()
            },
            |e| matches!(e, Error::Invalid(m) if m.contains("unknown tag 'size'")),
        ),
        (
            "untyped value",
            query::Request {
                workspace_id: ws,
                tags: &bad_due,
                ..Default::default()
            },
            |e| matches!(e, Error::Invalid(m) if m.starts_with("tag 'due'")),
        ),
        (
            "bad date",
            query::Request {
                workspace_id: ws,
                created_from: Some("yesterday"),
                ..Default::default()
            },
            |e| matches!(e, Error::Invalid(m) if m.starts_with("createdFrom:")),
        ),
    ];
    for (what, request, expect) in refused {
        match query::prepare(store, request).await {
            Err(e) if expect(&e) => {}
            other => panic!("{what}: {other:?}"),
        }
    }
    let missing = query::Request {
        workspace_id: ws,
        object_type_id: Some(Uuid::new_v4()),
        ..Default::default()
    };
    assert!(matches!(
        query::prepare(store, missing).await,
        Err(Error::NotFound(_))
    ));

    put_doc(store, scope, "in-top", "alpha", &[("folder", text("top"))]).await;
    put_doc(store, scope, "in-sub", "alpha", &[("folder", text("sub"))]).await;
    put_doc(store, scope, "red", "alpha", &[("color", text("red"))]).await;
    let filters = ["folder:top".to_string()];
    let prepared = query::prepare(
        store,
        query::Request {
            workspace_id: ws,
            text: "alpha",
            tags: &filters,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(prepared.query.limit, crate::search::DEFAULT_LIMIT);
    assert_eq!(prepared.query.tags[0].values, ["top", "sub"]);
    assert_eq!(prepared.query.facet_tags, ["color", "due", "folder"]);
    let hits = searched(store, index, &prepared.query).await;
    let answer = prepared.answer(hits);
    let mut found: Vec<String> = answer.hits.iter().map(|h| h.external_id.clone()).collect();
    found.sort();
    assert_eq!(found, ["in-sub", "in-top"]);
    let folders = answer.facets.iter().find(|f| f.tag == "folder").unwrap();
    let named: Vec<(String, Option<String>)> = folders
        .values
        .iter()
        .map(|v| (v.value.clone(), v.name.clone()))
        .collect();
    assert!(
        named.contains(&("top".into(), Some("Folder top".into()))),
        "{named:?}"
    );
}
