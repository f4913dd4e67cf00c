//! Typo tolerance ([`crate::typos`]): which words are widened, to what, how they rank, what a
//! reader is offered, and "did you mean".

use super::tests::*;
use super::*;

fn typo_query(text: &str) -> IndexQuery {
    let mut q = query(text);
    q.typos = true;
    q
}

#[test]
fn a_misspelt_word_matches_its_common_neighbours_below_the_word_itself() {
    let mut docs: Vec<IndexDoc> = (0..12u128)
        .map(|n| doc(n, "fruit.txt", "pineapples grow in warm places"))
        .collect();
    // The misspelling itself, in one record: the word meant is in twelve.
    docs.push(doc(20, "typo.txt", "pinapples grow here"));
    docs.push(doc(21, "x86.txt", "an x86cpu and a x87cpu"));
    let index = index_with(docs);
    let hits = index.search(&typo_query("pinapples")).unwrap();
    assert_eq!(hits.total, 13);
    assert_eq!(
        hits.hits[0].external_id, "doc-20",
        "the word as written ranks first"
    );
    assert_eq!(
        hits.corrections,
        vec![Correction {
            word: "pinapples".into(),
            matched: vec!["pineapples".into()]
        }]
    );
    assert!(hits.hits[1].snippet.contains("<mark>pineapples</mark>"));
    // Off, the word is searched as written.
    assert_eq!(index.search(&query("pinapples")).unwrap().total, 1);
    // Spelt right: the misspelling is far rarer, nothing is corrected.
    let right = index.search(&typo_query("pineapples")).unwrap();
    assert_eq!((right.total, right.corrections.len()), (12, 0));
    // Words with digits, short words and quoted phrases are searched as written.
    assert_eq!(index.search(&typo_query("x88cpu")).unwrap().total, 0);
    assert_eq!(index.search(&typo_query("warn")).unwrap().total, 0);
    assert_eq!(
        index
            .search(&typo_query("\"pinapples grow\""))
            .unwrap()
            .total,
        1
    );
    // One edit below nine letters, two from nine; the nearest neighbours only.
    assert_eq!(index.search(&typo_query("plases")).unwrap().total, 12);
    assert_eq!(index.search(&typo_query("plasse")).unwrap().total, 0);
    assert_eq!(index.search(&typo_query("pineaplpes")).unwrap().total, 12);
    let nearest = index.search(&typo_query("pinaplles")).unwrap();
    assert_eq!(
        nearest.corrections[0].matched,
        vec!["pinapples".to_string()]
    );
    // A neighbour of the word's own stem is found through the stem, not corrected to.
    let stem = index.search(&typo_query("place")).unwrap();
    assert_eq!((stem.total, stem.corrections.len()), (12, 0));
}

#[test]
fn a_reader_is_offered_only_words_of_records_they_may_read() {
    let docs: Vec<IndexDoc> = (0..12u128)
        .map(|n| {
            let mut d = doc(n, "pay.txt", "salaries of the board");
            d.access_terms = vec!["g:s:board".into()];
            d
        })
        .collect();
    let index = index_with(docs);
    let mut q = typo_query("salaires");
    q.viewer = Some(vec!["*".into(), "u:ann@x.test".into()]);
    let hidden = index.search(&q).unwrap();
    assert_eq!(
        (hidden.total, hidden.corrections.len()),
        (0, 0),
        "{hidden:?}"
    );
    q.viewer = Some(vec!["g:s:board".into()]);
    let shown = index.search(&q).unwrap();
    assert_eq!(shown.total, 12);
    assert_eq!(shown.corrections[0].matched, vec!["salaries".to_string()]);
}

#[test]
fn a_misspelt_piece_of_a_split_word_finds_the_phrase_meant() {
    let mut docs: Vec<IndexDoc> = (0..12u128)
        .map(|n| doc(n, "g.txt", "parsing context-free grammars"))
        .collect();
    docs.push(doc(20, "h.txt", "free context of the grammar"));
    let index = index_with(docs);
    let hits = index.search(&typo_query("conext-free")).unwrap();
    assert_eq!(
        hits.total, 12,
        "the phrase with the neighbour, not its words apart"
    );
    assert_eq!(hits.corrections[0].matched, vec!["context".to_string()]);
    assert_eq!(
        index.search(&typo_query("\"conext free\"")).unwrap().total,
        0
    );
}

#[test]
fn a_search_finding_little_suggests_the_query_corrected() {
    let mut docs: Vec<IndexDoc> = (0..12u128)
        .map(|n| doc(n, "fruit.txt", "pineapples grow in warm places"))
        .collect();
    docs.push(doc(30, "cat.txt", "a cat sat"));
    let index = index_with(docs);
    // Typo tolerance off: nothing found, the corrected query suggested.
    let off = index.search(&query("Pinapples grow")).unwrap();
    assert_eq!(off.total, 12, "grow is found");
    assert_eq!(off.suggestion, None, "enough was found");
    let none = index.search(&query("Pinapples")).unwrap();
    assert_eq!(none.total, 0);
    assert_eq!(none.suggestion.as_deref(), Some("pineapples"));
    assert_eq!(index.search(&query("pineapples")).unwrap().total, 12);
    // Words in quotes are left as they are; nothing to suggest then.
    assert_eq!(
        index
            .search(&query("\"pinapples\" cat"))
            .unwrap()
            .suggestion,
        None
    );
    // On, a few found: the suggestion names the word meant.
    let few = index.search(&typo_query("cat pinapples")).unwrap();
    assert_eq!(few.total, 13);
    assert_eq!(few.suggestion, None);
    let cat = index.search(&typo_query("cat")).unwrap();
    assert_eq!((cat.total, cat.suggestion), (1, None), "nothing misspelt");
}
