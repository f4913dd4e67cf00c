//! Tests of `analysis.rs` (a child module of it, so they read its private items).

use super::*;

fn texts(s: &str) -> Vec<(String, usize)> {
    words(s).into_iter().map(|w| (w.text, w.position)).collect()
}

#[test]
fn pairs_are_words_at_consecutive_positions() {
    let pairs = |s: &str| -> Vec<String> {
        let mut tokenizer = PairTokenizer::default();
        let mut stream = tokenizer.token_stream(s);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    };
    assert_eq!(pairs("The cat sat"), vec!["the cat", "cat sat"]);
    // Only short words pair.
    assert_eq!(
        pairs("state of the parliament in 2024"),
        vec!["of the", "in 2024"]
    );
    // A compound pairs as a whole and through its parts; CJK characters pair up.
    assert_eq!(pairs("a bCd"), vec!["a bcd", "a b", "bcd cd", "b cd"]);
    assert_eq!(pairs("東京都"), vec!["東 京", "京 都"]);
    // A skipped long run keeps its position: the words around it are not adjacent.
    let long = "x".repeat(MAX_WORD_BYTES + 1);
    assert_eq!(pairs(&format!("a {long} b c")), vec!["b c"]);
    assert!(pairs("alone").is_empty());
}

#[test]
fn folds_accents_and_case() {
    assert_eq!(
        texts("Café CRÈME"),
        vec![("cafe".into(), 0), ("creme".into(), 1)]
    );
    assert_eq!(
        texts("ﬁle Straße"),
        vec![("file".into(), 0), ("straße".into(), 1)]
    );
}

#[test]
fn file_names_split_at_separators_camel_case_and_digits() {
    let got: Vec<String> = words("Q3_budgetReport-final.v2.xlsx")
        .into_iter()
        .map(|w| w.text)
        .collect();
    assert_eq!(
        got,
        [
            "q3",
            "q",
            "3",
            "budgetreport",
            "budget",
            "report",
            "final",
            "v2",
            "v",
            "2",
            "xlsx"
        ]
    );
    let got: Vec<(String, usize)> = texts("XMLParser");
    assert_eq!(
        got,
        vec![
            ("xmlparser".into(), 0),
            ("xml".into(), 0),
            ("parser".into(), 1)
        ]
    );
}

#[test]
fn parts_take_consecutive_positions() {
    // "budget report" as a phrase finds budgetReport: parts at 0 and 1, next word at 2.
    assert_eq!(
        texts("budgetReport plan"),
        vec![
            ("budgetreport".into(), 0),
            ("budget".into(), 0),
            ("report".into(), 1),
            ("plan".into(), 2)
        ]
    );
}

#[test]
fn cjk_characters_are_words() {
    assert_eq!(
        texts("東京都の会議 notes"),
        vec![
            ("東".into(), 0),
            ("京".into(), 1),
            ("都".into(), 2),
            ("の".into(), 3),
            ("会".into(), 4),
            ("議".into(), 5),
            ("notes".into(), 6)
        ]
    );
}

#[test]
fn offsets_point_into_the_original() {
    let s = "Ünïcode café";
    for w in words(s) {
        assert!(s.is_char_boundary(w.from) && s.is_char_boundary(w.to));
    }
    assert_eq!(&s[words(s)[1].from..words(s)[1].to], "café");
}

#[test]
fn long_runs_are_skipped_but_keep_their_position() {
    let long = "a".repeat(MAX_WORD_BYTES + 1);
    assert_eq!(
        texts(&format!("x {long} y")),
        vec![("x".into(), 0), ("y".into(), 2)]
    );
}

#[test]
fn stems_by_language() {
    assert_eq!(stem(Some(Language::English), "adoption"), "adopt");
    assert_eq!(stem(Some(Language::English), "explains"), "explain");
    assert_eq!(stem(Some(Language::German), "vertragen"), "vertrag");
    assert_eq!(stem(None, "running"), "running");
}

#[test]
fn remembered_stems_answer_as_the_stemmer_does() {
    let mut stemmers = Stemmers::default();
    // Twice each: the second answer comes from what was remembered, per language.
    for _ in 0..2 {
        for (lang, word, stemmed) in [
            (Language::English, "adoption", "adopt"),
            (Language::German, "adoption", "adoption"),
            (Language::English, "models", "model"),
            (Language::English, "model", "model"),
        ] {
            let mut w = word.to_string();
            stemmers.stem_in_place(Some(lang), &mut w);
            assert_eq!(w, stemmed, "{lang:?} {word}");
        }
    }
    let mut w = "running".to_string();
    stemmers.stem_in_place(None, &mut w);
    assert_eq!(w, "running");
    // Past the bound the memory starts afresh and answers stay the same.
    for i in 0..REMEMBERED_STEMS + 10 {
        stemmers.stem(Some(Language::English), &format!("w{i}s"));
    }
    assert!(stemmers.remembered <= REMEMBERED_STEMS);
    assert_eq!(stemmers.stem(Some(Language::English), "adoption"), "adopt");
}

#[test]
fn detects_languages() {
    assert_eq!(
        detect("The quick brown fox jumps over the lazy dog while the farmer watches."),
        Some(Language::English)
    );
    assert_eq!(
        detect(
            "Der schnelle braune Fuchs springt über den faulen Hund, während der Bauer zusieht."
        ),
        Some(Language::German)
    );
    assert_eq!(query_language("zzz"), Language::English);
    // A few words the detector cannot place are stemmed as queries are: in English.
    assert_eq!(detect("apple apple apple pie"), Some(Language::English));
}

#[test]
fn a_records_language_is_its_texts_and_its_titles_only_without_text() {
    let polish = "Wczoraj wieczorem poszliśmy z przyjaciółmi do kina, a potem do restauracji \
                      na kolację. Film był bardzo ciekawy, chociaż trochę za długi. Jutro \
                      planujemy wycieczkę w góry, jeżeli pogoda będzie dobra.";
    // Polish has no Snowball stemmer: unstemmed, not stemmed as the English of a short
    // file name.
    assert_eq!(record_language(polish, "notes.txt"), None);
    let french = "Le conseil municipal a approuvé hier soir le budget de la ville pour \
                      l'année prochaine, malgré l'opposition de plusieurs élus.";
    assert_eq!(
        record_language(french, "budget.txt"),
        Some(Language::French)
    );
    // No letters in the text: the title's language, a short one taken as English.
    assert_eq!(record_language("1234 5678", french), Some(Language::French));
    assert_eq!(record_language("", "notes.txt"), Some(Language::English));
}

#[test]
fn the_stem_tokenizer_stems_in_the_marked_language() {
    let stems = |text: &str| -> Vec<String> {
        let mut t = StemTokenizer::default();
        let mut stream = t.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    };
    assert_eq!(
        stems(&with_language(Some(Language::English), "running dogs")),
        ["run", "dog"]
    );
    assert_eq!(
        stems(&with_language(Some(Language::German), "Verträge")),
        ["vertrag"]
    );
    assert_eq!(stems(&with_language(None, "running")), ["running"]);
    assert_eq!(stems("\u{1}running"), ["running"], "no mark: unstemmed");
}

#[test]
fn stopwords() {
    assert!(is_stopword(Language::English, "the"));
    assert!(is_stopword(Language::English, "does"));
    assert!(!is_stopword(Language::English, "model"));
}
