//! Query text to a tantivy query (DESIGN 7): words, `"quoted phrases"` and `-excluded` words
//! or phrases. With `match=any` a record matches when it holds at least one word (after
//! analysis) in its title or text; BM25 ranks title (boosted) and text, stemmed and exact
//! forms, and records holding every word and the exact phrase get a bonus that puts them above
//! partial matches. With `match=all` every word must match.

use std::collections::HashMap;

use tantivy::{
    Term,
    query::{
        BooleanQuery, BoostQuery, ConstScoreQuery, EmptyQuery, Occur, PhraseQuery, Query, TermQuery,
    },
    schema::{Field, IndexRecordOption},
    tokenizer::Language,
};

use crate::{
    analysis::{self, Word},
    pair::PairPhrase,
    typos,
};

/// Most words and phrases of a query that are searched (the rest are ignored).
pub const MAX_TERMS: usize = 32;
/// The title's weight against the text.
pub const TITLE_BOOST: f32 = 1.5;
/// Weight of the exact (unstemmed) form against the stemmed one.
const EXACT_BOOST: f32 = 0.3;
/// Bonus of a record holding every word: this many times its score more.
pub const ALL_WORDS_BOOST: f32 = 4.0;
/// Bonus of a record holding the whole query as a phrase.
const PHRASE_BOOST: f32 = 4.0;
/// Longest query (in words) whose whole text earns the phrase bonus.
const MAX_PHRASE_BONUS_WORDS: usize = 6;

/// A term and its boost, where an alternative of a word is one term scored with BM25.
pub type TermBoost = Option<(Term, f32)>;

/// An alternative of a word: its query, and its term where it is one ([`TermBoost`]).
type Alternative = (Box<dyn Query>, TermBoost);

/// One thing a query asks for: a word or a phrase (its words in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Analyzed words at their relative positions; one entry for a plain word.
    pub words: Vec<Word>,
    /// Quoted by the caller (a phrase), or a chunk that analysis split (`e-mail`, `東京`).
    pub phrase: bool,
    /// Quoted by the caller: searched as written, never for typos.
    pub quoted: bool,
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// What to find.
    pub parts: Vec<Part>,
    /// What must not be there.
    pub excluded: Vec<Part>,
}

impl Parsed {
    /// Whether the query asks for nothing (browse).
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

/// Splits query text into words, quoted phrases and `-`exclusions, each analyzed with
/// [`analysis::words`]. A chunk that analysis splits into several words (`e-mail`, `東京都`,
/// `budgetReport`) is a phrase of them.
pub fn parse(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    for (i, segment) in text.split('"').enumerate() {
        if i % 2 == 1 {
            // Inside quotes. A `-` right before the opening quote excludes the phrase.
            let negated = text
                .split('"')
                .nth(i - 1)
                .is_some_and(|before| before.ends_with('-'));
            if let Some(part) = part_of(segment, true) {
                if negated {
                    parsed.excluded.push(part);
                } else {
                    parsed.parts.push(part);
                }
            }
            continue;
        }
        for chunk in segment.split_whitespace() {
            let (negated, chunk) = match chunk.strip_prefix('-') {
                Some(rest) if !rest.is_empty() => (true, rest),
                _ => (false, chunk),
            };
            if let Some(part) = part_of(chunk, false) {
                if negated {
                    parsed.excluded.push(part);
                } else {
                    parsed.parts.push(part);
                }
            }
        }
    }
    parsed.parts.truncate(MAX_TERMS);
    parsed.excluded.truncate(MAX_TERMS);
    parsed
}

fn part_of(text: &str, quoted: bool) -> Option<Part> {
    let words = analysis::words(text);
    if words.is_empty() {
        return None;
    }
    let base = words[0].position;
    let words: Vec<Word> = words
        .into_iter()
        .map(|mut w| {
            w.position -= base;
            w
        })
        .collect();
    let split = words.iter().any(|w| w.position > 0);
    Some(Part {
        phrase: quoted || split,
        quoted,
        words,
    })
}

/// The fields a query searches.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// Title and file name, unstemmed.
    pub title: Field,
    /// Title and file name, stemmed in the record's language.
    pub title_stem: Field,
    /// Text, unstemmed.
    pub body: Field,
    /// Text, stemmed in the record's language.
    pub body_stem: Field,
    /// The text's words two by two ([`analysis::PairTokenizer`]), with frequencies.
    pub body_pairs: Field,
}

/// The text part of a query, in the pieces [`crate::ranked::Ranked`] needs to rank it without
/// reading more than the page needs.
pub struct Built {
    /// Every match (filters are added by the caller): with `match=any` a record holding one of
    /// the words and none of the excluded ones, with `match=all` one holding every word. Scored
    /// as the records are ranked, without the bonuses below.
    pub query: Box<dyn Query>,
    /// `match=all`: every word must match.
    pub match_all: bool,
    /// Each searched word's alternatives (the clauses of its query): a record matches a word
    /// where one of them matches, and its score is their sum.
    pub words: Vec<Vec<Box<dyn Query>>>,
    /// Beside each of [`Built::words`]' alternatives: its term and boost when it is one term
    /// scored with BM25 (what bounds its score), else `None`.
    pub terms: Vec<Vec<TermBoost>>,
    /// What must not match.
    pub excluded: Vec<Box<dyn Query>>,
    /// The whole query as a phrase in the title and in the text, each with the score it adds
    /// when it matches ([`PHRASE_BOOST`], the title's also [`TITLE_BOOST`]).
    pub phrase_bonus: Vec<PhraseBonus>,
}

/// A phrase whose match adds to a record's score.
pub struct PhraseBonus {
    /// The phrase; its score is what it adds.
    pub phrase: PhraseQuery,
    /// Times its BM25.
    pub boost: f32,
    /// The field holding its words two by two ([`Fields::body_pairs`]), for the text's phrase:
    /// a record holds the phrase at most as often as its rarest pair, and a two-word phrase
    /// exactly as often as its pair.
    pub pairs: Option<Field>,
}

impl PhraseBonus {
    /// Terms whose frequencies in a record bound the phrase's (it occurs at most as often as
    /// the rarest): its indexed word pairs ([`analysis::paired`]) and its words; and whether
    /// the first is the phrase itself (two words whose pair is indexed: its frequency is the
    /// phrase's).
    pub fn bound_terms(&self) -> (Vec<Term>, bool) {
        let words = self.phrase.phrase_terms();
        let pairs: Vec<Term> = match self.pairs {
            Some(field) => words
                .windows(2)
                .filter_map(|w| {
                    let (a, b) = (w[0].value(), w[1].value());
                    let (a, b) = (a.as_str()?, b.as_str()?);
                    analysis::paired(a, b)
                        .then(|| Term::from_field_text(field, &analysis::pair(a, b)))
                })
                .collect(),
            None => Vec::new(),
        };
        if words.len() == 2 && pairs.len() == 1 {
            return (pairs, true);
        }
        (pairs.into_iter().chain(words).collect(), false)
    }
}

impl Built {
    /// With two or more words and `match=any`, a record holding every word scores
    /// [`ALL_WORDS_BOOST`] times its score more: the words, else nothing.
    pub fn all_words(&self) -> &[Vec<Box<dyn Query>>] {
        if self.match_all || self.words.len() < 2 {
            &[]
        } else {
            &self.words
        }
    }

    /// The records holding every word ([`Built::all_words`]), scored as [`Built::query`]
    /// scores them; `None` without the all-words bonus.
    pub fn every_word(&self) -> Option<BooleanQuery> {
        let words = self.all_words();
        (!words.is_empty()).then(|| {
            BooleanQuery::new(
                words
                    .iter()
                    .map(|word| {
                        let any: Box<dyn Query> = Box::new(BooleanQuery::new(
                            word.iter()
                                .map(|q| (Occur::Should, q.box_clone()))
                                .collect(),
                        ));
                        (Occur::Must, any)
                    })
                    .collect(),
            )
        })
    }

    /// The words' alternatives as one OR: the records holding at least one word, scored as
    /// [`Built::query`] scores them (the sum of the alternatives that match).
    pub fn any_word(&self) -> BooleanQuery {
        BooleanQuery::new(
            self.words
                .iter()
                .flatten()
                .map(|q| (Occur::Should, q.box_clone()))
                .collect(),
        )
    }
}

/// Indexed words searched with a query word besides its own forms, by the word (folded):
/// its neighbours when it looks misspelt ([`crate::typos`]).
pub type Variants = HashMap<String, typos::Neighbours>;

/// Builds the text part of a query, each plain word also searched as its `variants`. `None`
/// for an empty query, which browses.
pub fn build(
    parsed: &Parsed,
    match_all: bool,
    lang: Language,
    f: Fields,
    variants: &Variants,
) -> Option<Built> {
    if parsed.is_empty() {
        return None;
    }
    // A natural-language question drops its common words ("how does the …") when it has others.
    let meaningful: Vec<&Part> = parsed
        .parts
        .iter()
        .filter(|p| p.phrase || !analysis::is_stopword(lang, &p.words[0].text))
        .collect();
    let searched: Vec<&Part> = if match_all || meaningful.is_empty() {
        parsed.parts.iter().collect()
    } else {
        meaningful
    };
    let mut words: Vec<Vec<Box<dyn Query>>> = Vec::with_capacity(searched.len());
    let mut terms: Vec<Vec<TermBoost>> = Vec::with_capacity(searched.len());
    for p in &searched {
        let (queries, bounds) = part_clauses(p, lang, f, variants).into_iter().unzip();
        words.push(queries);
        terms.push(bounds);
    }
    let any = |word: &Vec<Box<dyn Query>>| -> Box<dyn Query> {
        Box::new(BooleanQuery::new(
            word.iter()
                .map(|q| (Occur::Should, q.box_clone()))
                .collect(),
        ))
    };
    let mut top: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    if match_all {
        top.extend(words.iter().map(|w| (Occur::Must, any(w))));
    } else {
        let any_word = words.iter().map(|w| (Occur::Should, any(w))).collect();
        top.push((Occur::Must, Box::new(BooleanQuery::new(any_word))));
    }
    // The whole query as a phrase (its words in order) ranks first.
    let plain: Vec<&Word> = parsed
        .parts
        .iter()
        .filter(|p| !p.phrase)
        .flat_map(|p| p.words.iter().filter(|w| !w.compound))
        .collect();
    let mut phrase_bonus = Vec::new();
    // Past a few words a question is not typed as it is written anywhere: the phrase check
    // would cost every record holding all the words and rarely match.
    if (2..=MAX_PHRASE_BONUS_WORDS).contains(&plain.len()) && plain.len() == parsed.parts.len() {
        let phrase = |field: Field| {
            PhraseQuery::new(
                plain
                    .iter()
                    .map(|w| Term::from_field_text(field, &w.text))
                    .collect(),
            )
        };
        // The title first: its postings are short, so a record without it is passed quickly.
        phrase_bonus.push(PhraseBonus {
            phrase: phrase(f.title),
            boost: PHRASE_BOOST * TITLE_BOOST,
            pairs: None,
        });
        phrase_bonus.push(PhraseBonus {
            phrase: phrase(f.body),
            boost: PHRASE_BOOST,
            pairs: Some(f.body_pairs),
        });
    }
    let excluded: Vec<Box<dyn Query>> = parsed
        .excluded
        .iter()
        .map(|p| part_query(p, lang, f))
        .collect();
    top.extend(excluded.iter().map(|q| (Occur::MustNot, q.box_clone())));
    Some(Built {
        query: Box::new(BooleanQuery::new(top)),
        match_all,
        words,
        terms,
        excluded,
        phrase_bonus,
    })
}

/// A word: its exact form in title and text, and its stem in the stemmed fields. A phrase: its
/// words in order in title or text (a split compound also as its whole form).
fn part_query(part: &Part, lang: Language, f: Fields) -> Box<dyn Query> {
    Box::new(BooleanQuery::new(
        part_clauses(part, lang, f, &Variants::new())
            .into_iter()
            .map(|(q, _)| (Occur::Should, q))
            .collect(),
    ))
}

/// The alternatives of [`part_query`]: the part matches where one of them matches. Each with
/// its term and boost when it is one term ([`Built::terms`]). A word's `variants` are
/// alternatives too, each scored as the word would be at the neighbours' boost (in a split
/// chunk, the chunk's phrase with the neighbour in its place).
fn part_clauses(part: &Part, lang: Language, f: Fields, variants: &Variants) -> Vec<Alternative> {
    let term = |field: Field, text: &str, boost: f32| -> Alternative {
        let t = Term::from_field_text(field, text);
        let q = Box::new(TermQuery::new(t.clone(), IndexRecordOption::WithFreqs));
        let q: Box<dyn Query> = match boost == 1.0 {
            true => q,
            false => Box::new(BoostQuery::new(q, boost)),
        };
        (q, Some((t, boost)))
    };
    let boosted = |q: Box<dyn Query>, b: f32| -> Box<dyn Query> { Box::new(BoostQuery::new(q, b)) };
    let mut terms: Vec<Alternative> = Vec::new();
    let mut should: Vec<Box<dyn Query>> = Vec::new();
    let pieces: Vec<&Word> = part.words.iter().filter(|w| !w.compound).collect();
    if !part.phrase || pieces.len() == 1 {
        let w = &part.words[0].text;
        let s = analysis::stem(Some(lang), w);
        terms.push(term(f.body, w, EXACT_BOOST));
        terms.push(term(f.title, w, EXACT_BOOST * TITLE_BOOST));
        terms.push(term(f.body_stem, &s, 1.0));
        terms.push(term(f.title_stem, &s, TITLE_BOOST));
        let mut stems = vec![s];
        let (near, b) = match variants.get(w) {
            Some(n) => (n.words.as_slice(), n.boost),
            None => (&[][..], 1.0),
        };
        for v in near {
            terms.push(term(f.body, v, EXACT_BOOST * b));
            terms.push(term(f.title, v, EXACT_BOOST * TITLE_BOOST * b));
            let s = analysis::stem(Some(lang), v);
            if !stems.contains(&s) {
                terms.push(term(f.body_stem, &s, b));
                terms.push(term(f.title_stem, &s, TITLE_BOOST * b));
                stems.push(s);
            }
        }
    } else {
        let phrase = |field: Field| -> Box<dyn Query> {
            Box::new(PhraseQuery::new_with_offset(
                pieces
                    .iter()
                    .map(|w| (w.position, Term::from_field_text(field, &w.text)))
                    .collect(),
            ))
        };
        let pair = |a: &Word, b: &Word| PairPhrase::new(f.body_pairs, f.body, &a.text, &b.text);
        let adjacent: Vec<PairPhrase> = pieces
            .windows(2)
            .filter(|w| {
                w[0].position + 1 == w[1].position && analysis::paired(&w[0].text, &w[1].text)
            })
            .map(|w| pair(w[0], w[1]))
            .collect();
        if pieces.len() == 2 && adjacent.len() == 1 {
            // Two adjacent words whose pair is indexed: its postings, no positions.
            should.extend(adjacent.into_iter().map(|p| Box::new(p) as Box<dyn Query>));
        } else {
            // Positions are read only in the records holding every indexed pair of adjacent
            // words (the pairs add nothing to the score).
            should.push(Box::new(BooleanQuery::new(
                std::iter::once((Occur::Must, phrase(f.body)))
                    .chain(adjacent.into_iter().map(|p| filter(Box::new(p))))
                    .collect(),
            )));
        }
        should.push(boosted(phrase(f.title), TITLE_BOOST));
        // A split chunk (`conext-free`) with a misspelt piece: the phrase of its neighbour too.
        for (i, piece) in pieces.iter().enumerate() {
            let Some(near) = variants.get(&piece.text) else {
                continue;
            };
            for v in &near.words {
                let with = |field: Field| -> Box<dyn Query> {
                    Box::new(PhraseQuery::new_with_offset(
                        pieces
                            .iter()
                            .enumerate()
                            .map(|(j, w)| {
                                let text = if i == j { v } else { &w.text };
                                (w.position, Term::from_field_text(field, text))
                            })
                            .collect(),
                    ))
                };
                should.push(boosted(with(f.body), near.boost));
                should.push(boosted(with(f.title), TITLE_BOOST * near.boost));
            }
        }
        for whole in part.words.iter().filter(|w| w.compound) {
            terms.push(term(f.body, &whole.text, 1.0));
            terms.push(term(f.title, &whole.text, TITLE_BOOST));
        }
    }
    should.into_iter().map(|q| (q, None)).chain(terms).collect()
}

/// A filter clause: matches what `q` matches, adding nothing to the score.
pub fn filter(q: Box<dyn Query>) -> (Occur, Box<dyn Query>) {
    (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0)))
}

/// A query matching nothing (an empty OR of tag values).
pub fn nothing() -> Box<dyn Query> {
    Box::new(EmptyQuery)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(p: &Part) -> Vec<&str> {
        p.words.iter().map(|w| w.text.as_str()).collect()
    }

    #[test]
    fn parses_words_phrases_and_exclusions() {
        let q = parse(r#"budget "annual report" -draft -"old plan" e-mail"#);
        let parts: Vec<(Vec<&str>, bool)> = q.parts.iter().map(|p| (words(p), p.phrase)).collect();
        assert_eq!(
            parts,
            vec![
                (vec!["budget"], false),
                (vec!["annual", "report"], true),
                (vec!["e", "mail"], true)
            ]
        );
        let excluded: Vec<Vec<&str>> = q.excluded.iter().map(words).collect();
        assert_eq!(excluded, vec![vec!["draft"], vec!["old", "plan"]]);
    }

    #[test]
    fn cjk_runs_are_phrases_of_characters() {
        let q = parse("東京");
        assert_eq!(q.parts.len(), 1);
        assert!(q.parts[0].phrase);
        assert_eq!(words(&q.parts[0]), vec!["東", "京"]);
    }

    #[test]
    fn punctuation_only_is_empty_and_terms_are_capped() {
        assert!(parse(" -- \"\" !!").is_empty());
        let many = (0..100)
            .map(|i| format!("w{i}x"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(parse(&many).parts.len(), MAX_TERMS);
    }
}
