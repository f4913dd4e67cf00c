use hashbrown::HashMap;

use super::utils::{TrigramsWithPositions, get_trigrams_with_positions};
use super::{ARABIC_LANGS, CYRILLIC_LANGS, DEVANAGARI_LANGS, HEBREW_LANGS, LATIN_LANGS};
use super::LangProfileList;
use super::{MAX_TOTAL_DISTANCE, MAX_TRIGRAM_DISTANCE, Trigram};
use crate::Lang;
use crate::core::{FilterList, Info, InternalQuery, Text, calculate_confidence};
use crate::scripts::grouping::MultiLangScript;

#[derive(Debug)]
pub struct RawOutcome {
    pub trigrams_count: usize,
    #[allow(dead_code)]
    pub raw_distances: Vec<(Lang, u32)>,
    pub scores: Vec<(Lang, f64)>,
}

#[inline]
pub fn detect(iquery: &InternalQuery) -> Option<Info> {
    let raw_outcome = raw_detect(iquery);
    let RawOutcome {
        trigrams_count,
        scores,
        ..
    } = raw_outcome;

    let mut raw_scores_iter = scores.into_iter();

    let opt_lang_score1 = raw_scores_iter.next();
    let opt_lang_score2 = raw_scores_iter.next();

    // TODO: Logic is duplicated in alphabets. Consider refactoring
    opt_lang_score1.map(|(lang1, score1)| {
        let script = iquery.multi_lang_script.to_script();
        let confidence = if let Some((_, score2)) = opt_lang_score2 {
            calculate_confidence(score1, score2, trigrams_count)
        } else {
            1.0
        };
        Info::new(script, lang1, confidence)
    })
}

#[inline]
pub fn raw_detect(iquery: &InternalQuery) -> RawOutcome {
    let lang_profile_list = script_to_lang_profile_list(iquery.multi_lang_script);
    // Inlet's patch: distances from the script's inverted profiles (same results).
    let inverted = inverted_profiles(iquery.multi_lang_script);
    calculate_scores_in_profiles(&iquery.text, iquery.filter_list, lang_profile_list, inverted)
}

// Inlet's patch: a script's language profiles inverted, built once: for each trigram, the
// languages whose profile holds it and its rank there. A text's distance to every language is
// then summed from the text's trigrams (a few hundred lookups) instead of looking up each of
// every profile's 300 trigrams in the text (over 11,000 lookups for the Latin script, most of
// whatlang's time per call). The distances are the same (`calculate_distance`, kept for the
// test that compares the two).
struct InvertedProfiles {
    /// Each language's profile length, in the list's order.
    lens: Vec<u32>,
    /// Trigram -> (language's place in the list, rank in its profile).
    by_trigram: HashMap<Trigram, Vec<(u16, u16)>>,
}

impl InvertedProfiles {
    fn new(list: LangProfileList) -> InvertedProfiles {
        let mut by_trigram: HashMap<Trigram, Vec<(u16, u16)>> = HashMap::new();
        for (place, &(_, profile)) in list.iter().enumerate() {
            for (rank, &trigram) in profile.iter().enumerate() {
                by_trigram
                    .entry(trigram)
                    .or_default()
                    .push((place as u16, rank as u16));
            }
        }
        InvertedProfiles {
            lens: list.iter().map(|(_, p)| p.len() as u32).collect(),
            by_trigram,
        }
    }
}

fn inverted_profiles(script: MultiLangScript) -> &'static InvertedProfiles {
    use std::sync::OnceLock;
    use MultiLangScript as MLS;
    static LATIN: OnceLock<InvertedProfiles> = OnceLock::new();
    static CYRILLIC: OnceLock<InvertedProfiles> = OnceLock::new();
    static ARABIC: OnceLock<InvertedProfiles> = OnceLock::new();
    static DEVANAGARI: OnceLock<InvertedProfiles> = OnceLock::new();
    static HEBREW: OnceLock<InvertedProfiles> = OnceLock::new();
    let cell = match script {
        MLS::Latin => &LATIN,
        MLS::Cyrillic => &CYRILLIC,
        MLS::Arabic => &ARABIC,
        MLS::Devanagari => &DEVANAGARI,
        MLS::Hebrew => &HEBREW,
    };
    cell.get_or_init(|| InvertedProfiles::new(script_to_lang_profile_list(script)))
}

fn script_to_lang_profile_list(script: MultiLangScript) -> LangProfileList {
    use MultiLangScript as MLS;
    match script {
        MLS::Latin => LATIN_LANGS,
        MLS::Cyrillic => CYRILLIC_LANGS,
        MLS::Arabic => ARABIC_LANGS,
        MLS::Devanagari => DEVANAGARI_LANGS,
        MLS::Hebrew => HEBREW_LANGS,
    }
}

#[inline]
fn calculate_scores_in_profiles(
    text: &Text,
    filter_list: &FilterList,
    lang_profile_list: LangProfileList,
    inverted: &InvertedProfiles,
) -> RawOutcome {
    let mut lang_distances: Vec<(Lang, u32)> = vec![];

    let TrigramsWithPositions {
        trigram_positions, ..
    } = get_trigrams_with_positions(&text.lowercase());
    let unique_trigrams_count = trigram_positions.len();

    // Inlet's patch: each profile's sum of distances, every trigram at the most at first, then
    // corrected for those the text holds (`calculate_distance`'s sum, in another order).
    let mut sums: Vec<i64> = inverted
        .lens
        .iter()
        .map(|&len| i64::from(len) * i64::from(MAX_TRIGRAM_DISTANCE))
        .collect();
    for (trigram, &n) in &trigram_positions {
        if let Some(entries) = inverted.by_trigram.get(trigram) {
            for &(place, rank) in entries {
                sums[usize::from(place)] += (i64::from(n) - i64::from(rank)).abs()
                    - i64::from(MAX_TRIGRAM_DISTANCE);
            }
        }
    }
    for (place, &(lang, _)) in lang_profile_list.iter().enumerate() {
        if !filter_list.is_allowed(lang) {
            continue;
        }
        let dist = finish_distance(sums[place] as u32, trigram_positions.len());
        lang_distances.push(((lang), dist));
    }

    // Sort languages by distance
    lang_distances.sort_unstable_by_key(|(_, dist)| *dist);

    let max_dist = unique_trigrams_count as u32 * MAX_TRIGRAM_DISTANCE;

    let raw_scores = lang_distances
        .iter()
        .map(|&(lang, distance)| (lang, distance_to_raw_score(distance, max_dist)))
        .collect();

    RawOutcome {
        trigrams_count: unique_trigrams_count,
        scores: raw_scores,
        raw_distances: lang_distances,
    }
}

#[cfg(test)]
fn calculate_distance(lang_trigrams: &[Trigram], text_trigrams: &HashMap<Trigram, u32>) -> u32 {
    let mut total_dist = 0u32;

    for (i, &trigram) in lang_trigrams.iter().enumerate() {
        let dist = match text_trigrams.get(&trigram) {
            Some(&n) => (n as i32 - i as i32).unsigned_abs(),
            None => MAX_TRIGRAM_DISTANCE,
        };
        total_dist += dist;
    }

    finish_distance(total_dist, text_trigrams.len())
}

// Inlet's patch: the end of `calculate_distance`, shared with the inverted sums.
#[inline]
fn finish_distance(mut total_dist: u32, text_trigrams: usize) -> u32 {
    let count = text_trigrams as u32;

    if MAX_TRIGRAM_DISTANCE > count {
        let delta = MAX_TRIGRAM_DISTANCE - count;
        total_dist -= delta * MAX_TRIGRAM_DISTANCE;
    }

    total_dist.clamp(0, MAX_TOTAL_DISTANCE)
}

#[inline]
fn distance_to_raw_score(distance: u32, max_distance: u32) -> f64 {
    let similarity = max_distance - distance;
    similarity as f64 / max_distance as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    // Inlet's patch: the inverted profiles give the distances `calculate_distance` gives, in
    // every script, for texts short and long, in and out of their script's languages.
    #[test]
    fn inverted_profiles_give_the_same_distances() {
        let long = "The quick brown fox jumps over the lazy dog while the committee reviews \
            the quarterly budget, and nobody remembers where the minutes of the last meeting \
            were filed. "
            .repeat(12);
        let texts = [
            "Die Ordnung muss für immer in diesem Codebase bleiben",
            "Le comité a examiné le budget trimestriel et personne ne sait où sont les notes",
            "Komitet przejrzał budżet kwartalny i nikt nie pamięta, gdzie są notatki",
            "Привет, как дела? Комитет рассмотрел квартальный бюджет и протоколы",
            "مرحبا بكم في الاجتماع الذي ناقش الميزانية الفصلية",
            "नमस्ते, समिति ने तिमाही बजट की समीक्षा की और कोई नहीं जानता",
            "שלום, הוועדה בחנה את התקציב הרבעוני ואף אחד לא זוכר",
            long.as_str(),
            "a",
            "",
        ];
        let scripts = [
            MultiLangScript::Latin,
            MultiLangScript::Cyrillic,
            MultiLangScript::Arabic,
            MultiLangScript::Devanagari,
            MultiLangScript::Hebrew,
        ];
        for text in texts {
            for script in scripts {
                let iq = InternalQuery {
                    text: Text::new(text),
                    filter_list: &FilterList::default(),
                    multi_lang_script: script,
                };
                let positions = get_trigrams_with_positions(&iq.text.lowercase()).trigram_positions;
                let mut expected: Vec<(Lang, u32)> = script_to_lang_profile_list(script)
                    .iter()
                    .map(|&(lang, profile)| (lang, calculate_distance(profile, &positions)))
                    .collect();
                expected.sort_unstable_by_key(|(_, dist)| *dist);
                assert_eq!(raw_detect(&iq).raw_distances, expected, "{text:?} {script:?}");
            }
        }
    }

    #[test]
    fn test_when_german_is_given() {
        let text = "Die Ordnung muss für immer in diesem Codebase bleiben";
        let iq = InternalQuery {
            text: Text::new(text),
            filter_list: &FilterList::default(),
            multi_lang_script: MultiLangScript::Latin,
        };
        let raw_outcome = raw_detect(&iq);

        assert_eq!(raw_outcome.trigrams_count, 50);

        let &(first_lang, first_score) = raw_outcome.scores.first().unwrap();
        let &(_last_lang, last_score) = raw_outcome.scores.last().unwrap();

        assert_eq!(first_lang, Lang::Deu);

        assert!(first_score >= 0.0);
        assert!(first_score <= 1.0);

        assert!(last_score >= 0.0);
        assert!(last_score <= 1.0);
    }
}
