//! A reader's access filter kept between searches ([`crate::filter::FilterCache`]) and the
//! facets counted from it, against what the reader must see.

use super::tests::*;
use super::*;

/// The external ids a viewer must see: those of `docs` holding one of its terms.
fn readable(docs: &[IndexDoc], viewer: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = docs
        .iter()
        .filter(|d| d.access_terms.iter().any(|t| viewer.contains(&t.as_str())))
        .map(|d| d.external_id.clone())
        .collect();
    out.sort();
    out
}

fn seen(index: &TantivyIndex, viewer: &[&str]) -> Vec<String> {
    let mut q = query("salary");
    q.limit = 100;
    q.viewer = Some(viewer.iter().map(|t| t.to_string()).collect());
    let hits = index.search(&q).unwrap();
    let mut out = ids(&hits);
    out.sort();
    assert_eq!(
        hits.total as usize,
        out.len(),
        "the total counts what is shown"
    );
    out
}

#[test]
fn a_cached_access_filter_follows_new_segments_deletes_changed_lists_and_evictions() {
    let mut docs: Vec<IndexDoc> = (0..30u128)
        .map(|n| {
            let mut d = doc(n, "x.txt", "salary review notes");
            d.access_terms = vec![if n % 3 == 0 { "g:s:hr" } else { "*" }.into()];
            d
        })
        .collect();
    let mut index = index_with(docs.clone());
    let hr = ["g:s:hr", "u:ann@x.test"];
    assert_eq!(seen(&index, &hr), readable(&docs, &hr));
    // The same terms in another order are the same filter.
    assert_eq!(
        seen(&index, &["u:ann@x.test", "g:s:hr"]),
        readable(&docs, &hr)
    );
    let held = index.filters.bytes();
    assert!(held > 0, "the filter is kept");
    assert_eq!(seen(&index, &hr), readable(&docs, &hr));
    assert_eq!(index.filters.bytes(), held, "and read from the cache");

    // A record leaves the group, one joins it, one is deleted and a new one is added: the
    // cached segment's bitset still holds them, the alive bitset and new segment decide.
    docs[0].access_terms = vec!["*".into()];
    docs[1].access_terms = vec!["g:s:hr".into()];
    let gone = docs.remove(3);
    let mut new = doc(99, "y.txt", "salary again");
    new.access_terms = vec!["g:s:hr".into()];
    docs.push(new.clone());
    index
        .apply(IndexBatch {
            upserts: vec![docs[0].clone(), docs[1].clone(), new],
            deletes: vec![gone.record_id],
            position: Some(2),
            deleted_sources: vec![],
        })
        .unwrap();
    assert_eq!(seen(&index, &hr), readable(&docs, &hr));
    // A membership change is a different filter.
    assert_eq!(seen(&index, &["*"]), readable(&docs, &["*"]));

    // With room for one bitset only, each viewer's search evicts the other's and reads its own.
    index.filters = Arc::new(filter::FilterCache::with_budget(held));
    for _ in 0..3 {
        assert_eq!(seen(&index, &hr), readable(&docs, &hr));
        assert_eq!(seen(&index, &["*"]), readable(&docs, &["*"]));
        assert!(index.filters.bytes() <= held);
    }
}

#[test]
fn a_readers_facets_are_exact_when_nearly_all_its_records_match() {
    // Counted from the access filter's kept counts less its unmatched records
    // (facets::SegmentCounts::by_filter); a tag with more values than are kept is counted
    // from the matches. Deletes after the counts were kept count in none.
    let n = 4200u128;
    let mut docs: Vec<IndexDoc> = (0..n)
        .map(|i| {
            let words = if i % 37 == 0 { "other" } else { "common" };
            let mut d = tagged(
                doc(i, "x.txt", words),
                "team",
                &[&format!("team-{}", i % 5)],
            );
            d = tagged(d, "id", &[&format!("id-{i}")]);
            d.access_terms = vec![if i % 3 == 0 { "g:s:hr" } else { "*" }.into()];
            d
        })
        .collect();
    let mut index = index_with(docs.clone());
    let expected = |docs: &[IndexDoc], word: &str, tag: &str| {
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for d in docs
            .iter()
            .filter(|d| d.content == word && d.access_terms[0] == "*")
        {
            for v in &d.tags[tag] {
                *counts.entry(v.clone()).or_default() += 1;
            }
        }
        counts
    };
    let counted = |index: &TantivyIndex, word: &str, tag: &str| {
        let mut q = query(word);
        q.viewer = Some(vec!["*".into()]);
        q.facet_tags = vec![tag.into()];
        let hits = index.search(&q).unwrap();
        hits.facets
            .get(tag)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .collect::<BTreeMap<_, _>>()
    };
    for round in 0..3 {
        for word in ["common", "other"] {
            assert_eq!(
                counted(&index, word, "team"),
                expected(&docs, word, "team"),
                "{word}"
            );
        }
        // Only the first 100 values are shown; the ids are all counted once.
        let ids = counted(&index, "common", "id");
        assert_eq!(ids.len(), MAX_FACET_VALUES);
        assert!(ids.values().all(|&n| n == 1));
        // Records leave: deleted, or moved out of the reader's reach.
        let gone: Vec<Uuid> = docs.drain(..40).map(|d| d.record_id).collect();
        docs[round].access_terms = vec!["g:s:hr".into()];
        index
            .apply(IndexBatch {
                upserts: vec![docs[round].clone()],
                deletes: gone,
                position: Some(2 + round as u64),
                deleted_sources: vec![],
            })
            .unwrap();
    }
    index.filters = Arc::new(filter::FilterCache::default());
    assert_eq!(
        counted(&index, "common", "team"),
        expected(&docs, "common", "team")
    );
}
