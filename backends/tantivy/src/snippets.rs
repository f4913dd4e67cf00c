//! Search-result snippets: tantivy's generator picks the stretch of text with the most query
//! words; [`Marker`] escapes it and marks the query's words, a split word or a phrase only where
//! its parts stand together.

use std::collections::BTreeMap;

use inlet_core::html::escape;
use tantivy::{
    schema::Field,
    snippet::SnippetGenerator,
    tokenizer::{Language, TextAnalyzer, TokenStream},
};

use crate::{analysis, query};

/// Characters of a snippet.
const SNIPPET_CHARS: usize = 200;

/// Snippets for one query: per record language, tantivy's generator picks the fragment with the
/// most query words and [`Marker`] marks them. Both are made once per language and search.
pub(crate) struct Snippets {
    /// Per part of the query: (relative position, folded word), the whole of a compound left
    /// out. A part of several words (a phrase, or a chunk analysis split: `ASN.1`, `e-mail`) is
    /// marked only where its words stand together, as one mark; a one-word part wherever it
    /// stands.
    parts: Vec<Vec<(usize, String)>>,
    by_lang: BTreeMap<String, Option<Marker>>,
    body: Field,
}

/// The query's parts stemmed in one language, with the analyzer and generator of that language.
struct Marker {
    parts: Vec<Vec<(usize, String)>>,
    analyzer: TextAnalyzer,
    generator: SnippetGenerator,
}

impl Snippets {
    /// Snippets of the query's `parts`, cut from the `body` field's text.
    pub(crate) fn new(parts: &[query::Part], body: Field) -> Self {
        let parts = parts
            .iter()
            .filter_map(|p| {
                let words: Vec<&analysis::Word> = p
                    .words
                    .iter()
                    .filter(|w| !w.compound || p.words.len() == 1)
                    .collect();
                let first = words.iter().map(|w| w.position).min()?;
                Some(
                    words
                        .iter()
                        .map(|w| (w.position - first, w.text.clone()))
                        .collect(),
                )
            })
            .collect();
        Self {
            parts,
            by_lang: BTreeMap::new(),
            body,
        }
    }

    /// The snippet of a record's `body` text, analyzed in language `code`.
    pub(crate) fn snippet(&mut self, code: &str, body: &str) -> String {
        let (parts, field) = (&self.parts, self.body);
        let marker = self
            .by_lang
            .entry(code.to_string())
            .or_insert_with(|| Marker::new(parts, analysis::from_code(code), field));
        if let Some(marker) = marker {
            let s = marker.generator.snippet(body);
            if !s.is_empty() {
                return marker.html(s.fragment());
            }
        }
        escape(&lead(body, SNIPPET_CHARS))
    }
}

impl Marker {
    /// The marker of `parts` in `lang`; `None` when the query has no words.
    fn new(parts: &[Vec<(usize, String)>], lang: Option<Language>, field: Field) -> Option<Self> {
        let parts: Vec<Vec<(usize, String)>> = parts
            .iter()
            .map(|part| {
                part.iter()
                    .map(|(at, w)| (*at, analysis::stem(lang, w)))
                    .collect()
            })
            .collect();
        let terms: BTreeMap<String, f32> = parts
            .iter()
            .flatten()
            .map(|(_, stem)| (stem.clone(), 1.0))
            .collect();
        if terms.is_empty() {
            return None;
        }
        let analyzer = analysis::analyzer(lang);
        let mut generator = SnippetGenerator::new(terms, analyzer.clone(), field, SNIPPET_CHARS);
        generator.set_max_num_chars(SNIPPET_CHARS);
        Some(Self {
            parts,
            analyzer,
            generator,
        })
    }

    /// `fragment` as HTML, escaped, with `<mark>` around each match of a part.
    fn html(&mut self, fragment: &str) -> String {
        let mut tokens: Vec<(usize, usize, usize, String)> = Vec::new();
        self.analyzer.token_stream(fragment).process(&mut |t| {
            tokens.push((t.position, t.offset_from, t.offset_to, t.text.clone()))
        });
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for stems in &self.parts {
            let Some((_, head)) = stems.first() else {
                continue;
            };
            for start in tokens.iter().filter(|t| &t.3 == head) {
                let mut range = (start.1, start.2);
                let whole = stems.iter().skip(1).all(|(at, stem)| {
                    tokens
                        .iter()
                        .find(|t| t.0 == start.0 + at && &t.3 == stem)
                        .map(|t| {
                            range = (range.0.min(t.1), range.1.max(t.2));
                        })
                        .is_some()
                });
                if whole {
                    ranges.push(range);
                }
            }
        }
        ranges.sort_unstable();
        // Overlapping marks (a word also inside a phrase) become one.
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
        for (from, to) in ranges {
            match merged.last_mut() {
                Some(last) if from < last.1 => last.1 = last.1.max(to),
                _ => merged.push((from, to)),
            }
        }
        let mut out = String::with_capacity(fragment.len() + merged.len() * 13);
        let mut at = 0;
        for (from, to) in merged {
            if from < at || to > fragment.len() {
                continue;
            }
            out.push_str(&escape(&fragment[at..from]));
            out.push_str("<mark>");
            out.push_str(&escape(&fragment[from..to]));
            out.push_str("</mark>");
            at = to;
        }
        out.push_str(&escape(&fragment[at..]));
        out
    }
}

/// The start of `text`, at most `chars` characters, cut at a space when there is one.
fn lead(text: &str, chars: usize) -> String {
    let text = text.trim_start();
    match text.char_indices().nth(chars) {
        None => text.to_string(),
        Some((end, _)) => {
            let cut = text[..end].rfind(char::is_whitespace).unwrap_or(end);
            format!("{}…", text[..cut].trim_end())
        }
    }
}
