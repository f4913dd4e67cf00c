//! Search requests (DESIGN 7): from the caller's parameters to an [`IndexQuery`] over the
//! searched object types — tag filters typed by each tag's dataType, folder filters widened to
//! the folders below, one facet per tag — and from the index's [`Hits`] to the answer, folder
//! facet values named. [`prepare`] reads the store; the index search between the two steps is
//! the caller's (it blocks).

use std::collections::HashMap;

use uuid::Uuid;

use crate::{
    Error, RecordStore, Result, WorkspaceId,
    folder::{self, Folder},
    index::{Hit, Hits, IndexQuery},
    search::{self, DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS, TagFilter},
    source::{ObjectType, Source},
    tag::{self, TagValue},
    time::Timestamp,
};

/// A search as the caller asked it (`GET /search`'s parameters).
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// The caller's workspace.
    pub workspace_id: WorkspaceId,
    /// Words, `"quoted phrases"` and `-excluded` words; empty browses.
    pub text: &'a str,
    /// Only records holding every word.
    pub match_all: bool,
    /// Only this source.
    pub source_id: Option<Uuid>,
    /// Only this object type.
    pub object_type_id: Option<Uuid>,
    /// `<tagExternalId>:<value>` filters, as sent.
    pub tags: &'a [String],
    /// `createdFrom`, RFC 3339 or a date.
    pub created_from: Option<&'a str>,
    /// `createdTo`.
    pub created_to: Option<&'a str>,
    /// `modifiedFrom`.
    pub modified_from: Option<&'a str>,
    /// `modifiedTo`.
    pub modified_to: Option<&'a str>,
    /// Results per page (default [`DEFAULT_LIMIT`], at most [`MAX_LIMIT`]).
    pub limit: Option<u32>,
    /// The previous page's `nextCursor`.
    pub cursor: Option<String>,
    /// Typo tolerance ([`IndexQuery::typos`]).
    pub typos: bool,
}

/// One facet of the answer: a tag's values over every match, most frequent first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facet {
    /// The facet's name.
    pub name: String,
    /// The tag it counts.
    pub tag: String,
    /// (value, folder name for a folder tag, count).
    pub values: Vec<FacetValue>,
}

/// One value of a facet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FacetValue {
    /// The tag value.
    pub value: String,
    /// The folder's name, when the tag is a folder tag.
    pub name: Option<String>,
    /// Matching records carrying it.
    pub count: u64,
}

/// The answer to a search.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Every matching record (exact).
    pub total: u64,
    /// This page.
    pub hits: Vec<Hit>,
    /// One per faceted tag of the searched object types.
    pub facets: Vec<Facet>,
    /// Where the next page starts; `None` on the last.
    pub next_cursor: Option<String>,
    /// The query's words searched with their neighbours too.
    pub corrections: Vec<crate::index::Correction>,
    /// The query with its misspelt words replaced, when it found few records.
    pub suggestion: Option<String>,
}

/// A facet to answer: its name, its tag, and folder names by value when the tag is a folder
/// tag.
type FacetSpec = (String, String, Option<HashMap<String, String>>);

/// A search ready for the index: the query, and what names the facets afterwards.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// What the index answers.
    pub query: IndexQuery,
    facets: Vec<FacetSpec>,
}

/// Reads an optional date-time parameter (RFC 3339 or a date), naming it when refused.
pub fn parse_time(name: &str, raw: Option<&str>) -> Result<Option<Timestamp>> {
    raw.map(|r| {
        tag::parse_date_time(r).ok_or_else(|| {
            Error::invalid(format!(
                "{name}: '{r}' is not an RFC 3339 date-time or a date"
            ))
        })
    })
    .transpose()
}

/// Checks the request and builds the index query over the searched object types.
pub async fn prepare(store: &dyn RecordStore, request: Request<'_>) -> Result<Prepared> {
    if request.text.chars().count() > MAX_QUERY_CHARS {
        return Err(Error::invalid(format!(
            "q is longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    let limit = request.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(Error::invalid(format!(
            "limit must be between 1 and {MAX_LIMIT}"
        )));
    }
    let ws = request.workspace_id;
    let types = scope_types(store, ws, request.source_id, request.object_type_id).await?;
    let mut filters = tag_filters(&types, request.tags)?;

    // Folder trees are read once per (source, tag): filters widen with them, facets name
    // their values with them.
    let mut trees = FolderTrees::default();
    // A folder filter lists the folder and every folder below it, as its count does.
    for f in &mut filters {
        for (source, ot) in &types {
            if folder::is_folder_tag(ot, &f.tag) {
                let folders = trees.get(store, ws, source.id, &f.tag).await?;
                f.values = folder::with_descendants(folders, &f.values);
            }
        }
    }

    // Facets of the searched object types, one per tag.
    let mut facets: Vec<FacetSpec> = Vec::new();
    for (source, ot) in &types {
        for f in &ot.facets {
            if facets.iter().any(|(_, t, _)| *t == f.tag_external_id) {
                continue;
            }
            let names = if folder::is_folder_tag(ot, &f.tag_external_id) {
                let folders = trees.get(store, ws, source.id, &f.tag_external_id).await?;
                Some(
                    folders
                        .iter()
                        .map(|f| (f.external_id.clone(), f.name.clone()))
                        .collect(),
                )
            } else {
                None
            };
            facets.push((f.name.clone(), f.tag_external_id.clone(), names));
        }
    }

    let millis = |t: Option<Timestamp>| t.map(|t| t.timestamp_millis());
    let query = IndexQuery {
        workspace_id: ws,
        text: request.text.to_string(),
        match_all: request.match_all,
        source_id: request.source_id,
        object_type_id: request.object_type_id,
        tags: filters,
        created_from: millis(parse_time("createdFrom", request.created_from)?),
        created_to: millis(parse_time("createdTo", request.created_to)?),
        modified_from: millis(parse_time("modifiedFrom", request.modified_from)?),
        modified_to: millis(parse_time("modifiedTo", request.modified_to)?),
        limit,
        cursor: request.cursor,
        facet_tags: facets.iter().map(|(_, t, _)| t.clone()).collect(),
        viewer: None,
        typos: request.typos,
    };
    Ok(Prepared { query, facets })
}

impl Prepared {
    /// The answer from the index's hits for [`Prepared::query`]: facets in the object types'
    /// order, folder values named.
    pub fn answer(self, mut hits: Hits) -> Answer {
        let facets = self
            .facets
            .into_iter()
            .map(|(name, tag, names)| {
                let values = hits
                    .facets
                    .remove(&tag)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(value, count)| FacetValue {
                        name: names.as_ref().and_then(|n| n.get(&value).cloned()),
                        value,
                        count,
                    })
                    .collect();
                Facet { name, tag, values }
            })
            .collect();
        Answer {
            total: hits.total,
            hits: hits.hits,
            facets,
            next_cursor: hits.next_cursor,
            corrections: hits.corrections,
            suggestion: hits.suggestion,
        }
    }
}

/// The object types a search covers: every type of the workspace, of one source, or one type
/// (which must exist).
async fn scope_types(
    store: &dyn RecordStore,
    workspace_id: WorkspaceId,
    source_id: Option<Uuid>,
    object_type_id: Option<Uuid>,
) -> Result<Vec<(Source, ObjectType)>> {
    let sources = match source_id {
        Some(id) => vec![store.get_source(workspace_id, id).await?],
        None => store.list_sources(workspace_id).await?,
    };
    let mut out = Vec::new();
    for s in sources {
        for ot in &s.object_types {
            if object_type_id.is_none_or(|id| id == ot.id) {
                out.push((s.clone(), ot.clone()));
            }
        }
    }
    if let Some(id) = object_type_id
        && out.is_empty()
    {
        return Err(Error::NotFound(format!("object type {id} not found")));
    }
    Ok(out)
}

/// Tag filters, each value parsed by its tag's dataType in the searched object types; values
/// of one tag OR together.
fn tag_filters(types: &[(Source, ObjectType)], raw: &[String]) -> Result<Vec<TagFilter>> {
    let mut filters: Vec<TagFilter> = Vec::new();
    for raw in raw {
        let (tag_id, value) = tag::parse_pair("query parameter tag", raw.as_bytes())?;
        let config = types
            .iter()
            .find_map(|(_, ot)| ot.tag_config(&tag_id))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown tag '{tag_id}' in the searched object types"
                ))
            })?;
        let value = TagValue::parse(&value, config.data_type)
            .map_err(|e| Error::invalid(format!("tag '{tag_id}': {e}")))?;
        let value = search::index_value(&value);
        match filters.iter_mut().find(|f| f.tag == tag_id) {
            Some(f) => f.values.push(value),
            None => filters.push(TagFilter {
                tag: tag_id,
                values: vec![value],
            }),
        }
    }
    Ok(filters)
}

/// The folder trees one request has read, by (source, HIERARCHICAL tag).
#[derive(Default)]
struct FolderTrees(HashMap<(Uuid, String), Vec<Folder>>);

impl FolderTrees {
    async fn get(
        &mut self,
        store: &dyn RecordStore,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<&[Folder]> {
        let folders = match self.0.entry((source_id, tag.to_string())) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(store.folder_names(workspace_id, source_id, tag).await?)
            }
        };
        Ok(folders)
    }
}
