//! Folder trees of HIERARCHICAL tags (DESIGN 6): the folder model and the pure rules every
//! store and the search filters share — what may be put or deleted, cycles, counts that roll
//! up, a folder with the folders below it.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    Error, Result,
    source::{ObjectType, Source, TagConfig, TagType},
};

/// Longest folder externalId, in bytes (as a record's).
pub const MAX_ID_BYTES: usize = crate::input::MAX_ID_BYTES;
/// Longest folder name, in characters (after trimming).
pub const MAX_NAME_CHARS: usize = 500;

/// A folder of a HIERARCHICAL tag (DESIGN 6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Folder {
    /// The caller's id; records carry it as the tag value.
    pub external_id: String,
    /// Display name.
    pub name: String,
    /// The parent folder; `None` for a root.
    pub parent_external_id: Option<String>,
}

impl Folder {
    /// A folder as a caller puts it: an externalId of 1 to [`MAX_ID_BYTES`] bytes, a name of 1 to
    /// [`MAX_NAME_CHARS`] characters once trimmed, and an empty parent read as none (a root).
    pub fn new(
        external_id: String,
        name: &str,
        parent_external_id: Option<String>,
    ) -> Result<Self> {
        if external_id.is_empty() || external_id.len() > MAX_ID_BYTES {
            return Err(Error::invalid(format!(
                "a folder externalId has 1 to {MAX_ID_BYTES} bytes"
            )));
        }
        let name = name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return Err(Error::invalid(format!(
                "a folder name has 1 to {MAX_NAME_CHARS} characters"
            )));
        }
        Ok(Self {
            external_id,
            name: name.to_string(),
            parent_external_id: parent_external_id.filter(|p| !p.is_empty()),
        })
    }
}

/// The source's tag config with this id, which must be HIERARCHICAL to hold folders.
pub fn folder_tag(source: &Source, tag_config_id: Uuid) -> Result<&TagConfig> {
    let tc = source
        .object_types
        .iter()
        .flat_map(|o| o.tag_configs.iter())
        .find(|t| t.id == tag_config_id)
        .ok_or_else(|| Error::not_found(format!("tag config {tag_config_id} not found")))?;
    if tc.tag_type != TagType::Hierarchical {
        return Err(Error::invalid(format!(
            "tag '{}' is not HIERARCHICAL; folders belong to HIERARCHICAL tags",
            tc.external_id
        )));
    }
    Ok(tc)
}

/// The HIERARCHICAL tag a facet of the source counts.
pub fn facet_folder_tag(source: &Source, facet_id: Uuid) -> Result<&TagConfig> {
    for ot in &source.object_types {
        if let Some(f) = ot.facets.iter().find(|f| f.id == facet_id) {
            let tc = ot
                .tag_config(&f.tag_external_id)
                .ok_or_else(|| Error::not_found("the facet's tag is gone"))?;
            return folder_tag(source, tc.id);
        }
    }
    Err(Error::not_found(format!("facet {facet_id} not found")))
}

/// Checks that `folder` may be put into a tree holding `folders`: its parent exists
/// ([`Error::NotFound`]) and it is not placed under its own descendant ([`Error::Invalid`]).
/// Answers whether it exists already (a rename or move, not a creation).
pub fn check_put(folders: &[Folder], folder: &Folder) -> Result<bool> {
    if let Some(parent) = &folder.parent_external_id
        && !folders.iter().any(|f| f.external_id == *parent)
    {
        return Err(Error::not_found(format!(
            "parent folder '{parent}' not found"
        )));
    }
    if would_cycle(
        folders,
        &folder.external_id,
        folder.parent_external_id.as_deref(),
    ) {
        return Err(Error::invalid(format!(
            "folder '{}' cannot be placed under its own descendant",
            folder.external_id
        )));
    }
    Ok(folders.iter().any(|f| f.external_id == folder.external_id))
}

/// Checks that the folder `external_id` may be deleted from `folders` while `records` live
/// records carry it: it exists ([`Error::NotFound`]), has no child folders and holds no
/// records ([`Error::Conflict`]).
pub fn check_delete(folders: &[Folder], external_id: &str, records: u64) -> Result<()> {
    if !folders.iter().any(|f| f.external_id == external_id) {
        return Err(Error::not_found(format!(
            "folder '{external_id}' not found"
        )));
    }
    if folders
        .iter()
        .any(|f| f.parent_external_id.as_deref() == Some(external_id))
    {
        return Err(Error::conflict(format!(
            "folder '{external_id}' has child folders"
        )));
    }
    if records > 0 {
        return Err(Error::conflict(format!(
            "folder '{external_id}' still holds records"
        )));
    }
    Ok(())
}

/// Whether making `parent` the parent of `id` would close a cycle in `folders`.
pub fn would_cycle(folders: &[Folder], id: &str, parent: Option<&str>) -> bool {
    let by_id: HashMap<&str, Option<&str>> = folders
        .iter()
        .map(|f| (f.external_id.as_str(), f.parent_external_id.as_deref()))
        .collect();
    let mut at = parent;
    let mut steps = 0;
    while let Some(p) = at {
        if p == id || steps > folders.len() {
            return true;
        }
        at = by_id.get(p).copied().flatten();
        steps += 1;
    }
    false
}

/// Record counts that roll up: each folder's own count plus all its descendants'.
pub fn rolled_up_counts(folders: &[Folder], own: &HashMap<String, u64>) -> HashMap<String, u64> {
    let mut total: HashMap<String, u64> = HashMap::new();
    for f in folders {
        let n = own.get(&f.external_id).copied().unwrap_or(0);
        if n == 0 {
            continue;
        }
        // Add to the folder and every ancestor (guarding against damaged cycles).
        let mut at = Some(f.external_id.as_str());
        let mut steps = 0;
        while let Some(id) = at {
            *total.entry(id.to_string()).or_default() += n;
            at = folders
                .iter()
                .find(|x| x.external_id == id)
                .and_then(|x| x.parent_external_id.as_deref());
            steps += 1;
            if steps > folders.len() {
                break;
            }
        }
    }
    total
}

/// `values` and the externalIds of every folder below them (a folder filter includes its
/// subfolders, as folder counts roll up).
pub fn with_descendants(folders: &[Folder], values: &[String]) -> Vec<String> {
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in folders {
        if let Some(p) = f.parent_external_id.as_deref() {
            children.entry(p).or_default().push(&f.external_id);
        }
    }
    let mut out: Vec<String> = values.to_vec();
    let mut seen: std::collections::HashSet<String> = out.iter().cloned().collect();
    let mut i = 0;
    while i < out.len() {
        let kids: Vec<String> = children
            .get(out[i].as_str())
            .map(|k| k.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default();
        for k in kids {
            if seen.insert(k.clone()) {
                out.push(k);
            }
        }
        i += 1;
    }
    out
}

/// Whether a tag config is a folder tree.
pub fn is_folder_tag(object_type: &ObjectType, tag: &str) -> bool {
    object_type
        .tag_config(tag)
        .is_some_and(|t| t.tag_type == TagType::Hierarchical)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(id: &str, parent: Option<&str>) -> Folder {
        Folder {
            external_id: id.into(),
            name: id.to_uppercase(),
            parent_external_id: parent.map(Into::into),
        }
    }

    #[test]
    fn put_and_delete_rules() {
        let fs = [folder("a", None), folder("b", Some("a"))];
        assert!(!check_put(&fs, &folder("c", Some("b"))).unwrap());
        assert!(check_put(&fs, &folder("b", None)).unwrap());
        assert!(matches!(
            check_put(&fs, &folder("c", Some("x"))),
            Err(Error::NotFound(_))
        ));
        assert!(matches!(
            check_put(&fs, &folder("a", Some("b"))),
            Err(Error::Invalid(_))
        ));
        check_delete(&fs, "b", 0).unwrap();
        assert!(matches!(check_delete(&fs, "x", 0), Err(Error::NotFound(_))));
        assert!(matches!(check_delete(&fs, "a", 0), Err(Error::Conflict(_))));
        assert!(matches!(check_delete(&fs, "b", 1), Err(Error::Conflict(_))));
    }

    #[test]
    fn cycles_are_detected() {
        let fs = [
            folder("a", None),
            folder("b", Some("a")),
            folder("c", Some("b")),
        ];
        assert!(would_cycle(&fs, "a", Some("c")));
        assert!(would_cycle(&fs, "a", Some("a")));
        assert!(!would_cycle(&fs, "c", Some("a")));
        assert!(!would_cycle(&fs, "d", Some("c")));
        assert!(!would_cycle(&fs, "a", None));
    }

    #[test]
    fn counts_roll_up_to_ancestors() {
        let fs = [
            folder("a", None),
            folder("b", Some("a")),
            folder("c", Some("b")),
            folder("x", None),
        ];
        let own: HashMap<String, u64> = [("a".into(), 1), ("b".into(), 2), ("c".into(), 4)].into();
        let total = rolled_up_counts(&fs, &own);
        assert_eq!(total["a"], 7);
        assert_eq!(total["b"], 6);
        assert_eq!(total["c"], 4);
        assert!(!total.contains_key("x"));
    }

    #[test]
    fn a_folder_filter_reaches_every_folder_below() {
        let fs = [
            folder("a", None),
            folder("b", Some("a")),
            folder("c", Some("b")),
            folder("x", None),
        ];
        assert_eq!(with_descendants(&fs, &["b".into()]), ["b", "c"]);
        assert_eq!(
            with_descendants(&fs, &["a".into(), "c".into()]),
            ["a", "c", "b"]
        );
        assert_eq!(with_descendants(&fs, &["x".into()]), ["x"]);
    }
}
