//! The best records of a ranked query: a top-k collector that orders by score (rounded, see
//! [`rounded`]) then record id, and adds the bonuses of [`query::Built`] (every word held; the
//! whole query as a phrase) only where they can change the page.
//!
//! As clauses of the query the bonuses were computed for every match: the words' postings read
//! a second time for the all-words intersection, and positions (which cost more than anything
//! else a query reads) for every record holding every word — nearly every record, for two
//! frequent words. Here a match's bonuses are looked at only when its score plus the most they
//! could add (the all-words bonus is a multiple of the score; a phrase's BM25 is below its
//! weight) could still enter the page's heap, which fills with the best matches early. Every
//! record that can reach the page is scored as the nested query scored it, so the page is the
//! same for less work.
//!
//! With `match=any` the records are found through a plain OR of the words' terms, walked by
//! [`crate::maxscore`] with bounds that include what this collector adds (the all-words
//! multiple, the phrases): only the postings that can lift a record onto the page are walked,
//! the others looked up in the records found. One word is left to tantivy, which skips whole
//! blocks of postings whose best score cannot reach the page (block-max WAND) given the
//! threshold this collector keeps returning. The filters (workspace, source, tags, a reader's
//! access terms) are read once per segment into a bitset ([`crate::filter::Allowed`]) that
//! the walk tests before it scores a record, so a filter keeping a tenth of the records costs
//! a bit test per record walked, not a lookup; exclusions are checked on the few records that
//! get through. Totals and facets are counted in a separate pass that reads every match
//! without scoring it.
//!
//! [`query::Built`]: crate::query::Built

use std::{
    cmp::Reverse,
    collections::BinaryHeap,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
};

use tantivy::{
    DocAddress, DocId, DocSet, Score, SeekDangerResult, SegmentOrdinal, SegmentReader, TERMINATED,
    collector::{Collector, SegmentCollector},
    fieldnorm::FieldNormReader,
    postings::{Postings, SegmentPostings},
    query::{Bm25Weight, BoostQuery, EnableScoring, Query, Scorer, Weight},
    schema::IndexRecordOption,
};

use crate::{
    SCORE_BITS_DROPPED,
    matches::{EveryMatch, Part},
    maxscore::{Clause, above_rounding},
    pair::ScoredPostings,
    query::{ALL_WORDS_BOOST, PhraseBonus},
    rounded,
};

/// Records holding every word are visited first when one word is in at most one record in
/// this many.
const RARE_WORD: u64 = 4;

/// A filter keeping fewer records than the broadest word's over this many is intersected with
/// the words rather than checked on the pruned walk's records. The walk checks a filter with
/// one bit test before scoring a record, so it pays for the word's postings only; intersecting
/// pays for scoring every record the filter keeps, cheaper only for a much narrower filter.
const INTERSECT_BELOW: u64 = 20;

/// A result's place: rounded score, then record id (both higher first).
pub type Key = (i64, u64);

/// A heap entry: equal keys (only where record ids collide) keep the lower document, as
/// tantivy's collector does.
type Entry = (Key, Reverse<DocId>);

/// One phrase whose match adds to the score: its weight and the most it can add.
pub struct Bonus {
    /// The phrase's weight, where positions are read; `None` for a two-word phrase whose pair
    /// is indexed (its one bound term's frequency is the phrase's, the bound its score).
    weight: Option<Box<dyn Weight>>,
    max: Score,
    /// Terms whose frequencies in a record bound the phrase's ([`PhraseBonus::bound_terms`]).
    terms: Vec<tantivy::Term>,
    /// The phrase's field (whose lengths score it).
    field: tantivy::schema::Field,
    bm25: Bm25Weight,
}

impl Bonus {
    /// The bonus of `b` with the searcher's statistics (those the query is scored with).
    pub fn new(b: &PhraseBonus, searcher: &tantivy::Searcher) -> tantivy::Result<Bonus> {
        let (phrase, boost) = (&b.phrase, b.boost);
        let words: Vec<tantivy::Term> = phrase.phrase_terms();
        let field = phrase.field();
        let bm25 = Bm25Weight::for_terms(searcher, &words)?.boost_by(boost);
        // BM25's term-frequency factor is below one: the weight bounds every score. The margin
        // covers the float rounding of the score's sum.
        let max = above_rounding(bm25.max_score());
        let (terms, exact) = b.bound_terms();
        // tantivy's boost passes down to the phrase's scorer, so its scores are the boosted ones.
        let weight = match exact {
            true => None,
            false => Some(
                BoostQuery::new(Box::new(phrase.clone()), boost)
                    .weight(EnableScoring::enabled_from_searcher(searcher))?,
            ),
        };
        Ok(Bonus {
            weight,
            max,
            terms,
            field,
            bm25,
        })
    }
}

/// The best `limit` matches, skipping the first `offset`, each with its bonuses.
///
/// With `match=any` the collector walks the words' OR itself ([`crate::maxscore`]; one word:
/// the OR [`query::Built::any_word`] it is searched with, pruned by tantivy), and checks
/// filters and exclusions on the records that can reach the page. Totals and facets come from
/// a separate pass ([`Ranked::every_match`], else [`query::Built::query`] and the filters),
/// without scores.
///
/// [`query::Built::any_word`]: crate::query::Built::any_word
/// [`query::Built::query`]: crate::query::Built::query
pub struct Ranked {
    limit: usize,
    offset: usize,
    /// Filters and exclusions to check on candidates, when the query searched with is the
    /// words' OR and prunes; `None`: it is the whole query (`match=all`, or a quoted phrase
    /// among the words, which rules out block-max WAND), every match is collected.
    checks: Option<Checks>,
    /// The records holding every word are visited first, when one word is rare enough that
    /// this is cheap (those of the rarest word, [`Ranked::all_words`]' first): the page then
    /// knows its best complete matches before the OR is pruned.
    every_word: bool,
    /// Records of the words' most frequent term, in every workspace.
    broadest: u64,
    /// Each word's alternatives, when a record holding every word scores [`ALL_WORDS_BOOST`]
    /// times its score more (empty: no such bonus); the rarest word first.
    all_words: Vec<Vec<Box<dyn Weight>>>,
    /// Phrases whose match adds to the score (title first: its postings are short).
    bonuses: Vec<Bonus>,
    /// The words' alternatives, scored, each with its word's place in the query: the OR's
    /// clauses, and what every match holds one of.
    scored: Vec<(usize, Alternative)>,
    /// The highest floor of any segment's full heap ([`SharedFloor`]).
    floor: SharedFloor,
}

/// The highest rounded score at the floor of a full segment heap, shared by the segments of one
/// search (searched in parallel, and one after the other): a segment holding `limit + offset`
/// records at or above it proves that a record of another segment scoring under it cannot reach
/// the page, so every segment prunes with the best floor found so far (Lucene's
/// `MaxScoreAccumulator`), not only with its own. Which records reach the page does not change:
/// a record at the floor's score is still visited, its record id may rank it above.
#[derive(Clone)]
struct SharedFloor(Arc<AtomicI64>);

impl SharedFloor {
    /// No floor yet.
    const NONE: i64 = -1;

    fn new() -> SharedFloor {
        SharedFloor(Arc::new(AtomicI64::new(Self::NONE)))
    }

    fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }

    fn raise(&self, floor: i64) {
        self.0.fetch_max(floor, Ordering::Relaxed);
    }
}

/// One alternative of a word, as the OR's clause.
enum Alternative {
    /// A term, scored as tantivy's term query scores it (bounded by its weight).
    Term(tantivy::Term, Bm25Weight),
    /// Anything else.
    Other(Box<dyn Weight>),
}

/// What a candidate must and must not match.
struct Checks {
    filters: Vec<Box<dyn Weight>>,
    excluded: Vec<Box<dyn Weight>>,
}

impl Ranked {
    /// The collector of a built query's page, with the searcher's statistics. `filters` are
    /// the caller's (workspace, source, tags, dates).
    pub fn new(
        limit: usize,
        offset: usize,
        built: &crate::query::Built,
        filters: &[Box<dyn Query>],
        searcher: &tantivy::Searcher,
    ) -> tantivy::Result<Ranked> {
        let unscored = |q: &dyn Query| -> tantivy::Result<Box<dyn Weight>> {
            q.weight(EnableScoring::disabled_from_searcher(searcher))
        };
        let mut all_words = built
            .all_words()
            .iter()
            .map(|word| {
                word.iter()
                    .map(|q| unscored(q.as_ref()))
                    .collect::<tantivy::Result<Vec<_>>>()
            })
            .collect::<tantivy::Result<Vec<_>>>()?;
        let bonuses = built
            .phrase_bonus
            .iter()
            .map(|b| Bonus::new(b, searcher))
            .collect::<tantivy::Result<Vec<_>>>()?;
        // Block-max WAND needs an OR of terms: a phrase among the words reads positions.
        let mut positions = false;
        for q in built.words.iter().flatten() {
            q.query_terms(&mut |_, needs_positions| positions |= needs_positions);
        }
        let prunes = !built.match_all && !positions;
        // The least frequent word: an upper bound of its records (the sum over its forms).
        // The most frequent term: a lower bound of the OR's records, filters aside.
        let (mut rarest, mut broadest) = (u64::MAX, 0u64);
        let mut records_of = Vec::with_capacity(built.words.len());
        for word in &built.words {
            let mut records = 0u64;
            for q in word {
                let mut terms = Vec::new();
                q.query_terms(&mut |t, _| terms.push(t.clone()));
                for t in &terms {
                    let n = searcher.doc_freq(t)?;
                    records = records.saturating_add(n);
                    broadest = broadest.max(n);
                }
            }
            rarest = rarest.min(records);
            records_of.push(records);
        }
        // Rarest first: a record missing a word is then known by its first words.
        if all_words.len() == records_of.len() {
            let mut by_rarity: Vec<(u64, Vec<Box<dyn Weight>>)> =
                records_of.into_iter().zip(all_words).collect();
            by_rarity.sort_by_key(|(records, _)| *records);
            all_words = by_rarity.into_iter().map(|(_, word)| word).collect();
        }
        if built.all_words().is_empty() {
            rarest = u64::MAX;
        }
        // A filter keeping a small share of the records holding a word (a rare tag, another
        // workspace's records; [`INTERSECT_BELOW`]) is better intersected than checked on the
        // OR's candidates; one whose records are not known from its terms (dates) is taken to
        // be such.
        let mut narrow = false;
        for f in filters {
            let mut terms = Vec::new();
            f.query_terms(&mut |t, _| terms.push(t.clone()));
            let mut records = 0u64;
            for t in &terms {
                records = records.saturating_add(searcher.doc_freq(t)?);
            }
            narrow |= terms.is_empty() || records.saturating_mul(INTERSECT_BELOW) < broadest;
        }
        let prunes = prunes && !narrow;
        let every_word = !all_words.is_empty()
            && prunes
            && rarest.saturating_mul(RARE_WORD) <= searcher.num_docs();
        let checks = if !prunes {
            None
        } else {
            Some(Checks {
                filters: filters
                    .iter()
                    .map(|q| unscored(q.as_ref()))
                    .collect::<tantivy::Result<_>>()?,
                excluded: built
                    .excluded
                    .iter()
                    .map(|q| unscored(q.as_ref()))
                    .collect::<tantivy::Result<_>>()?,
            })
        };
        let scored = built
            .words
            .iter()
            .enumerate()
            .flat_map(|(word, qs)| qs.iter().map(move |q| (word, q)))
            .zip(built.terms.iter().flatten())
            .map(|((word, q), term)| {
                Ok((
                    word,
                    match term {
                        Some((t, boost)) => Alternative::Term(
                            t.clone(),
                            Bm25Weight::for_terms(searcher, std::slice::from_ref(t))?
                                .boost_by(*boost),
                        ),
                        None => Alternative::Other(
                            q.weight(EnableScoring::enabled_from_searcher(searcher))?,
                        ),
                    },
                ))
            })
            .collect::<tantivy::Result<_>>()?;
        Ok(Ranked {
            limit,
            offset,
            checks,
            every_word,
            broadest,
            all_words,
            bonuses,
            scored,
            floor: SharedFloor::new(),
        })
    }
}

impl Ranked {
    /// Whether the page may be found through the words' OR
    /// ([`crate::query::Built::any_word`]), pruned, with totals and facets counted in a pass of
    /// their own ([`Ranked::worth_pruning`] then decides); otherwise the collector is given the
    /// whole query and every match, with the other collectors.
    pub fn prunes(&self) -> bool {
        self.checks.is_some()
    }

    /// Whether the page is found by [`crate::maxscore`] rather than tantivy's block-max WAND:
    /// when the collector adds bonuses (two words or more). WAND's bounds know nothing of them,
    /// so it is given the threshold less the most they add, which prunes little; for one word
    /// its bounds per block of postings beat MaxScore's per term (measured at 1M records).
    fn maxscore(&self) -> bool {
        !self.all_words.is_empty() || !self.bonuses.is_empty()
    }

    /// Probes of each of `words`' alternatives in a segment (those it holds).
    fn word_probes(
        &self,
        words: &[Vec<Box<dyn Weight>>],
        reader: &SegmentReader,
    ) -> tantivy::Result<Vec<Vec<Probe>>> {
        let mut out = Vec::with_capacity(words.len());
        for word in words {
            let mut probes = Vec::with_capacity(word.len());
            for w in word {
                probes.extend(Probe::new(w.scorer(reader, 1.0)?));
            }
            out.push(probes);
        }
        Ok(out)
    }

    /// The OR's clauses in a segment, each bounded by `factor` times its score.
    fn clauses(&self, reader: &SegmentReader, factor: Score) -> tantivy::Result<Vec<Clause>> {
        let mut clauses = Vec::with_capacity(self.scored.len());
        for (word, alternative) in &self.scored {
            clauses.push(match alternative {
                Alternative::Term(term, bm25) => {
                    let inverted = reader.inverted_index(term.field())?;
                    let Some(postings) =
                        inverted.read_postings(term, IndexRecordOption::WithFreqs)?
                    else {
                        continue;
                    };
                    let fieldnorms = reader.get_fieldnorms_reader(term.field())?;
                    let scorer = ScoredPostings::new(postings, fieldnorms, Some(bm25.clone()));
                    Clause::term(scorer, *word, factor)
                }
                Alternative::Other(weight) => {
                    Clause::scored(weight.scorer(reader, 1.0)?, *word, factor)
                }
            });
        }
        Ok(clauses)
    }

    /// Every match of the query, given to `inner` (a count, facets): the records holding a
    /// word's alternative that pass the filters and hold no excluded word, read as a bitset
    /// ([`crate::matches`]); `None` unless the page [`Ranked::prunes`].
    pub fn every_match<'a, C>(&'a self, inner: &'a C) -> Option<EveryMatch<'a, C>> {
        let checks = self.checks.as_ref()?;
        Some(EveryMatch {
            inner,
            parts: self
                .scored
                .iter()
                .map(|(_, alternative)| match alternative {
                    Alternative::Term(term, _) => Part::Term(term),
                    Alternative::Other(weight) => Part::Other(weight.as_ref()),
                })
                .collect(),
            filters: &checks.filters,
            excluded: &checks.excluded,
        })
    }

    /// Whether pruning the OR beats ranking the `total` matches of the whole query: not when
    /// the filters (another workspace, a tag, dates) keep a small share of the records holding
    /// a word ([`INTERSECT_BELOW`]), which the OR would visit only to drop them. When not, the collector is set to be
    /// given the whole query.
    pub fn worth_pruning(&mut self, total: usize) -> bool {
        if (total as u64).saturating_mul(INTERSECT_BELOW) >= self.broadest {
            return true;
        }
        self.checks = None;
        self.every_word = false;
        false
    }
}

/// A scorer looked at for some documents only, in order, and how far it is known not to match.
struct Probe {
    scorer: Box<dyn Scorer>,
    /// No match below this document.
    next: DocId,
}

impl Probe {
    /// `None` when nothing in the segment matches (a scorer starts on its first match).
    fn new(scorer: Box<dyn Scorer>) -> Option<Probe> {
        let next = scorer.doc();
        (next != TERMINATED).then_some(Probe { scorer, next })
    }

    /// Whether `doc` matches (then the scorer is on it).
    fn at(&mut self, doc: DocId) -> bool {
        if doc < self.next {
            return false;
        }
        match self.scorer.seek_danger(doc) {
            SeekDangerResult::Found => {
                self.next = doc + 1;
                true
            }
            SeekDangerResult::SeekLowerBound(next) => {
                self.next = next;
                false
            }
        }
    }
}

/// One segment's phrase bonus.
struct SegmentBonus {
    /// The phrase's scorer, where positions are read; `None`: the bound is the phrase's score.
    probe: Option<Probe>,
    max: Score,
    /// Postings of the terms that bound the phrase ([`Bonus`]), with frequencies.
    words: Vec<SegmentPostings>,
    fieldnorms: FieldNormReader,
    bm25: Bm25Weight,
}

impl SegmentBonus {
    /// The records that may earn the bonus (those of its rarest bound term), as a clause of
    /// the OR bounded in each record by the phrase's score at that term's frequency there.
    fn clause(&self) -> Option<Clause> {
        let rarest = self.words.iter().min_by_key(|p| p.doc_freq())?;
        let scored = ScoredPostings::new(
            rarest.clone(),
            self.fieldnorms.clone(),
            Some(self.bm25.clone()),
        );
        Some(Clause::bonus(Box::new(scored), self.max))
    }

    /// The most the phrase can score in `doc`: BM25 of its rarest word's (or pair's) frequency
    /// there (0 when one is missing), without reading positions; without a probe, its score.
    fn bound(&mut self, doc: DocId) -> Score {
        let mut least = u32::MAX;
        for w in &mut self.words {
            if w.doc() > doc || w.seek(doc) != doc {
                return 0.0;
            }
            least = least.min(w.term_freq());
        }
        let score = self.bm25.score(self.fieldnorms.fieldnorm_id(doc), least);
        if self.probe.is_none() {
            score
        } else {
            above_rounding(score)
        }
    }
}

/// One segment's heap.
pub struct SegmentRanked {
    segment: SegmentOrdinal,
    capacity: usize,
    heap: BinaryHeap<Reverse<Entry>>,
    ids: Option<std::sync::Arc<dyn tantivy::columnar::ColumnValues<u64>>>,
    /// Each word's alternatives (empty: no all-words bonus in the query).
    words: Vec<Vec<Probe>>,
    /// The query has the all-words bonus, and every word occurs in the segment.
    all_possible: bool,
    bonuses: Vec<SegmentBonus>,
    /// The most all bonuses together can add.
    bonus_max: Score,
    /// The best floor of the search's segments.
    shared: SharedFloor,
}

impl Collector for Ranked {
    type Fruit = Vec<(Key, DocAddress)>;
    type Child = SegmentRanked;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentRanked> {
        let mut bonuses = Vec::new();
        for b in &self.bonuses {
            // A phrase scorer starts by looking for its first match, reading positions: not
            // when the pair tells all. A phrase the segment never holds adds nothing.
            let probe = match &b.weight {
                None => None,
                Some(weight) => match Probe::new(weight.scorer(reader, 1.0)?) {
                    None => continue,
                    found => found,
                },
            };
            let mut words = Vec::with_capacity(b.terms.len());
            for t in &b.terms {
                let inverted = reader.inverted_index(t.field())?;
                words.extend(inverted.read_postings(t, IndexRecordOption::WithFreqs)?);
            }
            if words.len() == b.terms.len() {
                bonuses.push(SegmentBonus {
                    probe,
                    max: b.max,
                    words,
                    fieldnorms: reader.get_fieldnorms_reader(b.field)?,
                    bm25: b.bm25.clone(),
                });
            }
        }
        let words = self.word_probes(&self.all_words, reader)?;
        let all_possible = !words.is_empty() && words.iter().all(|w| !w.is_empty());
        Ok(SegmentRanked {
            segment,
            capacity: self.limit + self.offset,
            heap: BinaryHeap::new(),
            ids: reader
                .fast_fields()
                .u64("tiebreak")
                .ok()
                .map(|c| c.first_or_default_col(0)),
            bonus_max: bonuses.iter().map(|b| b.max).sum(),
            words,
            all_possible,
            bonuses,
            shared: self.floor.clone(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn collect_segment(
        &self,
        weight: &dyn Weight,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<Self::Fruit> {
        let mut top = self.for_segment(segment, reader)?;
        let alive = reader.alive_bitset();
        let Some(checks) = &self.checks else {
            weight.for_each(reader, &mut |doc, score| {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    top.collect(doc, score);
                }
            })?;
            return Ok(top.harvest());
        };
        // The filters as a bitset of the segment's records meeting them, read once; the
        // exclusions in document order, a fresh set for each pass.
        let allowed = crate::filter::Allowed::of(&checks.filters, reader)?;
        if allowed
            .as_ref()
            .is_some_and(crate::filter::Allowed::is_empty)
        {
            return Ok(Vec::new());
        }
        let keep = |doc: DocId| {
            alive.is_none_or(|a| a.is_alive(doc))
                && allowed.as_ref().is_none_or(|a| a.contains(doc))
        };
        let exclusions = |reader: &SegmentReader| -> tantivy::Result<Vec<Probe>> {
            let mut probes = Vec::with_capacity(checks.excluded.len());
            for e in &checks.excluded {
                probes.extend(Probe::new(e.scorer(reader, 1.0)?));
            }
            Ok(probes)
        };
        let passes = |doc: DocId, excluded: &mut [Probe]| {
            keep(doc) && !excluded.iter_mut().any(|p| p.at(doc))
        };
        let mut excluded = exclusions(reader)?;
        match self.every_word {
            true if top.all_possible => {
                // The complete matches first: the rarest word's records holding every other
                // word (looked up rarest first), scored by every clause.
                let mut rarest = Vec::new();
                for w in &self.all_words[0] {
                    let scorer = w.scorer(reader, 1.0)?;
                    if scorer.doc() != TERMINATED {
                        rarest.push(scorer);
                    }
                }
                let mut others = self.word_probes(&self.all_words[1..], reader)?;
                let mut scored = self.clauses(reader, 1.0)?;
                while let Some(doc) = rarest.iter().map(|s| s.doc()).min() {
                    if doc == TERMINATED {
                        break;
                    }
                    if keep(doc)
                        && others.iter_mut().all(|w| w.iter_mut().any(|p| p.at(doc)))
                        && passes(doc, &mut excluded)
                    {
                        top.collect_complete(doc, crate::maxscore::score_at(&mut scored, doc));
                    }
                    for s in &mut rarest {
                        if s.doc() == doc {
                            s.advance();
                        }
                    }
                }
                // Then the OR pruned for records missing a word, which earn no bonus.
                let mut excluded = exclusions(reader)?;
                let clauses = self.clauses(reader, 1.0)?;
                crate::maxscore::for_each(clauses, keep, |doc, score| {
                    if passes(doc, &mut excluded) && !top.holds_every_word(doc) {
                        top.push(doc, score);
                    }
                    top.threshold()
                });
            }
            _ if self.maxscore() => {
                // What the collector may add: the all-words multiple where every word is in
                // the segment, and the phrases where they can be earned.
                let factor = if top.all_possible {
                    1.0 + ALL_WORDS_BOOST
                } else {
                    1.0
                };
                let mut clauses = self.clauses(reader, factor)?;
                if top.words.is_empty() || top.all_possible {
                    clauses.extend(top.bonuses.iter().filter_map(SegmentBonus::clause));
                }
                crate::maxscore::for_each(clauses, keep, |doc, score| {
                    if passes(doc, &mut excluded) {
                        top.collect(doc, score);
                    }
                    top.threshold()
                });
            }
            _ => {
                // One word, no bonus: the OR's score is the final one.
                weight.for_each_pruning(Score::MIN, reader, &mut |doc, score| {
                    if passes(doc, &mut excluded) {
                        top.collect(doc, score);
                    }
                    top.threshold()
                })?;
            }
        }
        Ok(top.harvest())
    }

    fn merge_fruits(&self, fruits: Vec<Self::Fruit>) -> tantivy::Result<Self::Fruit> {
        let mut all: Vec<(Key, DocAddress)> = fruits.into_iter().flatten().collect();
        all.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Ok(all.into_iter().skip(self.offset).take(self.limit).collect())
    }
}

impl SegmentRanked {
    /// The lowest key on a full heap.
    fn floor(&self) -> Option<Entry> {
        if self.heap.len() < self.capacity {
            return None;
        }
        self.heap.peek().map(|Reverse(entry)| *entry)
    }

    /// The lowest final score a record needs to be able to enter the page ([`Score::MIN`]
    /// while no heap of the search is full); what the walks are given bounds final scores.
    fn threshold(&self) -> Score {
        let own = self
            .floor()
            .map_or(SharedFloor::NONE, |((floor, _), _)| floor);
        let floor = own.max(self.shared.get());
        if floor == SharedFloor::NONE {
            return Score::MIN;
        }
        // The least score that rounds to the floor's.
        let least = f32::from_bits(u32::try_from(floor).unwrap_or(0) << SCORE_BITS_DROPPED);
        // A little below, for the rounding of sums in another order.
        least * (1.0 - 1e-4)
    }

    /// A record known to hold every word, with its words' score.
    fn collect_complete(&mut self, doc: DocId, score: Score) {
        if self.capacity == 0 {
            return;
        }
        let floor = self.floor();
        let mut score = score * (1.0 + ALL_WORDS_BOOST);
        if !self.bonuses.is_empty()
            && floor.is_none_or(|f| rounded(score + self.bonus_max) >= f.0.0)
        {
            score += self.phrase_bonus(doc, score, floor);
        }
        self.push(doc, score);
    }

    /// Puts `doc` on the heap if its final `score` ranks it there.
    fn push(&mut self, doc: DocId, score: Score) {
        if self.capacity == 0 {
            return;
        }
        let key = (
            rounded(score),
            self.ids.as_ref().map_or(0, |c| c.get_val(doc)),
        );
        let entry = (key, Reverse(doc));
        match self.floor() {
            None => self.heap.push(Reverse(entry)),
            Some(f) if entry > f => {
                self.heap.pop();
                self.heap.push(Reverse(entry));
            }
            Some(_) => return,
        }
        if let Some(((floor, _), _)) = self.floor() {
            self.shared.raise(floor);
        }
    }

    /// Whether `doc` holds every word.
    fn holds_every_word(&mut self, doc: DocId) -> bool {
        self.words
            .iter_mut()
            .all(|word| word.iter_mut().any(|probe| probe.at(doc)))
    }

    /// The phrase bonuses `doc` earns, read while they can still lift `score` to `floor`.
    fn phrase_bonus(&mut self, doc: DocId, score: Score, floor: Option<Entry>) -> Score {
        let mut possible = self.bonus_max;
        let mut added = 0.0;
        for b in &mut self.bonuses {
            if floor.is_some_and(|f| rounded(score + added + possible) < f.0.0) {
                break;
            }
            possible -= b.max;
            // Positions only where the words' frequencies leave the phrase able to lift the
            // record onto the page.
            let bound = b.bound(doc);
            let Some(probe) = &mut b.probe else {
                added += bound;
                continue;
            };
            if bound > 0.0
                && floor.is_none_or(|f| rounded(score + added + bound + possible) >= f.0.0)
                && probe.at(doc)
            {
                added += probe.scorer.score();
            }
        }
        added
    }
}

impl SegmentCollector for SegmentRanked {
    type Fruit = Vec<(Key, DocAddress)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if self.capacity == 0 {
            return;
        }
        let floor = self.floor();
        let can_enter = |s: Score| floor.is_none_or(|f| rounded(s) >= f.0.0);
        let mut score = score;
        if self.words.is_empty() {
            if !self.bonuses.is_empty() && can_enter(score + self.bonus_max) {
                score += self.phrase_bonus(doc, score, floor);
            }
        } else if self.all_possible {
            // The phrase needs every word: a record without them earns neither bonus.
            let all_words = score * ALL_WORDS_BOOST;
            if can_enter(score + all_words + self.bonus_max) && self.holds_every_word(doc) {
                score += all_words;
                if !self.bonuses.is_empty() {
                    score += self.phrase_bonus(doc, score, floor);
                }
            }
        }
        self.push(doc, score);
    }

    fn harvest(self) -> Self::Fruit {
        let segment = self.segment;
        self.heap
            .into_iter()
            .map(|Reverse((key, Reverse(doc)))| (key, DocAddress::new(segment, doc)))
            .collect()
    }
}
