//! A two-word phrase of the text found through the word-pair field
//! ([`crate::analysis::PairTokenizer`]): it matches the records tantivy's `PhraseQuery` of the
//! two words matches and scores them as it does (BM25 with the phrase's frequency, the words'
//! statistics and the text's length), from one term's postings instead of the two words'
//! positions.

use tantivy::{
    DocId, DocSet, Score, SegmentReader, Term,
    fieldnorm::FieldNormReader,
    postings::{Postings, SegmentPostings},
    query::{Bm25Weight, EmptyScorer, EnableScoring, Explanation, Query, Scorer, Weight},
    schema::IndexRecordOption,
};

/// Two words at consecutive positions of the text, by their pair's term.
#[derive(Clone, Debug)]
pub struct PairPhrase {
    /// The pair's term in the pairs field.
    pair: Term,
    /// The two words in the text field (their statistics score the phrase; its length is the
    /// text's).
    words: [Term; 2],
}

impl PairPhrase {
    /// The phrase `first second` of `text`, through `pairs`.
    pub fn new(
        pairs: tantivy::schema::Field,
        text: tantivy::schema::Field,
        first: &str,
        second: &str,
    ) -> PairPhrase {
        PairPhrase {
            pair: Term::from_field_text(pairs, &crate::analysis::pair(first, second)),
            words: [
                Term::from_field_text(text, first),
                Term::from_field_text(text, second),
            ],
        }
    }

    /// The pair's term.
    pub fn pair(&self) -> &Term {
        &self.pair
    }
}

impl Query for PairPhrase {
    fn weight(&self, enable_scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        let bm25 = match enable_scoring {
            EnableScoring::Enabled {
                statistics_provider,
                ..
            } => Some(Bm25Weight::for_terms(statistics_provider, &self.words)?),
            EnableScoring::Disabled { .. } => None,
        };
        Ok(Box::new(PairWeight {
            pair: self.pair.clone(),
            text: self.words[0].field(),
            bm25,
        }))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        visitor(&self.pair, false);
    }
}

struct PairWeight {
    pair: Term,
    text: tantivy::schema::Field,
    bm25: Option<Bm25Weight>,
}

impl PairWeight {
    fn pair_scorer(
        &self,
        reader: &SegmentReader,
        boost: Score,
    ) -> tantivy::Result<Option<ScoredPostings>> {
        let Some(postings) = reader
            .inverted_index(self.pair.field())?
            .read_postings(&self.pair, IndexRecordOption::WithFreqs)?
        else {
            return Ok(None);
        };
        Ok(Some(ScoredPostings::new(
            postings,
            reader.get_fieldnorms_reader(self.text)?,
            self.bm25.as_ref().map(|b| b.boost_by(boost)),
        )))
    }
}

impl Weight for PairWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        Ok(match self.pair_scorer(reader, boost)? {
            Some(s) => Box::new(s),
            None => Box::new(EmptyScorer),
        })
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let not_found = || tantivy::TantivyError::InvalidArgument(format!("no match: {doc}"));
        let mut scorer = self.pair_scorer(reader, 1.0)?.ok_or_else(not_found)?;
        if scorer.seek(doc) != doc {
            return Err(not_found());
        }
        let mut explanation = Explanation::new("Phrase of a word pair", scorer.score());
        if let Some(bm25) = &self.bm25 {
            explanation.add_detail(bm25.explain(
                scorer.fieldnorms.fieldnorm_id(doc),
                scorer.postings.term_freq(),
            ));
        }
        Ok(explanation)
    }
}

/// Postings scored with BM25 and the lengths of a field (for a pair, the text's): what
/// tantivy's term scorer computes, with its bound known (tantivy's own scorer type is private,
/// so [`crate::maxscore`] walks terms with this one too).
pub struct ScoredPostings {
    postings: SegmentPostings,
    fieldnorms: FieldNormReader,
    bm25: Option<Bm25Weight>,
}

impl ScoredPostings {
    /// `postings` scored with `bm25` and `fieldnorms` (`None`: unscored, each match 1).
    pub fn new(
        postings: SegmentPostings,
        fieldnorms: FieldNormReader,
        bm25: Option<Bm25Weight>,
    ) -> ScoredPostings {
        ScoredPostings {
            postings,
            fieldnorms,
            bm25,
        }
    }

    /// The most a match scores.
    pub fn max_score(&self) -> Score {
        self.bm25.as_ref().map_or(1.0, Bm25Weight::max_score)
    }

    /// The frequency of the postings' term in the record they are on.
    pub fn term_freq(&self) -> u32 {
        self.postings.term_freq()
    }

    /// The score of a record `doc` holding the term `term_freq` times (what [`Scorer::score`]
    /// gives on it).
    pub fn score_with(&self, doc: DocId, term_freq: u32) -> Score {
        match &self.bm25 {
            Some(bm25) => bm25.score(self.fieldnorms.fieldnorm_id(doc), term_freq),
            None => 1.0,
        }
    }
}

impl DocSet for ScoredPostings {
    fn advance(&mut self) -> DocId {
        self.postings.advance()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        self.postings.seek(target)
    }

    fn doc(&self) -> DocId {
        self.postings.doc()
    }

    fn size_hint(&self) -> u32 {
        self.postings.size_hint()
    }
}

impl Scorer for ScoredPostings {
    fn score(&mut self) -> Score {
        // Unscored: each match 1, as tantivy's phrase scorer without scoring.
        self.score_with(self.doc(), self.postings.term_freq())
    }
}
