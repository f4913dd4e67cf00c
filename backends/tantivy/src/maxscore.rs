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
    /// Scored postings: their frequency in a record is kept when a walk reads them ahead, and
    /// scored only for the records that can reach the page (most clauses are terms).
    Term(Box<ScoredPostings>),
    /// Anything else, scored where it is read.
    Scored(Box<dyn Scorer>),
}

impl Docs {
    fn of(scorer: Box<dyn Scorer>) -> Docs {
        match scorer.downcast::<ScoredPostings>() {
            Ok(term) => Docs::Term(term),
            Err(other) => Docs::Scored(other),
        }
    }
}

/// One clause of the OR with the most it adds to a record's final score.
pub struct Clause {
    docs: Docs,
    /// Records that can earn a bonus the caller computes, at most `docs`' score there (and the
    /// clause's most); otherwise `docs`' score is part of the OR's.
    bonus: bool,
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
            bonus: false,
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
        match Docs::of(scorer) {
            Docs::Term(term) => Clause::term(*term, word, factor),
            other => Clause {
                doc: other.doc(),
                bonus: false,
                word,
                order: 0,
                docs: other,
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
        let docs = Docs::of(bound);
        Clause {
            doc: docs.doc(),
            bonus: true,
            word: usize::MAX,
            order: 0,
            docs,
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
        };
        self.doc
    }

    /// Moves to the first record at or after `target` (never back).
    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc < target {
            self.doc = match &mut self.docs {
                Docs::Term(t) => t.seek(target),
                Docs::Scored(s) => s.seek(target),
            };
        }
        self.doc
    }

    /// Whether the clause is part of the OR's score (not a bonus).
    fn is_scored(&self) -> bool {
        !self.bonus
    }

    /// What [`Clause::score_read`] needs of the record the clause is on, to score it after
    /// the clause has moved past: a term's frequency there, anything else's score.
    fn read(&mut self) -> u32 {
        match &mut self.docs {
            Docs::Term(t) => t.term_freq(),
            Docs::Scored(s) => s.score().to_bits(),
        }
    }

    /// [`Clause::score`] of `doc` from what [`Clause::read`] read there.
    fn score_read(&self, read: u32, doc: DocId) -> (Score, Score) {
        let score = match &self.docs {
            Docs::Term(t) => t.score_with(doc, read),
            Docs::Scored(_) => Score::from_bits(read),
        };
        self.parts(score)
    }

    /// On a record it holds: its part of the OR's score (0 for a bonus) and of the bound.
    fn score(&mut self) -> (Score, Score) {
        let score = match &mut self.docs {
            Docs::Term(t) => t.score(),
            Docs::Scored(s) => s.score(),
        };
        self.parts(score)
    }

    /// The clause's part of the OR's score and of the bound, for `score`.
    fn parts(&self, score: Score) -> (Score, Score) {
        match self.bonus {
            false => (score, score * self.factor),
            true => (0.0, above_rounding(score).min(self.max)),
        }
    }
}

impl Docs {
    fn doc(&self) -> DocId {
        match self {
            Docs::Term(t) => t.doc(),
            Docs::Scored(s) => s.doc(),
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

/// The documents one pass of [`for_each`] walks the essential clauses over: their postings
/// are read clause by clause into a window's buffers (which clauses hold each record, their
/// frequencies, the sum of their maxima) instead of comparing every essential clause with every
/// record found (Lucene's `MaxScoreBulkScorer`). A 12-word question has 48 clauses.
const WINDOW: u32 = 1024;

/// The buffers of one window of [`for_each`], by offset from the window's first document.
struct Window {
    /// Words of 64 bits per record: which essential clauses (by place in the walk's order)
    /// hold it.
    held: Vec<u64>,
    /// The words of `held` per record.
    words: usize,
    /// What each clause read in each record ([`Clause::read`]), by clause then record; valid
    /// where `held` says so.
    read: Vec<u32>,
    /// The sum of the maxima of the essential clauses holding each record.
    most: Vec<Score>,
    /// Records holding any essential clause, 64 per word.
    touched: Vec<u64>,
}

impl Window {
    fn new(clauses: usize) -> Window {
        let words = clauses.div_ceil(64).max(1);
        let size = WINDOW as usize;
        Window {
            held: vec![0; size * words],
            words,
            read: vec![0; size * clauses],
            most: vec![0.0; size],
            touched: vec![0; size / 64],
        }
    }

    /// Reads the postings of `clauses[from..]` below `start + WINDOW` into the buffers.
    fn fill(&mut self, clauses: &mut [Clause], from: usize, start: DocId) {
        let end = start.saturating_add(WINDOW);
        let size = WINDOW as usize;
        for (i, c) in clauses.iter_mut().enumerate().skip(from) {
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            while c.doc < end {
                let at = (c.doc - start) as usize;
                self.held[at * self.words + word] |= bit;
                self.most[at] += c.max;
                self.read[i * size + at] = c.read();
                self.touched[at / 64] |= 1 << (at % 64);
                c.advance();
            }
        }
    }
}

/// Calls `visit(doc, score)` in document order for every record holding a clause whose bound
/// reaches the threshold `visit` last returned ([`Score::MIN`] at first: every record), with
/// the record's OR score (the sum of its scored clauses' scores). A record whose bound is under
/// the threshold, or that `keep` refuses (looked at before anything of it is scored: a
/// filter's bitset), is skipped. `visit` may raise the threshold, never lower it.
pub fn for_each(
    mut clauses: Vec<Clause>,
    keep: impl Fn(DocId) -> bool,
    mut visit: impl FnMut(DocId, Score) -> Score,
) {
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
    let mut window = Window::new(clauses.len());
    let size = WINDOW as usize;
    let mut threshold = Score::MIN;
    // Clauses before `essential` cannot bring a record to the threshold on their own; the
    // partition is kept for a window (a threshold raised within it only prunes less).
    let mut essential = 0;
    loop {
        while essential < clauses.len() && below[essential + 1] < threshold {
            essential += 1;
        }
        let Some(start) = clauses[essential..].iter().map(Clause::doc).min() else {
            return;
        };
        if start == TERMINATED {
            return;
        }
        window.fill(&mut clauses, essential, start);
        for t in 0..window.touched.len() {
            let mut touched = std::mem::take(&mut window.touched[t]);
            while touched != 0 {
                let at = t * 64 + touched.trailing_zeros() as usize;
                touched &= touched - 1;
                let doc = start + at as DocId;
                let held = &mut window.held[at * window.words..(at + 1) * window.words];
                if !keep(doc) {
                    held.fill(0);
                    window.most[at] = 0.0;
                    continue;
                }
                // The record's bound from the maxima first (no scoring): most records of the
                // essential clauses hold only some of them.
                let at_most = below[essential] + std::mem::take(&mut window.most[at]);
                if at_most < threshold {
                    held.fill(0);
                    continue;
                }
                parts.clear();
                let mut bound = below[essential];
                for (w, bits) in held.iter_mut().enumerate() {
                    let mut bits = std::mem::take(bits);
                    while bits != 0 {
                        let i = w * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let c = &clauses[i];
                        let (s, b) = c.score_read(window.read[i * size + at], doc);
                        if c.is_scored() {
                            parts.push((c.order, c.word, s));
                        }
                        bound += b;
                    }
                }
                // The non-essential clauses, the largest first, while the record can still
                // reach.
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
            |_| true,
            |doc, score| {
                seen.push((doc, score));
                Score::MIN
            },
        );
        assert_eq!(seen, vec![(1, 1.0), (2, 0.5), (4, 2.25), (9, 0.0)]);
    }

    #[test]
    fn records_kept_out_are_never_scored_nor_visited() {
        let mut seen = Vec::new();
        for_each(
            vec![
                fixed(&[(1, 1.0), (4, 2.0), (70, 1.0)]),
                fixed(&[(2, 0.5), (4, 0.25), (70, 3.0)]),
            ],
            |doc| doc % 2 == 0,
            |doc, score| {
                seen.push((doc, score));
                Score::MIN
            },
        );
        assert_eq!(seen, vec![(2, 0.5), (4, 2.25), (70, 4.0)]);
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
        for_each(
            vec![small, doubled, bonus],
            |_| true,
            |doc, score| {
                seen.push((doc, score));
                5.0
            },
        );
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
            |_| true,
            |doc, score| {
                seen.push((doc, score));
                4.5
            },
        );
        assert_eq!(seen, vec![(0, 1.0), (5, 1.0)]);
    }

    #[test]
    fn the_page_is_the_best_records_of_all_whatever_the_windows_and_clauses() {
        // Many clauses (more than one word of the window's bitsets), records over several
        // windows, dense and sparse clauses: a top-10 page kept with the walk's pruning is the
        // top 10 of every record scored in full. Scores are multiples of 1/8, so every sum is
        // exact in any order.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for round in 0..6 {
            let records = 500 + next(5_000) as DocId;
            // Odd rounds: more clauses than one 64-bit word of the window's sets holds.
            let clauses = match round % 2 {
                0 => 1 + next(12) as usize,
                _ => 65 + next(30) as usize,
            };
            let mut lists = Vec::new();
            for _ in 0..clauses {
                let dense = next(2) == 0;
                let every = 1 + next(if dense { 3 } else { 400 });
                let mut docs: Vec<(DocId, Score)> = Vec::new();
                for d in 0..records {
                    if next(every) == 0 {
                        docs.push((d, (1 + next(16)) as Score / 8.0));
                    }
                }
                lists.push((docs, 1 + next(3) as usize));
            }
            let mut all: std::collections::BTreeMap<DocId, Vec<(usize, usize, Score)>> =
                Default::default();
            for (place, (docs, word)) in lists.iter().enumerate() {
                for &(d, s) in docs {
                    all.entry(d).or_default().push((place, *word, s));
                }
            }
            let mut expected: Vec<(DocId, Score)> = all
                .into_iter()
                .map(|(d, mut parts)| (d, canonical_sum(&mut parts)))
                .collect();
            expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            expected.truncate(10);
            let walked: Vec<Clause> = lists
                .iter()
                .map(|(docs, word)| {
                    let mut c = bounded(docs, 1.0);
                    c.word = *word;
                    c
                })
                .collect();
            let mut page: Vec<(DocId, Score)> = Vec::new();
            let mut visited = 0;
            for_each(
                walked,
                |_| true,
                |doc, score| {
                    visited += 1;
                    page.push((doc, score));
                    page.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                    page.truncate(10);
                    match page.len() {
                        10 => page[9].1,
                        _ => Score::MIN,
                    }
                },
            );
            assert_eq!(
                page, expected,
                "round {round}: {clauses} clauses, {records} records"
            );
            assert!(visited > 0);
        }
    }

    #[test]
    fn the_threshold_never_goes_down() {
        // The third record's visit returns a lower threshold than the second's: the fourth,
        // whose bound (1) is under the higher one, is still skipped.
        let mut seen = Vec::new();
        let mut thresholds = vec![1.0, 10.0, 0.0].into_iter();
        for_each(
            vec![fixed(&[(0, 20.0), (1, 20.0), (2, 20.0), (3, 1.0)])],
            |_| true,
            |doc, _| {
                seen.push(doc);
                thresholds.next().unwrap_or(0.0)
            },
        );
        assert_eq!(seen, vec![0, 1, 2]);
    }
}
