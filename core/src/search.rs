//! Search (DESIGN 7) and folder trees (DESIGN 6): the query model every store answers, and the
//! pure pieces they share — text normalization for indexing and querying, the tag rows a record
//! is filtered and faceted by, snippets, and rolled-up folder counts.
//!
//! Text is indexed in a normalized form so that all stores agree on what a word is: compatibility
//! decomposition (NFKD), combining marks dropped (accents fold: `café` = `cafe`), lowercase, every
//! run of letters and digits a word, and each CJK ideograph / kana / hangul syllable a word of its
//! own (so a Chinese or Japanese word is found as the phrase of its characters without a
//! dictionary).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use unicode_normalization::{UnicodeNormalization, char::is_combining_mark};
use uuid::Uuid;

use crate::{
    WorkspaceId,
    record::Record,
    source::{FacetTargetType, ObjectType, TagType},
    tag::{TagValue, Tags},
    time::{self, Timestamp},
};

/// Results per page when the caller names none.
pub const DEFAULT_LIMIT: u32 = 20;
/// Most results per page.
pub const MAX_LIMIT: u32 = 100;
/// Longest accepted query text, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Most words and phrases in one query.
pub const MAX_TERMS: usize = 32;
/// Bytes of normalized text indexed per record (PostgreSQL's tsvector is capped at 1 MB).
pub const MAX_INDEXED_BYTES: usize = 512 * 1024;
/// Values reported per facet, most frequent first.
pub const MAX_FACET_VALUES: usize = 50;
/// Pseudo-tag carrying the date a CREATED_DATE facet maps onto (in [`TagRow`]s).
pub const CREATED_TAG: &str = "$created";
/// Pseudo-tag carrying the date a MODIFIED_DATE facet maps onto.
pub const MODIFIED_TAG: &str = "$modified";

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // hangul syllables
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x20000..=0x2FA1F) // extensions B–F, supplement
}

/// The words of `text` in normalized form, in order.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.nfkd().filter(|c| !is_combining_mark(*c)) {
        if is_cjk(c) {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            current.extend(c.to_lowercase());
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The text a store indexes for a record: its normalized words joined by spaces, at most
/// [`MAX_INDEXED_BYTES`].
pub fn index_text(text: &str) -> String {
    let mut out = String::new();
    for w in words(text) {
        if out.len() + w.len() + 1 > MAX_INDEXED_BYTES {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&w);
    }
    out
}

/// One thing a query asks for: a phrase of one or more normalized words, all in this order.
pub type Term = Vec<String>;

/// Parses query text: words must all match; `"quoted words"` match as a phrase; a CJK run is a
/// phrase of its characters. Punctuation is ignored. At most [`MAX_TERMS`] terms are kept.
pub fn parse_query(q: &str) -> Vec<Term> {
    let mut terms = Vec::new();
    for (i, part) in q.split('"').enumerate() {
        if i % 2 == 1 {
            let phrase = words(part);
            if !phrase.is_empty() {
                terms.push(phrase);
            }
            continue;
        }
        for chunk in part.split_whitespace() {
            let ws = words(chunk);
            // "東京都" is one chunk of three words: keep them together as a phrase; "e-mail"
            // likewise becomes the phrase "e mail".
            if !ws.is_empty() {
                terms.push(ws);
            }
        }
    }
    terms.truncate(MAX_TERMS);
    terms
}

/// Finds a query's terms in indexed texts (words joined by single spaces, as [`index_text`]
/// makes them): whole words, phrases in order, with a SIMD substring search per term.
pub struct Matcher {
    needles: Vec<memchr::memmem::Finder<'static>>,
}

impl Matcher {
    /// A matcher for `terms`.
    pub fn new(terms: &[Term]) -> Self {
        Self {
            needles: terms
                .iter()
                .filter(|t| !t.is_empty())
                .map(|t| memchr::memmem::Finder::new(t.join(" ").as_bytes()).into_owned())
                .collect(),
        }
    }

    /// How often term `i` occurs in `doc`.
    fn occurrences(&self, doc: &str, i: usize) -> usize {
        let finder = &self.needles[i];
        let len = finder.needle().len();
        let bytes = doc.as_bytes();
        finder
            .find_iter(bytes)
            .filter(|&at| {
                let end = at + len;
                (at == 0 || bytes[at - 1] == b' ') && (end == bytes.len() || bytes[end] == b' ')
            })
            .count()
    }

    /// Whether `doc` holds every term.
    pub fn matches_all(&self, doc: &str) -> bool {
        (0..self.needles.len()).all(|i| self.occurrences(doc, i) > 0)
    }

    /// Relevance of `doc`: the BM25 sum over the terms, with `avg_len` the average
    /// [`word_count`] of the texts being ranked and every term weighted alike (a match holds
    /// every term, so within the matches document frequency says little). The memory and
    /// SQLite stores rank with this; PostgreSQL ranks with its own `ts_rank_cd`.
    pub fn relevance(&self, doc: &str, avg_len: f64) -> f64 {
        let len = word_count(doc) as f64;
        let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len / avg_len.max(1.0));
        (0..self.needles.len())
            .map(|i| {
                let tf = self.occurrences(doc, i) as f64;
                tf * (BM25_K1 + 1.0) / (tf + norm)
            })
            .sum()
    }
}

/// Whether an indexed text holds every term ([`Matcher::matches_all`]).
pub fn matches_all(doc: &str, terms: &[Term]) -> bool {
    Matcher::new(terms).matches_all(doc)
}

/// How often a term occurs in an indexed text, as whole words in this order.
pub fn occurrences(doc: &str, term: &Term) -> usize {
    let m = Matcher::new(std::slice::from_ref(term));
    if m.needles.is_empty() {
        0
    } else {
        m.occurrences(doc, 0)
    }
}

/// The number of words of an indexed text.
pub fn word_count(doc: &str) -> usize {
    if doc.is_empty() {
        0
    } else {
        doc.bytes().filter(|&b| b == b' ').count() + 1
    }
}

/// BM25's term-frequency saturation.
const BM25_K1: f64 = 1.2;
/// BM25's length normalization.
const BM25_B: f64 = 0.75;

/// Relevance of an indexed text for `terms` ([`Matcher::relevance`]).
pub fn relevance(doc: &str, terms: &[Term], avg_len: f64) -> f64 {
    Matcher::new(terms).relevance(doc, avg_len)
}

/// Orders a window's matches best first, ties by id (the order every store pages in).
pub fn rank<T, K: Ord>(hits: &mut [(f64, T)], id: impl Fn(&T) -> K) {
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| id(&a.1).cmp(&id(&b.1))));
}

/// `(total, exhaustive)` for a window in which a store found `found` matches.
pub fn window_total(q: &SearchQuery, found: usize) -> (u64, bool) {
    let found = found as u64;
    (found, found < q.cap())
}

/// A tag filter: records carrying any of `values` of tag `tag` (OR within a tag; several
/// filters AND together).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagFilter {
    /// The tag's externalId.
    pub tag: String,
    /// Values in [`index_value`] form.
    pub values: Vec<String>,
}

/// A search, confined to one workspace.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    /// The caller's workspace.
    pub workspace_id: WorkspaceId,
    /// Terms from [`parse_query`]; empty lists everything, newest first.
    pub terms: Vec<Term>,
    /// Only this source.
    pub source_id: Option<Uuid>,
    /// Only this object type.
    pub object_type_id: Option<Uuid>,
    /// Tag filters.
    pub tags: Vec<TagFilter>,
    /// Created (or the mapped CREATED_DATE tag) at or after.
    pub created_from: Option<Timestamp>,
    /// Created (or mapped) at or before.
    pub created_to: Option<Timestamp>,
    /// Modified (or the mapped MODIFIED_DATE tag) at or after.
    pub modified_from: Option<Timestamp>,
    /// Modified (or mapped) at or before.
    pub modified_to: Option<Timestamp>,
    /// Results skipped (from the cursor).
    pub offset: u64,
    /// Results per page.
    pub limit: u32,
    /// Tags to count values of over the examined matches (facets).
    pub facet_tags: Vec<String>,
    /// How many matches to examine at least ([`MATCH_WINDOW`] from the API). See [`SearchQuery::cap`].
    pub window: u64,
}

/// Matches a search examines by default: beyond this many, a store ranks, counts and facets the
/// most recently written matches only and says so ([`SearchPage::exhaustive`] false). Ranking
/// every match of a broad query (bm25 in SQLite, `ts_rank_cd` in PostgreSQL) costs time in
/// proportion to the matches (measured in docs/performance.md); this bound keeps broad queries
/// as fast as selective ones.
pub const MATCH_WINDOW: u64 = 1000;

/// The deepest result a cursor reaches when a search is not exhaustive (offset + limit).
pub const MAX_DEPTH: u64 = 10_000;

impl SearchQuery {
    /// A query for `text` in a workspace, with no filters or facets, the first page of
    /// [`DEFAULT_LIMIT`] and the [`MATCH_WINDOW`].
    pub fn new(workspace_id: WorkspaceId, text: &str) -> Self {
        Self {
            workspace_id,
            terms: parse_query(text),
            source_id: None,
            object_type_id: None,
            tags: vec![],
            created_from: None,
            created_to: None,
            modified_from: None,
            modified_to: None,
            offset: 0,
            limit: DEFAULT_LIMIT,
            facet_tags: vec![],
            window: MATCH_WINDOW,
        }
    }

    /// The most matches a store examines for this query: the window or the requested page,
    /// whichever reaches further, plus one (finding that one more means "not exhaustive").
    ///
    /// Every store follows the same rule, so results agree across stores: take the matches
    /// (live, in the workspace, passing every filter) in order of their last write, newest
    /// first, and stop after `cap()` of them. Fewer than `cap()` found: the search is exhaustive
    /// and `total` is exact. Otherwise `total` is `cap()` (a lower bound), and ranking and
    /// facets cover those `cap()` matches.
    pub fn cap(&self) -> u64 {
        self.window
            .max(self.offset.saturating_add(u64::from(self.limit)))
            .saturating_add(1)
    }
}

/// One page of results.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchPage {
    /// Matching records in all pages when `exhaustive`, else the matches examined (a lower bound).
    pub total: u64,
    /// Whether `total`, the order and the facets cover every match ([`SearchQuery::cap`]).
    pub exhaustive: bool,
    /// This page, best first (without terms: the most recently written first).
    pub records: Vec<Record>,
    /// Per facet tag: (value, count), most frequent first, at most [`MAX_FACET_VALUES`].
    pub facets: BTreeMap<String, Vec<(String, u64)>>,
}

/// The string form of a tag value that filters and facets use: [`TagValue::canonical`] (text as
/// is, numbers in decimal, dates as `2026-11-22T10:42:10.123+00:00` in UTC, so they sort).
pub fn index_value(v: &TagValue) -> String {
    v.canonical()
}

/// One row of a record's tag index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagRow {
    /// The tag's externalId, or [`CREATED_TAG`] / [`MODIFIED_TAG`].
    pub tag: String,
    /// [`index_value`] of the value.
    pub value: String,
    /// Milliseconds for DATE_TIME values.
    pub num: Option<i64>,
}

/// The rows a store keeps for a record's tags, including the date a facet with targetType maps
/// onto the built-in created/modified filters.
pub fn tag_rows(object_type: Option<&ObjectType>, tags: &Tags) -> Vec<TagRow> {
    let mut rows = Vec::new();
    for (tag, values) in tags {
        for v in values {
            rows.push(TagRow {
                tag: tag.clone(),
                value: index_value(v),
                num: match v {
                    TagValue::DateTime(t) => Some(t.timestamp_millis()),
                    _ => None,
                },
            });
        }
    }
    if let Some(ot) = object_type {
        for facet in &ot.facets {
            let Some(target) = facet.target_type else {
                continue;
            };
            let first = tags.get(&facet.tag_external_id).and_then(|vs| {
                vs.iter().find_map(|v| match v {
                    TagValue::DateTime(t) => Some(*t),
                    _ => None,
                })
            });
            if let Some(t) = first {
                rows.push(TagRow {
                    tag: match target {
                        FacetTargetType::CreatedDate => CREATED_TAG,
                        FacetTargetType::ModifiedDate => MODIFIED_TAG,
                    }
                    .into(),
                    value: time::format(&t),
                    num: Some(t.timestamp_millis()),
                });
            }
        }
    }
    rows
}

/// The date a created/modified filter compares: the mapped tag's, else the record's own.
pub fn effective_dates(record: &Record, rows: &[TagRow]) -> (i64, i64) {
    let find = |tag: &str| rows.iter().find(|r| r.tag == tag).and_then(|r| r.num);
    (
        find(CREATED_TAG).unwrap_or_else(|| record.created_date.timestamp_millis()),
        find(MODIFIED_TAG).unwrap_or_else(|| record.modified_date.timestamp_millis()),
    )
}

/// Whether a record passes the query's non-text filters (for stores that filter in memory).
pub fn passes_filters(q: &SearchQuery, record: &Record, rows: &[TagRow]) -> bool {
    if q.source_id.is_some_and(|s| s != record.source_id)
        || q.object_type_id.is_some_and(|o| o != record.object_type.id)
    {
        return false;
    }
    let tags_ok = q.tags.iter().all(|f| {
        rows.iter()
            .any(|r| r.tag == f.tag && f.values.contains(&r.value))
    });
    let (created, modified) = effective_dates(record, rows);
    let within = |v: i64, from: Option<Timestamp>, to: Option<Timestamp>| {
        from.is_none_or(|f| v >= f.timestamp_millis())
            && to.is_none_or(|t| v <= t.timestamp_millis())
    };
    tags_ok
        && within(created, q.created_from, q.created_to)
        && within(modified, q.modified_from, q.modified_to)
}

/// Counts facet values over matching records' tag rows: most frequent first, then by value.
pub fn count_facets<'a>(
    facet_tags: &[String],
    rows: impl IntoIterator<Item = &'a [TagRow]>,
) -> BTreeMap<String, Vec<(String, u64)>> {
    let mut counts: HashMap<&str, HashMap<String, u64>> = HashMap::new();
    for record_rows in rows {
        for row in record_rows {
            if facet_tags.contains(&row.tag) {
                let per_value = counts
                    .entry(facet_tags_key(facet_tags, &row.tag))
                    .or_default();
                // A record with the same value twice counts once.
                if !record_rows
                    .iter()
                    .take_while(|r| !std::ptr::eq(*r, row))
                    .any(|r| r.tag == row.tag && r.value == row.value)
                {
                    *per_value.entry(row.value.clone()).or_default() += 1;
                }
            }
        }
    }
    facet_tags
        .iter()
        .map(|t| {
            let values = counts.remove(t.as_str()).unwrap_or_default();
            (t.clone(), top_values(values.into_iter().collect()))
        })
        .collect()
}

fn facet_tags_key<'a>(facet_tags: &'a [String], tag: &str) -> &'a str {
    facet_tags
        .iter()
        .find(|t| *t == tag)
        .map_or("", String::as_str)
}

/// Sorts (value, count) most frequent first, then by value, keeping [`MAX_FACET_VALUES`].
pub fn top_values(mut values: Vec<(String, u64)>) -> Vec<(String, u64)> {
    values.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    values.truncate(MAX_FACET_VALUES);
    values
}

/// Characters of context in a snippet.
pub const SNIPPET_CHARS: usize = 200;

/// A short extract of `content` around the first matched term, HTML-escaped, with every
/// matched word wrapped in `<mark>`…`</mark>`. Without terms (or no match): the beginning.
pub fn snippet(content: &str, terms: &[Term]) -> String {
    let wanted: Vec<&str> = terms.iter().flatten().map(String::as_str).collect();
    // Word spans of the original text, with their normalized form.
    let mut spans: Vec<(usize, usize, bool)> = Vec::new();
    let mut start = None;
    for (i, c) in content.char_indices() {
        let word_char = c.is_alphanumeric() && !is_cjk(c);
        match (start, word_char || is_cjk(c)) {
            (None, true) if is_cjk(c) => spans.push((i, i + c.len_utf8(), false)),
            (None, true) => start = Some(i),
            (Some(s), true) if is_cjk(c) => {
                spans.push((s, i, false));
                spans.push((i, i + c.len_utf8(), false));
                start = None;
            }
            (Some(s), false) => {
                spans.push((s, i, false));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, content.len(), false));
    }
    for span in &mut spans {
        let norm = words(&content[span.0..span.1]);
        span.2 = norm.iter().any(|w| wanted.contains(&w.as_str()));
    }
    let first = spans.iter().find(|s| s.2).map_or(0, |s| s.0);
    // Start a little before the first match, on a char boundary.
    let mut from = first;
    let mut back = 0;
    while from > 0 && back < SNIPPET_CHARS / 4 {
        from -= 1;
        while !content.is_char_boundary(from) {
            from -= 1;
        }
        back += 1;
    }
    let to = content[from..]
        .char_indices()
        .nth(SNIPPET_CHARS)
        .map_or(content.len(), |(i, _)| from + i);
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut at = from;
    for &(s, e, hit) in spans.iter().filter(|s| s.0 >= from && s.1 <= to) {
        out.push_str(&escape(&content[at..s]));
        if hit {
            out.push_str("<mark>");
            out.push_str(&escape(&content[s..e]));
            out.push_str("</mark>");
        } else {
            out.push_str(&escape(&content[s..e]));
        }
        at = e;
    }
    out.push_str(&escape(&content[at..to]));
    if to < content.len() {
        out.push('…');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A folder of a HIERARCHICAL tag (DESIGN 6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Folder {
    /// The caller's id; records carry it as the tag value.
    pub external_id: String,
    /// Display name.
    pub name: String,
    /// The parent folder; `None` for a root.
    pub parent_external_id: Option<String>,
}

/// Whether making `parent` the parent of `id` would close a cycle in `folders`.
pub fn would_cycle(folders: &[Folder], id: &str, parent: Option<&str>) -> bool {
    let by_id: HashMap<&str, Option<&str>> = folders
        .iter()
        .map(|f| (f.external_id.as_str(), f.parent_external_id.as_deref()))
        .collect();
    let mut at = parent;
    let mut steps = 0;
    while let Some(p) = at {
        if p == id || steps > folders.len() {
            return true;
        }
        at = by_id.get(p).copied().flatten();
        steps += 1;
    }
    false
}

/// Record counts that roll up: each folder's own count plus all its descendants'.
pub fn rolled_up_counts(folders: &[Folder], own: &HashMap<String, u64>) -> HashMap<String, u64> {
    let mut total: HashMap<String, u64> = HashMap::new();
    for f in folders {
        let n = own.get(&f.external_id).copied().unwrap_or(0);
        if n == 0 {
            continue;
        }
        // Add to the folder and every ancestor (guarding against damaged cycles).
        let mut at = Some(f.external_id.as_str());
        let mut steps = 0;
        while let Some(id) = at {
            *total.entry(id.to_string()).or_default() += n;
            at = folders
                .iter()
                .find(|x| x.external_id == id)
                .and_then(|x| x.parent_external_id.as_deref());
            steps += 1;
            if steps > folders.len() {
                break;
            }
        }
    }
    total
}

/// `values` and the externalIds of every folder below them (a folder filter includes its
/// subfolders, as folder counts roll up).
pub fn with_descendants(folders: &[Folder], values: &[String]) -> Vec<String> {
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in folders {
        if let Some(p) = f.parent_external_id.as_deref() {
            children.entry(p).or_default().push(&f.external_id);
        }
    }
    let mut out: Vec<String> = values.to_vec();
    let mut seen: std::collections::HashSet<String> = out.iter().cloned().collect();
    let mut i = 0;
    while i < out.len() {
        let kids: Vec<String> = children
            .get(out[i].as_str())
            .map(|k| k.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default();
        for k in kids {
            if seen.insert(k.clone()) {
                out.push(k);
            }
        }
        i += 1;
    }
    out
}

/// Whether a tag config is a folder tree.
pub fn is_folder_tag(object_type: &ObjectType, tag: &str) -> bool {
    object_type
        .tag_config(tag)
        .is_some_and(|t| t.tag_type == TagType::Hierarchical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_fold_accents_case_and_split_cjk() {
        assert_eq!(
            words("Café au LAIT, naïve!"),
            ["cafe", "au", "lait", "naive"]
        );
        assert_eq!(words("東京都に住む"), ["東", "京", "都", "に", "住", "む"]);
        assert_eq!(words("ﬁle №5"), ["file", "no5"]);
        assert_eq!(words("e-mail"), ["e", "mail"]);
        assert!(words(" ,. ").is_empty());
    }

    #[test]
    fn queries_have_words_phrases_and_cjk_phrases() {
        assert_eq!(
            parse_query(r#"quarterly "sales report" 東京"#),
            vec![
                vec!["quarterly".to_string()],
                vec!["sales".to_string(), "report".to_string()],
                vec!["東".to_string(), "京".to_string()],
            ]
        );
        assert!(parse_query("  \"\" ").is_empty());
        assert_eq!(parse_query(&"a ".repeat(100)).len(), MAX_TERMS);
    }

    #[test]
    fn matching_needs_every_term_and_phrase_order() {
        let doc = index_text("The quarterly sales report for Tōkyō 東京都");
        assert!(matches_all(&doc, &parse_query("sales quarterly")));
        assert!(matches_all(
            &doc,
            &parse_query("\"sales report\" tokyo 東京")
        ));
        assert!(!matches_all(&doc, &parse_query("\"report sales\"")));
        assert!(!matches_all(&doc, &parse_query("sales missing")));
        assert!(!matches_all(&doc, &parse_query("京東")));
        // Whole words only.
        assert!(!matches_all(&doc, &parse_query("sale")));
        assert!(!matches_all(&doc, &parse_query("ales")));
        assert_eq!(occurrences("a b a b a", &parse_query("\"a b\"")[0]), 2);
        assert_eq!(word_count(&doc), 9); // CJK: one word per character
        assert_eq!(word_count(""), 0);
    }

    #[test]
    fn relevance_favours_frequent_terms_in_short_texts() {
        let terms = parse_query("apple");
        let strong = relevance("apple apple apple pie", &terms, 10.0);
        let weak = relevance(&format!("apple {}", "filler ".repeat(40)), &terms, 10.0);
        assert!(strong > weak && weak > 0.0);
        assert_eq!(relevance("pear", &terms, 10.0), 0.0);
    }

    #[test]
    fn index_text_is_capped() {
        let long = "word ".repeat(200_000);
        let text = index_text(&long);
        assert!(text.len() <= MAX_INDEXED_BYTES);
        assert!(text.starts_with("word word"));
    }

    #[test]
    fn snippets_mark_matches_and_escape() {
        let s = snippet(
            "Intro <b>. The Café sells coffee & cake.",
            &parse_query("cafe cake"),
        );
        assert!(s.contains("<mark>Café</mark>"), "{s}");
        assert!(s.contains("<mark>cake</mark>"), "{s}");
        assert!(s.contains("&lt;b&gt;") && s.contains("&amp;"), "{s}");
        let long = format!("{} needle {}", "hay ".repeat(200), "hay ".repeat(200));
        let s = snippet(&long, &parse_query("needle"));
        assert!(s.starts_with('…') && s.ends_with('…') && s.contains("<mark>needle</mark>"));
        assert!(s.chars().count() < SNIPPET_CHARS + 40);
        assert_eq!(
            snippet("東京都に住む", &parse_query("東京")),
            "<mark>東</mark><mark>京</mark>都に住む"
        );
    }

    fn folder(id: &str, parent: Option<&str>) -> Folder {
        Folder {
            external_id: id.into(),
            name: id.to_uppercase(),
            parent_external_id: parent.map(Into::into),
        }
    }

    #[test]
    fn cycles_are_detected() {
        let fs = [
            folder("a", None),
            folder("b", Some("a")),
            folder("c", Some("b")),
        ];
        assert!(would_cycle(&fs, "a", Some("c")));
        assert!(would_cycle(&fs, "a", Some("a")));
        assert!(!would_cycle(&fs, "c", Some("a")));
        assert!(!would_cycle(&fs, "d", Some("c")));
        assert!(!would_cycle(&fs, "a", None));
    }

    #[test]
    fn counts_roll_up_to_ancestors() {
        let fs = [
            folder("a", None),
            folder("b", Some("a")),
            folder("c", Some("b")),
            folder("x", None),
        ];
        let own: HashMap<String, u64> = [("a".into(), 1), ("b".into(), 2), ("c".into(), 4)].into();
        let total = rolled_up_counts(&fs, &own);
        assert_eq!(total["a"], 7);
        assert_eq!(total["b"], 6);
        assert_eq!(total["c"], 4);
        assert!(!total.contains_key("x"));
    }

    #[test]
    fn facet_counts_are_per_record_and_sorted() {
        let r = |tag: &str, v: &str| TagRow {
            tag: tag.into(),
            value: v.into(),
            num: None,
        };
        let a = vec![r("color", "red"), r("color", "blue"), r("size", "1")];
        let b = vec![r("color", "red"), r("color", "red")];
        let facets = count_facets(&["color".into()], [a.as_slice(), b.as_slice()]);
        assert_eq!(
            facets["color"],
            vec![("red".to_string(), 2), ("blue".to_string(), 1)]
        );
        assert!(!facets.contains_key("size"));
    }
}
