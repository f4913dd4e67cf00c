//! Search (DESIGN 7): the limits of a query and the pieces of a record that filters and facets
//! read — its tag rows, with the dates a facet maps onto the created and modified filters. The
//! search itself is a [`crate::index::SearchIndex`].

use serde::{Deserialize, Serialize};

use crate::{
    record::Record,
    source::{FacetTargetType, ObjectType},
    tag::{TagValue, Tags},
    time,
};

/// Results per page when the caller names none.
pub const DEFAULT_LIMIT: u32 = 20;
/// Most results per page.
pub const MAX_LIMIT: u32 = 100;
/// Longest accepted query text, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Bytes of a record's text that are indexed.
pub const MAX_INDEXED_BYTES: usize = 512 * 1024;
/// Values reported per facet, most frequent first.
pub const MAX_FACET_VALUES: usize = 50;
/// The deepest result a cursor reaches (offset + limit).
pub const MAX_DEPTH: u64 = 10_000;
/// Pseudo-tag carrying the date a CREATED_DATE facet maps onto (in [`TagRow`]s).
pub const CREATED_TAG: &str = "$created";
/// Pseudo-tag carrying the date a MODIFIED_DATE facet maps onto.
pub const MODIFIED_TAG: &str = "$modified";

/// A tag filter: records carrying any of `values` of tag `tag` (OR within a tag; several
/// filters AND together).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagFilter {
    /// The tag's externalId.
    pub tag: String,
    /// Values in [`index_value`] form.
    pub values: Vec<String>,
}

/// The string form of a tag value that filters and facets use: [`TagValue::canonical`] (text as
/// is, numbers in decimal, dates as `2026-11-22T10:42:10.123+00:00` in UTC, so they sort).
pub fn index_value(v: &TagValue) -> String {
    v.canonical()
}

/// One row of a record's tag index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagRow {
    /// The tag's externalId, or [`CREATED_TAG`] / [`MODIFIED_TAG`].
    pub tag: String,
    /// [`index_value`] of the value.
    pub value: String,
    /// Milliseconds for DATE_TIME values.
    pub num: Option<i64>,
}

/// The rows a store keeps for a record's tags, including the date a facet with targetType maps
/// onto the built-in created/modified filters.
pub fn tag_rows(object_type: Option<&ObjectType>, tags: &Tags) -> Vec<TagRow> {
    let mut rows = Vec::new();
    for (tag, values) in tags {
        for v in values {
            rows.push(TagRow {
                tag: tag.clone(),
                value: index_value(v),
                num: match v {
                    TagValue::DateTime(t) => Some(t.timestamp_millis()),
                    _ => None,
                },
            });
        }
    }
    if let Some(ot) = object_type {
        for facet in &ot.facets {
            let Some(target) = facet.target_type else {
                continue;
            };
            let first = tags.get(&facet.tag_external_id).and_then(|vs| {
                vs.iter().find_map(|v| match v {
                    TagValue::DateTime(t) => Some(*t),
                    _ => None,
                })
            });
            if let Some(t) = first {
                rows.push(TagRow {
                    tag: match target {
                        FacetTargetType::CreatedDate => CREATED_TAG,
                        FacetTargetType::ModifiedDate => MODIFIED_TAG,
                    }
                    .into(),
                    value: time::format(&t),
                    num: Some(t.timestamp_millis()),
                });
            }
        }
    }
    rows
}

/// The date a created/modified filter compares: the mapped tag's, else the record's own.
pub fn effective_dates(record: &Record, rows: &[TagRow]) -> (i64, i64) {
    let find = |tag: &str| rows.iter().find(|r| r.tag == tag).and_then(|r| r.num);
    (
        find(CREATED_TAG).unwrap_or_else(|| record.created_date.timestamp_millis()),
        find(MODIFIED_TAG).unwrap_or_else(|| record.modified_date.timestamp_millis()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_rows_carry_canonical_values_and_dates() {
        let due = chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2024, 1, 2, 3, 4, 5).unwrap();
        let tags: Tags = [
            ("color".to_string(), vec![TagValue::Text("red".into())]),
            ("due".to_string(), vec![TagValue::DateTime(due)]),
        ]
        .into();
        let rows = tag_rows(None, &tags);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].value, "red");
        assert_eq!(rows[1].num, Some(due.timestamp_millis()));
    }
}
