//! Exact facet counts over every match (DESIGN 7), two ways per segment, by how many of its
//! documents matched:
//!
//! - **Few matches**: from a string fast field holding each record's `tag` + [`SEPARATOR`] +
//!   `value` entries. A segment's dictionary is sorted, so one tag's values are one range of
//!   term ordinals: counting is an array increment per value of each match, and ordinals become
//!   strings once per segment, only for values that occurred.
//! - **Many matches** (more than 1 in [`DENSE_MATCHES`] of the segment): from the inverted
//!   index of the facet field (`tag\0value` terms). Each value's posting list is decoded in
//!   blocks and tested against a bitset of the matches: reading a column per match costs two
//!   random reads each, a posting list a few nanoseconds per entry.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use tantivy::{
    BitSet, DocId, Score, SegmentOrdinal, SegmentReader,
    collector::{Collector, SegmentCollector},
    columnar::{StrColumn, TermOrdHit},
    schema::Field,
};

use crate::filter::{AccessFilter, SegmentBits};

/// Between a tag's externalId and its value in the fast field (no externalId holds it: the
/// input policy refuses control characters).
pub const SEPARATOR: char = '\u{1}';

/// The fast field's entry for a tag value.
pub fn entry(tag: &str, value: &str) -> String {
    format!("{tag}{SEPARATOR}{value}")
}

/// Counts values of `tags` over the matching documents: tag → value → documents.
pub struct TagCounts {
    /// The fast field.
    pub field: String,
    /// The facet field holding the same values as `tag\0value` terms.
    pub facet_field: Field,
    /// Tags whose values are counted.
    pub tags: Vec<String>,
    /// The reader's access filter, when every match is one of its records: a segment where
    /// nearly all of them matched is counted from the filter's counts, kept with its bitset,
    /// less the few that did not match.
    pub within: Option<AccessFilter>,
}

/// A segment is counted from posting lists when more than one in this many of its documents
/// matched.
pub const DENSE_MATCHES: u32 = 16;

/// A segment is counted from the documents that did *not* match when fewer than one in this
/// many of its documents are such: a value's count is its posting list's length less the
/// unmatched documents holding it, read from the fast field.
pub const FEW_UNMATCHED: u32 = 8;

/// Value ordinals spanned by one segment's counting array beyond which a map is used instead.
const MAX_DENSE: u64 = 1 << 18;

/// Most values of one tag whose counts over an access filter's records are kept with its
/// bitset (a tag with more is counted without them).
const MAX_KEPT_VALUES: usize = 4096;

/// One tag's ordinal range in a segment, and where its counts start.
struct Span {
    tag: usize,
    start: u64,
    end: u64,
    offset: usize,
}

/// Counts of one segment.
pub struct SegmentCounts {
    column: Option<StrColumn>,
    spans: Vec<Span>,
    /// Ordinals the spans cover together.
    width: usize,
    tags: Vec<String>,
    /// The matching documents, in order.
    matches: Vec<DocId>,
    max_doc: DocId,
    /// The facet field's terms and postings.
    inverted: Option<std::sync::Arc<tantivy::InvertedIndexReader>>,
    /// The access filter's records in the segment, every match among them.
    within: Option<Arc<SegmentBits>>,
}

fn ordinal(hit: TermOrdHit) -> u64 {
    match hit {
        TermOrdHit::Exact(o) | TermOrdHit::Next(o) => o,
    }
}

impl Collector for TagCounts {
    type Fruit = BTreeMap<String, HashMap<String, u64>>;
    type Child = SegmentCounts;

    fn for_segment(
        &self,
        _segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentCounts> {
        let column = reader.fast_fields().str(&self.field)?;
        let mut spans = Vec::new();
        let mut offset = 0usize;
        if let Some(column) = &column {
            let dictionary = column.dictionary();
            for (i, tag) in self.tags.iter().enumerate() {
                let start = ordinal(dictionary.term_ord_or_next(format!("{tag}{SEPARATOR}"))?);
                let end = ordinal(dictionary.term_ord_or_next(format!("{tag}\u{2}"))?);
                if start < end {
                    spans.push(Span {
                        tag: i,
                        start,
                        end,
                        offset,
                    });
                    offset += (end - start) as usize;
                }
            }
        }
        let inverted = if self.tags.is_empty() {
            None
        } else {
            Some(reader.inverted_index(self.facet_field)?)
        };
        let within = match (&self.within, self.tags.is_empty()) {
            (Some(filter), false) => Some(filter.bits_in(reader)?),
            _ => None,
        };
        Ok(SegmentCounts {
            column,
            spans,
            width: offset,
            tags: self.tags.clone(),
            matches: Vec::new(),
            max_doc: reader.max_doc(),
            inverted,
            within,
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(
        &self,
        fruits: Vec<BTreeMap<String, HashMap<String, u64>>>,
    ) -> tantivy::Result<Self::Fruit> {
        let mut out: Self::Fruit = BTreeMap::new();
        for fruit in fruits {
            for (tag, values) in fruit {
                let counts = out.entry(tag).or_default();
                for (value, n) in values {
                    *counts.entry(value).or_default() += n;
                }
            }
        }
        Ok(out)
    }
}

impl SegmentCollector for SegmentCounts {
    type Fruit = BTreeMap<String, HashMap<String, u64>>;

    fn collect(&mut self, doc: DocId, _score: Score) {
        if !self.tags.is_empty() {
            self.matches.push(doc);
        }
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        if !self.tags.is_empty() {
            self.matches.extend_from_slice(docs);
        }
    }

    fn harvest(self) -> Self::Fruit {
        if self.matches.is_empty() {
            return BTreeMap::new();
        }
        if let Some(counts) = self.by_filter() {
            return counts;
        }
        let many = self.matches.len() as u64 * u64::from(DENSE_MATCHES) > u64::from(self.max_doc);
        let unmatched = u64::from(self.max_doc).saturating_sub(self.matches.len() as u64);
        let nearly_all = unmatched * u64::from(FEW_UNMATCHED) < u64::from(self.max_doc);
        match &self.inverted {
            Some(inverted) if nearly_all && self.column.is_some() => self.by_complement(inverted),
            Some(inverted) if many => self.by_postings(inverted),
            _ => self.by_column(self.matches.iter().copied()),
        }
    }
}

impl SegmentCounts {
    /// Counts every value of the tags by its posting list, against a bitset of the matches.
    fn by_postings(
        &self,
        inverted: &tantivy::InvertedIndexReader,
    ) -> BTreeMap<String, HashMap<String, u64>> {
        let mut matched = BitSet::with_max_value(self.max_doc.max(1));
        for &doc in &self.matches {
            matched.insert(doc);
        }
        self.by_value(inverted, |_, _, info| {
            crate::filter::count_postings(inverted, info, u64::MAX, |doc| matched.contains(doc))
        })
    }

    /// Counts nearly every record of the reader's access filter: the values' counts over the
    /// filter's records (read once, kept with its bitset) less those of its records that did
    /// not match, read from the fast field. `None` where that does not apply: no filter, more
    /// than one in [`FEW_UNMATCHED`] of its records unmatched, a match outside it, or a tag
    /// with too many values to keep.
    fn by_filter(&self) -> Option<BTreeMap<String, HashMap<String, u64>>> {
        let within = self.within.as_ref()?;
        let inverted = self.inverted.as_ref()?;
        self.column.as_ref()?;
        let all = u64::from(within.len);
        let unmatched = all.checked_sub(self.matches.len() as u64)?;
        if unmatched * u64::from(FEW_UNMATCHED) >= all {
            return None;
        }
        // The filter's records less the matches (each must be one of them).
        let mut rest = within.words.clone();
        for &doc in &self.matches {
            let word = rest.get_mut(doc as usize / 64)?;
            let bit = 1u64 << (doc % 64);
            if *word & bit == 0 {
                return None;
            }
            *word &= !bit;
        }
        let mut kept = Vec::with_capacity(self.tags.len());
        for tag in &self.tags {
            let cached = within.facets.lock().get(tag).cloned();
            let counts = match cached {
                Some(counts) => counts?,
                None => {
                    let mut counts = HashMap::new();
                    let mut values = 0usize;
                    Self::each_value(inverted, tag, |value, info| {
                        values += 1;
                        let n = within.count_postings(inverted, info, u64::MAX);
                        if n > 0 {
                            counts.insert(value.to_string(), n);
                        }
                    });
                    let counts = (values <= MAX_KEPT_VALUES).then(|| Arc::new(counts));
                    within.facets.lock().insert(tag.clone(), counts.clone());
                    counts?
                }
            };
            kept.push(counts);
        }
        let mut next = 0usize;
        let unmatched_docs = std::iter::from_fn(|| {
            while let Some(&word) = rest.get(next / 64) {
                let left = word & (u64::MAX << (next % 64));
                if left != 0 {
                    let doc = (next / 64) * 64 + left.trailing_zeros() as usize;
                    next = doc + 1;
                    return Some(doc as DocId);
                }
                next = (next / 64 + 1) * 64;
            }
            None
        });
        let missing = self.by_column(unmatched_docs);
        let none = HashMap::new();
        let mut out: BTreeMap<String, HashMap<String, u64>> = BTreeMap::new();
        for (tag, counts) in self.tags.iter().zip(kept) {
            let gone = missing.get(tag).unwrap_or(&none);
            for (value, &n) in counts.iter() {
                let n = n.saturating_sub(gone.get(value).copied().unwrap_or(0));
                if n > 0 {
                    out.entry(tag.clone()).or_default().insert(value.clone(), n);
                }
            }
        }
        Some(out)
    }

    /// Counts nearly every document's values: each value's documents (its posting list's
    /// length, deleted ones included) less the documents that did not match holding it
    /// ([`SegmentCounts::by_column`] over the gaps between the matches, which come in order;
    /// deleted documents are among the gaps, as they never match).
    fn by_complement(
        &self,
        inverted: &tantivy::InvertedIndexReader,
    ) -> BTreeMap<String, HashMap<String, u64>> {
        let mut next = 0;
        let gaps = self.matches.iter().flat_map(|&doc| {
            let from = next;
            next = doc + 1;
            from..doc
        });
        let tail = self.matches.last().map_or(0, |&d| d + 1)..self.max_doc;
        let missing = self.by_column(gaps.chain(tail));
        let none = HashMap::new();
        self.by_value(inverted, |tag, value, info| {
            let unmatched = missing.get(tag).unwrap_or(&none).get(value);
            u64::from(info.doc_freq).saturating_sub(unmatched.copied().unwrap_or(0))
        })
    }

    /// Counts each value of the wanted tags with `count(tag, value, its facet term)`, from
    /// the facet field's terms (`tag\0value`), keeping the values counted above 0.
    fn by_value(
        &self,
        inverted: &tantivy::InvertedIndexReader,
        mut count: impl FnMut(&str, &str, &tantivy::postings::TermInfo) -> u64,
    ) -> BTreeMap<String, HashMap<String, u64>> {
        let mut out: BTreeMap<String, HashMap<String, u64>> = BTreeMap::new();
        for tag in &self.tags {
            Self::each_value(inverted, tag, |value, info| {
                let n = count(tag, value, info);
                if n > 0 {
                    *out.entry(tag.clone())
                        .or_default()
                        .entry(value.to_string())
                        .or_default() += n;
                }
            });
        }
        out
    }

    /// Calls `f` with each value of `tag` and its facet term's postings, from the facet
    /// field's terms (`tag\0value`).
    fn each_value(
        inverted: &tantivy::InvertedIndexReader,
        tag: &str,
        mut f: impl FnMut(&str, &tantivy::postings::TermInfo),
    ) {
        // `tag\x01` is past every value of the tag.
        let from = format!("{tag}\u{0}");
        let to = format!("{tag}\u{1}");
        let Ok(mut stream) = inverted
            .terms()
            .range()
            .ge(from.as_bytes())
            .lt(to.as_bytes())
            .into_stream()
        else {
            return;
        };
        while stream.advance() {
            if let Ok(value) = std::str::from_utf8(&stream.key()[from.len()..]) {
                f(value, stream.value());
            }
        }
    }

    /// Counts the values of `docs` from the fast field: an array over the spans' ordinals (a
    /// map when they are too many), turned into strings once per value that occurred.
    fn by_column(
        &self,
        docs: impl Iterator<Item = DocId>,
    ) -> BTreeMap<String, HashMap<String, u64>> {
        let mut out: BTreeMap<String, HashMap<String, u64>> = BTreeMap::new();
        let Some(column) = &self.column else {
            return out;
        };
        let mut dense: Vec<u32> = if (self.width as u64) <= MAX_DENSE {
            vec![0; self.width]
        } else {
            Vec::new()
        };
        let mut sparse: HashMap<u64, u32> = HashMap::new();
        for doc in docs {
            for ord in column.term_ords(doc) {
                if let Some(span) = self.spans.iter().find(|s| ord >= s.start && ord < s.end) {
                    if dense.is_empty() {
                        *sparse.entry(ord).or_default() += 1;
                    } else {
                        dense[span.offset + (ord - span.start) as usize] += 1;
                    }
                }
            }
        }
        let mut text = String::new();
        let mut record = |ord: u64, n: u32, tag: usize| {
            if n == 0 {
                return;
            }
            text.clear();
            if column.ord_to_str(ord, &mut text).unwrap_or(false)
                && let Some((_, value)) = text.split_once(SEPARATOR)
            {
                *out.entry(self.tags[tag].clone())
                    .or_default()
                    .entry(value.to_string())
                    .or_default() += u64::from(n);
            }
        };
        for span in &self.spans {
            if dense.is_empty() {
                for (&ord, &n) in &sparse {
                    if ord >= span.start && ord < span.end {
                        record(ord, n, span.tag);
                    }
                }
            } else {
                for ord in span.start..span.end {
                    let n = dense[span.offset + (ord - span.start) as usize];
                    record(ord, n, span.tag);
                }
            }
        }
        out
    }
}
