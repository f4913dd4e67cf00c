//! Typo tolerance (DESIGN 7): a query word of [`ONE_EDIT_FROM`] characters or more also
//! matches the indexed words within one edit of it (an inserted, dropped, replaced or two
//! swapped letters), two edits from [`TWO_EDITS_FROM`] characters; never a shorter word, one
//! holding a digit, or a word inside a quoted phrase. The words within reach are found in each
//! segment's term dictionary of the text through a Levenshtein automaton (tantivy's
//! `FuzzyTermQuery`'s), not by a scan.
//!
//! A word is taken to be misspelt, and its neighbours searched as alternatives of it, only
//! where a neighbour is far more common than the word itself ([`MORE_COMMON`] times, the
//! "more popular" rule of spelling checkers): a word missing from the index (`pinapples`), or
//! a rare slip of a common one. A correctly spelt word that its neighbours do not dwarf is
//! searched as it is, so a query without typos ranks and costs as before. The neighbours are
//! scored as the word would be (title and text, exact and stemmed) at [`VARIANT_BOOST`] of its
//! weight, below the word itself, or at its full weight when no record holds the word as typed.

use std::collections::HashMap;

use tantivy::{Searcher, Term, query::FuzzyTermQuery, schema::Field};

use inlet_core::index::Correction;

use crate::filter::AccessFilter;

/// Shortest word matched within one edit.
pub const ONE_EDIT_FROM: usize = 5;
/// Shortest word matched within two edits.
pub const TWO_EDITS_FROM: usize = 9;
/// Most neighbours searched for one word (the most common first).
pub const MAX_VARIANTS: usize = 4;
/// A neighbour is searched when it is in at least this many times the records the word is in.
pub const MORE_COMMON: u64 = 10;
/// A neighbour's weight against the word's, when records hold the word as typed (a word in
/// none has nothing to rank below: its neighbours weigh as it would).
pub const VARIANT_BOOST: f32 = 0.5;

/// The indexed words a query word is searched as too, and their weight against it.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbours {
    /// The words, the most common first.
    pub words: Vec<String>,
    /// [`VARIANT_BOOST`], or 1 when no record holds the word as typed.
    pub boost: f32,
}

/// A search finding fewer records than this suggests its corrected query ("did you mean").
pub const SUGGEST_BELOW: u64 = 5;

/// `text` with each word of `corrections` outside quotes replaced by its first neighbour;
/// `None` when nothing is replaced.
pub fn suggestion(text: &str, corrections: &[Correction]) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for word in crate::analysis::words(text) {
        let quoted = text[..word.from].matches('"').count() % 2 == 1;
        let Some(c) = corrections.iter().find(|c| c.word == word.text) else {
            continue;
        };
        let (Some(by), false, false) = (c.matched.first(), quoted, word.compound) else {
            continue;
        };
        if word.from < at {
            continue;
        }
        out.push_str(&text[at..word.from]);
        out.push_str(by);
        at = word.to;
    }
    if at == 0 {
        return None;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// The edits `word` may be matched within (0: none).
pub fn edits(word: &str) -> u8 {
    if word.chars().any(|c| c.is_numeric()) {
        return 0;
    }
    match word.chars().count() {
        n if n >= TWO_EDITS_FROM => 2,
        n if n >= ONE_EDIT_FROM => 1,
        _ => 0,
    }
}

/// The words of `field` within `word`'s edits ([`edits`]) that are in at least [`MORE_COMMON`]
/// times as many records as it: those of the fewest edits, the most common first (at most
/// [`MAX_VARIANTS`]); `None` when there are none. With a
/// reader's access filter, records are counted among those the reader may read only, so a
/// word of records hidden from them is never proposed (nor their counts felt).
pub fn variants(
    searcher: &Searcher,
    field: Field,
    word: &str,
    within: Option<&AccessFilter>,
) -> tantivy::Result<Option<Neighbours>> {
    let edits = edits(word);
    if edits == 0 {
        return Ok(None);
    }
    let term = Term::from_field_text(field, word);
    // No word is in more records than there are: a common word has no neighbour to prefer.
    // (For a reader the word's records are counted among theirs below, with the others.)
    if within.is_none()
        && searcher.doc_freq(&term)?.saturating_mul(MORE_COMMON) > searcher.num_docs()
    {
        return Ok(None);
    }
    // One automaton, walked over each segment's dictionary.
    let automaton = FuzzyTermQuery::new(term.clone(), edits, true).automaton()?;
    let mut found: HashMap<String, u64> = HashMap::new();
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(field)?;
        let bits = within.map(|f| f.bits_in(segment)).transpose()?;
        let mut stream = inverted.terms().search(&automaton).into_stream()?;
        while stream.advance() {
            let Ok(text) = std::str::from_utf8(stream.key()) else {
                continue;
            };
            if text == word {
                continue;
            }
            let n = match &bits {
                Some(bits) => bits.count_postings(&inverted, stream.value(), u64::MAX),
                None => u64::from(stream.value().doc_freq),
            };
            if n > 0 {
                *found.entry(text.to_string()).or_default() += n;
            }
        }
    }
    let Some(&most) = found.values().max() else {
        return Ok(None);
    };
    // The word's own records, counted only as far as they could still leave a neighbour
    // [`MORE_COMMON`] times as common (a common word's postings are not read to the end).
    let enough = most / MORE_COMMON;
    let mut own = 0u64;
    match within {
        None => own = searcher.doc_freq(&term)?,
        Some(filter) => {
            for segment in searcher.segment_readers() {
                if own > enough {
                    break;
                }
                let inverted = segment.inverted_index(field)?;
                if let Some(info) = inverted.get_term_info(&term)? {
                    let bits = filter.bits_in(segment)?;
                    own += bits.count_postings(&inverted, &info, enough - own);
                }
            }
        }
    }
    let least = own.saturating_mul(MORE_COMMON).max(1);
    // The nearest first (one edit before two), then the most common.
    let mut kept: Vec<(u8, String, u64)> = found
        .into_iter()
        .filter(|(_, n)| *n >= least)
        .map(|(text, n)| (distance(word, &text), text, n))
        .collect();
    let nearest = kept.iter().map(|(d, ..)| *d).min().unwrap_or(0);
    kept.retain(|(d, ..)| *d == nearest);
    kept.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
    kept.truncate(MAX_VARIANTS);
    if kept.is_empty() {
        return Ok(None);
    }
    Ok(Some(Neighbours {
        words: kept.into_iter().map(|(_, text, _)| text).collect(),
        boost: if own == 0 { 1.0 } else { VARIANT_BOOST },
    }))
}

/// Edits between `a` and `b` (insertions, deletions, replacements and swaps of neighbours, as
/// the automaton counts them), at most 3.
fn distance(a: &str, b: &str) -> u8 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()].min(3) as u8
}
