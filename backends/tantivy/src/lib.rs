//! Inlet's search index on [tantivy] (DESIGN 7): one [`SearchIndex`] for every record store, so
//! ranking, analysis and results never depend on the store.
//!
//! Each record is one document: raw id, workspace, source and object type for filters; title
//! and text twice (exact words, and words stemmed in the record's detected language, see
//! [`analysis`]); tag values as facets (`/<tag>/<value>`) for exact filters and counts; the
//! dates as fast fields; and what a result shows, stored. The log position applied is the
//! commit's payload, so a reopened index knows where to resume.
//!
//! [tantivy]: https://github.com/quickwit-oss/tantivy

pub mod analysis;
mod disk;
pub mod facets;
pub mod filter;
pub mod folder;
pub mod matches;
pub mod maxscore;
pub mod merge;
pub mod pair;
pub mod query;
pub mod ranked;
mod search;
mod snippets;
pub mod typos;

use std::{
    collections::{BTreeMap, VecDeque},
    ops::Bound,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering::Relaxed},
    },
    time::{Duration, Instant},
};

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use inlet_core::{
    Error, Result,
    index::{Correction, Hit, Hits, IndexBatch, IndexDoc, IndexQuery, Position, SearchIndex},
    search::{MAX_DEPTH, MAX_FACET_VALUES, MAX_INDEXED_BYTES},
};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tantivy::{
    DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument,
    TantivyError, Term,
    collector::{Collector, Count, TopDocs},
    directory::{Directory, INDEX_WRITER_LOCK, MmapDirectory},
    query::{AllQuery, BooleanQuery, Occur, Query, RangeQuery, TermQuery},
    schema::{
        FAST, Facet, FacetOptions, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema,
        TextFieldIndexing, TextOptions, Value,
    },
};
use uuid::Uuid;

use crate::{
    disk::{
        FileSizes, Inspected, backend, is_damage, is_required, locked_or, make_private_dir,
        released, remove_index_files,
    },
    filter::{AccessFilter, TermFilter},
    snippets::Snippets,
};

/// Version of the schema and analysis. An index written with another is rebuilt from the store
/// (10: a record whose text the detector cannot place, or places in a language without a
/// stemmer, is no longer stemmed in its title's language).
pub const FORMAT: u32 = 11;
/// The tokenizer name our exact text fields are registered with.
const TOKENIZER: &str = "inlet";
/// The fast field facets are counted from ([`facets`]).
const TAG_VALUES: &str = "tag_values";
/// The tokenizer of the stemmed fields ([`analysis::StemTokenizer`]).
const STEM_TOKENIZER: &str = "inlet_stem";
/// The tokenizer of the text's word pairs ([`analysis::PairTokenizer`]).
const PAIR_TOKENIZER: &str = "inlet_pairs";
/// Memory the writer buffers before it writes a segment.
const WRITER_HEAP_BYTES: usize = 96 * 1024 * 1024;
/// Records a rebuild adds between commits. Its commits carry no position (a restart rebuilds
/// again), so committing each page of the scan only wrote small segments for merges to redo.
const REBUILD_COMMIT_RECORDS: usize = 50_000;
/// How long a page's cursor keeps seeing the index as it was at the first page.
const CURSOR_LIFETIME: Duration = Duration::from_secs(600);
/// Index versions kept for cursors.
const PINNED_SEARCHERS: usize = 16;

#[derive(Debug, Clone, Copy)]
struct Fields {
    id: Field,
    workspace: Field,
    source: Field,
    object_type: Field,
    external_id: Field,
    title_shown: Field,
    url: Field,
    tags_shown: Field,
    body_shown: Field,
    lang: Field,
    text: query::Fields,
    tags: Field,
    tag_values: Field,
    created: Field,
    modified: Field,
    created_filter: Field,
    modified_filter: Field,
    tiebreak: Field,
    allowed: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text_indexing = TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER)
        .set_index_option(IndexRecordOption::WithFreqsAndPositions);
    let text = TextOptions::default().set_indexing_options(text_indexing.clone());
    // Phrases and snippets use the exact fields; the stemmed ones are only scored as words, so
    // they keep frequencies without positions (a fifth less to write, and a smaller index).
    let stemmed = TextOptions::default().set_indexing_options(
        text_indexing
            .clone()
            .set_tokenizer(STEM_TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    // A two-word phrase's frequency is its pair's: no positions needed.
    let pairs = TextOptions::default().set_indexing_options(
        text_indexing
            .set_tokenizer(PAIR_TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let id = b.add_text_field("id", STRING | STORED);
    let workspace = b.add_text_field("workspace", STRING);
    let source = b.add_text_field("source", STRING | STORED);
    let object_type = b.add_text_field("object_type", STRING | STORED);
    let external_id = b.add_text_field("external_id", STORED);
    let title_shown = b.add_text_field("title_shown", STORED);
    let url = b.add_text_field("url", STORED);
    let tags_shown = b.add_text_field("tags_shown", STORED);
    let lang = b.add_text_field("lang", STRING | STORED);
    let title = b.add_text_field("title", text.clone());
    let title_stem = b.add_text_field("title_stem", stemmed.clone());
    let body = b.add_text_field("body", text.clone());
    let body_shown = b.add_text_field("body_shown", STORED);
    let body_stem = b.add_text_field("body_stem", stemmed);
    let body_pairs = b.add_text_field("body_pairs", pairs);
    let tags = b.add_facet_field("tags", FacetOptions::default());
    let tag_values = b.add_text_field(TAG_VALUES, FAST);
    let created = b.add_i64_field("created", STORED);
    let modified = b.add_i64_field("modified", STORED | FAST);
    let created_filter = b.add_i64_field("created_filter", INDEXED | FAST);
    let modified_filter = b.add_i64_field("modified_filter", INDEXED | FAST);
    let tiebreak = b.add_u64_field("tiebreak", FAST);
    // Who may read the record (DESIGN 7a): its access terms; a reader's search keeps the
    // records holding one of theirs.
    let allowed = b.add_text_field("allowed", STRING);
    let fields = Fields {
        id,
        workspace,
        source,
        object_type,
        external_id,
        title_shown,
        url,
        tags_shown,
        body_shown,
        lang,
        text: query::Fields {
            title,
            title_stem,
            body,
            body_stem,
            body_pairs,
        },
        tags,
        tag_values,
        created,
        modified,
        created_filter,
        modified_filter,
        tiebreak,
        allowed,
    };
    (b.build(), fields)
}

/// What the commit payload records.
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    format: u32,
    /// `None` while a rebuild is under way.
    position: Option<Position>,
}

/// The tantivy search index: in a directory, or in memory.
pub struct TantivyIndex {
    index: Index,
    reader: IndexReader,
    /// `None` once [`TantivyIndex::release`] gave the folder up.
    writer: Mutex<Option<IndexWriter>>,
    fields: Fields,
    dir: Option<PathBuf>,
    /// The sizes of the committed files, as first seen ([`TantivyIndex::check`]).
    files: Mutex<FileSizes>,
    /// Recent index versions by generation, so a cursor pages through the version its first
    /// page saw.
    pinned: Mutex<VecDeque<(u64, Searcher, Instant)>>,
    /// Documents added since the last commit (a rebuild's batches without a position).
    uncommitted: AtomicUsize,
    /// Readers' access filters as bitsets per segment ([`filter::FilterCache`]).
    filters: Arc<filter::FilterCache>,
}

impl TantivyIndex {
    /// An index kept in memory (for the `memory:` store and tests): rebuilt at every start.
    pub fn in_memory() -> Result<Self> {
        let (schema, fields) = schema();
        Self::with_index(Index::create_in_ram(schema), fields, None)
    }

    /// Opens the index in `dir`, creating it when missing. The folder belongs to this process
    /// from then on (tantivy's writer lock): one that another process holds is refused with
    /// [`Error::Conflict`], and nothing in it is touched. An index of another [`FORMAT`] or
    /// schema, or one whose files fail their checksums, is discarded (only the files tantivy
    /// writes are removed) and created empty; the second value then says why, and
    /// [`SearchIndex::applied`] is `None` until it is rebuilt. Any other failure to read it
    /// (permissions, a full disk) is an error, never a reason to discard it.
    pub fn open(dir: &Path) -> Result<(Self, Option<String>)> {
        make_private_dir(dir)?;
        let directory = MmapDirectory::open(dir).map_err(backend)?;
        // Whoever holds the writer's lock owns the folder: look, and touch nothing, before
        // holding it too.
        let lock = directory
            .acquire_lock(&INDEX_WRITER_LOCK)
            .map_err(|e| locked_or(dir, TantivyError::LockFailure(e, None)))?;
        let discarded = match Self::inspect(dir, directory) {
            Inspected::Usable => None,
            Inspected::Empty => Some(None),
            Inspected::Refused(e) => return Err(e),
            Inspected::Discard(why) => {
                remove_index_files(dir)?;
                Some(Some(why))
            }
        };
        drop(lock);
        match discarded {
            None => {
                let directory = MmapDirectory::open(dir).map_err(backend)?;
                let index = Index::open(directory).map_err(|e| locked_or(dir, e))?;
                let (_, fields) = schema();
                let opened = Self::with_index(index, fields, Some(dir.to_path_buf()))?;
                Ok((opened, None))
            }
            Some(why) => Ok((Self::create(dir)?, why)),
        }
    }

    /// What is in `dir`, read without writing (the caller holds the writer's lock).
    fn inspect(dir: &Path, directory: MmapDirectory) -> Inspected {
        if !dir.join("meta.json").exists() {
            return Inspected::Empty;
        }
        let index = match Index::open(directory) {
            Ok(index) => index,
            Err(e) if is_damage(&e) => {
                return Inspected::Discard(format!("the index cannot be read: {e}"));
            }
            Err(e) => return Inspected::Refused(locked_or(dir, e)),
        };
        let (schema, _) = schema();
        if index.schema() != schema {
            return Inspected::Discard("the index has another schema".into());
        }
        let metas = match index.load_metas() {
            Ok(metas) => metas,
            Err(e) => return Inspected::Discard(format!("the index cannot be read: {e}")),
        };
        if let Some(p) = metas.payload.as_deref().filter(|p| !p.is_empty()) {
            let Ok(payload) = serde_json::from_str::<Payload>(p) else {
                return Inspected::Discard("the index's payload is unreadable".into());
            };
            if payload.format != FORMAT {
                return Inspected::Discard(format!(
                    "the index is of format {}, this server writes {FORMAT}",
                    payload.format
                ));
            }
        }
        // Every file the last commit names must be there and pass its checksum.
        let missing: Vec<String> = metas
            .list_segment_files()
            .into_iter()
            .filter(|f| is_required(f) && !dir.join(f).exists())
            .map(|f| f.display().to_string())
            .collect();
        if !missing.is_empty() {
            return Inspected::Discard(format!(
                "segment files are missing: {}",
                missing.join(", ")
            ));
        }
        match index.validate_checksum() {
            Ok(bad) if bad.is_empty() => Inspected::Usable,
            Ok(bad) => {
                let mut names: Vec<String> = bad.iter().map(|f| f.display().to_string()).collect();
                names.sort();
                Inspected::Discard(format!(
                    "segment files fail their checksums: {}",
                    names.join(", ")
                ))
            }
            Err(e) if is_damage(&e) => {
                Inspected::Discard(format!("the index's files cannot be verified: {e}"))
            }
            Err(e) => Inspected::Refused(locked_or(dir, e)),
        }
    }

    fn create(dir: &Path) -> Result<Self> {
        make_private_dir(dir)?;
        let (schema, fields) = schema();
        let directory = MmapDirectory::open(dir).map_err(backend)?;
        let index =
            Index::create(directory, schema, Default::default()).map_err(|e| locked_or(dir, e))?;
        Self::with_index(index, fields, Some(dir.to_path_buf()))
    }

    /// Whether the files of the last commit are still as written: `meta.json` there, and every
    /// segment file it names there at the size it had when first seen. Cheap (a `stat` per
    /// file; `meta.json` is read again only when it changed), so it runs before every search: a
    /// file cut short under tantivy's memory map would otherwise kill the process (SIGBUS) at
    /// the next read. An index in memory is always well.
    pub fn check(&self) -> std::result::Result<(), String> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let meta = std::fs::metadata(dir.join("meta.json"))
            .map_err(|_| format!("{} holds no meta.json any more", dir.display()))?;
        let stamp = (meta.len(), meta.modified().ok());
        let mut files = self.files.lock();
        if files.meta != Some(stamp) {
            let metas = self
                .index
                .load_metas()
                .map_err(|e| format!("meta.json cannot be read: {e}"))?;
            let listed = metas.list_segment_files();
            files.sizes.retain(|f, _| listed.contains(f));
            for f in listed {
                match std::fs::metadata(dir.join(&f)) {
                    Ok(m) => {
                        files.sizes.entry(f).or_insert(m.len());
                    }
                    Err(_) if is_required(&f) => {
                        return Err(format!("{} is gone", f.display()));
                    }
                    Err(_) => {}
                }
            }
            files.meta = Some(stamp);
        }
        for (f, len) in &files.sizes {
            match std::fs::metadata(dir.join(f)) {
                Ok(m) if m.len() == *len => {}
                Ok(m) => {
                    return Err(format!(
                        "{} changed size ({} bytes, written with {len})",
                        f.display(),
                        m.len()
                    ));
                }
                Err(_) => return Err(format!("{} is gone", f.display())),
            }
        }
        Ok(())
    }

    /// [`TantivyIndex::check`], then every committed file's checksum (reads the whole index):
    /// why the index is damaged, or `None` when it is intact.
    pub fn verify(&self) -> Option<String> {
        if let Err(why) = self.check() {
            return Some(why);
        }
        match self.index.validate_checksum() {
            Ok(bad) if bad.is_empty() => None,
            Ok(bad) => Some(format!(
                "segment files fail their checksums: {}",
                bad.iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Err(e) => Some(format!("the index's files cannot be verified: {e}")),
        }
    }

    /// Gives the folder up: the writer (and its lock) is dropped, and later writes fail. Used
    /// before the folder's damaged index is replaced.
    pub fn release(&self) {
        drop(self.writer.lock().take());
    }

    /// The folder this index lives in (`None`: in memory).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn with_index(mut index: Index, fields: Fields, dir: Option<PathBuf>) -> Result<Self> {
        // A search visits its segments on every core: a broad query's time is in proportion to
        // its matches, and a large index holds a few large segments.
        index
            .set_multithread_executor(search_threads())
            .map_err(backend)?;
        index.tokenizers().register(
            TOKENIZER,
            tantivy::tokenizer::TextAnalyzer::from(analysis::InletTokenizer::for_indexing()),
        );
        index.tokenizers().register(
            STEM_TOKENIZER,
            tantivy::tokenizer::TextAnalyzer::from(analysis::StemTokenizer::default()),
        );
        index.tokenizers().register(
            PAIR_TOKENIZER,
            tantivy::tokenizer::TextAnalyzer::from(analysis::PairTokenizer::default()),
        );
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(backend)?;
        let writer: IndexWriter = index.writer(WRITER_HEAP_BYTES).map_err(|e| match &dir {
            Some(d) => locked_or(d, e),
            None => backend(e),
        })?;
        writer.set_merge_policy(Box::new(merge::SharedMergePolicy::new(search_threads())));
        Ok(Self {
            index,
            reader,
            writer: Mutex::new(Some(writer)),
            fields,
            dir,
            files: Mutex::new(FileSizes::default()),
            pinned: Mutex::new(VecDeque::new()),
            uncommitted: AtomicUsize::new(0),
            filters: Arc::default(),
        })
    }

    fn document(&self, d: &IndexDoc) -> TantivyDocument {
        let f = &self.fields;
        let content = cap(&d.content, MAX_INDEXED_BYTES);
        // A RECORD's title is its file name normalized (ASCII only): the name as uploaded holds
        // every word of it and more, and indexing both would count the title twice.
        let title = d.file_name.clone().unwrap_or_else(|| d.title.clone());
        let lang = analysis::record_language(content, &title);
        let mut doc = TantivyDocument::new();
        doc.add_text(f.id, d.record_id.to_string());
        doc.add_text(f.workspace, d.workspace_id.to_string());
        doc.add_text(f.source, d.source_id.to_string());
        doc.add_text(f.object_type, d.object_type_id.to_string());
        doc.add_text(f.external_id, &d.external_id);
        doc.add_text(f.title_shown, &d.title);
        if let Some(url) = &d.url {
            doc.add_text(f.url, url);
        }
        doc.add_text(
            f.tags_shown,
            serde_json::to_string(&d.tags).unwrap_or_default(),
        );
        doc.add_text(f.lang, analysis::language_code(lang));
        // The stemmed fields' text carries its language for their tokenizer.
        doc.add_text(f.text.title, &title);
        doc.add_text(f.text.title_stem, analysis::with_language(lang, &title));
        doc.add_text(f.text.body, content);
        doc.add_text(f.text.body_stem, analysis::with_language(lang, content));
        doc.add_text(f.text.body_pairs, content);
        doc.add_text(f.body_shown, content);
        let mut seen = std::collections::HashSet::new();
        for row in &d.rows {
            // The created/modified mapping is in the filter dates; a value counts once.
            if row.tag.starts_with('$') || !seen.insert((&row.tag, &row.value)) {
                continue;
            }
            doc.add_facet(
                f.tags,
                Facet::from_path([row.tag.as_str(), row.value.as_str()]),
            );
            doc.add_text(f.tag_values, facets::entry(&row.tag, &row.value));
        }
        doc.add_i64(f.created, d.created_ms);
        doc.add_i64(f.modified, d.modified_ms);
        doc.add_i64(f.created_filter, d.created_filter_ms);
        doc.add_i64(f.modified_filter, d.modified_filter_ms);
        doc.add_u64(f.tiebreak, tiebreak(d.record_id));
        for term in &d.access_terms {
            doc.add_text(f.allowed, term);
        }
        doc
    }
}

fn cap(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Orders equal scores the same way in every replica, whatever its segments: by record id.
fn tiebreak(record_id: Uuid) -> u64 {
    u64::MAX - record_id.as_u64_pair().0
}

/// Threads one search spreads its segments over: the machine's cores, at most 8.
fn search_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// Mantissa bits of a score dropped before comparing: 13 of 23 leave a relative precision of
/// about a thousandth.
const SCORE_BITS_DROPPED: u32 = 13;

/// A score to about three significant digits: differences below that (BM25 statistics still
/// counting a replaced document until its segment is merged, which differs between replicas)
/// are ties. Relative, not absolute: a word in nearly every record has an idf near zero and
/// scores of a thousandth or less, which still differ by how often the record says it.
fn rounded(score: f32) -> i64 {
    // Non-negative floats order as their bits do.
    i64::from(score.max(0.0).to_bits() >> SCORE_BITS_DROPPED)
}

impl SearchIndex for TantivyIndex {
    fn applied(&self) -> Result<Option<Position>> {
        let metas = self.index.load_metas().map_err(backend)?;
        Ok(match metas.payload {
            Some(p) => serde_json::from_str::<Payload>(&p)
                .ok()
                .filter(|p| p.format == FORMAT)
                .and_then(|p| p.position),
            None => None,
        })
    }

    fn apply(&self, batch: IndexBatch) -> Result<()> {
        // Analysis (language detection above all) runs on every core while tantivy indexes.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = batch.upserts.len().div_ceil(threads).max(1);
        let docs: Vec<(Uuid, TantivyDocument)> = std::thread::scope(|scope| {
            let workers: Vec<_> = batch
                .upserts
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|d| (d.record_id, self.document(d)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let mut docs = Vec::with_capacity(batch.upserts.len());
            for w in workers {
                // A panic while analyzing is a bug; the batch is refused, not cut short.
                docs.extend(w.join().map_err(|_| {
                    Error::backend(std::io::Error::other("analyzing a document failed"))
                })?);
            }
            Ok::<_, Error>(docs)
        })?;
        let mut guard = self.writer.lock();
        let writer = guard.as_mut().ok_or_else(released)?;
        let id = self.fields.id;
        for record in &batch.deletes {
            writer.delete_term(Term::from_field_text(id, &record.to_string()));
        }
        for source in &batch.deleted_sources {
            writer.delete_term(Term::from_field_text(
                self.fields.source,
                &source.to_string(),
            ));
        }
        let added = docs.len();
        for (record, doc) in docs {
            writer.delete_term(Term::from_field_text(id, &record.to_string()));
            writer.add_document(doc).map_err(backend)?;
        }
        // A rebuild's page (no position) waits for more: tantivy writes segments as its
        // memory fills, and a commit per page would write smaller ones.
        let pending = self.uncommitted.fetch_add(added, Relaxed) + added;
        if batch.position.is_none() && pending < REBUILD_COMMIT_RECORDS {
            return Ok(());
        }
        let payload = serde_json::to_string(&Payload {
            format: FORMAT,
            position: batch.position,
        })
        .map_err(backend)?;
        let mut prepared = writer.prepare_commit().map_err(backend)?;
        prepared.set_payload(&payload);
        prepared.commit().map_err(backend)?;
        self.uncommitted.store(0, Relaxed);
        drop(guard);
        self.reader.reload().map_err(backend)
    }

    fn clear(&self) -> Result<()> {
        let payload = serde_json::to_string(&Payload {
            format: FORMAT,
            position: None,
        })
        .map_err(backend)?;
        let mut guard = self.writer.lock();
        let writer = guard.as_mut().ok_or_else(released)?;
        writer.delete_all_documents().map_err(backend)?;
        let mut prepared = writer.prepare_commit().map_err(backend)?;
        prepared.set_payload(&payload);
        prepared.commit().map_err(backend)?;
        self.uncommitted.store(0, Relaxed);
        drop(guard);
        self.reader.reload().map_err(backend)
    }

    fn search(&self, q: &IndexQuery) -> Result<Hits> {
        self.search_now(q)
    }

    fn size_bytes(&self) -> u64 {
        match &self.dir {
            Some(dir) => std::fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .filter_map(|e| e.metadata().ok())
                        .filter(|m| m.is_file())
                        .map(|m| m.len())
                        .sum()
                })
                .unwrap_or(0),
            None => self
                .reader
                .searcher()
                .space_usage()
                .map(|u| u.total().get_bytes())
                .unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod access_tests;
#[cfg(test)]
mod disk_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod typos_tests;
