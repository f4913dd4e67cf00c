//! The index through its [`SearchIndex`] interface: matching, ranking, analysis, filters,
//! facets and cursors; its helpers build documents and queries for `disk_tests.rs` too.

use inlet_core::search::{TagFilter, TagRow};

use super::*;

pub(crate) const WS: Uuid = Uuid::from_u128(1);
pub(crate) const SOURCE: Uuid = Uuid::from_u128(2);
pub(crate) const TYPE: Uuid = Uuid::from_u128(3);

pub(crate) fn doc(n: u128, title: &str, content: &str) -> IndexDoc {
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
        access_terms: vec![inlet_core::access::EVERYONE_TERM.into()],
    }
}

pub(crate) fn tagged(mut d: IndexDoc, tag: &str, values: &[&str]) -> IndexDoc {
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

pub(crate) fn index_with(docs: Vec<IndexDoc>) -> TantivyIndex {
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

pub(crate) fn query(text: &str) -> IndexQuery {
    IndexQuery {
        workspace_id: WS,
        text: text.into(),
        limit: 20,
        ..Default::default()
    }
}

pub(crate) fn ids(hits: &Hits) -> Vec<String> {
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

/// A query word analysis splits (`ASN.1` is `asn` then `1`) is marked where its parts stand
/// together, as one mark; its parts alone elsewhere are not marked. A plain word is marked
/// wherever it stands, a quoted phrase only whole.
#[test]
fn snippets_mark_the_query_words_not_every_fragment_of_them() {
    let text = "Section 1 defines ASN.1 encoding rules; ASN tools and 1.1 versions differ, \
                and asn.1 again. The harbour report and the report on a harbour.";
    let index = index_with(vec![doc(1, "a.txt", text)]);
    let snippet = |q: &str| {
        index.search(&query(q)).expect("search").hits[0]
            .snippet
            .clone()
    };
    let s = snippet("ASN.1");
    assert_eq!(s.matches("<mark>").count(), 2, "{s}");
    assert!(s.contains("<mark>ASN.1</mark> encoding"), "{s}");
    assert!(s.contains("<mark>asn.1</mark> again"), "{s}");
    assert!(
        !s.contains("<mark>1</mark>") && !s.contains("<mark>ASN</mark>"),
        "{s}"
    );
    let s = snippet("\"harbour report\"");
    assert_eq!(s.matches("<mark>").count(), 1, "{s}");
    assert!(s.contains("<mark>harbour report</mark>"), "{s}");
    let s = snippet("harbour");
    assert_eq!(s.matches("<mark>harbour</mark>").count(), 2, "{s}");
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
fn facets_count_the_same_for_few_many_and_nearly_all_matches() {
    // Few matches are counted from the fast field, many from posting lists
    // (facets::DENSE_MATCHES), nearly all from posting lists' lengths less the unmatched
    // documents (facets::FEW_UNMATCHED): every way gives the same counts, and deleted
    // documents count in none.
    let mut docs = Vec::new();
    for n in 0..200u128 {
        let team = format!("team-{}", n % 4);
        let words = match (n < 5, n % 2 == 1) {
            (true, true) => "rare half common",
            (true, false) => "rare common",
            (false, true) => "half common",
            (false, false) => "common",
        };
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
    let many = facets("half");
    assert_eq!(
        many["team"],
        vec![("team-1".to_string(), 50), ("team-3".to_string(), 50)]
    );
    assert_eq!(many["color"], vec![("blue".to_string(), 100)]);
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
    let index = index_with(vec![other.clone()]);
    assert_eq!(index.search(&query("plan")).expect("search").total, 0);
    // Segments holding both workspaces' records (one batch, alternating, spread over the
    // writer's threads), then one holding ours only (whose workspace filter is not read: every
    // record there passes it).
    let mixed = (10..50)
        .map(|n| {
            let mut d = doc(n, "y.txt", "the plan again");
            if n % 2 == 1 {
                d.workspace_id = other.workspace_id;
            }
            d
        })
        .collect();
    for (position, upserts) in [(2, mixed), (3, vec![doc(4, "w.txt", "plan b")])] {
        index
            .apply(IndexBatch {
                upserts,
                deletes: vec![],
                position: Some(position),
                deleted_sources: vec![],
            })
            .expect("apply");
    }
    let ours: std::collections::BTreeSet<String> = (10..50)
        .step_by(2)
        .chain([4])
        .map(|n| format!("doc-{n}"))
        .collect();
    for text in ["plan", "plan again"] {
        let mut q = query(text);
        q.limit = 100;
        let hits = index.search(&q).expect("search");
        assert_eq!(hits.total, 21, "{text}");
        assert_eq!(
            ids(&hits)
                .into_iter()
                .collect::<std::collections::BTreeSet<_>>(),
            ours
        );
    }
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

/// The page of `q` as it was ranked before [`ranked::Ranked`]: the all-words and phrase bonuses
/// as `Should` clauses of the query, read for every match, with tantivy's top-k collector.
fn nested_reference(index: &TantivyIndex, q: &IndexQuery, offset: usize) -> Vec<String> {
    use tantivy::query::BoostQuery;
    let searcher = index.reader.searcher();
    let parsed = query::parse(&q.text);
    let lang = analysis::query_language(&q.text);
    let built = query::build(
        &parsed,
        q.match_all,
        lang,
        index.fields.text,
        &Default::default(),
    )
    .expect("words");
    let mut clauses = index.filters(q, index.access(q).as_ref());
    clauses.push((Occur::Must, built.query.box_clone()));
    if let Some(every) = built.every_word() {
        clauses.push((
            Occur::Should,
            Box::new(BoostQuery::new(Box::new(every), query::ALL_WORDS_BOOST)),
        ));
    }
    let bonus: Vec<(Occur, Box<dyn Query>)> = built
        .phrase_bonus
        .into_iter()
        .map(|b| {
            let boosted: Box<dyn Query> = Box::new(BoostQuery::new(Box::new(b.phrase), b.boost));
            (Occur::Should, boosted)
        })
        .collect();
    if !bonus.is_empty() {
        clauses.push((Occur::Should, Box::new(BooleanQuery::new(bonus))));
    }
    let top = TopDocs::with_limit(q.limit as usize)
        .and_offset(offset)
        .tweak_score(move |segment: &tantivy::SegmentReader| {
            let ids = segment
                .fast_fields()
                .u64("tiebreak")
                .ok()
                .map(|c| c.first_or_default_col(0));
            move |doc: tantivy::DocId, score: tantivy::Score| {
                (rounded(score), ids.as_ref().map_or(0, |c| c.get_val(doc)))
            }
        });
    let found = searcher
        .search(&BooleanQuery::new(clauses), &top)
        .expect("search");
    external_ids(index, &searcher, found.into_iter().map(|(_, a)| a))
}

pub(crate) fn external_ids(
    index: &TantivyIndex,
    searcher: &Searcher,
    found: impl Iterator<Item = DocAddress>,
) -> Vec<String> {
    found
        .map(|a| {
            let d: TantivyDocument = searcher.doc(a).expect("doc");
            d.get_first(index.fields.external_id)
                .and_then(|v| v.as_str())
                .expect("external id")
                .to_string()
        })
        .collect()
}

#[test]
fn bonuses_read_only_where_they_can_change_the_page_give_the_same_page() {
    // Few distinct words, so nearly every record holds every word and many hold the phrases;
    // titles hold them too. Short words' pairs are indexed, long ones' not. Several commits, so several segments.
    let vocabulary = ["alpha", "beta", "gam", "del", "omega", "sig", "kappa"];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let index = TantivyIndex::in_memory().expect("index");
    let mut n = 0u128;
    for batch in 0..4u64 {
        let mut docs = Vec::new();
        for _ in 0..600 {
            let words = |count: usize, next: &mut dyn FnMut(usize) -> usize| {
                (0..count)
                    .map(|_| vocabulary[next(vocabulary.len())])
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let title_len = 1 + next(3);
            let text_len = 3 + next(40);
            let title = words(title_len, &mut next);
            let mut text = words(text_len, &mut next);
            // A rarer word, so that complete matches are visited first for queries holding it.
            if next(10) == 0 {
                text.push_str(" zeta alpha");
            }
            // Two words in every record, side by side in few: MaxScore walks the pair's records
            // and looks the words up in them.
            text = match next(20) {
                0 => format!("tau rho {text} rho"),
                _ => format!("tau {text} rho"),
            };
            let mut d = doc(n, &title, &text);
            // Distinct ids order equal scores (as random ids do).
            d.record_id = Uuid::from_u64_pair(n as u64 * 7919 % 2400 + 1, 0);
            let team = if next(3) == 0 { "red" } else { "blue" };
            docs.push(tagged(d, "team", &[team]));
            n += 1;
        }
        // Deleted documents stay in their segments until a merge.
        let deletes = if batch > 0 {
            (0..100u64)
                .map(|i| Uuid::from_u64_pair(((batch - 1) * 600 + i * 5) * 7919 % 2400 + 1, 0))
                .collect()
        } else {
            vec![]
        };
        index
            .apply(IndexBatch {
                upserts: docs,
                deletes,
                position: Some(batch + 1),
                deleted_sources: vec![],
            })
            .expect("apply");
    }
    let (mut compared, mut full_pages, mut pruned, mut counted) = (0, 0, 0, 0);
    for text in [
        "alpha beta",
        "beta alpha",
        "beta gam",
        "del del",
        "\"gam del\" beta",
        "gam del omega",
        "omega omega",
        "sig kappa alpha beta",
        "alpha beta gam del omega sig",
        "alpha -beta gam",
        "\"alpha beta\" gam",
        "zeta alpha",
        "alpha zeta beta",
        "zeta -gam omega",
        "tau rho",
        "rho tau",
    ] {
        for (limit, offset, team, match_all) in [
            (1, 0, None, false),
            (5, 0, None, false),
            (20, 0, None, false),
            (20, 13, None, false),
            (50, 100, None, false),
            (5, 0, Some("blue"), false),
            (20, 40, Some("red"), false),
            (5, 0, None, true),
            (10, 5, Some("red"), true),
        ] {
            let mut q = query(text);
            q.limit = limit;
            q.match_all = match_all;
            if let Some(team) = team {
                q.tags = vec![TagFilter {
                    tag: "team".into(),
                    values: vec![team.into()],
                }];
            }
            let expected = nested_reference(&index, &q, offset);
            let searcher = index.reader.searcher();
            let built = query::build(
                &query::parse(text),
                match_all,
                analysis::query_language(text),
                index.fields.text,
                &Default::default(),
            )
            .expect("words");
            let filters: Vec<Box<dyn Query>> = index
                .filters(&q, index.access(&q).as_ref())
                .into_iter()
                .map(|(_, f)| f)
                .collect();
            let top = ranked::Ranked::new(limit as usize, offset, &built, &filters, &searcher)
                .expect("collector");
            let mut clauses = index.filters(&q, index.access(&q).as_ref());
            clauses.push((Occur::Must, built.query.box_clone()));
            let whole: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
            // Every match read as a bitset counts and facets as the whole query does.
            let both = (
                Count,
                facets::TagCounts {
                    within: None,
                    field: crate::TAG_VALUES.to_string(),
                    facet_field: index.fields.tags,
                    tags: vec!["team".into()],
                },
            );
            if let Some(every) = top.every_match(&both) {
                assert_eq!(
                    searcher.search(&whole, &every).expect("every match"),
                    searcher.search(&whole, &both).expect("count"),
                    "{text:?} team {team:?}"
                );
                counted += 1;
            }
            let mut top = top;
            let searched: Box<dyn Query> = if top.prunes()
                && top.worth_pruning(searcher.search(&whole, &Count).expect("count"))
            {
                pruned += 1;
                Box::new(built.any_word())
            } else {
                whole
            };
            let found = searcher.search(&searched, &top).expect("search");
            let got = external_ids(&index, &searcher, found.into_iter().map(|(_, a)| a));
            assert_eq!(
                got, expected,
                "{text:?} limit {limit} offset {offset} team {team:?} match_all {match_all}"
            );
            compared += 1;
            full_pages += usize::from(got.len() == limit as usize);
        }
    }
    assert_eq!(compared, 144);
    assert!(full_pages > 70, "{full_pages} full pages");
    // Both ways are compared: the OR pruned, and the whole query where the filters or
    // exclusions leave out most records holding a word, a quoted phrase is searched or
    // `match=all` is asked.
    assert!((80..=110).contains(&pruned), "{pruned} pruned");
    assert!(counted >= pruned, "{counted} counted from bitsets");
    // Through the interface too: the first page of a two-word query is the reference's.
    for text in ["alpha beta", "beta gam"] {
        let hits = index.search(&query(text)).expect("search");
        assert_eq!(ids(&hits), nested_reference(&index, &query(text), 0));
    }
}

#[test]
fn a_word_pair_matches_and_scores_as_the_phrase_of_its_words() {
    use tantivy::{collector::TopDocs, query::PhraseQuery};
    // Repeated words, compounds (whole and parts), CJK runs, a skipped long run between two
    // words, several segments.
    let long = "x".repeat(analysis::MAX_WORD_BYTES + 1);
    let texts = [
        "ant bee ant bee bee",
        "bee ant",
        "ant ant ant",
        "the bigCat of ant",
        "東京都 and 京都",
        &format!("ant {long} bee"),
        "Alpha, bee! gnu",
        "gnu",
    ];
    let index = TantivyIndex::in_memory().expect("index");
    for (batch, chunk) in texts.chunks(3).enumerate() {
        let docs = chunk
            .iter()
            .enumerate()
            .map(|(i, t)| doc((batch * 10 + i) as u128, "title", t))
            .collect();
        index
            .apply(IndexBatch {
                upserts: docs,
                deletes: vec![],
                position: Some(batch as u64 + 1),
                deleted_sources: vec![],
            })
            .expect("apply");
    }
    let searcher = index.reader.searcher();
    assert!(searcher.segment_readers().len() > 1);
    let f = index.fields.text;
    let all = TopDocs::with_limit(100).order_by_score();
    let mut matched = 0;
    for (a, b) in [
        ("ant", "bee"),
        ("bee", "ant"),
        ("ant", "ant"),
        ("bee", "bee"),
        ("the", "big"),
        ("big", "cat"),
        ("cat", "of"),
        ("new", "abc"),
        ("new", "a"),
        ("abc", "bc"),
        ("a", "bc"),
        ("東", "京"),
        ("京", "都"),
        ("都", "and"),
        ("bee", "gnu"),
        ("gnu", "dog"),
    ] {
        let phrase = PhraseQuery::new(vec![
            Term::from_field_text(f.body, a),
            Term::from_field_text(f.body, b),
        ]);
        let pair = pair::PairPhrase::new(f.body_pairs, f.body, a, b);
        let expected = searcher.search(&phrase, &all).expect("phrase");
        let found = searcher.search(&pair, &all).expect("pair");
        assert_eq!(found, expected, "{a} {b}");
        assert_eq!(
            searcher.search(&pair, &Count).expect("count"),
            expected.len(),
            "{a} {b}"
        );
        matched += expected.len();
    }
    // Not every phrase is empty: the comparison has something to compare.
    assert!(matched >= 12, "{matched}");
    // Longer quoted phrases read positions only where every indexed pair is: same matches and
    // scores as the phrase alone (no title holds these words; long words are not paired).
    for text in [
        "ant bee ant",
        "bee ant bee",
        "ant ant ant",
        "ant bee bee",
        "big cat of",
        "ant bee report",
        "東京都",
        "ant bee gnu",
    ] {
        let parsed = query::parse(&format!("\"{text}\""));
        let words = &parsed.parts[0].words;
        let phrase = PhraseQuery::new_with_offset(
            words
                .iter()
                .filter(|w| !w.compound)
                .map(|w| (w.position, Term::from_field_text(f.body, &w.text)))
                .collect(),
        );
        let built = query::build(
            &parsed,
            false,
            tantivy::tokenizer::Language::English,
            f,
            &Default::default(),
        )
        .expect("words");
        let expected = searcher.search(&phrase, &all).expect("phrase");
        let found = searcher.search(&built.query, &all).expect("built");
        assert_eq!(found, expected, "{text}");
        matched += expected.len();
    }
    assert!(matched >= 18, "{matched}");
}

#[test]
fn totals_count_every_match_when_the_last_missing_records_are_looked_up() {
    // A word in all records but every 200th fills most of the set; the few records still
    // missing are then looked up in the other words' postings instead of reading them in
    // full (matches::LOOKUP_COST). Some of those records hold another word, some none.
    let holds = |n: u128| -> Vec<&'static str> {
        let mut words = Vec::new();
        if !n.is_multiple_of(200) {
            words.push("common");
        }
        if n.is_multiple_of(3) {
            words.push("middle");
        }
        if n.is_multiple_of(400) {
            words.push("rare");
        }
        if n.is_multiple_of(7) {
            words.push("seventh");
        }
        if words.is_empty() {
            words.push("nothing");
        }
        words
    };
    let docs = (0..3_000u128)
        .map(|n| doc(n, "x.txt", &holds(n).join(" ")))
        .collect();
    let index = index_with(docs);
    for text in [
        "common middle rare seventh",
        "common rare",
        "common seventh",
        "middle rare seventh",
    ] {
        let words: Vec<&str> = text.split(' ').collect();
        let expected = (0..3_000u128)
            .filter(|&n| holds(n).iter().any(|w| words.contains(w)))
            .count();
        let hits = index.search(&query(text)).expect("search");
        assert_eq!(hits.total as usize, expected, "{text}");
    }
}

#[test]
fn a_viewer_sees_only_the_records_it_may_read_in_hits_totals_and_facets() {
    let mut docs = Vec::new();
    for n in 0..40u128 {
        let (team, allowed) = if n.is_multiple_of(4) {
            ("hr", "g:s:hr")
        } else {
            ("all", "*")
        };
        let mut d = tagged(doc(n, "x.txt", "salary review notes"), "team", &[team]);
        d.access_terms = vec![allowed.into()];
        docs.push(d);
    }
    let index = index_with(docs);
    let mut q = query("salary");
    q.facet_tags = vec!["team".into()];
    assert_eq!(index.search(&q).unwrap().total, 40, "no viewer: everything");
    q.viewer = Some(vec!["*".into(), "u:ann@x.test".into()]);
    let seen = index.search(&q).unwrap();
    assert_eq!(seen.total, 30);
    assert_eq!(seen.facets["team"], vec![("all".to_string(), 30)]);
    assert!(seen.hits.iter().all(|h| {
        let n: u128 = h.external_id["doc-".len()..].parse().unwrap();
        !n.is_multiple_of(4)
    }));
    q.viewer = Some(vec!["*".into(), "g:s:hr".into()]);
    assert_eq!(index.search(&q).unwrap().total, 40);
    q.viewer = Some(vec![]);
    assert_eq!(index.search(&q).unwrap().total, 0, "no terms: nothing");
    q.text = String::new();
    assert_eq!(index.search(&q).unwrap().total, 0, "browsing too");
}
