//! How often a record's words are stemmed in the right language: the stemming decision of
//! [`record_language`] on Debian's man pages in 20 languages (the manpages-l10n project's
//! translations, GPL-3.0+, installed from Debian's `manpages-xx` packages; English from the
//! system's own pages). A page in a language with a Snowball stemmer must be stemmed in it; a
//! page in one without (Czech, Indonesian, Polish, Ukrainian, Vietnamese) must not be stemmed.
//!
//! This guards the language detector against dependency updates (whatlang is used as
//! released). Without the pages the test is skipped, unless `INLET_REQUIRE_MANPAGES=1` (set by
//! `.ci/run`, which installs them) makes that a failure.

use inlet_search_tantivy::analysis::record_language;
use std::io::Read;
use std::path::{Path, PathBuf};
use tantivy::tokenizer::Language;

/// Man page folders, the stemming each page in them must get, and the share of pages given it
/// when measured (2026-11-29, whatlang 0.18.0, Debian 12's packages; docs/performance.md,
/// "Language detection"). Danish and Norwegian Bokmål are mostly taken for each other.
const LANGUAGES: &[(&str, Option<Language>, f64)] = &[
    ("", Some(Language::English), 0.988),
    ("da", Some(Language::Danish), 0.138),
    ("de", Some(Language::German), 0.950),
    ("el", Some(Language::Greek), 0.800),
    ("es", Some(Language::Spanish), 0.787),
    ("fi", Some(Language::Finnish), 0.700),
    ("fr", Some(Language::French), 0.975),
    ("hu", Some(Language::Hungarian), 0.938),
    ("it", Some(Language::Italian), 0.775),
    ("nb", Some(Language::Norwegian), 0.163),
    ("nl", Some(Language::Dutch), 0.812),
    ("pt", Some(Language::Portuguese), 0.963),
    ("ro", Some(Language::Romanian), 0.925),
    ("ru", Some(Language::Russian), 0.800),
    ("sv", Some(Language::Swedish), 0.912),
    ("cs", None, 0.950),
    ("id", None, 0.923),
    ("pl", None, 0.925),
    ("uk", None, 1.000),
    ("vi", None, 0.963),
];

/// Pages read per language (the first, by path), and the bytes of each one's text judged.
const PAGES: usize = 80;
const CHUNK: usize = 1024;
/// A language with fewer pages than this means its package is missing.
const FEWEST_PAGES: usize = 5;

/// The lowest share of right decisions over every page (0.816 measured), and how far below its
/// measured share one language may fall: a detector update that reads worse fails here.
const OVERALL: f64 = 0.80;
const SLACK: f64 = 0.10;

#[test]
fn stemming_decisions_on_translated_man_pages() {
    let root = Path::new("/usr/share/man");
    let mut right = 0;
    let mut all = 0;
    let mut report = Vec::new();
    let mut missing = Vec::new();
    for &(folder, expected, measured) in LANGUAGES {
        let texts = pages(&root.join(folder));
        if texts.len() < FEWEST_PAGES {
            missing.push(if folder.is_empty() { "en" } else { folder });
            continue;
        }
        let good = texts
            .iter()
            .filter(|t| record_language(t, "page.txt") == expected)
            .count();
        let share = good as f64 / texts.len() as f64;
        report.push((folder, share, measured, texts.len()));
        right += good;
        all += texts.len();
    }
    if !missing.is_empty() {
        let message = format!(
            "man pages missing for {missing:?}: apt-get install manpages-{{{}}}",
            missing.join(",")
        );
        assert!(
            std::env::var("INLET_REQUIRE_MANPAGES").as_deref() != Ok("1"),
            "{message}"
        );
        eprintln!("skipped: {message}");
        return;
    }
    let overall = right as f64 / all as f64;
    eprintln!("stemming decision right on {right} of {all} pages ({overall:.3})");
    for (folder, share, measured, n) in &report {
        eprintln!("  {folder:>2}: {share:.3} of {n} (measured {measured:.3})");
    }
    assert!(overall >= OVERALL, "accuracy {overall:.3} < {OVERALL}");
    for (folder, share, measured, _) in report {
        assert!(
            share >= measured - SLACK,
            "{folder}: accuracy {share:.3}, measured {measured:.3}"
        );
    }
}

/// The text of up to [`PAGES`] pages of a man folder (sections 1 to 8), roff markup removed,
/// each cut to [`CHUNK`] bytes; pages of under 300 bytes of text are left out.
fn pages(folder: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = (1..=8)
        .filter_map(|s| std::fs::read_dir(folder.join(format!("man{s}"))).ok())
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "gz"))
        .collect();
    files.sort();
    let mut texts = Vec::new();
    for file in files {
        if texts.len() == PAGES {
            break;
        }
        let Some(roff) = gunzip(&file) else { continue };
        let text = plain(&roff);
        if text.len() >= 300 {
            texts.push(cut(&text, CHUNK).to_string());
        }
    }
    texts
}

fn gunzip(file: &Path) -> Option<String> {
    let bytes = std::fs::read(file).ok()?;
    let mut out = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut out)
        .ok()?;
    Some(out)
}

/// A man page's words: request lines (`.TH`, `.SH`, comments) dropped, font and character
/// escapes removed, whitespace collapsed.
fn plain(roff: &str) -> String {
    let mut out = String::new();
    for line in roff.lines() {
        if line.starts_with('.') || line.starts_with('\'') {
            continue;
        }
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                // A font change: \fB, \fI and \fR end with the letter the guard read; \f(CW
                // has two more.
                Some('f') if chars.next() == Some('(') => {
                    chars.next();
                    chars.next();
                }
                // \(em and other two-letter characters.
                Some('(') => {
                    chars.next();
                    chars.next();
                    out.push(' ');
                }
                // A string: \*x ends with the letter the guard read; \*[name] runs to `]`.
                Some('*') if chars.next() == Some('[') => {
                    for c in chars.by_ref() {
                        if c == ']' {
                            break;
                        }
                    }
                }
                Some('-') => out.push('-'),
                Some('e') | Some('\\') => out.push('\\'),
                _ => {}
            }
        }
        out.push(' ');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(text: &str, bytes: usize) -> &str {
    let mut end = text.len().min(bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
