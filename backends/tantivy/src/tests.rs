//! The index through its [`SearchIndex`] interface: matching, ranking, analysis, filters,
//! facets, cursors and durability.

use inlet_core::search::{TagFilter, TagRow};

use super::*;

const WS: Uuid = Uuid::from_u128(1);
const SOURCE: Uuid = Uuid::from_u128(2);
const TYPE: Uuid = Uuid::from_u128(3);

fn doc(n: u128, title: &str, content: &str) -> IndexDoc {
    IndexDoc {
        record_id: Uuid::from_u128(1000 + n),
        workspace_id: WS,
        source_id: SOURCE,
        object_type_id: TYPE,
        external_id: format!("doc-{n}"),
        title: title.into(),
        file_name: None,
        url: None,
        content: content.into(),
        tags: BTreeMap::new(),
        rows: vec![],
        created_ms: n as i64,
        modified_ms: n as i64,
        created_filter_ms: n as i64,
        modified_filter_ms: n as i64,
    }
}

fn tagged(mut d: IndexDoc, tag: &str, values: &[&str]) -> IndexDoc {
    for v in values {
        d.rows.push(TagRow {
            tag: tag.into(),
            value: (*v).into(),
            num: None,
        });
        d.tags.entry(tag.into()).or_default().push((*v).into());
    }
    d
}

fn index_with(docs: Vec<IndexDoc>) -> TantivyIndex {
    let index = TantivyIndex::in_memory().expect("index");
    index
        .apply(IndexBatch {
            upserts: docs,
            deletes: vec![],
            position: Some(1),
            deleted_sources: vec![],
        })
        .expect("apply");
    index
}

fn query(text: &str) -> IndexQuery {
    IndexQuery {
        workspace_id: WS,
        text: text.into(),
        limit: 20,
        ..Default::default()
    }
}

fn ids(hits: &Hits) -> Vec<String> {
    hits.hits.iter().map(|h| h.external_id.clone()).collect()
}

#[test]
fn any_word_matches_and_every_word_ranks_first() {
    let index = index_with(vec![
        doc(1, "a.txt", "user adoption of new tools"),
        doc(
            2,
            "b.txt",
            "the technology acceptance model explains user adoption",
        ),
        doc(3, "c.txt", "a model railway"),
        doc(4, "d.txt", "nothing related"),
    ]);
    let hits = index
        .search(&query(
            "how does the technology acceptance model explain user adoption",
        ))
        .expect("search");
    assert_eq!(hits.total, 3);
    assert_eq!(ids(&hits)[0], "doc-2");
    assert!(!ids(&hits).contains(&"doc-4".to_string()));
}

#[test]
fn match_all_needs_every_word() {
    let index = index_with(vec![
        doc(1, "a.txt", "budget plan"),
        doc(2, "b.txt", "budget"),
    ]);
    let mut q = query("budget plan");
    q.match_all = true;
    assert_eq!(ids(&index.search(&q).expect("search")), ["doc-1"]);
}

#[test]
fn phrases_and_exclusions() {
    let index = index_with(vec![
        doc(1, "a.txt", "annual report for the board"),
        doc(2, "b.txt", "report on the annual picnic"),
        doc(3, "c.txt", "annual report draft"),
    ]);
    let hits = index
        .search(&query("\"annual report\" -draft"))
        .expect("search");
    assert_eq!(ids(&hits), ["doc-1"]);
}

#[test]
fn titles_and_file_names_are_searched_and_boosted() {
    let mut named = doc(1, ".txt", "meeting notes");
    named.file_name = Some("日本語メモ.txt".into());
    let index = index_with(vec![
        named,
        doc(2, "Q3_budgetReport-final.xlsx", "numbers"),
        doc(3, "other.txt", "the budget report is attached"),
    ]);
    assert_eq!(
        ids(&index.search(&query("日本語")).expect("search")),
        ["doc-1"]
    );
    let hits = index.search(&query("budget report")).expect("search");
    assert_eq!(
        ids(&hits)[0],
        "doc-2",
        "a title match ranks above a text match"
    );
    assert_eq!(hits.total, 2);
    assert_eq!(
        ids(&index.search(&query("budgetReport")).expect("search"))[0],
        "doc-2"
    );
}

#[test]
fn stems_accents_and_cjk() {
    let index = index_with(vec![
        doc(
            1,
            "a.txt",
            "The committee adopted the proposals after the meetings were held in the café.",
        ),
        doc(2, "b.txt", "東京都の会議"),
    ]);
    assert_eq!(
        ids(&index.search(&query("adopting proposal")).expect("s")),
        ["doc-1"]
    );
    assert_eq!(ids(&index.search(&query("CAFE")).expect("s")), ["doc-1"]);
    assert_eq!(ids(&index.search(&query("東京")).expect("s")), ["doc-2"]);
}

#[test]
fn snippets_mark_matches_and_escape() {
    let index = index_with(vec![doc(
        1,
        "a.txt",
        "<b>risky</b> the adopted plan & more",
    )]);
    let hits = index.search(&query("adoption")).expect("search");
    let snippet = &hits.hits[0].snippet;
    assert!(snippet.contains("<mark>adopted</mark>"), "{snippet}");
    assert!(snippet.contains("&lt;b&gt;"), "{snippet}");
}

#[test]
fn tag_filters_and_exact_facets() {
    let mut docs = Vec::new();
    for n in 0..30u128 {
        let team = if n % 3 == 0 { "finance" } else { "legal" };
        docs.push(tagged(doc(n, "x.txt", "contract text"), "team", &[team]));
    }
    let index = index_with(docs);
    let mut q = query("contract");
    q.facet_tags = vec!["team".into()];
    let all = index.search(&q).expect("search");
    assert_eq!(all.total, 30);
    assert_eq!(
        all.facets["team"],
        vec![("legal".to_string(), 20), ("finance".to_string(), 10)]
    );
    q.tags = vec![TagFilter {
        tag: "team".into(),
        values: vec!["finance".into()],
    }];
    assert_eq!(index.search(&q).expect("search").total, 10);
    q.tags[0].values.push("legal".into());
    assert_eq!(index.search(&q).expect("search").total, 30);
}

#[test]
fn facets_count_the_same_for_few_and_many_matches() {
    // Many matches are counted from posting lists, few from the fast field
    // (facets::DENSE_MATCHES): both ways give the same counts, and deleted documents count
    // in neither.
    let mut docs = Vec::new();
    for n in 0..200u128 {
        let team = format!("team-{}", n % 4);
        let words = if n < 5 { "rare common" } else { "common" };
        let d = tagged(doc(n, "x.txt", words), "team", &[&team]);
        docs.push(tagged(
            d,
            "color",
            &[if n % 2 == 0 { "red" } else { "blue" }],
        ));
    }
    let index = index_with(docs);
    index
        .apply(IndexBatch {
            upserts: vec![],
            deletes: vec![Uuid::from_u128(1000), Uuid::from_u128(1004)],
            position: Some(2),
            deleted_sources: vec![],
        })
        .expect("delete");
    let facets = |text: &str| {
        let mut q = query(text);
        q.facet_tags = vec!["team".into(), "color".into()];
        index.search(&q).expect("search").facets
    };
    let few = facets("rare");
    assert_eq!(
        few["team"],
        vec![
            ("team-1".to_string(), 1),
            ("team-2".to_string(), 1),
            ("team-3".to_string(), 1)
        ]
    );
    assert_eq!(
        few["color"],
        vec![("blue".to_string(), 2), ("red".to_string(), 1)]
    );
    let many = facets("common");
    assert_eq!(
        many["team"],
        vec![
            ("team-1".to_string(), 50),
            ("team-2".to_string(), 50),
            ("team-3".to_string(), 50),
            ("team-0".to_string(), 48)
        ]
    );
    assert_eq!(
        many["color"],
        vec![("blue".to_string(), 100), ("red".to_string(), 98)]
    );
}

#[test]
fn date_filters_and_browse_newest_first() {
    let index = index_with((1..=5).map(|n| doc(n, "x.txt", "text")).collect());
    let mut q = query("");
    assert_eq!(
        ids(&index.search(&q).expect("browse")),
        ["doc-5", "doc-4", "doc-3", "doc-2", "doc-1"]
    );
    q.created_from = Some(2);
    q.created_to = Some(3);
    assert_eq!(ids(&index.search(&q).expect("range")), ["doc-3", "doc-2"]);
}

#[test]
fn other_workspaces_are_invisible() {
    let mut other = doc(1, "x.txt", "secret plan");
    other.workspace_id = Uuid::from_u128(99);
    let index = index_with(vec![other]);
    assert_eq!(index.search(&query("plan")).expect("search").total, 0);
}

#[test]
fn cursors_page_through_one_version() {
    let index = index_with((1..=5).map(|n| doc(n, "x.txt", "text")).collect());
    let mut q = query("text");
    q.limit = 2;
    let first = index.search(&q).expect("page 1");
    // A write between pages does not shift the pages.
    index
        .apply(IndexBatch {
            upserts: vec![doc(6, "x.txt", "text text text")],
            deletes: vec![],
            position: Some(2),
            deleted_sources: vec![],
        })
        .expect("apply");
    let mut seen = ids(&first);
    let mut cursor = first.next_cursor.clone();
    while let Some(c) = cursor {
        q.cursor = Some(c);
        let page = index.search(&q).expect("page");
        seen.extend(ids(&page));
        cursor = page.next_cursor;
    }
    seen.sort();
    assert_eq!(seen, ["doc-1", "doc-2", "doc-3", "doc-4", "doc-5"]);
    q.cursor = Some("not-a-cursor".into());
    assert!(matches!(index.search(&q), Err(Error::Invalid(_))));
}

#[test]
fn updates_and_deletes_replace_documents() {
    let index = index_with(vec![doc(1, "x.txt", "alpha"), doc(2, "y.txt", "alpha")]);
    index
        .apply(IndexBatch {
            upserts: vec![doc(1, "x.txt", "beta")],
            deletes: vec![Uuid::from_u128(1002)],
            position: Some(2),
            deleted_sources: vec![],
        })
        .expect("apply");
    assert_eq!(index.search(&query("alpha")).expect("s").total, 0);
    assert_eq!(ids(&index.search(&query("beta")).expect("s")), ["doc-1"]);
}

#[test]
fn the_applied_position_survives_a_reopen_and_a_bad_index_is_rebuilt() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (index, reason) = TantivyIndex::open(dir.path()).expect("open");
        assert_eq!(reason, None);
        assert_eq!(index.applied().expect("applied"), None);
        index
            .apply(IndexBatch {
                upserts: vec![doc(1, "x.txt", "alpha")],
                deletes: vec![],
                position: Some(42),
                deleted_sources: vec![],
            })
            .expect("apply");
    }
    {
        let (index, reason) = TantivyIndex::open(dir.path()).expect("reopen");
        assert_eq!(reason, None);
        assert_eq!(index.applied().expect("applied"), Some(42));
        assert_eq!(index.search(&query("alpha")).expect("s").total, 1);
    }
    std::fs::write(dir.path().join("meta.json"), b"{ not json").expect("corrupt");
    let (index, reason) = TantivyIndex::open(dir.path()).expect("rebuilt");
    assert!(reason.is_some());
    assert_eq!(index.applied().expect("applied"), None);
    assert_eq!(index.search(&query("alpha")).expect("s").total, 0);
}

#[test]
fn an_interrupted_rebuild_is_not_mistaken_for_a_corrupt_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (index, _) = TantivyIndex::open(dir.path()).expect("open");
        index.clear().expect("clear");
        index
            .apply(IndexBatch {
                upserts: vec![doc(1, "x.txt", "alpha")],
                deletes: vec![],
                deleted_sources: vec![],
                position: None,
            })
            .expect("a rebuild's first batch");
    }
    let (index, reason) = TantivyIndex::open(dir.path()).expect("reopen");
    assert_eq!(reason, None);
    assert_eq!(index.applied().expect("applied"), None, "rebuild again");
}

#[test]
fn a_word_in_every_record_still_ranks_by_frequency() {
    // Its idf is near zero, so scores are tiny: ordering must not round them away.
    for strong in [0u128, 300] {
        let docs = (0..=300u128)
            .map(|n| {
                if n == strong {
                    doc(n, "strong", "zeta zeta zeta")
                } else {
                    doc(n, "weak", "zeta and a longer text about other things")
                }
            })
            .collect();
        let hits = index_with(docs).search(&query("zeta")).unwrap();
        assert_eq!(hits.total, 301);
        assert_eq!(hits.hits[0].external_id, format!("doc-{strong}"));
    }
}
