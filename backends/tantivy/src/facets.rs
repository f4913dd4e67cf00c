//! Exact facet counts over every match (DESIGN 7), read from a string fast field holding each
//! record's `tag` + [`SEPARATOR`] + `value` entries. A segment's dictionary is sorted, so one
//! tag's values are one range of term ordinals: counting is an array increment per value of
//! each match, and ordinals become strings once per segment, only for values that occurred.

use std::collections::{BTreeMap, HashMap};

use tantivy::{
    DocId, Score, SegmentOrdinal, SegmentReader,
    collector::{Collector, SegmentCollector},
    columnar::{StrColumn, TermOrdHit},
};

/// Between a tag's externalId and its value in the fast field (no externalId holds it: the
/// input policy refuses control characters).
pub const SEPARATOR: char = '\u{1}';

/// The fast field's entry for a tag value.
pub fn entry(tag: &str, value: &str) -> String {
    format!("{tag}{SEPARATOR}{value}")
}

/// Counts values of `tags` over the matching documents: tag → value → documents.
pub struct TagCounts {
    /// The fast field.
    pub field: String,
    /// Tags whose values are counted.
    pub tags: Vec<String>,
}

/// Value ordinals spanned by one segment's counting array beyond which a map is used instead.
const MAX_DENSE: u64 = 1 << 18;

/// One tag's ordinal range in a segment, and where its counts start.
struct Span {
    tag: usize,
    start: u64,
    end: u64,
    offset: usize,
}

/// Counts of one segment.
pub struct SegmentCounts {
    column: Option<StrColumn>,
    spans: Vec<Span>,
    dense: Vec<u32>,
    sparse: HashMap<u64, u32>,
    tags: Vec<String>,
}

fn ordinal(hit: TermOrdHit) -> u64 {
    match hit {
        TermOrdHit::Exact(o) | TermOrdHit::Next(o) => o,
    }
}

impl Collector for TagCounts {
    type Fruit = BTreeMap<String, HashMap<String, u64>>;
    type Child = SegmentCounts;

    fn for_segment(
        &self,
        _segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentCounts> {
        let column = reader.fast_fields().str(&self.field)?;
        let mut spans = Vec::new();
        let mut offset = 0usize;
        if let Some(column) = &column {
            let dictionary = column.dictionary();
            for (i, tag) in self.tags.iter().enumerate() {
                let start = ordinal(dictionary.term_ord_or_next(format!("{tag}{SEPARATOR}"))?);
                let end = ordinal(dictionary.term_ord_or_next(format!("{tag}\u{2}"))?);
                if start < end {
                    spans.push(Span {
                        tag: i,
                        start,
                        end,
                        offset,
                    });
                    offset += (end - start) as usize;
                }
            }
        }
        let dense = if (offset as u64) <= MAX_DENSE {
            vec![0; offset]
        } else {
            Vec::new()
        };
        Ok(SegmentCounts {
            column,
            spans,
            dense,
            sparse: HashMap::new(),
            tags: self.tags.clone(),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(
        &self,
        fruits: Vec<BTreeMap<String, HashMap<String, u64>>>,
    ) -> tantivy::Result<Self::Fruit> {
        let mut out: Self::Fruit = BTreeMap::new();
        for fruit in fruits {
            for (tag, values) in fruit {
                let counts = out.entry(tag).or_default();
                for (value, n) in values {
                    *counts.entry(value).or_default() += n;
                }
            }
        }
        Ok(out)
    }
}

impl SegmentCollector for SegmentCounts {
    type Fruit = BTreeMap<String, HashMap<String, u64>>;

    fn collect(&mut self, doc: DocId, _score: Score) {
        let Some(column) = &self.column else {
            return;
        };
        for ord in column.term_ords(doc) {
            if let Some(span) = self.spans.iter().find(|s| ord >= s.start && ord < s.end) {
                if self.dense.is_empty() {
                    *self.sparse.entry(ord).or_default() += 1;
                } else {
                    self.dense[span.offset + (ord - span.start) as usize] += 1;
                }
            }
        }
    }

    fn harvest(self) -> Self::Fruit {
        let mut out: Self::Fruit = BTreeMap::new();
        let Some(column) = &self.column else {
            return out;
        };
        let mut text = String::new();
        let mut record = |ord: u64, n: u32, tag: usize| {
            if n == 0 {
                return;
            }
            text.clear();
            if column.ord_to_str(ord, &mut text).unwrap_or(false)
                && let Some((_, value)) = text.split_once(SEPARATOR)
            {
                *out.entry(self.tags[tag].clone())
                    .or_default()
                    .entry(value.to_string())
                    .or_default() += u64::from(n);
            }
        };
        for span in &self.spans {
            if self.dense.is_empty() {
                for (&ord, &n) in &self.sparse {
                    if ord >= span.start && ord < span.end {
                        record(ord, n, span.tag);
                    }
                }
            } else {
                for ord in span.start..span.end {
                    let n = self.dense[span.offset + (ord - span.start) as usize];
                    record(ord, n, span.tag);
                }
            }
        }
        out
    }
}
