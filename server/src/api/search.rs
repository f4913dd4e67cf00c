//! `GET /search` (DESIGN 7) and the folder endpoints of HIERARCHICAL tags (DESIGN 6).

use std::collections::BTreeMap;

use inlet_core::{query, time};
use poem::web::Data;
use poem_openapi::{Enum, Object, OpenApi, param::Query, payload::Json};
use uuid::Uuid;

use super::ApiTags;
use crate::{auth::Auth, problem::ApiError, state::AppState};

/// What a search answers (503) while the index is rebuilt from the database.
const REBUILDING: &str = "the search index is being rebuilt from the database; retry shortly";

/// How the words of `q` must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "lowercase")]
pub enum MatchMode {
    /// Records holding any word, best first (the default).
    Any,
    /// Only records holding every word.
    All,
}

/// One result.
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct SearchResult {
    /// Record id.
    pub id: Uuid,
    /// The caller's id of the record.
    pub external_id: String,
    /// Its source.
    pub source_id: Uuid,
    /// Its object type.
    pub object_type_id: Uuid,
    /// Title.
    pub title: String,
    /// Link into the external system.
    #[oai(skip_serializing_if_is_none)]
    pub url: Option<String>,
    /// Extract around the first match, HTML-escaped, matched words in `<mark>`…`</mark>`.
    pub snippet: String,
    /// Tags: tag externalId → values.
    pub tags: BTreeMap<String, Vec<String>>,
    /// RFC 3339 with milliseconds.
    pub created_date: String,
    /// RFC 3339 with milliseconds.
    pub modified_date: String,
}

/// One facet value with its count over all matching records.
#[derive(Debug, Object)]
pub struct FacetValue {
    /// The value (a folder's externalId for a HIERARCHICAL tag).
    pub value: String,
    /// The folder's name, for HIERARCHICAL tags.
    #[oai(skip_serializing_if_is_none)]
    pub name: Option<String>,
    /// Matching records carrying it.
    pub count: u64,
}

/// The values of one facet.
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct FacetResult {
    /// The facet's display name.
    pub name: String,
    /// The tag it counts.
    pub tag_external_id: String,
    /// Most frequent first (at most 50).
    pub values: Vec<FacetValue>,
}

/// A page of search results.
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct SearchResponse {
    /// Matching records in all pages (exact).
    pub total: u64,
    /// Always `true`: `total`, the order and the facets cover every match. Kept for clients
    /// written when a broad query examined only its newest 1,000 matches.
    pub exhaustive: bool,
    /// This page, best match first (newest first without `q`).
    pub results: Vec<SearchResult>,
    /// Facets of the object types searched, counted over every match.
    pub facets: Vec<FacetResult>,
    /// Pass as `cursor` for the next page; absent on the last page and past result 10,000.
    /// Pages come from the index as it was at the first page (for 10 minutes), so writes
    /// meanwhile neither shift nor repeat results.
    #[oai(skip_serializing_if_is_none)]
    pub next_cursor: Option<String>,
    /// The words of `q` that looked misspelt, each searched with the indexed words near it
    /// (ranked below the word itself; `typos=false` turns this off). Absent when none did.
    #[oai(default, skip_serializing_if_is_empty)]
    pub corrections: Vec<Correction>,
    /// Did you mean: when fewer than 5 records matched and a word looks misspelt (whether or
    /// not `typos` widened it), `q` with each such word replaced by its most common neighbour
    /// among the records the caller may read; send it as `q` for its results. Absent otherwise.
    #[oai(skip_serializing_if_is_none)]
    pub suggestion: Option<String>,
}

/// A word of `q` searched with the indexed words within an edit or two of it.
#[derive(Debug, Object)]
pub struct Correction {
    /// The word as searched (lower case, accents removed).
    pub word: String,
    /// The indexed words it matched too, the most common first (at most 4), only words of
    /// records the caller may read.
    pub matched: Vec<String>,
}

/// Search and folder endpoints.
pub struct SearchApi;

#[OpenApi(tag = "ApiTags::Search", prefix_path = "/api/v1")]
impl SearchApi {
    /// Search the workspace's records by title and text: any word of `q` matches, best first
    /// (BM25, titles weigh more, records holding every word and the phrase first); `match=all`
    /// asks for every word; `"quotes"` for a phrase, `-word` to exclude. Accents and case are
    /// ignored, words are stemmed by the record's language, Chinese, Japanese and Korean text
    /// is found by its characters. Repeated `tag` values of one tag OR together, different tags
    /// AND; a folder tag matches the folder and every folder below it. Date filters are RFC
    /// 3339 (or a date); a facet with targetType maps its DATE_TIME tag onto them. `total` and
    /// facets count every match. Search trails writes by up to a second.
    #[allow(clippy::too_many_arguments)]
    #[oai(path = "/search", method = "get", operation_id = "search")]
    async fn search(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        /// Words, `"quoted phrases"` and `-excluded` words. Empty lists every record, newest
        /// first.
        q: Query<Option<String>>,
        /// `any` (default): records holding at least one word, best first, those holding every
        /// word and the phrase ranked above the rest. `all`: only records holding every word.
        #[oai(name = "match")]
        match_: Query<Option<MatchMode>>,
        /// Only this source.
        #[oai(name = "sourceId")]
        source_id: Query<Option<Uuid>>,
        /// Only this object type.
        #[oai(name = "objectTypeId")]
        object_type_id: Query<Option<Uuid>>,
        /// `<tagExternalId>:<value>`, repeatable.
        tag: Query<Vec<String>>,
        /// Created at or after.
        #[oai(name = "createdFrom")]
        created_from: Query<Option<String>>,
        /// Created at or before.
        #[oai(name = "createdTo")]
        created_to: Query<Option<String>>,
        /// Modified at or after.
        #[oai(name = "modifiedFrom")]
        modified_from: Query<Option<String>>,
        /// Modified at or before.
        #[oai(name = "modifiedTo")]
        modified_to: Query<Option<String>>,
        /// Results per page, 1–100 (default 20).
        limit: Query<Option<u32>>,
        /// `nextCursor` of the previous page.
        cursor: Query<Option<String>>,
        /// Typo tolerance: a word of 5 characters or more that looks misspelt (its neighbours
        /// within one edit, two from 9 characters, are in ten times as many records) also
        /// matches them, ranked below the word itself; not inside quotes nor for words with
        /// digits. Default: the server's `--typo-tolerance` (on).
        typos: Query<Option<bool>>,
    ) -> Result<Json<SearchResponse>, ApiError> {
        let principal = auth.reader();
        let text = q.0.unwrap_or_default();
        let request = query::Request {
            workspace_id: principal.workspace_id,
            text: &text,
            match_all: matches!(match_.0, Some(MatchMode::All)),
            source_id: source_id.0,
            object_type_id: object_type_id.0,
            tags: &tag.0,
            created_from: created_from.0.as_deref(),
            created_to: created_to.0.as_deref(),
            modified_from: modified_from.0.as_deref(),
            modified_to: modified_to.0.as_deref(),
            limit: limit.0,
            cursor: cursor.0,
            typos: typos.0.unwrap_or(state.settings.typo_tolerance),
        };
        let mut prepared = query::prepare(&*state.records, request).await?;
        // Only the records the caller may read (DESIGN 7a): matches, total, facets and snippets.
        prepared.query.viewer = state.viewers.of(&*state.records, principal).await?.terms();
        // A rebuilding index holds part of the records: say so rather than answer with part.
        let rebuilding = || ApiError::new(poem::http::StatusCode::SERVICE_UNAVAILABLE, REBUILDING);
        if state.indexer.rebuild_progress().is_some() && !state.settings.serve_while_indexing {
            return Err(rebuilding());
        }
        let index = state.index.clone();
        let search = prepared.query.clone();
        let hits = tokio::task::spawn_blocking(move || index.search(&search))
            .await
            .map_err(|e| ApiError::from(inlet_core::Error::backend(e)))?
            .map_err(|e| match e {
                inlet_core::Error::Unavailable(why) => {
                    tracing::warn!(reason = %why, "search refused: the index is unusable");
                    rebuilding()
                }
                e => ApiError::from(e),
            })?;
        let answer = prepared.answer(hits);
        let facets = answer
            .facets
            .into_iter()
            .map(|f| FacetResult {
                name: f.name,
                tag_external_id: f.tag,
                values: f
                    .values
                    .into_iter()
                    .map(|v| FacetValue {
                        value: v.value,
                        name: v.name,
                        count: v.count,
                    })
                    .collect(),
            })
            .collect();
        let results = answer
            .hits
            .into_iter()
            .map(|h| SearchResult {
                id: h.record_id,
                snippet: h.snippet,
                external_id: h.external_id,
                source_id: h.source_id,
                object_type_id: h.object_type_id,
                title: h.title,
                url: h.url,
                tags: h.tags,
                created_date: time::format_millis(h.created_ms),
                modified_date: time::format_millis(h.modified_ms),
            })
            .collect();
        Ok(Json(SearchResponse {
            total: answer.total,
            exhaustive: true,
            results,
            facets,
            next_cursor: answer.next_cursor,
            corrections: answer
                .corrections
                .into_iter()
                .map(|c| Correction {
                    word: c.word,
                    matched: c.matched,
                })
                .collect(),
            suggestion: answer.suggestion,
        }))
    }
}
