//! Filters of a search, cheap where they are read for every search.
//!
//! A filter on one term (a workspace, a source, an object type) is free in a segment where
//! every document holds the term, as every record of an index of one workspace holds its
//! workspace's. There its scorer is tantivy's [`AllScorer`], which a boolean query drops from
//! its intersection and the passes of [`crate::matches`] and [`crate::ranked`] skip, so the
//! term's postings (a million entries for a million records) are not read for each search.
//!
//! A reader's access filter (DESIGN 7a) is kept between searches as a bitset per segment
//! ([`FilterCache`]): the terms of a user's principals are the same for every search of theirs
//! until a membership changes (then the terms, and so the key, change), and a segment's
//! postings never change (deletes are the alive bitset's, checked apart). Read for each
//! search, the terms' postings cost more than ranking a common word; cached, both passes of a
//! search AND the bitset in whole words. The cache holds at most [`FilterCache::BUDGET`]
//! bytes, the least recently used entries going first (Lucene's `LRUQueryCache` keeps filters
//! the same way).

use std::{collections::HashMap, sync::Arc};

use parking_lot::Mutex;

use tantivy::{
    COLLECT_BLOCK_BUFFER_LEN, DocId, DocSet, Score, SegmentReader, TERMINATED, TantivyError, Term,
    index::SegmentId,
    query::{
        AllScorer, ConstScorer, EmptyScorer, EnableScoring, Explanation, Occur, Query, Scorer,
        Weight,
    },
    schema::{Field, IndexRecordOption},
};

/// Matches the records holding a term, adding nothing to the score.
#[derive(Clone, Debug)]
pub struct TermFilter(pub Term);

impl TermFilter {
    /// The filter as a clause every match must meet.
    pub fn clause(term: Term) -> (Occur, Box<dyn Query>) {
        (Occur::Must, Box::new(TermFilter(term)))
    }
}

impl Query for TermFilter {
    fn weight(&self, _scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(TermFilterWeight(self.0.clone())))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        visitor(&self.0, false);
    }
}

struct TermFilterWeight(Term);

impl Weight for TermFilterWeight {
    fn scorer(&self, reader: &SegmentReader, _boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let inverted = reader.inverted_index(self.0.field())?;
        let Some(info) = inverted.get_term_info(&self.0)? else {
            return Ok(Box::new(EmptyScorer));
        };
        // Postings keep deleted documents, which `max_doc` counts too.
        if info.doc_freq >= reader.max_doc() {
            return Ok(Box::new(AllScorer::new(reader.max_doc())));
        }
        let postings = inverted.read_postings_from_terminfo(&info, IndexRecordOption::Basic)?;
        Ok(Box::new(ConstScorer::new(postings, 0.0)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut scorer = self.scorer(reader, 1.0)?;
        if scorer.seek(doc) != doc {
            return Err(TantivyError::InvalidArgument(format!(
                "document {doc} does not hold the filter's term"
            )));
        }
        Ok(Explanation::new("filter", 0.0))
    }
}

/// `filter`'s scorer in `reader`'s segment, or `None` when it matches every document there (a
/// filter that need not be read).
pub fn scorer_unless_everything(
    filter: &dyn Weight,
    reader: &SegmentReader,
) -> tantivy::Result<Option<Box<dyn Scorer>>> {
    let scorer = filter.scorer(reader, 1.0)?;
    Ok((!scorer.is::<AllScorer>()).then_some(scorer))
}

/// The documents of one segment that meet every filter, read once per segment into a bitset:
/// a record a ranked walk finds is then checked with one bit test before anything of it is
/// scored, however many records the filters leave out (a reader's access terms keep a tenth).
pub struct Allowed {
    words: Vec<u64>,
}

impl Allowed {
    /// The documents of `reader` meeting every filter of `filters`; `None` when each matches
    /// every document there (nothing to check).
    pub fn of(
        filters: &[Box<dyn Weight>],
        reader: &SegmentReader,
    ) -> tantivy::Result<Option<Self>> {
        let mut allowed: Option<Allowed> = None;
        for f in filters {
            let Some(mut scorer) = scorer_unless_everything(f.as_ref(), reader)? else {
                continue;
            };
            let words = match scorer.downcast_ref::<BitsScorer>() {
                Some(cached) => cached.bits().words.clone(),
                None => {
                    let mut words = vec![0u64; (reader.max_doc() as usize).div_ceil(64)];
                    let mut buffer = [0; COLLECT_BLOCK_BUFFER_LEN];
                    loop {
                        let n = scorer.fill_buffer(&mut buffer);
                        for &doc in &buffer[..n] {
                            words[(doc / 64) as usize] |= 1 << (doc % 64);
                        }
                        if n < COLLECT_BLOCK_BUFFER_LEN {
                            break;
                        }
                    }
                    words
                }
            };
            allowed = Some(match allowed {
                None => Allowed { words },
                Some(mut both) => {
                    for (w, other) in both.words.iter_mut().zip(&words) {
                        *w &= other;
                    }
                    both
                }
            });
        }
        Ok(allowed)
    }

    /// Whether `doc` meets every filter.
    pub fn contains(&self, doc: DocId) -> bool {
        self.words
            .get((doc / 64) as usize)
            .is_some_and(|w| w & (1 << (doc % 64)) != 0)
    }

    /// Whether no document of the segment does.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }
}

/// Documents holding each value of one tag.
pub type ValueCounts = HashMap<String, u64>;

/// A kept bitset by segment and terms, with the tick of its last use.
type Kept = HashMap<(SegmentId, Arc<[Term]>), (Arc<SegmentBits>, u64)>;

/// One segment's documents as bits, with their number.
#[derive(Debug)]
pub struct SegmentBits {
    /// Bit `d % 64` of word `d / 64` is set for document `d`.
    pub words: Vec<u64>,
    /// Documents set.
    pub len: u32,
    /// Tag values counted over these documents, by tag, kept with them
    /// ([`crate::facets`]: a search matching nearly all of them counts only the others).
    /// `None` for a tag with too many values to keep.
    pub facets: Mutex<HashMap<String, Option<Arc<ValueCounts>>>>,
}

impl SegmentBits {
    /// Whether `doc` is in the set.
    pub fn contains(&self, doc: DocId) -> bool {
        self.words
            .get(doc as usize / 64)
            .is_some_and(|w| w & (1 << (doc % 64)) != 0)
    }

    /// How many documents of `info`'s posting list in `inverted` are in the set, read until
    /// more than `cap` are found.
    pub fn count_postings(
        &self,
        inverted: &tantivy::InvertedIndexReader,
        info: &tantivy::postings::TermInfo,
        cap: u64,
    ) -> u64 {
        count_postings(inverted, info, cap, |doc| self.contains(doc))
    }
}

/// How many documents of `info`'s posting list in `inverted` meet `contains`, read until more
/// than `cap` are found: decoded a block of 128 at a time and read as a slice (a posting
/// list's cursor would be advanced document by document).
pub fn count_postings(
    inverted: &tantivy::InvertedIndexReader,
    info: &tantivy::postings::TermInfo,
    cap: u64,
    contains: impl Fn(DocId) -> bool,
) -> u64 {
    let Ok(mut block) = inverted.read_block_postings_from_terminfo(info, IndexRecordOption::Basic)
    else {
        return 0;
    };
    let mut n = 0u64;
    while n <= cap {
        let docs = block.docs();
        if docs.is_empty() {
            break;
        }
        n += docs.iter().filter(|&&doc| contains(doc)).count() as u64;
        block.advance();
    }
    n
}

/// Bitsets of access filters, by segment and the filter's terms.
#[derive(Debug)]
pub struct FilterCache {
    inner: Mutex<Entries>,
    /// Most bytes of bitsets kept.
    budget: usize,
}

impl Default for FilterCache {
    fn default() -> Self {
        FilterCache::with_budget(FilterCache::BUDGET)
    }
}

#[derive(Debug, Default)]
struct Entries {
    map: Kept,
    /// Incremented at each use: an entry's use is its tick then.
    tick: u64,
    bytes: usize,
}

impl FilterCache {
    /// Most bytes of bitsets kept by default: 256 users' filters over a million records.
    pub const BUDGET: usize = 32 << 20;

    /// A cache keeping at most `budget` bytes of bitsets.
    pub fn with_budget(budget: usize) -> FilterCache {
        FilterCache {
            inner: Mutex::default(),
            budget,
        }
    }

    /// Bytes of bitsets kept now.
    pub fn bytes(&self) -> usize {
        self.inner.lock().bytes
    }

    /// The bitset of `terms` in `reader`'s segment, from the cache or read now.
    fn bits(
        &self,
        reader: &SegmentReader,
        terms: &Arc<[Term]>,
    ) -> tantivy::Result<Arc<SegmentBits>> {
        let key = (reader.segment_id(), Arc::clone(terms));
        {
            let mut e = self.inner.lock();
            e.tick += 1;
            let tick = e.tick;
            if let Some((bits, used)) = e.map.get_mut(&key) {
                *used = tick;
                return Ok(Arc::clone(bits));
            }
        }
        let bits = Arc::new(read(reader, terms)?);
        {
            let mut e = self.inner.lock();
            let size = bits.words.len() * 8;
            while e.bytes + size > self.budget && !e.map.is_empty() {
                let oldest = e
                    .map
                    .iter()
                    .min_by_key(|(_, (_, used))| *used)
                    .map(|(k, _)| k.clone());
                if let Some(k) = oldest
                    && let Some((gone, _)) = e.map.remove(&k)
                {
                    e.bytes -= gone.words.len() * 8;
                }
            }
            if size <= self.budget {
                let tick = e.tick;
                e.bytes += size;
                if let Some((old, _)) = e.map.insert(key, (Arc::clone(&bits), tick)) {
                    e.bytes -= old.words.len() * 8;
                }
            }
        }
        Ok(bits)
    }
}

/// The documents of `reader`'s segment holding one of `terms`.
fn read(reader: &SegmentReader, terms: &[Term]) -> tantivy::Result<SegmentBits> {
    let mut words = vec![0u64; (reader.max_doc() as usize).div_ceil(64)];
    for term in terms {
        let inverted = reader.inverted_index(term.field())?;
        let Some(mut block) = inverted.read_block_postings(term, IndexRecordOption::Basic)? else {
            continue;
        };
        loop {
            let docs = block.docs();
            if docs.is_empty() {
                break;
            }
            for &doc in docs {
                if let Some(w) = words.get_mut(doc as usize / 64) {
                    *w |= 1 << (doc % 64);
                }
            }
            block.advance();
        }
    }
    let len = words.iter().map(|w| w.count_ones()).sum();
    Ok(SegmentBits {
        words,
        len,
        facets: Mutex::default(),
    })
}

/// Matches the records holding one of a reader's access terms, through [`FilterCache`];
/// adds nothing to the score.
#[derive(Clone, Debug)]
pub struct AccessFilter {
    /// The terms, sorted (the cache's key).
    terms: Arc<[Term]>,
    cache: Arc<FilterCache>,
}

impl AccessFilter {
    /// The filter of `terms` in `field`, kept in `cache`.
    pub fn new(field: Field, terms: &[String], cache: Arc<FilterCache>) -> AccessFilter {
        let mut terms: Vec<Term> = terms
            .iter()
            .map(|t| Term::from_field_text(field, t))
            .collect();
        terms.sort_unstable();
        terms.dedup();
        AccessFilter {
            terms: terms.into(),
            cache,
        }
    }
}

impl AccessFilter {
    /// The filter's documents in `reader`'s segment.
    pub fn bits_in(&self, reader: &SegmentReader) -> tantivy::Result<Arc<SegmentBits>> {
        self.cache.bits(reader, &self.terms)
    }
}

impl Query for AccessFilter {
    fn weight(&self, _scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }

    /// The terms, for estimates of how many records the filter keeps.
    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        for t in self.terms.iter() {
            visitor(t, false);
        }
    }
}

impl Weight for AccessFilter {
    fn scorer(&self, reader: &SegmentReader, _boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let bits = self.bits_in(reader)?;
        Ok(Box::new(BitsScorer::new(bits)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut scorer = self.scorer(reader, 1.0)?;
        if scorer.seek(doc) != doc {
            return Err(TantivyError::InvalidArgument(format!(
                "document {doc} is not readable by the filter's principals"
            )));
        }
        Ok(Explanation::new("access filter", 0.0))
    }
}

/// The documents of a [`SegmentBits`] in order, scoring nothing.
pub struct BitsScorer {
    bits: Arc<SegmentBits>,
    doc: DocId,
}

impl BitsScorer {
    fn new(bits: Arc<SegmentBits>) -> BitsScorer {
        let mut s = BitsScorer { bits, doc: 0 };
        s.doc = s.next_from(0);
        s
    }

    /// The set's documents.
    pub fn bits(&self) -> &SegmentBits {
        &self.bits
    }

    /// The first document at or after `from`.
    fn next_from(&self, from: DocId) -> DocId {
        next_in(&self.bits.words, from)
    }
}

/// The first document of the set `words` at or after `from`, or [`TERMINATED`].
fn next_in(words: &[u64], from: DocId) -> DocId {
    let mut i = from as usize / 64;
    let Some(&first) = words.get(i) else {
        return TERMINATED;
    };
    let mut w = first & (u64::MAX << (from % 64));
    loop {
        if w != 0 {
            return (i * 64) as DocId + w.trailing_zeros();
        }
        i += 1;
        match words.get(i) {
            Some(&next) => w = next,
            None => return TERMINATED,
        }
    }
}

impl DocSet for BitsScorer {
    fn advance(&mut self) -> DocId {
        if self.doc != TERMINATED {
            self.doc = self.next_from(self.doc + 1);
        }
        self.doc
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc != TERMINATED && target > self.doc {
            self.doc = self.next_from(target);
        }
        self.doc
    }

    fn doc(&self) -> DocId {
        self.doc
    }

    fn size_hint(&self) -> u32 {
        self.bits.len
    }
}

impl Scorer for BitsScorer {
    fn score(&mut self) -> Score {
        0.0
    }
}
