//! A filter on one term (a workspace, a source, an object type) that is free in a segment where
//! every document holds the term, as every record of an index of one workspace holds its
//! workspace's. There its scorer is tantivy's [`AllScorer`], which a boolean query drops from
//! its intersection and the passes of [`crate::matches`] and [`crate::ranked`] skip, so the
//! term's postings (a million entries for a million records) are not read for each search.

use tantivy::{
    COLLECT_BLOCK_BUFFER_LEN, DocId, DocSet, Score, SegmentReader, TantivyError, Term,
    query::{
        AllScorer, ConstScorer, EmptyScorer, EnableScoring, Explanation, Occur, Query, Scorer,
        Weight,
    },
    schema::IndexRecordOption,
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
