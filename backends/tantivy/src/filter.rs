//! A filter on one term (a workspace, a source, an object type) that is free in a segment where
//! every document holds the term, as every record of an index of one workspace holds its
//! workspace's. There its scorer is tantivy's [`AllScorer`], which a boolean query drops from
//! its intersection and the passes of [`crate::matches`] and [`crate::ranked`] skip, so the
//! term's postings (a million entries for a million records) are not read for each search.

use tantivy::{
    DocId, DocSet, Score, SegmentReader, TantivyError, Term,
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
