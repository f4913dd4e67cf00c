//! The decisions of a run, free of I/O: which object type and tag to use, what to do with each
//! file, which folders to create and which are stale.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::{
    api::{Folder, Metadata, ObjectType, Source, TagConfig, Target, encode},
    local::{LocalFolder, folder_name},
};

/// externalId of the object type a created source has.
pub const OBJECT_TYPE_ID: &str = "files";
/// externalId of the HIERARCHICAL tag a created source has.
pub const FOLDER_TAG_ID: &str = "folder";

/// The body of `POST /sources` for `--create-source`: one RECORD object type `files` with a
/// HIERARCHICAL tag `folder` and a TAG facet over it (the facet lets the tool list folders).
pub fn source_body(external_id: &str, name: &str) -> Value {
    json!({
        "definition": {"type": "CUSTOM"},
        "externalId": external_id,
        "config": {
            "type": "CUSTOM",
            "name": name,
            "trackStatus": true,
            "specification": {"application": {"objectTypes": [{
                "name": "Files",
                "externalId": OBJECT_TYPE_ID,
                "sourceDataType": "RECORD",
                "fields": [],
                "tagConfigs": [{
                    "type": "HIERARCHICAL",
                    "name": "Folder",
                    "externalId": FOLDER_TAG_ID,
                    "dataType": "TEXT",
                    "allowMultipleValues": false
                }],
                "facets": [{
                    "type": "TAG",
                    "name": "Folder",
                    "tagConfig": {"externalId": FOLDER_TAG_ID},
                    "allowMultipleValues": true
                }]
            }]}}
        }
    })
}

/// Where the files go: the object type, its folder tag and (if there is one) the facet over
/// that tag, through which existing folders can be listed.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Source and object type ids.
    pub target: Target,
    /// The object type's name, for messages.
    pub object_type_name: String,
    /// The HIERARCHICAL tag config.
    pub tag: TagConfig,
    /// A facet counting that tag.
    pub facet_id: Option<String>,
}

fn is_folder_tag(t: &TagConfig) -> bool {
    t.kind == "HIERARCHICAL"
}

fn matches(id: &str, external_id: &str, wanted: &str) -> bool {
    id == wanted || external_id == wanted
}

/// Picks the object type and the HIERARCHICAL tag of `source`, by the `--object-type` and
/// `--folder-tag` choices when given, else the only one that fits; the error says what is
/// missing or ambiguous.
pub fn layout(
    source: &Source,
    object_type: Option<&str>,
    folder_tag: Option<&str>,
) -> Result<Layout, String> {
    let label = format!("source {} ('{}')", source.id, source.external_id);
    if !source.config.track_status {
        return Err(format!(
            "{label} was created without trackStatus=true, so it accepts no uploads"
        ));
    }
    let fits = |ot: &&ObjectType| {
        ot.source_data_type == "RECORD" && ot.tag_configs.iter().any(is_folder_tag)
    };
    let ot = match object_type {
        Some(wanted) => {
            let ot = source
                .source_object_types
                .iter()
                .find(|ot| matches(&ot.id, &ot.external_id, wanted))
                .ok_or_else(|| format!("{label} has no object type '{wanted}'"))?;
            if ot.source_data_type != "RECORD" {
                return Err(format!(
                    "object type '{}' is {}; files go to a RECORD object type",
                    ot.external_id, ot.source_data_type
                ));
            }
            if !ot.tag_configs.iter().any(is_folder_tag) {
                return Err(no_folder_tag(&label, &ot.external_id));
            }
            ot
        }
        None => {
            let candidates: Vec<&ObjectType> =
                source.source_object_types.iter().filter(fits).collect();
            match candidates.as_slice() {
                [one] => *one,
                [] => {
                    return Err(format!(
                        "{label} has no RECORD object type with a HIERARCHICAL tag config; \
                         sub-folders are mirrored as HIERARCHICAL folders, so one is needed \
                         (or let the tool make a suitable source with --create-source)"
                    ));
                }
                several => {
                    let names: Vec<&str> = several.iter().map(|o| o.external_id.as_str()).collect();
                    return Err(format!(
                        "{label} has several RECORD object types with a HIERARCHICAL tag \
                         ({}); choose one with --object-type",
                        names.join(", ")
                    ));
                }
            }
        }
    };
    let tags: Vec<&TagConfig> = ot
        .tag_configs
        .iter()
        .filter(|t| is_folder_tag(t))
        .filter(|t| folder_tag.is_none_or(|w| matches(&t.id, &t.external_id, w)))
        .collect();
    let tag = match (tags.as_slice(), folder_tag) {
        ([one], _) => (*one).clone(),
        ([], Some(wanted)) => {
            return Err(format!(
                "object type '{}' has no HIERARCHICAL tag config '{wanted}'",
                ot.external_id
            ));
        }
        ([], None) => return Err(no_folder_tag(&label, &ot.external_id)),
        (several, _) => {
            let names: Vec<&str> = several.iter().map(|t| t.external_id.as_str()).collect();
            return Err(format!(
                "object type '{}' has several HIERARCHICAL tags ({}); choose one with \
                 --folder-tag",
                ot.external_id,
                names.join(", ")
            ));
        }
    };
    if tag.data_type != "TEXT" {
        return Err(format!(
            "HIERARCHICAL tag '{}' has dataType {}; folder ids are paths, so it must be TEXT",
            tag.external_id, tag.data_type
        ));
    }
    let facet_id = ot
        .facets
        .iter()
        .find(|f| f.tag_config.external_id == tag.external_id)
        .map(|f| f.id.clone());
    Ok(Layout {
        target: Target {
            source_id: source.id.clone(),
            object_type_id: ot.id.clone(),
        },
        object_type_name: ot.name.clone(),
        tag,
        facet_id,
    })
}

fn no_folder_tag(label: &str, object_type: &str) -> String {
    format!(
        "object type '{object_type}' of {label} has no HIERARCHICAL tag config; sub-folders \
         are mirrored as HIERARCHICAL folders, so one is needed"
    )
}

/// What to do with one local file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The stored checksum is the local one: touch the record.
    Touch,
    /// Upload: the record is new (`new`), changed, or was removed by an earlier sync.
    Upload {
        /// No record with this externalId exists.
        new: bool,
    },
}

/// The spec's skip procedure: touch when the stored checksum equals the local one, upload
/// otherwise (a removed record has no checksum, so it is uploaded again).
pub fn decide(stored: Option<&Metadata>, checksum: &str) -> Action {
    match stored {
        None => Action::Upload { new: true },
        Some(m) if m.external_checksum.as_deref() == Some(checksum) => Action::Touch,
        Some(_) => Action::Upload { new: false },
    }
}

/// Folder work of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderPlan {
    /// Folders to create or correct, parents first.
    pub put: Vec<Folder>,
    /// Remote folders with no local directory, children first (deleted after COMPLETE).
    pub stale: Vec<String>,
}

/// Compares the local directories with the remote folders. Without a listing (`None`, the
/// object type has no facet over the tag) every local folder is put (the PUT is idempotent)
/// and nothing is known to be stale.
pub fn folders(local: &[LocalFolder], remote: Option<&[Folder]>) -> FolderPlan {
    let wanted: Vec<Folder> = local
        .iter()
        .map(|f| Folder {
            external_id: f.external_id.clone(),
            name: folder_name(&f.name),
            parent_external_id: f.parent.clone(),
        })
        .collect();
    let Some(remote) = remote else {
        return FolderPlan {
            put: wanted,
            stale: Vec::new(),
        };
    };
    let put = wanted
        .iter()
        .filter(|w| !remote.contains(w))
        .cloned()
        .collect();
    let local_ids: BTreeSet<&str> = local.iter().map(|f| f.external_id.as_str()).collect();
    let mut stale: Vec<&Folder> = remote
        .iter()
        .filter(|r| !local_ids.contains(r.external_id.as_str()))
        .collect();
    // Children first: a folder is deeper than its parent in the tree the server keeps.
    let depth = |f: &Folder| {
        let mut d = 0;
        let mut at = f.parent_external_id.as_deref();
        while let Some(p) = at {
            d += 1;
            if d > remote.len() {
                break;
            }
            at = remote
                .iter()
                .find(|r| r.external_id == p)
                .and_then(|r| r.parent_external_id.as_deref());
        }
        d
    };
    stale.sort_by_key(|f| (std::cmp::Reverse(depth(f)), f.external_id.clone()));
    FolderPlan {
        put,
        stale: stale.into_iter().map(|f| f.external_id.clone()).collect(),
    }
}

/// The record url of a file: `prefix` + its percent-encoded relative path (each segment
/// encoded, `/` kept); none without a prefix (Inlet keeps http and https links only, and a
/// local path is no link for the readers of search results).
pub fn external_url(prefix: Option<&str>, external_id: &str) -> Option<String> {
    prefix.map(|p| {
        let path: Vec<String> = external_id.split('/').map(encode).collect();
        format!("{p}{}", path.join("/"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Facet, SourceConfig, TagRef};

    fn tag(id: &str, kind: &str) -> TagConfig {
        TagConfig {
            id: format!("{id}-id"),
            kind: kind.into(),
            external_id: id.into(),
            data_type: "TEXT".into(),
        }
    }

    fn ot(id: &str, kind: &str, tags: Vec<TagConfig>) -> ObjectType {
        ObjectType {
            id: format!("{id}-id"),
            name: id.into(),
            external_id: id.into(),
            source_data_type: kind.into(),
            facets: tags
                .iter()
                .map(|t| Facet {
                    id: format!("{}-facet", t.external_id),
                    tag_config: TagRef {
                        external_id: t.external_id.clone(),
                    },
                })
                .collect(),
            tag_configs: tags,
        }
    }

    fn source(types: Vec<ObjectType>) -> Source {
        Source {
            id: "s".into(),
            external_id: "src".into(),
            config: SourceConfig {
                name: "S".into(),
                track_status: true,
            },
            source_object_types: types,
        }
    }

    #[test]
    fn layout_picks_the_only_fitting_object_type() {
        let s = source(vec![
            ot("plain", "RECORD", vec![tag("color", "SIMPLE")]),
            ot("json", "STRUCTURED", vec![tag("f", "HIERARCHICAL")]),
            ot("files", "RECORD", vec![tag("folder", "HIERARCHICAL")]),
        ]);
        let l = layout(&s, None, None).unwrap();
        assert_eq!(l.target.object_type_id, "files-id");
        assert_eq!(l.tag.external_id, "folder");
        assert_eq!(l.facet_id.as_deref(), Some("folder-facet"));
        assert!(
            layout(&s, Some("plain"), None)
                .unwrap_err()
                .contains("no HIERARCHICAL")
        );
        assert!(
            layout(&s, Some("json"), None)
                .unwrap_err()
                .contains("RECORD")
        );
        assert!(
            layout(&s, Some("nope"), None)
                .unwrap_err()
                .contains("no object type")
        );
        assert_eq!(
            layout(&s, Some("files-id"), Some("folder")).unwrap().tag.id,
            "folder-id"
        );
    }

    #[test]
    fn layout_explains_what_is_missing_or_ambiguous() {
        let none = source(vec![ot("plain", "RECORD", vec![tag("color", "SIMPLE")])]);
        assert!(
            layout(&none, None, None)
                .unwrap_err()
                .contains("--create-source")
        );
        let two = source(vec![
            ot("a", "RECORD", vec![tag("f", "HIERARCHICAL")]),
            ot("b", "RECORD", vec![tag("f", "HIERARCHICAL")]),
        ]);
        assert!(
            layout(&two, None, None)
                .unwrap_err()
                .contains("--object-type")
        );
        let two_tags = source(vec![ot(
            "a",
            "RECORD",
            vec![tag("f", "HIERARCHICAL"), tag("g", "HIERARCHICAL")],
        )]);
        assert!(
            layout(&two_tags, None, None)
                .unwrap_err()
                .contains("--folder-tag")
        );
        assert_eq!(
            layout(&two_tags, None, Some("g")).unwrap().tag.external_id,
            "g"
        );
        let mut untracked = two_tags.clone();
        untracked.config.track_status = false;
        assert!(
            layout(&untracked, None, Some("g"))
                .unwrap_err()
                .contains("trackStatus")
        );
    }

    #[test]
    fn skip_procedure() {
        let meta = |c: Option<&str>| Metadata {
            version: 1,
            external_checksum: c.map(Into::into),
            extraction: None,
        };
        assert_eq!(decide(None, "x"), Action::Upload { new: true });
        assert_eq!(decide(Some(&meta(Some("x"))), "x"), Action::Touch);
        assert_eq!(
            decide(Some(&meta(Some("y"))), "x"),
            Action::Upload { new: false }
        );
        // Removed by an earlier sync: no checksum, uploaded again.
        assert_eq!(
            decide(Some(&meta(None)), "x"),
            Action::Upload { new: false }
        );
    }

    fn local(id: &str) -> LocalFolder {
        let (parent, name) = match id.rsplit_once('/') {
            Some((p, n)) => (Some(p.to_string()), n.to_string()),
            None => (None, id.to_string()),
        };
        LocalFolder {
            external_id: id.into(),
            name,
            parent,
        }
    }

    fn remote(id: &str, name: &str, parent: Option<&str>) -> Folder {
        Folder {
            external_id: id.into(),
            name: name.into(),
            parent_external_id: parent.map(Into::into),
        }
    }

    #[test]
    fn folder_plan_puts_missing_and_changed_and_finds_stale_children_first() {
        let locals = [local("a"), local("a/b"), local("c")];
        let remotes = [
            remote("a", "a", None),
            remote("a/b", "renamed", Some("a")),
            remote("x", "x", None),
            remote("x/y", "y", Some("x")),
            remote("x/y/z", "z", Some("x/y")),
        ];
        let plan = folders(&locals, Some(&remotes));
        let put: Vec<&str> = plan.put.iter().map(|f| f.external_id.as_str()).collect();
        assert_eq!(put, ["a/b", "c"]);
        assert_eq!(plan.stale, ["x/y/z", "x/y", "x"]);
        let blind = folders(&locals, None);
        assert_eq!(blind.put.len(), 3);
        assert!(blind.stale.is_empty());
    }

    #[test]
    fn urls() {
        assert_eq!(
            external_url(Some("https://d.test/f/"), "a b/c#.txt").as_deref(),
            Some("https://d.test/f/a%20b/c%23.txt")
        );
        assert_eq!(external_url(None, "a b.txt"), None);
    }

    #[test]
    fn created_sources_fit_the_layout() {
        let body = source_body("mirror", "Mirror");
        let ot = &body["config"]["specification"]["application"]["objectTypes"][0];
        assert_eq!(ot["tagConfigs"][0]["type"], "HIERARCHICAL");
        assert_eq!(ot["facets"][0]["tagConfig"]["externalId"], FOLDER_TAG_ID);
    }
}
