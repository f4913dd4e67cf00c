//! Every match of a `match=any` query of words, for its total and facets, as a bitset per
//! segment: each word's terms' postings are decoded block by block into it (no scores, no
//! merging of cursors), then the filters are intersected and the excluded words taken out.
//! tantivy's union of the same terms advances every term's cursor document by document through
//! a virtual call; for twelve words found in most records that was most of the query's time.

use tantivy::{
    COLLECT_BLOCK_BUFFER_LEN, DocId, DocSet, SegmentOrdinal, SegmentReader, Term,
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

    /// Adds the documents of `part`.
    fn add(&mut self, reader: &SegmentReader, part: Part) -> tantivy::Result<()> {
        match part {
            Part::Term(term) => {
                let inverted = reader.inverted_index(term.field())?;
                let Some(mut block) =
                    inverted.read_block_postings(term, IndexRecordOption::Basic)?
                else {
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
            Part::Other(weight) => self.add_docs(weight.scorer(reader, 1.0)?.as_mut()),
        }
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
        for &part in &self.parts {
            bits.add(reader, part)?;
        }
        for filter in self.filters {
            let only = Bits::of(filter.as_ref(), reader)?;
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
