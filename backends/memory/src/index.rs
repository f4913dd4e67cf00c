//! The memory store's search index: each record's entry in write order, and an inverted index
//! from word and tag value to the entries holding it, so a search reads only the entries of its
//! rarest word or tag value, newest first, and stops when its window is full (DESIGN 7; the
//! window rules are `inlet_core::search`'s).

use std::collections::{BTreeMap, HashMap, HashSet};

use inlet_core::search::{TagFilter, TagRow, Term};
use uuid::Uuid;

/// A record's entry in the search index.
#[derive(Debug)]
pub(crate) struct Entry {
    /// Write sequence: the window takes the highest first.
    pub seq: u64,
    /// Where the record is: its object type and externalId.
    pub object_type_id: Uuid,
    pub external_id: String,
    /// The record's indexed text ([`inlet_core::search::index_text`]).
    pub text: String,
    /// Its tag rows ([`inlet_core::search::tag_rows`]), as the SQL stores' `record_tags` keep
    /// them.
    pub rows: Vec<TagRow>,
}

/// Entries by record id, in write order, with a posting list per word.
#[derive(Debug, Default)]
pub(crate) struct SearchIndex {
    entries: HashMap<Uuid, Entry>,
    /// Record ids by write sequence (the newest entry has the highest).
    order: BTreeMap<u64, Uuid>,
    /// The last sequence handed out (sequences are never reused, even after a removal, so a
    /// stale posting never points at another record's entry).
    last_seq: u64,
    /// Per word and tag value ([`keys`]), the write sequences of the entries holding it,
    /// ascending (a new entry always has the highest sequence, so writing appends). A rewritten
    /// record's old sequence stays until the lists are rebuilt; readers skip sequences `order`
    /// no longer has.
    postings: HashMap<String, Vec<u64>>,
    /// Sequences in `postings`, and how many of them are stale.
    posted: usize,
    stale: usize,
}

impl SearchIndex {
    /// Indexes record `id` as the newest entry, replacing its previous one.
    pub fn put(
        &mut self,
        id: Uuid,
        object_type_id: Uuid,
        external_id: String,
        text: String,
        rows: Vec<TagRow>,
    ) {
        self.last_seq += 1;
        let seq = self.last_seq;
        let entry = Entry {
            seq,
            object_type_id,
            external_id,
            text,
            rows,
        };
        let new_keys = keys(&entry);
        self.posted += new_keys.len();
        for key in new_keys {
            self.postings.entry(key).or_default().push(seq);
        }
        if let Some(old) = self.entries.insert(id, entry) {
            self.order.remove(&old.seq);
            self.stale += keys(&old).len();
        }
        self.order.insert(seq, id);
        // Rebuild once stale sequences are half of all: amortized, every put stays O(words).
        if self.stale * 2 > self.posted {
            self.rebuild();
        }
    }

    /// Removes record `id`'s entry (its source was deleted).
    pub fn remove(&mut self, id: Uuid) {
        if let Some(old) = self.entries.remove(&id) {
            self.order.remove(&old.seq);
            self.stale += keys(&old).len();
        }
        if self.stale * 2 > self.posted {
            self.rebuild();
        }
    }

    fn rebuild(&mut self) {
        let mut postings: HashMap<String, Vec<u64>> = HashMap::new();
        let mut posted = 0;
        for id in self.order.values() {
            let Some(entry) = self.entries.get(id) else {
                continue;
            };
            for key in keys(entry) {
                postings.entry(key).or_default().push(entry.seq);
                posted += 1;
            }
        }
        self.postings = postings;
        self.posted = posted;
        self.stale = 0;
    }

    /// Every entry, newest first.
    fn all_newest_first(&self) -> Box<dyn Iterator<Item = (&Uuid, &Entry)> + '_> {
        Box::new(
            self.order
                .values()
                .rev()
                .filter_map(|id| self.entries.get(id).map(|e| (id, e))),
        )
    }

    /// Entries that may hold every word of `terms` and pass every filter of `tags`, newest
    /// first: those of the shortest posting list among the words and the single-valued tag
    /// filters, or every entry when there are neither (the caller still tests every term,
    /// phrase and filter). A word or value no entry holds yields nothing.
    pub fn newest_first<'a>(
        &'a self,
        terms: &[Term],
        tags: &[TagFilter],
    ) -> Box<dyn Iterator<Item = (&'a Uuid, &'a Entry)> + 'a> {
        let wanted: Vec<String> = terms
            .iter()
            .flatten()
            .cloned()
            .chain(tags.iter().filter_map(|f| match f.values.as_slice() {
                [value] => Some(tag_key(&f.tag, value)),
                _ => None,
            }))
            .collect();
        if wanted.is_empty() {
            return self.all_newest_first();
        }
        let mut rarest: Option<&Vec<u64>> = None;
        for key in &wanted {
            let Some(list) = self.postings.get(key) else {
                return Box::new(std::iter::empty());
            };
            if rarest.is_none_or(|r| list.len() < r.len()) {
                rarest = Some(list);
            }
        }
        let Some(list) = rarest else {
            return Box::new(std::iter::empty());
        };
        // A list holding most entries saves nothing: walking the entries themselves costs one
        // lookup less each.
        if list.len() * 2 > self.order.len() {
            return self.all_newest_first();
        }
        // A sequence `order` no longer has is a rewritten record's old entry.
        Box::new(
            list.iter()
                .rev()
                .filter_map(|seq| self.order.get(seq))
                .filter_map(|id| self.entries.get(id).map(|e| (id, e))),
        )
    }
}

/// The posting keys of an entry: its distinct words (the indexed text is words joined by single
/// spaces) and its distinct tag values ([`tag_key`]).
fn keys(entry: &Entry) -> HashSet<String> {
    entry
        .text
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .chain(entry.rows.iter().map(|r| tag_key(&r.tag, &r.value)))
        .collect()
}

/// The posting key of a tag value: led by a control character, which no word holds (words are
/// letters and digits).
fn tag_key(tag: &str, value: &str) -> String {
    format!("\u{1}{tag}\u{1}{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(words: &[&[&str]]) -> Vec<Term> {
        words
            .iter()
            .map(|t| t.iter().map(|w| (*w).to_string()).collect())
            .collect()
    }

    fn found(index: &SearchIndex, t: &[&[&str]]) -> Vec<String> {
        found_tagged(index, t, &[])
    }

    fn found_tagged(index: &SearchIndex, t: &[&[&str]], tags: &[TagFilter]) -> Vec<String> {
        index
            .newest_first(&terms(t), tags)
            .map(|(_, e)| e.external_id.clone())
            .filter(|id| !id.starts_with("filler"))
            .collect()
    }

    /// Entries no query here asks for, so that every posting list read holds fewer than half
    /// the entries (a longer one is not read: every entry is).
    fn fillers(index: &mut SearchIndex, n: u128) {
        for i in 0..n {
            let id = Uuid::from_u128(1_000 + i);
            index.put(
                id,
                Uuid::from_u128(1),
                format!("filler{i}"),
                "x".into(),
                vec![],
            );
        }
    }

    #[test]
    fn rarest_word_newest_first_and_rewrites_move_to_the_front() {
        let mut index = SearchIndex::default();
        let ot = Uuid::from_u128(1);
        let ids: Vec<Uuid> = (0..4).map(|i| Uuid::from_u128(100 + i)).collect();
        let put = |index: &mut SearchIndex, i: usize, text: &str| {
            let rows = vec![TagRow {
                tag: "color".into(),
                value: if i.is_multiple_of(2) { "red" } else { "blue" }.into(),
                num: None,
            }];
            index.put(ids[i], ot, format!("r{i}"), text.into(), rows);
        };
        fillers(&mut index, 10);
        put(&mut index, 0, "common alpha");
        put(&mut index, 1, "common beta");
        put(&mut index, 2, "common alpha beta");
        put(&mut index, 3, "other");
        assert_eq!(found(&index, &[&["common"]]), ["r2", "r1", "r0"]);
        // The rarest word's list is read: candidates hold it (the caller tests the rest).
        assert_eq!(found(&index, &[&["common"], &["beta"]]), ["r2", "r1"]);
        assert!(found(&index, &[&["common"], &["missing"]]).is_empty());
        assert_eq!(found(&index, &[]), ["r3", "r2", "r1", "r0"]);
        // A single-valued tag filter is a posting list too; several values are left to the
        // caller's test.
        let color = |values: &[&str]| TagFilter {
            tag: "color".into(),
            values: values.iter().map(|v| (*v).to_string()).collect(),
        };
        assert_eq!(found_tagged(&index, &[], &[color(&["blue"])]), ["r3", "r1"]);
        assert_eq!(
            found_tagged(&index, &[&["common"]], &[color(&["red"])]),
            ["r2", "r0"]
        );
        assert!(found_tagged(&index, &[], &[color(&["green"])]).is_empty());
        assert_eq!(
            found_tagged(&index, &[], &[color(&["red", "blue"])]).len(),
            4
        );
        // A rewrite is the newest entry, and its old words no longer find it.
        put(&mut index, 0, "beta gamma");
        assert_eq!(found(&index, &[&["beta"]]), ["r0", "r2", "r1"]);
        assert_eq!(found(&index, &[&["alpha"]]), ["r2"]);
        assert_eq!(found(&index, &[]), ["r0", "r3", "r2", "r1"]);
        // A word in most entries is not worth its list: every entry is read, newest first.
        for i in 0..30 {
            let id = Uuid::from_u128(2_000 + i);
            index.put(id, ot, format!("w{i}"), "everywhere".into(), vec![]);
        }
        let all = index.newest_first(&terms(&[&["everywhere"]]), &[]).count();
        assert_eq!(all, 10 + 4 + 30);
    }

    #[test]
    fn stale_postings_are_rebuilt_and_never_found() {
        let mut index = SearchIndex::default();
        let ot = Uuid::from_u128(1);
        let id = Uuid::from_u128(7);
        fillers(&mut index, 3);
        for i in 0..1000 {
            index.put(id, ot, "r".into(), format!("word{i} shared"), vec![]);
            assert!(index.stale * 2 <= index.posted, "rebuilt at {i}");
        }
        assert_eq!(found(&index, &[&["shared"]]), ["r"]);
        // Without words every entry is read, newest first.
        assert_eq!(index.newest_first(&[], &[]).count(), 4);
        assert_eq!(found(&index, &[&["word999"]]), ["r"]);
        assert!(found(&index, &[&["word998"]]).is_empty());
        // Bounded: at most as many stale postings as live ones (two words, and one per filler).
        assert!(index.posted <= 2 * (2 + 3), "{} postings", index.posted);
    }
}
