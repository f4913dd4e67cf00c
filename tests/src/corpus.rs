//! Generated records for the search benchmarks: ~2 KB of pronounceable words with a Zipf-like
//! frequency (a 5,000-word vocabulary, fixed seeds), and 5 tags per record.

use inlet_core::{
    search::TagFilter,
    source::{
        CUSTOM, DataType, FacetTargetType, FacetType, NewFacet, NewObjectType, NewSource,
        NewTagConfig, SourceDataType, TagType,
    },
    tag::{TagValue, Tags},
    time,
};
use rand::{Rng, rngs::StdRng};

/// Distinct words.
pub const VOCABULARY: usize = 5000;

/// A pronounceable word for index `i` (distinct per index).
pub fn word(i: usize) -> String {
    const SYL: [&str; 16] = [
        "ka", "lo", "mi", "ne", "su", "ta", "ri", "vo", "pe", "da", "gu", "zi", "ba", "fo", "he",
        "wy",
    ];
    let mut n = i + 16;
    let mut w = String::new();
    while n > 0 {
        w.push_str(SYL[n % 16]);
        n /= 16;
    }
    w
}

/// Zipf-like pick: low indexes are much more frequent.
pub fn pick(rng: &mut StdRng) -> usize {
    let u: f64 = rng.random();
    ((VOCABULARY as f64).powf(u) as usize).saturating_sub(1)
}

/// Makes one query of a kind: its text and tag filters.
pub type QueryMaker = Box<dyn Fn(&mut StdRng) -> (String, Vec<TagFilter>)>;

/// `n` words picked as the records' text picks them.
pub fn words(rng: &mut StdRng, n: usize) -> String {
    (0..n)
        .map(|_| word(pick(rng)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A quoted phrase of two of the 10 most frequent words.
pub fn phrase(rng: &mut StdRng) -> String {
    format!(
        "\"{} {}\"",
        word(rng.random_range(0..10)),
        word(rng.random_range(0..10))
    )
}

/// A filter on one `team` value of the 20 the records carry.
pub fn team_filter(rng: &mut StdRng) -> TagFilter {
    TagFilter {
        tag: "team".into(),
        values: vec![format!("team-{}", rng.random_range(0..20))],
    }
}

/// About 2,000 bytes of words, with a sentence break now and then.
pub fn text(rng: &mut StdRng) -> String {
    let mut s = String::with_capacity(2100);
    while s.len() < 2000 {
        s.push_str(&word(pick(rng)));
        s.push(if rng.random_ratio(1, 12) { '.' } else { ' ' });
        if s.ends_with('.') {
            s.push(' ');
        }
    }
    s
}

/// The benchmarks' source: one RECORD object type with 5 tags and 4 facets (one mapping `due`
/// onto the modified date).
pub fn source(workspace_id: uuid::Uuid) -> inlet_core::source::Source {
    let tag = |name: &str, data_type, multi| NewTagConfig {
        tag_type: TagType::Simple,
        name: name.into(),
        external_id: name.into(),
        data_type,
        allow_multiple_values: multi,
    };
    let facet = |name: &str, target| NewFacet {
        facet_type: FacetType::Tag,
        name: name.into(),
        tag_external_id: name.into(),
        target_type: target,
        allow_multiple_values: true,
    };
    NewSource {
        definition_type: CUSTOM.into(),
        config_type: CUSTOM.into(),
        external_id: "bench".into(),
        name: "Bench".into(),
        track_status: true,
        object_types: vec![NewObjectType {
            default_access: Default::default(),
            complete_max_removal: None,
            name: "Docs".into(),
            external_id: "docs".into(),
            source_data_type: SourceDataType::Record,
            data_type: None,
            fields: vec![],
            tag_configs: vec![
                tag("color", DataType::Text, true),
                tag("team", DataType::Text, false),
                tag("status", DataType::Text, false),
                tag("priority", DataType::Long, false),
                tag("due", DataType::DateTime, false),
            ],
            facets: vec![
                facet("color", None),
                facet("team", None),
                facet("status", None),
                facet("due", Some(FacetTargetType::ModifiedDate)),
            ],
            templates: None,
        }],
    }
    .build(workspace_id, time::now())
    .expect("bench source")
}

/// A record's 5 tags: 1–2 colors of 8, a team of 20, a status of 5, a priority, a due date.
pub fn tags(rng: &mut StdRng) -> Tags {
    let mut t = Tags::new();
    let colors = [
        "red", "green", "blue", "cyan", "magenta", "yellow", "black", "white",
    ];
    t.insert(
        "color".into(),
        (0..rng.random_range(1..=2))
            .map(|_| TagValue::Text(colors[rng.random_range(0..colors.len())].into()))
            .collect(),
    );
    t.insert(
        "team".into(),
        vec![TagValue::Text(format!("team-{}", rng.random_range(0..20)))],
    );
    let statuses = ["open", "closed", "draft", "review", "archived"];
    t.insert(
        "status".into(),
        vec![TagValue::Text(statuses[rng.random_range(0..5)].into())],
    );
    t.insert(
        "priority".into(),
        vec![TagValue::Long(rng.random_range(1..=5))],
    );
    let day = chrono::Duration::days(rng.random_range(0..3650));
    t.insert(
        "due".into(),
        vec![TagValue::DateTime(
            chrono::DateTime::from_timestamp(1_500_000_000, 0).expect("epoch") + day,
        )],
    );
    t
}

/// The benchmarks' kinds of query, each with how to make one (search-bench and index-bench).
pub fn query_kinds() -> Vec<(&'static str, QueryMaker)> {
    vec![
        (
            "common word",
            Box::new(|r: &mut StdRng| (word(r.random_range(0..5)), vec![])),
        ),
        (
            "two words",
            Box::new(|r: &mut StdRng| {
                (
                    format!(
                        "{} {}",
                        word(r.random_range(0..50)),
                        word(r.random_range(0..50))
                    ),
                    vec![],
                )
            }),
        ),
        (
            "rare word",
            Box::new(|r: &mut StdRng| (word(r.random_range(2000..5000)), vec![])),
        ),
        ("3 words", Box::new(|r: &mut StdRng| (words(r, 3), vec![]))),
        (
            "12 words",
            Box::new(|r: &mut StdRng| (words(r, 12), vec![])),
        ),
        ("phrase", Box::new(|r: &mut StdRng| (phrase(r), vec![]))),
        (
            "word + tag filter",
            Box::new(|r: &mut StdRng| (word(r.random_range(0..50)), vec![team_filter(r)])),
        ),
        ("browse", Box::new(|_: &mut StdRng| (String::new(), vec![]))),
    ]
}
