//! Every match of a `match=any` query of words, for its total and facets, as a bitset per
//! segment: each word's terms' postings are decoded block by block into it (no scores, no
//! merging of cursors), then the filters are intersected and the excluded words taken out.
//! tantivy's union of the same terms advances every term's cursor document by document through
//! a virtual call; for twelve words found in most records that was most of the query's time.

use tantivy::{
    COLLECT_BLOCK_BUFFER_LEN, DocId, DocSet, InvertedIndexReader, SegmentOrdinal, SegmentReader,
    Term,
    collector::{Collector, SegmentCollector},
    query::Weight,
    schema::IndexRecordOption,
};

/// What a record must hold one of: a term (read from its postings in blocks), or anything else
/// (read through its scorer).
#[derive(Clone, Copy)]
pub enum Part<'a> {
    /// One term.
    Term(&'a Term),
    /// Any query's weight.
    Other(&'a dyn Weight),
}

/// Feeds `inner` every record that holds one of `parts`, matches every one of `filters` and
/// none of `excluded`, and is not deleted.
pub struct EveryMatch<'a, C> {
    /// What the matches are given to (a count, facets).
    pub inner: &'a C,
    /// A record matches when it holds one of these.
    pub parts: Vec<Part<'a>>,
    /// ...and every one of these, unscored.
    pub filters: &'a [Box<dyn Weight>],
    /// ...and none of these, unscored.
    pub excluded: &'a [Box<dyn Weight>],
}

/// How many postings read in full cost about one lookup of a missing document: a lookup
/// decodes the block of 128 postings it lands in, a full read inserts every posting.
const LOOKUP_COST: u64 = 32;

/// A set of a segment's documents.
struct Bits(Vec<u64>);

impl Bits {
    fn new(max_doc: DocId) -> Bits {
        Bits(vec![0; (max_doc as usize).div_ceil(64)])
    }

    fn insert(&mut self, doc: DocId) {
        if let Some(word) = self.0.get_mut(doc as usize / 64) {
            *word |= 1 << (doc % 64);
        }
    }

    /// Every document of a segment of `max_doc`.
    fn fill(&mut self, max_doc: DocId) {
        self.0.fill(u64::MAX);
        let tail = max_doc % 64;
        if let (Some(last), true) = (self.0.last_mut(), tail != 0) {
            *last = (1 << tail) - 1;
        }
    }

    /// Documents in the set.
    fn len(&self) -> u64 {
        self.0.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Adds the documents of `term`, whose posting list is `inverted`'s.
    fn add_term(&mut self, inverted: &InvertedIndexReader, term: &Term) -> tantivy::Result<()> {
        let Some(mut block) = inverted.read_block_postings(term, IndexRecordOption::Basic)? else {
            return Ok(());
        };
        loop {
            let docs = block.docs();
            if docs.is_empty() {
                return Ok(());
            }
            for &doc in docs {
                self.insert(doc);
            }
            block.advance();
        }
    }

    /// The documents of a segment of `max_doc` not in the set, in order.
    fn missing(&self, max_doc: DocId) -> Vec<DocId> {
        let mut out = Vec::new();
        for (i, &word) in self.0.iter().enumerate() {
            let mut rest = !word;
            while rest != 0 {
                let doc = (i * 64) as DocId + rest.trailing_zeros();
                if doc >= max_doc {
                    return out;
                }
                out.push(doc);
                rest &= rest - 1;
            }
        }
        out
    }

    /// Adds the documents of `parts`: the terms with the most documents first, stopping when
    /// the set holds the whole segment (a word found in nearly every record fills it, and the
    /// other words' postings need not be read). Once the documents still missing are few
    /// against a term's postings, the term is looked up in those only (its skip list passes
    /// over the blocks holding none of them) instead of being read in full: the frequent words
    /// of a long question leave a few records in a hundred missing.
    fn add_parts(&mut self, reader: &SegmentReader, parts: &[Part]) -> tantivy::Result<()> {
        let max_doc = reader.max_doc();
        let mut terms = Vec::new();
        for &part in parts {
            match part {
                Part::Term(term) => {
                    let inverted = reader.inverted_index(term.field())?;
                    let docs = match inverted.get_term_info(term)? {
                        Some(info) => info.doc_freq,
                        None => continue,
                    };
                    terms.push((docs, inverted, term));
                }
                Part::Other(weight) => self.add_docs(weight.scorer(reader, 1.0)?.as_mut())?,
            }
        }
        terms.sort_by_key(|(docs, ..)| std::cmp::Reverse(*docs));
        let mut added = 0u64;
        // The documents not in the set, once they are few enough to be looked up.
        let mut missing: Option<Vec<DocId>> = None;
        for (docs, inverted, term) in terms {
            if docs >= max_doc {
                self.fill(max_doc);
                return Ok(());
            }
            // Counting costs a pass over the set: only once the postings read could cover
            // much of it.
            if missing.is_none() && added.saturating_mul(2) >= u64::from(max_doc) {
                let left = u64::from(max_doc) - self.len();
                if left == 0 {
                    return Ok(());
                }
                if left * LOOKUP_COST < u64::from(docs) {
                    missing = Some(self.missing(max_doc));
                }
            }
            match &mut missing {
                Some(missing) => {
                    if let Some(mut postings) =
                        inverted.read_postings(term, IndexRecordOption::Basic)?
                    {
                        missing.retain(|&doc| {
                            if postings.doc() > doc || postings.seek(doc) != doc {
                                return true;
                            }
                            self.insert(doc);
                            false
                        });
                    }
                    if missing.is_empty() {
                        return Ok(());
                    }
                }
                None => {
                    self.add_term(&inverted, term)?;
                    added += u64::from(docs);
                }
            }
        }
        Ok(())
    }

    /// Adds the documents of `docs`.
    fn add_docs(&mut self, docs: &mut dyn DocSet) -> tantivy::Result<()> {
        let mut buffer = [0; COLLECT_BLOCK_BUFFER_LEN];
        loop {
            let filled = docs.fill_buffer(&mut buffer);
            for &doc in &buffer[..filled] {
                self.insert(doc);
            }
            if filled < buffer.len() {
                return Ok(());
            }
        }
    }

    /// The documents of `weight`.
    fn of(weight: &dyn Weight, reader: &SegmentReader) -> tantivy::Result<Bits> {
        let mut bits = Bits::new(reader.max_doc());
        bits.add_docs(weight.scorer(reader, 1.0)?.as_mut())?;
        Ok(bits)
    }

    /// Calls `f` with the documents in order, a block at a time.
    fn for_each_block(&self, mut f: impl FnMut(&[DocId])) {
        let mut buffer = [0; COLLECT_BLOCK_BUFFER_LEN];
        let mut filled = 0;
        for (i, &word) in self.0.iter().enumerate() {
            let mut rest = word;
            while rest != 0 {
                buffer[filled] = (i * 64) as DocId + rest.trailing_zeros();
                rest &= rest - 1;
                filled += 1;
                if filled == buffer.len() {
                    f(&buffer);
                    filled = 0;
                }
            }
        }
        if filled > 0 {
            f(&buffer[..filled]);
        }
    }
}

impl<C: Collector> Collector for EveryMatch<'_, C> {
    type Fruit = C::Fruit;
    type Child = C::Child;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<C::Child> {
        self.inner.for_segment(segment, reader)
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(
        &self,
        fruits: Vec<<C::Child as SegmentCollector>::Fruit>,
    ) -> tantivy::Result<C::Fruit> {
        self.inner.merge_fruits(fruits)
    }

    fn collect_segment(
        &self,
        _weight: &dyn Weight,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<<C::Child as SegmentCollector>::Fruit> {
        let mut bits = Bits::new(reader.max_doc());
        bits.add_parts(reader, &self.parts)?;
        for filter in self.filters {
            let Some(mut scorer) =
                crate::filter::scorer_unless_everything(filter.as_ref(), reader)?
            else {
                continue;
            };
            // A cached access filter is ANDed as it is kept.
            if let Some(cached) = scorer.downcast_ref::<crate::filter::BitsScorer>() {
                for (word, keep) in bits.0.iter_mut().zip(&cached.bits().words) {
                    *word &= keep;
                }
                continue;
            }
            let mut only = Bits::new(reader.max_doc());
            only.add_docs(scorer.as_mut())?;
            for (word, keep) in bits.0.iter_mut().zip(&only.0) {
                *word &= keep;
            }
        }
        for excluded in self.excluded {
            let not = Bits::of(excluded.as_ref(), reader)?;
            for (word, drop) in bits.0.iter_mut().zip(&not.0) {
                *word &= !drop;
            }
        }
        let alive = reader.alive_bitset();
        let mut child = self.inner.for_segment(segment, reader)?;
        let mut kept = Vec::with_capacity(COLLECT_BLOCK_BUFFER_LEN);
        bits.for_each_block(|docs| match alive {
            None => child.collect_block(docs),
            Some(alive) => {
                kept.clear();
                kept.extend(docs.iter().filter(|&&d| alive.is_alive(d)));
                child.collect_block(&kept);
            }
        });
        Ok(child.harvest())
    }
}
