//! The records of an OR that can still reach a page, by MaxScore (Turtle and Flood, 1995, as
//! Lucene's disjunctions do it): each clause has an upper bound of what it adds to a record's
//! final score. Ordered by bound, the clauses whose bounds together stay under the page's
//! threshold are *non-essential*: a record holding only those cannot reach the page, so only
//! the other clauses' postings are walked, and the non-essential ones are looked up in the
//! records found, most valuable first, until the record's bound drops under the threshold.
//!
//! Unlike tantivy's block-max WAND, which needs a pure OR of terms, the bounds here can include
//! what the page's collector adds on top of the OR's score: a multiple of it for records
//! holding every word, and a phrase bonus, whose clause is the postings of a term every
//! record earning it holds (the word pair for two short words), bounded in each record by the
//! phrase's score at that term's frequency there. Two words found in nearly every record then
//! walk the records holding their pair, not every record; two long words walk the rarer one's
//! records, most of which its single occurrence there rules out at once.

use tantivy::{DocId, DocSet, Score, TERMINATED, query::Scorer};

use crate::pair::ScoredPostings;

/// `score` raised past the float rounding of a sum it is part of, which may be added up in
/// another order than the bound: what a bound derived from one score is given.
pub fn above_rounding(score: Score) -> Score {
    score * (1.0 + 1e-4) + Score::EPSILON
}

/// What a clause reads.
enum Docs {
    /// A term of the OR: its score is part of the record's (called directly: most clauses
    /// are terms).
    Term(Box<ScoredPostings>),
    /// Another part of the OR.
    Scored(Box<dyn Scorer>),
    /// Records that can earn a bonus the caller computes, at most their scorer's score there
    /// (and the clause's most).
    Bonus(Box<dyn Scorer>),
}

/// One clause of the OR with the most it adds to a record's final score.
pub struct Clause {
    docs: Docs,
    /// The document `docs` is on (kept here: the walk compares it for every record).
    doc: DocId,
    /// The query word the clause is an alternative of (its score is summed with the word's
    /// other alternatives first, as tantivy's nested OR sums it).
    word: usize,
    /// The clause's place among the walk's clauses (the order scores are summed in).
    order: usize,
    /// The most the clause adds to the final score of a record holding it.
    max: Score,
    /// The final score's multiple of the clause's score (its bound's, for the bound).
    factor: Score,
}

impl Clause {
    /// Scored postings (a term, a word pair) whose score counts `factor` times at most in the
    /// final score, bounded by their BM25 weight.
    pub fn term(scorer: ScoredPostings, word: usize, factor: Score) -> Clause {
        Clause {
            doc: scorer.doc(),
            word,
            order: 0,
            max: scorer.max_score() * factor,
            docs: Docs::Term(Box::new(scorer)),
            factor,
        }
    }

    /// A part of the OR whose score counts `factor` times at most in the final score: bounded
    /// when it is scored postings ([`Clause::term`]), else unbounded (always walked).
    pub fn scored(scorer: Box<dyn Scorer>, word: usize, factor: Score) -> Clause {
        match scorer.downcast::<ScoredPostings>() {
            Ok(term) => Clause::term(*term, word, factor),
            Err(other) => Clause {
                doc: other.doc(),
                word,
                order: 0,
                docs: Docs::Scored(other),
                max: Score::INFINITY,
                factor,
            },
        }
    }

    /// Records that may earn a bonus of at most `max`: those of `bound`, whose score in a
    /// record bounds the bonus there. A phrase's is its weight scored with the frequency of one
    /// of its words, which the phrase's cannot exceed: most records of a frequent word hold it
    /// once, far under the bound at its highest frequency, so the walk drops them without
    /// looking at the other clauses.
    pub fn bonus(bound: Box<dyn Scorer>, max: Score) -> Clause {
        Clause {
            doc: bound.doc(),
            word: usize::MAX,
            order: 0,
            docs: Docs::Bonus(bound),
            max,
            factor: 1.0,
        }
    }

    fn doc(&self) -> DocId {
        self.doc
    }

    fn advance(&mut self) -> DocId {
        self.doc = match &mut self.docs {
            Docs::Term(t) => t.advance(),
            Docs::Scored(s) => s.advance(),
            Docs::Bonus(p) => p.advance(),
        };
        self.doc
    }

    /// Moves to the first record at or after `target` (never back).
    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc < target {
            self.doc = match &mut self.docs {
                Docs::Term(t) => t.seek(target),
                Docs::Scored(s) => s.seek(target),
                Docs::Bonus(p) => p.seek(target),
            };
        }
        self.doc
    }

    /// Whether the clause is part of the OR's score (not a bonus).
    fn is_scored(&self) -> bool {
        !matches!(self.docs, Docs::Bonus(_))
    }

    /// On a record it holds: its part of the OR's score (0 for a bonus) and of the bound.
    fn score(&mut self) -> (Score, Score) {
        match &mut self.docs {
            Docs::Term(t) => {
                let score = t.score();
                (score, score * self.factor)
            }
            Docs::Scored(s) => {
                let score = s.score();
                (score, score * self.factor)
            }
            Docs::Bonus(p) => (0.0, above_rounding(p.score()).min(self.max)),
        }
    }
}

/// The scores of a record's clauses summed as tantivy's nested OR sums them: each word's
/// alternatives in order, then the words in order. The same record gets the same bits however
/// a walk found it (its segment's other records decide which clauses are looked up first), so
/// its rank cannot depend on how the index is split into segments. `parts` holds (place,
/// word, score) and is left sorted by place.
fn canonical_sum(parts: &mut [(usize, usize, Score)]) -> Score {
    parts.sort_unstable_by_key(|p| p.0);
    let mut total: Score = 0.0;
    let mut word_sum: Score = 0.0;
    let mut word = None;
    for &(_, w, s) in parts.iter() {
        if word != Some(w) {
            if word.is_some() {
                total += word_sum;
            }
            word = Some(w);
            word_sum = 0.0;
        }
        word_sum += s;
    }
    if word.is_some() {
        total += word_sum;
    }
    total
}

/// The OR score of `doc` (the sum of the scored clauses holding it, [`canonical_sum`]), moving
/// every clause to it or past it: for documents in increasing order. The clauses are in their
/// query order.
pub fn score_at(clauses: &mut [Clause], doc: DocId) -> Score {
    let mut parts = Vec::new();
    for (i, c) in clauses.iter_mut().enumerate() {
        if c.is_scored() && c.seek(doc) == doc {
            parts.push((i, c.word, c.score().0));
        }
    }
    canonical_sum(&mut parts)
}

/// Calls `visit(doc, score)` in document order for every record holding a clause whose bound
/// reaches the threshold `visit` last returned ([`Score::MIN`] at first: every record), with
/// the record's OR score (the sum of its scored clauses' scores). A record whose bound is under
/// the threshold is skipped. `visit` may raise the threshold, never lower it.
pub fn for_each(mut clauses: Vec<Clause>, mut visit: impl FnMut(DocId, Score) -> Score) {
    for (i, c) in clauses.iter_mut().enumerate() {
        c.order = i;
    }
    clauses.retain(|c| c.doc() != TERMINATED);
    clauses.sort_by(|a, b| a.max.total_cmp(&b.max));
    let mut parts: Vec<(usize, usize, Score)> = Vec::with_capacity(clauses.len());
    // below[i]: the most the clauses before i add together.
    let mut below = Vec::with_capacity(clauses.len() + 1);
    let mut sum: Score = 0.0;
    below.push(sum);
    for c in &clauses {
        sum += c.max;
        below.push(sum);
    }
    let mut threshold = Score::MIN;
    // Clauses before `essential` cannot bring a record to the threshold on their own.
    let mut essential = 0;
    loop {
        while essential < clauses.len() && below[essential + 1] < threshold {
            essential += 1;
        }
        let Some(doc) = clauses[essential..].iter().map(Clause::doc).min() else {
            return;
        };
        if doc == TERMINATED {
            return;
        }
        // The record's bound from the maxima first (no scoring): most records of the essential
        // clauses hold only some of them.
        let mut at_most = below[essential];
        for c in &clauses[essential..] {
            if c.doc == doc {
                at_most += c.max;
            }
        }
        parts.clear();
        let mut bound = below[essential];
        if at_most >= threshold {
            for c in &mut clauses[essential..] {
                if c.doc == doc {
                    let (s, b) = c.score();
                    if c.is_scored() {
                        parts.push((c.order, c.word, s));
                    }
                    bound += b;
                }
            }
        } else {
            bound = at_most;
        }
        if bound >= threshold {
            // The non-essential clauses, the largest first, while the record can still reach.
            let mut i = essential;
            while i > 0 && bound >= threshold {
                i -= 1;
                let c = &mut clauses[i];
                bound -= c.max;
                if c.seek(doc) == doc {
                    let (s, b) = c.score();
                    if c.is_scored() {
                        parts.push((c.order, c.word, s));
                    }
                    bound += b;
                }
            }
            if bound >= threshold {
                threshold = threshold.max(visit(doc, canonical_sum(&mut parts)));
            }
        }
        for c in &mut clauses[essential..] {
            if c.doc() == doc {
                c.advance();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scorer over fixed documents and scores (not a term: unbounded unless wrapped).
    struct Fixed {
        docs: Vec<(DocId, Score)>,
        at: usize,
    }

    impl DocSet for Fixed {
        fn advance(&mut self) -> DocId {
            self.at += 1;
            self.doc()
        }
        fn doc(&self) -> DocId {
            self.docs.get(self.at).map_or(TERMINATED, |d| d.0)
        }
        fn size_hint(&self) -> u32 {
            self.docs.len() as u32
        }
    }

    impl Scorer for Fixed {
        fn score(&mut self) -> Score {
            self.docs[self.at].1
        }
    }

    fn fixed(docs: &[(DocId, Score)]) -> Clause {
        Clause::scored(
            Box::new(Fixed {
                docs: docs.to_vec(),
                at: 0,
            }),
            0,
            1.0,
        )
    }

    /// Records of a bonus whose bound in each is the clause's most.
    fn docs(docs: &[DocId]) -> Box<dyn Scorer> {
        Box::new(Fixed {
            docs: docs.iter().map(|&d| (d, Score::MAX)).collect(),
            at: 0,
        })
    }

    fn bounded(docs: &[(DocId, Score)], factor: Score) -> Clause {
        let mut c = fixed(docs);
        c.factor = factor;
        c.max = docs.iter().map(|d| d.1).fold(0.0, Score::max) * factor;
        c
    }

    #[test]
    fn every_record_is_visited_with_its_sum_while_nothing_prunes() {
        let mut seen = Vec::new();
        for_each(
            vec![
                fixed(&[(1, 1.0), (4, 2.0)]),
                fixed(&[(2, 0.5), (4, 0.25)]),
                Clause::bonus(docs(&[2, 9]), 3.0),
            ],
            |doc, score| {
                seen.push((doc, score));
                Score::MIN
            },
        );
        assert_eq!(seen, vec![(1, 1.0), (2, 0.5), (4, 2.25), (9, 0.0)]);
    }

    #[test]
    fn records_whose_bound_is_under_the_threshold_are_skipped_and_the_rest_scored_fully() {
        // Threshold 5 after the first record: a record with only the small clause (bound 1)
        // cannot reach it; one with the bonus (bound 1 + 2 x 2 + 4) can, and is scored with
        // every clause it holds.
        let small = bounded(&[(0, 1.0), (3, 1.0), (5, 0.5), (7, 1.0)], 1.0);
        let doubled = bounded(&[(0, 2.0), (5, 2.0), (6, 1.0)], 2.0);
        let bonus = Clause::bonus(docs(&[5, 7]), 4.0);
        let mut seen = Vec::new();
        for_each(vec![small, doubled, bonus], |doc, score| {
            seen.push((doc, score));
            5.0
        });
        // 0: first record. 3: bound 1 < 5, skipped. 5: 0.5 + 2 (bound 0.5 + 4 + 4). 6: bound
        // 2 + 1 < 5 without the bonus, skipped. 7: bound 1 + 4 = 5, visited.
        assert_eq!(seen, vec![(0, 3.0), (5, 2.5), (7, 1.0)]);
    }

    #[test]
    fn a_bonus_is_bounded_in_each_record_by_its_score_there() {
        // Threshold 4.5 after the first record. The bonus adds 4 at most, but in record 3 at
        // most 1: with the term's 1 that is under the threshold, so 3 is skipped, where the
        // bonus's most alone (1 + 4) would have had it scored.
        let term = bounded(&[(0, 1.0), (3, 1.0), (5, 1.0)], 1.0);
        let bound = Fixed {
            docs: vec![(0, 4.0), (3, 1.0), (5, 4.0)],
            at: 0,
        };
        let mut seen = Vec::new();
        for_each(
            vec![term, Clause::bonus(Box::new(bound), 4.0)],
            |doc, score| {
                seen.push((doc, score));
                4.5
            },
        );
        assert_eq!(seen, vec![(0, 1.0), (5, 1.0)]);
    }

    #[test]
    fn the_threshold_never_goes_down() {
        // The third record's visit returns a lower threshold than the second's: the fourth,
        // whose bound (1) is under the higher one, is still skipped.
        let mut seen = Vec::new();
        let mut thresholds = vec![1.0, 10.0, 0.0].into_iter();
        for_each(
            vec![fixed(&[(0, 20.0), (1, 20.0), (2, 20.0), (3, 1.0)])],
            |doc, _| {
                seen.push(doc);
                thresholds.next().unwrap_or(0.0)
            },
        );
        assert_eq!(seen, vec![0, 1, 2]);
    }
}
