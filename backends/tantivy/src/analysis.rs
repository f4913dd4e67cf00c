//! Text analysis, the same for documents and queries (DESIGN 7): what a word is, how it is
//! folded, split and stemmed.
//!
//! - A word is a run of letters and digits; everything else separates words. Each Chinese,
//!   Japanese or Korean character is a word of its own, so `東京` is found in `東京都` as the
//!   phrase of its characters, without a dictionary.
//! - Folding: compatibility decomposition (NFKD), combining marks dropped, lowercase: `Café`
//!   and `cafe` are one word.
//! - A word made of parts (camelCase, letters and digits: `budgetReport2024`, `XMLParser`) is
//!   indexed whole (`budgetreport2024`) and as its parts (`budget`, `report`, `2024`) at
//!   consecutive positions, so a file name is found by any of its words or by its phrase.
//! - Stemming uses the Snowball stemmer of the record's language (detected per record); the
//!   stemmed words go to their own fields, beside the unstemmed ones.

use tantivy::tokenizer::{
    Language, Stemmer, TextAnalyzer, Token as TantivyToken, TokenStream, Tokenizer,
};
use unicode_normalization::{UnicodeNormalization, char::is_combining_mark};

/// Longest word indexed, in bytes; longer runs (hashes, base64) are skipped.
pub const MAX_WORD_BYTES: usize = 64;

/// Whether `c` is a Chinese, Japanese or Korean character that forms a word by itself.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // hangul syllables
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x20000..=0x2FA1F) // extensions B–F, supplement
}

/// One analyzed word of a text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// Folded text.
    pub text: String,
    /// Byte range in the original text.
    pub from: usize,
    /// End of the byte range.
    pub to: usize,
    /// Word position (a whole compound shares its first part's position).
    pub position: usize,
    /// `true` for the whole of a word that is also indexed as its parts.
    pub compound: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Upper,
    Lower,
    Digit,
}

fn class(c: char) -> Class {
    if c.is_numeric() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else {
        Class::Lower
    }
}

/// A run of letters and digits being read: per char its class, byte range in the original and
/// where its folded form starts in `folded`.
#[derive(Default)]
struct Run {
    chars: Vec<(Class, usize, usize, usize)>,
    folded: String,
}

impl Run {
    fn push(&mut self, c: char, from: usize, to: usize) {
        self.chars.push((class(c), from, to, self.folded.len()));
        fold_into(c, &mut self.folded);
    }

    /// The folded text of chars `a..b`.
    fn text(&self, a: usize, b: usize) -> &str {
        let end = self.chars.get(b).map_or(self.folded.len(), |c| c.3);
        &self.folded[self.chars[a].3..end]
    }

    fn clear(&mut self) {
        self.chars.clear();
        self.folded.clear();
    }
}

/// The words of `text`, in order ([module docs](self)).
pub fn words(text: &str) -> Vec<Word> {
    let mut out = Words::default();
    split(text, &mut out);
    out.into_vec()
}

/// Items of one text (words, tokens) kept from text to text, so that their buffers are reused:
/// a thread allocates nothing per word once it has analyzed a few texts. A clone starts empty.
struct Reused<T> {
    items: Vec<T>,
    len: usize,
}

impl<T> Default for Reused<T> {
    fn default() -> Self {
        Reused {
            items: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Clone for Reused<T> {
    fn clone(&self) -> Self {
        Reused::default()
    }
}

impl<T: Default> Reused<T> {
    fn clear(&mut self) {
        self.len = 0;
    }

    /// The next item: one kept from an earlier text (its fields to be overwritten), or new.
    fn next(&mut self) -> &mut T {
        if self.len == self.items.len() {
            self.items.push(T::default());
        }
        self.len += 1;
        &mut self.items[self.len - 1]
    }

    fn as_slice(&self) -> &[T] {
        &self.items[..self.len]
    }

    fn into_vec(mut self) -> Vec<T> {
        self.items.truncate(self.len);
        self.items
    }
}

/// A text's words.
type Words = Reused<Word>;

impl Words {
    /// Appends a word whose folded text `write` puts in the (emptied) buffer it is given.
    fn push(
        &mut self,
        write: impl FnOnce(&mut String),
        from: usize,
        to: usize,
        position: usize,
        compound: bool,
    ) {
        let w = self.next();
        w.text.clear();
        write(&mut w.text);
        (w.from, w.to, w.position, w.compound) = (from, to, position, compound);
    }
}

/// Splits `text` into `out` (emptied first).
fn split(text: &str, out: &mut Words) {
    out.clear();
    let mut position = 0usize;
    let mut run = Run::default();
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        if c.is_ascii_alphanumeric() || (!c.is_ascii() && c.is_alphanumeric() && !is_cjk(c)) {
            run.push(c, at, end);
        } else if is_cjk(c) {
            flush(&mut run, out, &mut position);
            out.push(|s| fold_into(c, s), at, end, position, false);
            position += 1;
        } else if !c.is_ascii() && is_combining_mark(c) && !run.chars.is_empty() {
            // A combining mark after a letter belongs to it (and folds away).
            if let Some(last) = run.chars.last_mut() {
                last.2 = end;
            }
        } else {
            flush(&mut run, out, &mut position);
        }
    }
    flush(&mut run, out, &mut position);
}

/// Appends `c` folded: compatibility decomposition, lowercase, combining marks dropped.
fn fold_into(c: char, out: &mut String) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    for d in c.nfkd() {
        for l in d.to_lowercase() {
            if !is_combining_mark(l) {
                out.push(l);
            }
        }
    }
}

/// Where a run splits into parts: lower→Upper (`budgetReport`), letter↔digit (`q3`, `2024x`),
/// and before the last capital of a capital run followed by a lowercase letter (`XMLParser`).
fn parts(run: &Run) -> Vec<(usize, usize)> {
    let chars = &run.chars;
    let mut bounds = vec![0];
    for i in 1..chars.len() {
        let (a, b) = (chars[i - 1].0, chars[i].0);
        let split = match (a, b) {
            (Class::Lower, Class::Upper) => true,
            (Class::Digit, Class::Lower | Class::Upper)
            | (Class::Lower | Class::Upper, Class::Digit) => true,
            (Class::Upper, Class::Upper) => chars.get(i + 1).is_some_and(|n| n.0 == Class::Lower),
            _ => false,
        };
        if split {
            bounds.push(i);
        }
    }
    bounds.push(chars.len());
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

fn flush(run: &mut Run, out: &mut Words, position: &mut usize) {
    if run.chars.is_empty() {
        return;
    }
    let n = run.chars.len();
    let pieces = parts(run);
    let (from, to) = (run.chars[0].1, run.chars[n - 1].2);
    let whole = run.text(0, n);
    if pieces.len() > 1 && whole.len() <= MAX_WORD_BYTES {
        out.push(|s| s.push_str(whole), from, to, *position, true);
    }
    for (a, b) in pieces {
        let w = run.text(a, b);
        if !w.is_empty() && w.len() <= MAX_WORD_BYTES {
            let (from, to) = (run.chars[a].1, run.chars[b - 1].2);
            out.push(|s| s.push_str(w), from, to, *position, false);
        }
        *position += 1;
    }
    run.clear();
}

/// Texts up to this many bytes whose language the detector is unsure of are taken as English.
const SHORT_TEXT: usize = 200;

/// The language a record's words are stemmed in, by detection; `None` (a detected language
/// without a stemmer, or a long text the detector cannot place) indexes them unstemmed. A
/// short text the detector is unsure of is taken as English, the rule queries follow
/// ([`query_language`]): its unreliable guess from a few words ("apple apple apple pie" reads
/// as Latin) would stem the record differently from every query that should find it.
pub fn detect(text: &str) -> Option<Language> {
    // A kilobyte says what language a text is in; more only costs time.
    let mut end = text.len().min(1024);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let info = whatlang::detect(&text[..end])?;
    if !info.is_reliable() {
        return (text.len() <= SHORT_TEXT).then_some(Language::English);
    }
    to_language(info.lang())
}

/// The language a record's words are stemmed in: its text's ([`detect`]), or its title's when
/// the text has no letters. Only then: a text in a language without a stemmer, or one the
/// detector cannot place, is not stemmed in whatever its title guesses (a short file name is
/// taken as English).
pub fn record_language(text: &str, title: &str) -> Option<Language> {
    if text.chars().any(char::is_alphabetic) {
        detect(text)
    } else {
        detect(title)
    }
}

/// The language of a query: detected when the detector is confident, else English (the
/// language most workspaces write in; documented in docs/search.md).
pub fn query_language(text: &str) -> Language {
    whatlang::detect(text)
        .filter(|i| i.is_reliable())
        .and_then(|i| to_language(i.lang()))
        .unwrap_or(Language::English)
}

fn to_language(lang: whatlang::Lang) -> Option<Language> {
    use whatlang::Lang as L;
    Some(match lang {
        L::Ara => Language::Arabic,
        L::Dan => Language::Danish,
        L::Nld => Language::Dutch,
        L::Eng => Language::English,
        L::Fin => Language::Finnish,
        L::Fra => Language::French,
        L::Deu => Language::German,
        L::Ell => Language::Greek,
        L::Hun => Language::Hungarian,
        L::Ita => Language::Italian,
        L::Nob => Language::Norwegian,
        L::Por => Language::Portuguese,
        L::Ron => Language::Romanian,
        L::Rus => Language::Russian,
        L::Spa => Language::Spanish,
        L::Swe => Language::Swedish,
        L::Tam => Language::Tamil,
        L::Tur => Language::Turkish,
        _ => return None,
    })
}

/// A short stable name of a language, as the index stores it.
pub fn language_code(lang: Option<Language>) -> &'static str {
    match lang {
        None => "",
        Some(l) => match l {
            Language::Arabic => "ar",
            Language::Danish => "da",
            Language::Dutch => "nl",
            Language::English => "en",
            Language::Finnish => "fi",
            Language::French => "fr",
            Language::German => "de",
            Language::Greek => "el",
            Language::Hungarian => "hu",
            Language::Italian => "it",
            Language::Norwegian => "no",
            Language::Portuguese => "pt",
            Language::Romanian => "ro",
            Language::Russian => "ru",
            Language::Spanish => "es",
            Language::Swedish => "sv",
            Language::Tamil => "ta",
            Language::Turkish => "tr",
        },
    }
}

/// The language of a [`language_code`].
pub fn from_code(code: &str) -> Option<Language> {
    ALL.iter()
        .copied()
        .find(|l| language_code(Some(*l)) == code)
}

const ALL: [Language; 18] = [
    Language::Arabic,
    Language::Danish,
    Language::Dutch,
    Language::English,
    Language::Finnish,
    Language::French,
    Language::German,
    Language::Greek,
    Language::Hungarian,
    Language::Italian,
    Language::Norwegian,
    Language::Portuguese,
    Language::Romanian,
    Language::Russian,
    Language::Spanish,
    Language::Swedish,
    Language::Tamil,
    Language::Turkish,
];

/// `word` stemmed in `lang` (unchanged without a language).
pub fn stem(lang: Option<Language>, word: &str) -> String {
    with_stemmers(|s| s.stem(lang, word))
}

thread_local! {
    /// Each thread's stemmers (documents are analyzed on several threads at once).
    static STEMMERS: std::cell::RefCell<Stemmers> = std::cell::RefCell::default();
}

thread_local! {
    /// The last text split on this thread by an index tokenizer, and its words.
    static LAST_SPLIT: std::cell::RefCell<(String, Words)> = std::cell::RefCell::default();
}

/// Runs `f` with the words of `text`: a record's title and text are each indexed in several
/// fields (exact, stemmed, pairs), whose tokenizers run one after the other on the same thread
/// and split the text once. `f` must not split another text.
fn with_words<R>(text: &str, f: impl FnOnce(&[Word]) -> R) -> R {
    LAST_SPLIT.with(|cell| {
        let mut last = cell.borrow_mut();
        let (seen, words) = &mut *last;
        if seen != text {
            split(text, words);
            seen.clear();
            seen.push_str(text);
        }
        f(words.as_slice())
    })
}

/// Runs `f` with this thread's [`Stemmers`].
fn with_stemmers<R>(f: impl FnOnce(&mut Stemmers) -> R) -> R {
    STEMMERS.with(|s| f(&mut s.borrow_mut()))
}

/// Snowball stemmers built once per language, with the stems of words already seen (text
/// repeats its words: a document's thousand words hold a few hundred distinct ones).
#[derive(Default)]
pub struct Stemmers {
    analyzers: std::collections::HashMap<Language, TextAnalyzer>,
    /// Per language, word → stem (looked up by `&str`: no allocation for a word seen before).
    seen: std::collections::HashMap<Language, std::collections::HashMap<String, String>>,
    /// Entries in `seen`, all languages.
    remembered: usize,
}

/// Distinct (language, word) stems a [`Stemmers`] remembers before it starts afresh.
const REMEMBERED_STEMS: usize = 100_000;

impl Stemmers {
    /// `word` stemmed in `lang` (unchanged without a language).
    pub fn stem(&mut self, lang: Option<Language>, word: &str) -> String {
        let mut out = word.to_string();
        self.stem_in_place(lang, &mut out);
        out
    }

    /// Replaces `word` by its stem in `lang` (unchanged without a language), reusing its buffer.
    pub fn stem_in_place(&mut self, lang: Option<Language>, word: &mut String) {
        let Some(lang) = lang else {
            return;
        };
        if let Some(s) = self.seen.get(&lang).and_then(|m| m.get(word.as_str())) {
            if s != word {
                word.clear();
                word.push_str(s);
            }
            return;
        }
        let analyzer = self.analyzers.entry(lang).or_insert_with(|| {
            TextAnalyzer::builder(Verbatim::default())
                .filter(Stemmer::new(lang))
                .build()
        });
        let stemmed = {
            let mut stream = analyzer.token_stream(word);
            if stream.advance() {
                stream.token().text.clone()
            } else {
                word.clone()
            }
        };
        if self.remembered >= REMEMBERED_STEMS {
            self.seen.clear();
            self.remembered = 0;
        }
        self.remembered += 1;
        let known = self.seen.entry(lang).or_default();
        known.insert(std::mem::replace(word, stemmed.clone()), stemmed);
    }
}

/// Common words of a language that a natural-language query drops when it has other words
/// (`how does the model explain adoption` searches for `model explain adoption`).
pub fn is_stopword(lang: Language, word: &str) -> bool {
    if lang == Language::English {
        return ENGLISH_STOPWORDS.contains(&word);
    }
    let Some(filter) = tantivy::tokenizer::StopWordFilter::new(lang) else {
        return false;
    };
    let mut analyzer = TextAnalyzer::builder(Verbatim::default())
        .filter(filter)
        .build();
    let mut stream = analyzer.token_stream(word);
    !stream.advance()
}

/// English stop words: the Snowball project's list (snowballstem.org, BSD licence), which
/// unlike Lucene's short list holds the words questions are made of (`how`, `does`, `what`).
/// Contractions appear as our tokenizer splits them (`isn't` is `isn` and `t`).
const ENGLISH_STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "cannot",
    "could",
    "couldn",
    "d",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "let",
    "ll",
    "m",
    "me",
    "more",
    "most",
    "mustn",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "shan",
    "she",
    "should",
    "shouldn",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "ve",
    "very",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "with",
    "won",
    "would",
    "wouldn",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Our word rules as a tantivy tokenizer (for fields tantivy analyzes itself and for snippets).
#[derive(Clone, Default)]
pub struct InletTokenizer {
    /// Keeps the split for the record's other fields ([`with_words`]): only on the indexing
    /// threads, which index a record's fields one after the other (a search thread would
    /// keep a result's text for nothing).
    indexing: bool,
    tokens: TokenBuffer,
}

impl InletTokenizer {
    /// The tokenizer of the indexed fields.
    pub fn for_indexing() -> InletTokenizer {
        InletTokenizer {
            indexing: true,
            tokens: TokenBuffer::default(),
        }
    }
}

/// A tokenizer's tokens of one text.
type TokenBuffer = Reused<TantivyToken>;

impl TokenBuffer {
    /// Appends a token whose text `write` puts in the (emptied) buffer it is given.
    fn push(&mut self, write: impl FnOnce(&mut String), from: usize, to: usize, position: usize) {
        let t = self.next();
        t.text.clear();
        write(&mut t.text);
        t.offset_from = from;
        t.offset_to = to;
        t.position = position;
        t.position_length = 1;
    }

    /// A stream of the tokens `fill` appends to the emptied buffer.
    fn stream(&mut self, fill: impl FnOnce(&mut TokenBuffer)) -> BufferedTokenStream<'_> {
        self.clear();
        fill(self);
        BufferedTokenStream {
            tokens: &mut self.items[..self.len],
            next: 0,
        }
    }

    /// Appends `w` as a token.
    fn push_word(&mut self, w: &Word) {
        self.push(|s| s.push_str(&w.text), w.from, w.to, w.position);
    }
}

/// The tokens of a [`TokenBuffer`].
pub struct BufferedTokenStream<'a> {
    tokens: &'a mut [TantivyToken],
    next: usize,
}

impl TokenStream for BufferedTokenStream<'_> {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }
    fn token(&self) -> &TantivyToken {
        &self.tokens[self.next - 1]
    }
    fn token_mut(&mut self) -> &mut TantivyToken {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for InletTokenizer {
    type TokenStream<'a> = BufferedTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> BufferedTokenStream<'a> {
        let indexing = self.indexing;
        self.tokens.stream(|tokens| {
            let mut all = |words: &[Word]| words.iter().for_each(|w| tokens.push_word(w));
            if indexing {
                with_words(text, all);
            } else {
                all(&words(text));
            }
        })
    }
}

/// `text` marked with the language its words are stemmed in, for [`StemTokenizer`].
pub fn with_language(lang: Option<Language>, text: &str) -> String {
    let code = language_code(lang);
    let mut out = String::with_capacity(text.len() + code.len() + 2);
    out.push(LANGUAGE_MARK);
    out.push_str(code);
    out.push(LANGUAGE_MARK);
    out.push_str(text);
    out
}

/// Encloses the language code [`with_language`] puts before a text.
const LANGUAGE_MARK: char = '\u{1}';

/// The language [`with_language`] put before `text`, the text after it, and its offset.
fn split_language(text: &str) -> (Option<Language>, &str, usize) {
    if let Some(rest) = text.strip_prefix(LANGUAGE_MARK)
        && let Some(end) = rest.find(LANGUAGE_MARK)
    {
        let skip = LANGUAGE_MARK.len_utf8() * 2 + end;
        return (from_code(&rest[..end]), &text[skip..], skip);
    }
    (None, text, 0)
}

/// Our word rules with each word stemmed in the language [`with_language`] marked the text
/// with: one field holds every record's stems, each in its own language.
#[derive(Clone, Default)]
pub struct StemTokenizer {
    tokens: TokenBuffer,
}

impl Tokenizer for StemTokenizer {
    type TokenStream<'a> = BufferedTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> BufferedTokenStream<'a> {
        let (lang, body, offset) = split_language(text);
        self.tokens.stream(|tokens| {
            with_words(body, |words| {
                with_stemmers(|stemmers| {
                    for w in words {
                        tokens.push(
                            |s| {
                                s.push_str(&w.text);
                                stemmers.stem_in_place(lang, s);
                            },
                            w.from + offset,
                            w.to + offset,
                            w.position,
                        );
                    }
                })
            })
        })
    }
}

/// Separates the two words of a [`pair`] (no word holds a space).
const PAIR_SEPARATOR: char = ' ';

/// Longest word, in characters, that [`PairTokenizer`] pairs.
pub const PAIRED_WORD_CHARS: usize = 4;

/// Whether the pair of `first` and `second` is indexed: both are short. Short words are the
/// frequent ones (function words: `of the`, `to be`, `in 2024`), whose phrases otherwise read
/// the positions of nearly every record, and each Chinese, Japanese or Korean character, whose
/// words are always phrases (Lucene's CJK bigrams). Long words are rarer: their phrases are
/// found through their own short postings.
pub fn paired(first: &str, second: &str) -> bool {
    let short = |w: &str| w.chars().nth(PAIRED_WORD_CHARS).is_none();
    short(first) && short(second)
}

/// The term of two words at consecutive positions, as [`PairTokenizer`] indexes it.
pub fn pair(first: &str, second: &str) -> String {
    let mut s = String::with_capacity(first.len() + second.len() + 1);
    pair_into(first, second, &mut s);
    s
}

/// Appends [`pair`]`(first, second)` to `out`.
fn pair_into(first: &str, second: &str, out: &mut String) {
    out.push_str(first);
    out.push(PAIR_SEPARATOR);
    out.push_str(second);
}

/// Every two words at consecutive positions as one term ([`pair`]; a compound's whole form
/// pairs as it stands at its first part's position, as a phrase query finds it): a two-word
/// phrase is then found, and its frequency in a record known, from one term's postings,
/// without reading positions (Elasticsearch's `index_phrases`). A phrase of frequent words
/// otherwise reads the positions of nearly every record.
#[derive(Clone, Default)]
pub struct PairTokenizer {
    tokens: TokenBuffer,
}

impl Tokenizer for PairTokenizer {
    type TokenStream<'a> = BufferedTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> BufferedTokenStream<'a> {
        self.tokens
            .stream(|tokens| with_words(text, |words| pairs(words, tokens)))
    }
}

/// Appends the indexed pairs of `words` ([`PairTokenizer`]) to `tokens`.
fn pairs(words: &[Word], tokens: &mut TokenBuffer) {
    // Words come in position order; a position holds one word, or a compound and its
    // first part.
    for (i, first) in words.iter().enumerate() {
        for second in words[i + 1..]
            .iter()
            .take_while(|w| w.position <= first.position + 1)
            .filter(|w| w.position == first.position + 1 && paired(&first.text, &w.text))
        {
            tokens.push(
                |s| pair_into(&first.text, &second.text, s),
                first.from,
                second.to,
                first.position,
            );
        }
    }
}

/// The text as one token (to run a single word through a filter).
#[derive(Clone, Default)]
struct Verbatim {
    tokens: TokenBuffer,
}

impl Tokenizer for Verbatim {
    type TokenStream<'a> = BufferedTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> BufferedTokenStream<'a> {
        self.tokens
            .stream(|tokens| tokens.push(|s| s.push_str(text), 0, text.len(), 0))
    }
}

/// A tantivy analyzer with our word rules, stemming in `lang` when given.
pub fn analyzer(lang: Option<Language>) -> TextAnalyzer {
    match lang {
        Some(l) => TextAnalyzer::builder(InletTokenizer::default())
            .filter(Stemmer::new(l))
            .build(),
        None => TextAnalyzer::from(InletTokenizer::default()),
    }
}

#[cfg(test)]
#[path = "analysis_tests.rs"]
mod tests;
