//! Search and folders over SQL (DESIGN 6, 7): the full-text index (SQLite FTS5 `records_fts`;
//! PostgreSQL `record_search` with GIN-indexed token and lookup vectors beside the positioned
//! words of `record_words`), the tag index `record_tags`, and folder trees.
//! Both indexes are written in the transaction that writes the record; removal by a sync needs no
//! index change because every query joins the live records.

use std::collections::{BTreeMap, HashMap};

use inlet_core::{
    Error, Result, WorkspaceId,
    record::Record,
    search::{self, Folder, SearchPage, SearchQuery, TagRow, Term},
    source::{ObjectType, Source},
    tag::Tags,
};
use sea_orm::{ConnectionTrait, DbBackend, DbErr, TransactionTrait, Value};
use uuid::Uuid;

use crate::{
    SeaOrmStore, WordRoute, all, db_error, exec, get,
    records::{RECORD_COLUMNS, record_from_row},
    stmt,
};

/// Tag rows inserted per statement.
const TAG_ROWS_PER_INSERT: usize = 200;

/// The scope a record is indexed under: workspace, source and object type.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexScope {
    pub workspace_id: Uuid,
    pub source_id: Uuid,
    pub object_type_id: Uuid,
}

/// The index token of a workspace (`w`), source (`s`) or object type (`o`). Tokens never meet
/// a word of the text: they live in their own `meta` column (SQLite `records_fts`, PostgreSQL
/// `record_search`), and where PostgreSQL also puts the scope tokens beside the words
/// (`record_words.vector`) they are marked with [`PG_TOKEN_MARK`], which no word contains.
fn scope_token(kind: char, id: Uuid) -> String {
    format!("{kind}{}", id.simple())
}

/// The index token of one tag value: 128 bits of SHA-256 over tag and value (stable across
/// versions and machines, and too wide to collide).
fn tag_token(tag: &str, value: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(tag.as_bytes());
    h.update([0]);
    h.update(value.as_bytes());
    format!("t{}", hex::encode(&h.finalize()[..16]))
}

/// PostgreSQL: the first character of the scope tokens in `record_words.vector`. Words are
/// letters and digits only (`inlet_core::search::index_text`), so a query's words never match
/// a token.
pub(crate) const PG_TOKEN_MARK: char = '#';

/// A record's scope tokens: workspace, source, object type.
fn scope_tokens_of(scope: IndexScope) -> [String; 3] {
    [
        scope_token('w', scope.workspace_id),
        scope_token('s', scope.source_id),
        scope_token('o', scope.object_type_id),
    ]
}

/// The tokens a record is found by besides its words: its scope and its tag values.
fn meta_tokens(scope: IndexScope, rows: &[TagRow]) -> String {
    let mut tokens = scope_tokens_of(scope).to_vec();
    tokens.extend(rows.iter().map(|r| tag_token(&r.tag, &r.value)));
    tokens.join(" ")
}

/// Replaces a record's entries in the full-text and tag indexes. The entry gets the next write
/// sequence (SQLite: the FTS5 rowid; PostgreSQL: `record_search.doc`), which orders the search
/// window newest first.
pub(crate) async fn index_record(
    db: &impl ConnectionTrait,
    scope: IndexScope,
    id: Uuid,
    content: &str,
    rows: &[TagRow],
) -> Result<()> {
    let backend = db.get_database_backend();
    let body = search::index_text(content);
    let meta = meta_tokens(scope, rows);
    let id_text = id.to_string();
    match backend {
        DbBackend::Postgres => {
            // The entry (tokens; words without positions with every token marked, for GIN
            // lookups; write sequence) and the positioned words with the marked scope tokens
            // (so a newest-first scan without tag filters needs only `record_words`), in one
            // round trip.
            let mark = |tokens: &mut dyn Iterator<Item = &str>| {
                tokens
                    .map(|t| format!("{PG_TOKEN_MARK}{t}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let marked_scope = mark(&mut scope_tokens_of(scope).iter().map(String::as_str));
            let marked_all = mark(&mut meta.split(' '));
            exec(
                db,
                stmt(
                    backend,
                    "WITH v AS (SELECT to_tsvector('simple', $2) AS words), \
                     e AS (INSERT INTO record_search (record_id, meta, words, doc) \
                     SELECT $1, array_to_tsvector(string_to_array($3, ' ')), \
                     strip(v.words) || array_to_tsvector(string_to_array($5, ' ')), \
                     nextval('record_search_doc') FROM v \
                     ON CONFLICT (record_id) DO UPDATE SET meta = excluded.meta, \
                     words = excluded.words, doc = excluded.doc RETURNING doc) \
                     INSERT INTO record_words (record_id, vector, doc) SELECT $1, \
                     v.words || array_to_tsvector(string_to_array($4, ' ')), e.doc \
                     FROM v, e ON CONFLICT (record_id) DO UPDATE SET vector = excluded.vector, \
                     doc = excluded.doc",
                    vec![
                        id_text.clone().into(),
                        body.into(),
                        meta.into(),
                        marked_scope.into(),
                        marked_all.into(),
                    ],
                ),
            )
            .await?;
        }
        _ => {
            exec(
                db,
                stmt(
                    backend,
                    "DELETE FROM records_fts WHERE rowid = (SELECT search_doc FROM records WHERE id = $1)",
                    vec![id_text.clone().into()],
                ),
            )
            .await?;
            // Without a rowid FTS5 takes the highest plus one: the newest entry sorts first
            // in descending rowid order.
            exec(
                db,
                stmt(
                    backend,
                    "INSERT INTO records_fts (record_id, body, meta) VALUES ($1, $2, $3)",
                    vec![id_text.clone().into(), body.into(), meta.into()],
                ),
            )
            .await?;
            exec(
                db,
                stmt(
                    backend,
                    "UPDATE records SET search_doc = last_insert_rowid() WHERE id = $1",
                    vec![id_text.clone().into()],
                ),
            )
            .await?;
        }
    }
    exec(
        db,
        stmt(
            backend,
            "DELETE FROM record_tags WHERE record_id = $1",
            vec![id_text.clone().into()],
        ),
    )
    .await?;
    for chunk in rows.chunks(TAG_ROWS_PER_INSERT) {
        let mut sql = String::from("INSERT INTO record_tags (record_id, tag, value, num) VALUES ");
        let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 4);
        for (i, row) in chunk.iter().enumerate() {
            let n = i * 4;
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!("(${}, ${}, ${}, ${})", n + 1, n + 2, n + 3, n + 4));
            values.push(id_text.clone().into());
            values.push(row.tag.clone().into());
            values.push(row.value.clone().into());
            values.push(row.num.into());
        }
        exec(db, stmt(backend, &sql, values)).await?;
    }
    Ok(())
}

/// Removes the index entries and tag rows of every record of a source (the source is being
/// deleted, in the caller's transaction).
pub(crate) async fn unindex_source(db: &impl ConnectionTrait, source_id: Uuid) -> Result<()> {
    let backend = db.get_database_backend();
    let of_source = "(SELECT id FROM records WHERE source_id = $1)";
    let mut statements = vec![format!(
        "DELETE FROM record_tags WHERE record_id IN {of_source}"
    )];
    match backend {
        DbBackend::Postgres => {
            statements.push(format!(
                "DELETE FROM record_search WHERE record_id IN {of_source}"
            ));
            statements.push(format!(
                "DELETE FROM record_words WHERE record_id IN {of_source}"
            ));
        }
        _ => statements.push(
            "DELETE FROM records_fts WHERE rowid IN \
             (SELECT search_doc FROM records WHERE source_id = $1 AND search_doc IS NOT NULL)"
                .into(),
        ),
    }
    for sql in statements {
        exec(db, stmt(backend, &sql, vec![source_id.to_string().into()])).await?;
    }
    Ok(())
}

/// Indexes every live record that has no index entry, oldest write first (so the write
/// sequence follows the records' modification order). Run by the migrations that introduced
/// the current index (SQLite: m0004; PostgreSQL: m0006).
pub(crate) async fn backfill<C: ConnectionTrait>(db: &C) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let unindexed = match backend {
        DbBackend::Postgres => {
            "NOT EXISTS (SELECT 1 FROM record_search s WHERE s.record_id = records.id)"
        }
        _ => "search_doc IS NULL",
    };
    let custom = |e: Error| DbErr::Custom(e.to_string());
    let sources = all(db, stmt(backend, "SELECT body FROM sources", vec![]))
        .await
        .map_err(custom)?;
    let mut object_types: HashMap<Uuid, (Uuid, ObjectType)> = HashMap::new();
    for row in &sources {
        let body: String = get(row, "body").map_err(custom)?;
        let source: Source =
            serde_json::from_str(&body).map_err(|e| DbErr::Custom(e.to_string()))?;
        for ot in source.object_types {
            object_types.insert(ot.id, (source.workspace_id, ot));
        }
    }
    let (mut after_date, mut after_id) = (i64::MIN, String::new());
    loop {
        let rows = all(
            db,
            stmt(
                backend,
                &format!(
                    "SELECT id, object_type_id, source_id, modified_date, content, tags \
                     FROM records WHERE NOT removed AND {unindexed} \
                     AND (modified_date > $1 OR (modified_date = $1 AND id > $2)) \
                     ORDER BY modified_date, id LIMIT 500"
                ),
                vec![after_date.into(), after_id.clone().into()],
            ),
        )
        .await
        .map_err(custom)?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after_date = get(last, "modified_date").map_err(custom)?;
        after_id = get(last, "id").map_err(custom)?;
        let parse = |s: &str| Uuid::parse_str(s).map_err(|e| DbErr::Custom(e.to_string()));
        for row in &rows {
            let id = parse(&get::<String>(row, "id").map_err(custom)?)?;
            let ot_id = parse(&get::<String>(row, "object_type_id").map_err(custom)?)?;
            let source_id = parse(&get::<String>(row, "source_id").map_err(custom)?)?;
            let content: String = get(row, "content").map_err(custom)?;
            let tags: String = get(row, "tags").map_err(custom)?;
            let tags: Tags =
                serde_json::from_str(&tags).map_err(|e| DbErr::Custom(e.to_string()))?;
            let Some((workspace_id, ot)) = object_types.get(&ot_id) else {
                continue;
            };
            let scope = IndexScope {
                workspace_id: *workspace_id,
                source_id,
                object_type_id: ot_id,
            };
            index_record(db, scope, id, &content, &search::tag_rows(Some(ot), &tags))
                .await
                .map_err(custom)?;
        }
    }
}

/// Numbered parameters for one statement.
struct Params {
    values: Vec<Value>,
}

impl Params {
    fn push(&mut self, v: impl Into<Value>) -> String {
        self.values.push(v.into());
        format!("${}", self.values.len())
    }
}

/// FTS5 query: the words in the `body` column, scope and tag filters as tokens of `meta`.
fn fts5_query(q: &SearchQuery) -> String {
    let quoted = |t: String| format!("\"{t}\"");
    let mut parts = Vec::new();
    if !q.terms.is_empty() {
        let words: Vec<String> = q.terms.iter().map(|t| quoted(t.join(" "))).collect();
        parts.push(format!("{{body}} : ({})", words.join(" ")));
    }
    for token in scope_tokens(q) {
        parts.push(format!("{{meta}} : ({})", quoted(token)));
    }
    for f in &q.tags {
        let any: Vec<String> = f
            .values
            .iter()
            .map(|v| quoted(tag_token(&f.tag, v)))
            .collect();
        parts.push(format!("{{meta}} : ({})", any.join(" OR ")));
    }
    parts.join(" AND ")
}

/// The scope tokens every match must carry.
fn scope_tokens(q: &SearchQuery) -> Vec<String> {
    let mut tokens = vec![scope_token('w', q.workspace_id)];
    if let Some(s) = q.source_id {
        tokens.push(scope_token('s', s));
    }
    if let Some(o) = q.object_type_id {
        tokens.push(scope_token('o', o));
    }
    tokens
}

/// PostgreSQL: the words, parsed by `to_tsquery('simple', ..)` as the text was.
fn tsquery(terms: &[Term]) -> String {
    terms
        .iter()
        .map(|t| format!("({})", t.join(" <-> ")))
        .collect::<Vec<_>>()
        .join(" & ")
}

/// PostgreSQL: the marked scope tokens as a literal `tsquery`, for `record_words.vector`.
fn marked_scope_tsquery(q: &SearchQuery) -> String {
    scope_tokens(q)
        .into_iter()
        .map(|t| format!("'{PG_TOKEN_MARK}{t}'"))
        .collect::<Vec<_>>()
        .join(" & ")
}

/// PostgreSQL: every word of the terms, phrases as plain AND, parsed by
/// `to_tsquery('simple', ..)`: what `record_search.words` (which has no positions) can answer.
fn and_tsquery(terms: &[Term]) -> String {
    terms
        .iter()
        .flat_map(|t| t.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" & ")
}

/// PostgreSQL: the scope and tag tokens as a literal `tsquery` (quoted, so nothing is
/// parsed), each prefixed by `mark`: unmarked for `record_search.meta`, marked with
/// [`PG_TOKEN_MARK`] for `record_search.words`.
fn meta_tsquery(q: &SearchQuery, mark: &str) -> String {
    let mut parts: Vec<String> = scope_tokens(q)
        .into_iter()
        .map(|t| format!("'{mark}{t}'"))
        .collect();
    for f in &q.tags {
        let any: Vec<String> = f
            .values
            .iter()
            .map(|v| format!("'{mark}{}'", tag_token(&f.tag, v)))
            .collect();
        parts.push(format!("({})", any.join(" | ")));
    }
    parts.join(" & ")
}

/// The window statement: live matches in the workspace passing every filter, newest entry
/// first, at most `q.cap()`; columns `id`, `source_id`, `object_type_id`, and when asked
/// `tags`, `body` (SQLite: to rank in Rust) or `score` (PostgreSQL: `ts_rank_cd`, 0 without
/// words).
///
/// PostgreSQL takes one batch: up to `batch.candidates` index entries newest first (`c`),
/// older than `batch.before` when set, and only then joins the records (at most
/// `batch.live` live rows), so the join touches about a window's worth of rows whichever plan
/// finds the entries. Its rows also carry `candidates`, the number of entries taken, and
/// `last_doc`, the oldest of them; the statement always returns a row (with a NULL `id` when
/// nothing is live), so the caller can tell a batch cut short by entries of removed records
/// from the end of the matches and go on below `last_doc` ([`SeaOrmStore::search_records`]).
fn window(backend: DbBackend, q: &SearchQuery, with_tags: bool, batch: Batch) -> (String, Params) {
    let mut p = Params { values: Vec::new() };
    let ws = p.push(q.workspace_id.to_string());
    let mut columns =
        String::from("r.id AS id, r.source_id AS source_id, r.object_type_id AS object_type_id");
    if with_tags {
        columns.push_str(", r.tags AS tags");
    }
    let mut filter = String::new();
    for (pseudo, column, from_ts, to_ts) in [
        (
            search::CREATED_TAG,
            "r.created_date",
            q.created_from,
            q.created_to,
        ),
        (
            search::MODIFIED_TAG,
            "r.modified_date",
            q.modified_from,
            q.modified_to,
        ),
    ] {
        if from_ts.is_none() && to_ts.is_none() {
            continue;
        }
        let tag = p.push(pseudo);
        let effective = format!(
            "COALESCE((SELECT MIN(t.num) FROM record_tags t WHERE t.record_id = r.id AND t.tag = {tag}), {column})"
        );
        if let Some(f) = from_ts {
            filter.push_str(&format!(
                " AND {effective} >= {}",
                p.push(f.timestamp_millis())
            ));
        }
        if let Some(t) = to_ts {
            filter.push_str(&format!(
                " AND {effective} <= {}",
                p.push(t.timestamp_millis())
            ));
        }
    }
    let live = format!(
        "o.workspace_id = {ws} AND NOT r.removed AND r.sync_number >= o.complete_floor{filter}"
    );
    let cap = p.push(i64::try_from(batch.live).unwrap_or(i64::MAX));
    let sql = if backend == DbBackend::Postgres {
        // The candidates `c`, newest entry first, in one of four shapes:
        // - no words: the narrow `record_search` alone, scanned newest first (or its GIN
        //   index on `meta` for rare tag values);
        // - words, looked up (`batch.lookup`, chosen when the matches are few: see
        //   [`SeaOrmStore::words_route`]): one GIN lookup on `record_search.words` intersecting
        //   words, scope and tag tokens, reading only narrow rows, then sorted; a phrase is
        //   then tested on the positioned words of those entries alone;
        // - words without tag filters, scanned: `record_words` alone (its vector holds the
        //   marked scope tokens), newest first;
        // - words and tag filters, scanned: `record_search` filtered by its small `meta`,
        //   joined to the words by write sequence (a bigint key: cheaper to look up than the
        //   text record id), so the wide vectors are read only for entries that pass the tags.
        // Only the window's rows are ranked, after the LIMITs: the scans keep the row address
        // of the words (`tid`) and the score reads the vector there (stored in the row: one
        // page, most likely still cached from the scan); a lookup reads it by write sequence.
        // Ranking every entry a GIN lookup finds, before the sort, cost more than the scan.
        let limit = p.push(i64::try_from(batch.candidates).unwrap_or(i64::MAX));
        // The batch's upper bound on the write sequence, on the table that drives.
        let below = |table: &str, p: &mut Params| match batch.before {
            Some(doc) => format!(" AND {table}.doc < {}", p.push(doc)),
            None => String::new(),
        };
        let candidates_sql = if q.terms.is_empty() {
            columns.push_str(", CAST(0 AS DOUBLE PRECISION) AS score");
            let meta = p.push(meta_tsquery(q, ""));
            let below = below("s", &mut p);
            format!(
                "SELECT s.record_id, s.doc FROM record_search s \
                 WHERE s.meta @@ CAST({meta} AS tsquery){below} ORDER BY s.doc DESC LIMIT {limit}"
            )
        } else {
            let words = p.push(tsquery(&q.terms));
            let words_row = if batch.lookup {
                "v.doc = c.doc"
            } else {
                "v.ctid = c.tid"
            };
            columns.push_str(&format!(
                ", CAST(COALESCE(ts_rank_cd((SELECT v.vector FROM record_words v \
                 WHERE {words_row}), to_tsquery('simple', {words})), 0) AS DOUBLE PRECISION) \
                 AS score"
            ));
            if batch.lookup {
                let all_words = p.push(and_tsquery(&q.terms));
                let tokens = p.push(meta_tsquery(q, &PG_TOKEN_MARK.to_string()));
                let below = below("s", &mut p);
                // OFFSET 0 fences the lookup: left free, the planner could scan
                // `record_search` newest first and read every entry's out-of-row words.
                let found = format!(
                    "SELECT s.record_id, s.doc FROM record_search s \
                     WHERE s.words @@ (to_tsquery('simple', {all_words}) \
                     && CAST({tokens} AS tsquery)){below} OFFSET 0"
                );
                if q.terms.iter().any(|t| t.len() > 1) {
                    format!(
                        "SELECT f.record_id, f.doc FROM ({found}) f \
                         JOIN record_words w ON w.doc = f.doc \
                         WHERE w.vector @@ to_tsquery('simple', {words}) \
                         ORDER BY f.doc DESC LIMIT {limit}"
                    )
                } else {
                    format!(
                        "SELECT f.record_id, f.doc FROM ({found}) f \
                         ORDER BY f.doc DESC LIMIT {limit}"
                    )
                }
            } else if q.tags.is_empty() {
                let scope = p.push(marked_scope_tsquery(q));
                let below = below("w", &mut p);
                format!(
                    "SELECT w.record_id, w.doc, w.ctid AS tid FROM record_words w \
                     WHERE w.vector @@ (to_tsquery('simple', {words}) && CAST({scope} AS tsquery)){below} \
                     ORDER BY w.doc DESC LIMIT {limit}"
                )
            } else {
                let meta = p.push(meta_tsquery(q, ""));
                let below = below("s", &mut p);
                format!(
                    "SELECT s.record_id, s.doc, w.ctid AS tid FROM record_search s \
                     JOIN record_words w ON w.doc = s.doc \
                     WHERE s.meta @@ CAST({meta} AS tsquery){below} \
                     AND w.vector @@ to_tsquery('simple', {words}) \
                     ORDER BY s.doc DESC LIMIT {limit}"
                )
            }
        };
        format!(
            "WITH c AS ({candidates_sql}) \
             SELECT k.candidates, k.last_doc, m.* FROM \
             (SELECT COUNT(*) AS candidates, MIN(c.doc) AS last_doc FROM c) k \
             LEFT JOIN (SELECT {columns}, c.doc AS doc FROM c JOIN records r ON r.id = c.record_id \
             JOIN object_types o ON o.id = r.object_type_id WHERE {live} \
             ORDER BY c.doc DESC LIMIT {cap}) m ON TRUE ORDER BY m.doc DESC"
        )
    } else {
        let m = p.push(fts5_query(q));
        if !q.terms.is_empty() {
            columns.push_str(", f.body AS body");
        }
        // CROSS JOIN keeps the written order: the full-text match drives in descending rowid
        // order (newest entry first), each hit looks its record up by primary key, and the
        // LIMIT stops the scan (left free, the planner may scan object_types first and sort
        // every match).
        format!(
            "SELECT {columns} FROM records_fts f CROSS JOIN records r ON r.id = f.record_id \
             CROSS JOIN object_types o ON o.id = r.object_type_id \
             WHERE records_fts MATCH {m} AND {live} ORDER BY f.rowid DESC LIMIT {cap}"
        )
    };
    (sql, p)
}

/// What reading one entry found by the GIN lookup costs, in entries tested by a newest-first
/// scan (measured: see docs/performance.md).
const LOOKUP_ENTRY_COST: f64 = 2.0;

/// The planner's row estimate from the first line of a text `EXPLAIN` (`... rows=123 ...`).
fn estimated_rows(line: &str) -> Option<f64> {
    let rest = line.split(" rows=").nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// One PostgreSQL window statement's share of the window (see [`window`]).
#[derive(Debug, Clone, Copy)]
struct Batch {
    /// Index entries to take, newest first.
    candidates: u64,
    /// Only entries written before this one (the previous batch's `last_doc`).
    before: Option<i64>,
    /// Live matches still missing from the window.
    live: u64,
    /// Words are found by the GIN lookup on `record_search.words` rather than by a
    /// newest-first scan.
    lookup: bool,
}

/// One match of the window.
struct Hit {
    id: Uuid,
    source_id: Uuid,
    object_type_id: Uuid,
    tags: Option<String>,
}

impl Batch {
    /// The first batch of a search: the window plus a sixteenth of index entries, for entries
    /// of removed records.
    fn first(q: &SearchQuery, lookup: bool) -> Self {
        let cap = q.cap();
        Batch {
            candidates: cap.saturating_add(cap / 16),
            before: None,
            live: cap,
            lookup,
        }
    }
}

impl SeaOrmStore {
    /// Prepares a search's transaction and picks its route: on PostgreSQL, the planner
    /// settings every search statement runs with, and whether the words are looked up
    /// ([`Self::words_route`]; `false` without words and on SQLite).
    async fn plan_search(&self, txn: &impl ConnectionTrait, q: &SearchQuery) -> Result<bool> {
        let backend = self.backend();
        if backend != DbBackend::Postgres {
            return Ok(false);
        }
        // A plan for these very words: a rare word wants the GIN index, a common one the
        // newest-first scan, and a generic (cached) plan cannot tell them apart.
        // No parallel workers: starting one costs more than a window's scan.
        // No sequential scans: every statement of a search is built around an index (the
        // write sequence's b-tree, the GIN indexes), and a sequential scan of `record_search`
        // detoasts every entry's out-of-row words, which the planner does not price: for a
        // word + tag filter lookup at 100k records it priced the two plans within 1% of each
        // other (6,946 and 6,916), and the statement that got the scan took 300 ms, not 13.
        // No JIT: a sequential scan that cannot be avoided (of a sequence, say) still carries
        // `enable_seqscan`'s penalty cost, far above `jit_above_cost`, and a statement with one
        // spent 12–60 ms compiling (measured with a draft that read `record_search_doc`). No
        // search statement runs long enough to gain from JIT; none of today's has such a
        // scan, so this is a guard.
        exec(
            txn,
            stmt(
                backend,
                "SELECT set_config('plan_cache_mode', 'force_custom_plan', true), \
                 set_config('max_parallel_workers_per_gather', '0', true), \
                 set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)",
                vec![],
            ),
        )
        .await?;
        Ok(!q.terms.is_empty() && self.words_route(txn, q).await?)
    }

    /// The database's plan for the first statement of `q`'s search, as the search itself
    /// would run it (same settings, same route): PostgreSQL's `EXPLAIN`, SQLite's
    /// `EXPLAIN QUERY PLAN`, one line per row. For operators diagnosing a slow query and for
    /// tests that hold the store to its access paths; nothing is changed.
    pub async fn explain_search(&self, q: &SearchQuery) -> Result<String> {
        let backend = self.backend();
        let txn = self.db.begin().await.map_err(db_error)?;
        let lookup = self.plan_search(&txn, q).await?;
        let (sql, p) = window(
            backend,
            q,
            !q.facet_tags.is_empty(),
            Batch::first(q, lookup),
        );
        let (explain, column) = match backend {
            DbBackend::Postgres => ("EXPLAIN", "QUERY PLAN"),
            _ => ("EXPLAIN QUERY PLAN", "detail"),
        };
        let rows = all(&txn, stmt(backend, &format!("{explain} {sql}"), p.values)).await?;
        txn.rollback().await.map_err(db_error)?;
        let lines = rows
            .iter()
            .map(|row| get::<String>(row, column))
            .collect::<Result<Vec<_>>>()?;
        Ok(lines.join("\n"))
    }

    /// [`inlet_core::RecordStore::search`]: the window in one statement, ranked here, then the
    /// page's records by id.
    pub(crate) async fn search_records(&self, q: &SearchQuery) -> Result<SearchPage> {
        use inlet_core::RecordStore;
        let backend = self.backend();
        let with_tags = !q.facet_tags.is_empty();
        // One snapshot for the window and the page.
        let txn = self.db.begin().await.map_err(db_error)?;
        let lookup = self.plan_search(&txn, q).await?;
        let t0 = std::time::Instant::now();
        // PostgreSQL takes the window in batches of index entries, newest first. The first asks
        // for a sixteenth more entries than the window for entries of removed records; when
        // those leave the window short, the next batch goes on below the oldest entry taken,
        // sized by the share of live entries seen so far (so a store with many removed records
        // costs one or two more statements, not a rescan), until the window is full or the
        // entries run out.
        let cap = q.cap();
        let mut batch = Batch::first(q, lookup);
        let (mut taken_all, mut rows) = (0u64, Vec::new());
        loop {
            let (sql, p) = window(backend, q, with_tags, batch);
            let found = all(&txn, stmt(backend, &sql, p.values)).await?;
            if backend != DbBackend::Postgres {
                rows = found;
                break;
            }
            let (taken, last_doc) = match found.first() {
                Some(row) => (
                    get::<i64>(row, "candidates")?.max(0) as u64,
                    get::<Option<i64>>(row, "last_doc")?,
                ),
                None => (0, None),
            };
            taken_all = taken_all.saturating_add(taken);
            for row in found {
                // Nothing live in the batch: its one row has a NULL id.
                if get::<Option<String>>(&row, "id")?.is_some() {
                    rows.push(row);
                }
            }
            let missing = cap.saturating_sub(rows.len() as u64);
            if missing == 0 || taken < batch.candidates || last_doc.is_none() {
                break;
            }
            // Entries per live match so far, with a quarter to spare; at least 64 entries and
            // at most four times the last batch.
            let live_seen = (rows.len() as u64).max(1);
            batch = Batch {
                candidates: (missing.saturating_mul(taken_all) / live_seen)
                    .saturating_add(missing / 4)
                    .min(batch.candidates.saturating_mul(4))
                    .max(64),
                before: last_doc,
                live: missing,
                lookup,
            };
        }
        let t1 = t0.elapsed();
        let (total, exhaustive) = search::window_total(q, rows.len());
        let mut hits: Vec<(f64, Hit)> = Vec::with_capacity(rows.len());
        let mut bodies: Vec<String> = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let score = match (q.terms.is_empty(), backend) {
                // Without words, the window's own order: newest write first.
                (true, _) => -(i as f64),
                (false, DbBackend::Postgres) => get(row, "score")?,
                (false, _) => {
                    bodies.push(get(row, "body")?);
                    0.0
                }
            };
            hits.push((
                score,
                Hit {
                    id: crate::records::uuid(row, "id")?,
                    source_id: crate::records::uuid(row, "source_id")?,
                    object_type_id: crate::records::uuid(row, "object_type_id")?,
                    tags: if with_tags {
                        Some(get(row, "tags")?)
                    } else {
                        None
                    },
                },
            ));
        }
        if !bodies.is_empty() {
            let avg_len = bodies.iter().map(|b| search::word_count(b)).sum::<usize>() as f64
                / bodies.len() as f64;
            let matcher = search::Matcher::new(&q.terms);
            for (hit, body) in hits.iter_mut().zip(&bodies) {
                hit.0 = matcher.relevance(body, avg_len);
            }
        }
        let t2 = t0.elapsed();
        // Uuid order is the order of the hyphenated text, the SQL stores' key.
        search::rank(&mut hits, |h| h.id);
        let page_ids: Vec<Uuid> = hits
            .iter()
            .skip(usize::try_from(q.offset).unwrap_or(usize::MAX))
            .take(q.limit as usize)
            .map(|h| h.1.id)
            .collect();
        let records = if page_ids.is_empty() {
            Vec::new()
        } else {
            let mut pp = Params { values: Vec::new() };
            let list: Vec<String> = page_ids.iter().map(|id| pp.push(id.to_string())).collect();
            let rows = all(
                &txn,
                stmt(
                    backend,
                    &format!(
                        "SELECT {RECORD_COLUMNS} FROM records r \
                         JOIN object_types o ON o.id = r.object_type_id WHERE r.id IN ({})",
                        list.join(", ")
                    ),
                    pp.values,
                ),
            )
            .await?;
            let mut by_id: HashMap<Uuid, Record> = rows
                .iter()
                .map(|row| record_from_row(row).map(|r| (r.id, r)))
                .collect::<Result<_>>()?;
            page_ids.iter().filter_map(|id| by_id.remove(id)).collect()
        };
        txn.commit().await.map_err(db_error)?;
        let t3 = t0.elapsed();
        let mut facets = BTreeMap::new();
        if with_tags {
            let mut sources: HashMap<Uuid, Source> = HashMap::new();
            let mut tag_rows: Vec<Vec<TagRow>> = Vec::with_capacity(hits.len());
            for (_, hit) in &hits {
                if let std::collections::hash_map::Entry::Vacant(e) = sources.entry(hit.source_id) {
                    e.insert(self.get_source(q.workspace_id, hit.source_id).await?);
                }
                let ot = sources
                    .get(&hit.source_id)
                    .and_then(|s| s.object_type(hit.object_type_id));
                let tags: Tags = serde_json::from_str(hit.tags.as_deref().unwrap_or("{}"))
                    .map_err(crate::json_error)?;
                tag_rows.push(search::tag_rows(ot, &tags));
            }
            facets = search::count_facets(&q.facet_tags, tag_rows.iter().map(Vec::as_slice));
        }
        tracing::debug!(
            matches = hits.len(),
            window_ms = t1.as_secs_f64() * 1e3,
            ranked_ms = t2.as_secs_f64() * 1e3,
            page_ms = t3.as_secs_f64() * 1e3,
            total_ms = t0.elapsed().as_secs_f64() * 1e3,
            "search"
        );
        Ok(SearchPage {
            total,
            exhaustive,
            records,
            facets,
        })
    }

    /// PostgreSQL, a query with words: whether to find them by the GIN lookup on
    /// `record_search.words` rather than by the newest-first scan ([`WordRoute`]). The lookup
    /// reads every match, `m` of them by the planner's estimate (column statistics); the scan
    /// reads about `cap × n / m` of the `n` entries before the window is full. Without an
    /// estimate, the scan (it is never far off for broad queries, and finds the same records).
    async fn words_route(&self, db: &impl ConnectionTrait, q: &SearchQuery) -> Result<bool> {
        match self.word_route {
            WordRoute::Lookup => return Ok(true),
            WordRoute::Scan => return Ok(false),
            WordRoute::Auto => {}
        }
        let backend = self.backend();
        let plan = all(
            db,
            stmt(
                backend,
                "EXPLAIN SELECT 1 FROM record_search s \
                 WHERE s.words @@ (to_tsquery('simple', $1) && CAST($2 AS tsquery))",
                vec![
                    and_tsquery(&q.terms).into(),
                    meta_tsquery(q, &PG_TOKEN_MARK.to_string()).into(),
                ],
            ),
        )
        .await?;
        let Some(matches) = plan
            .first()
            .map(|row| get::<String>(row, "QUERY PLAN"))
            .transpose()?
            .and_then(|line| estimated_rows(&line))
        else {
            return Ok(false);
        };
        let entries = all(
            db,
            stmt(
                backend,
                "SELECT CAST(reltuples AS DOUBLE PRECISION) AS n FROM pg_class \
                 WHERE oid = CAST('record_search' AS regclass)",
                vec![],
            ),
        )
        .await?;
        let n = match entries.first() {
            Some(row) => get::<f64>(row, "n")?,
            None => 0.0,
        }
        .max(matches);
        Ok(matches * matches * LOOKUP_ENTRY_COST < q.cap() as f64 * n)
    }

    async fn folders_of(
        &self,
        db: &impl ConnectionTrait,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<Folder>> {
        let rows = all(
            db,
            self.stmt(
                "SELECT external_id, name, parent_external_id FROM folders \
                 WHERE source_id = $1 AND tag = $2 ORDER BY external_id",
                vec![source_id.to_string().into(), tag.to_string().into()],
            ),
        )
        .await?;
        rows.iter()
            .map(|r| {
                Ok(Folder {
                    external_id: get(r, "external_id")?,
                    name: get(r, "name")?,
                    parent_external_id: get(r, "parent_external_id")?,
                })
            })
            .collect()
    }

    async fn folder_counts(
        &self,
        db: &impl ConnectionTrait,
        source_id: Uuid,
        tag: &str,
    ) -> Result<HashMap<String, u64>> {
        let rows = all(
            db,
            self.stmt(
                "SELECT t.value AS value, COUNT(*) AS n FROM record_tags t \
                 JOIN records r ON r.id = t.record_id JOIN object_types o ON o.id = r.object_type_id \
                 WHERE r.source_id = $1 AND t.tag = $2 AND NOT r.removed \
                 AND r.sync_number >= o.complete_floor GROUP BY t.value",
                vec![source_id.to_string().into(), tag.to_string().into()],
            ),
        )
        .await?;
        rows.iter()
            .map(|r| Ok((get(r, "value")?, get::<i64>(r, "n")?.max(0) as u64)))
            .collect()
    }

    /// [`inlet_core::RecordStore::put_folder`].
    pub(crate) async fn put_folder_row(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        folder: &Folder,
    ) -> Result<bool> {
        use inlet_core::RecordStore;
        self.get_source(workspace_id, source_id).await?;
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        if backend_is_pg(self) {
            // Serialize folder changes of one tree so the cycle check sees every move.
            exec(
                &txn,
                self.stmt(
                    "SELECT pg_advisory_xact_lock(hashtext($1))",
                    vec![format!("{source_id}/{tag}").into()],
                ),
            )
            .await?;
        }
        let folders = self.folders_of(&txn, source_id, tag).await?;
        if let Some(parent) = &folder.parent_external_id
            && !folders.iter().any(|f| f.external_id == *parent)
        {
            return Err(Error::not_found(format!(
                "parent folder '{parent}' not found"
            )));
        }
        if search::would_cycle(
            &folders,
            &folder.external_id,
            folder.parent_external_id.as_deref(),
        ) {
            return Err(Error::invalid(format!(
                "folder '{}' cannot be placed under its own descendant",
                folder.external_id
            )));
        }
        let exists = folders.iter().any(|f| f.external_id == folder.external_id);
        let values: Vec<Value> = vec![
            source_id.to_string().into(),
            tag.to_string().into(),
            folder.external_id.clone().into(),
            folder.name.clone().into(),
            folder.parent_external_id.clone().into(),
        ];
        let sql = if exists {
            "UPDATE folders SET name = $4, parent_external_id = $5 \
             WHERE source_id = $1 AND tag = $2 AND external_id = $3"
        } else {
            "INSERT INTO folders (source_id, tag, external_id, name, parent_external_id) \
             VALUES ($1, $2, $3, $4, $5)"
        };
        exec(&txn, self.stmt(sql, values)).await?;
        txn.commit().await.map_err(db_error)?;
        Ok(!exists)
    }

    /// [`inlet_core::RecordStore::list_folders`].
    pub(crate) async fn list_folder_rows(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<(Folder, u64)>> {
        use inlet_core::RecordStore;
        self.get_source(workspace_id, source_id).await?;
        let folders = self.folders_of(&self.db, source_id, tag).await?;
        let counts = self.folder_counts(&self.db, source_id, tag).await?;
        Ok(folders
            .into_iter()
            .map(|f| {
                let n = counts.get(&f.external_id).copied().unwrap_or(0);
                (f, n)
            })
            .collect())
    }

    /// [`inlet_core::RecordStore::folder_names`]: the folders alone, no count query.
    pub(crate) async fn folder_name_rows(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<Folder>> {
        use inlet_core::RecordStore;
        self.get_source(workspace_id, source_id).await?;
        self.folders_of(&self.db, source_id, tag).await
    }

    /// [`inlet_core::RecordStore::delete_folder`].
    pub(crate) async fn delete_folder_row(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        external_id: &str,
    ) -> Result<()> {
        use inlet_core::RecordStore;
        self.get_source(workspace_id, source_id).await?;
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        let folders = self.folders_of(&txn, source_id, tag).await?;
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
        let counts = self.folder_counts(&txn, source_id, tag).await?;
        if counts.get(external_id).copied().unwrap_or(0) > 0 {
            return Err(Error::conflict(format!(
                "folder '{external_id}' still holds records"
            )));
        }
        exec(
            &txn,
            self.stmt(
                "DELETE FROM folders WHERE source_id = $1 AND tag = $2 AND external_id = $3",
                vec![
                    source_id.to_string().into(),
                    tag.to_string().into(),
                    external_id.to_string().into(),
                ],
            ),
        )
        .await?;
        txn.commit().await.map_err(db_error)?;
        Ok(())
    }
}

fn backend_is_pg(store: &SeaOrmStore) -> bool {
    store.connection().get_database_backend() == DbBackend::Postgres
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_syntax_per_dialect() {
        let terms = search::parse_query(r#"sales "quarterly report" 東京"#);
        let ws = Uuid::from_u128(1);
        let mut q = SearchQuery::new(ws, r#"sales "quarterly report" 東京"#);
        q.tags = vec![search::TagFilter {
            tag: "color".into(),
            values: vec!["red".into(), "blue".into()],
        }];
        let red = tag_token("color", "red");
        let blue = tag_token("color", "blue");
        assert_eq!(
            fts5_query(&q),
            format!(
                r#"{{body}} : ("sales" "quarterly report" "東 京") AND {{meta}} : ("w{}") AND {{meta}} : ("{red}" OR "{blue}")"#,
                ws.simple()
            )
        );
        assert_eq!(
            tsquery(&terms),
            "(sales) & (quarterly <-> report) & (東 <-> 京)"
        );
        assert_eq!(
            meta_tsquery(&q, ""),
            format!("'w{}' & ('{red}' | '{blue}')", ws.simple())
        );
        assert_eq!(
            meta_tsquery(&q, "#"),
            format!("'#w{}' & ('#{red}' | '#{blue}')", ws.simple())
        );
        // The lookup has no positions: phrases become plain AND (the phrase is tested after).
        assert_eq!(and_tsquery(&terms), "sales & quarterly & report & 東 & 京");
        assert_eq!(
            estimated_rows(
                "Bitmap Heap Scan on record_search s  (cost=39.88..1544.82 rows=500 width=45)"
            ),
            Some(500.0)
        );
        assert_eq!(estimated_rows("Result"), None);
        assert_eq!(marked_scope_tsquery(&q), format!("'#w{}'", ws.simple()));
        // No word of any text can be a token: tokens start with the mark, words are letters
        // and digits.
        let words = search::index_text(&format!("#w{} #{red}", ws.simple()));
        assert!(!words.contains(PG_TOKEN_MARK));
        // Distinct values never share a token; the same value always has the same one.
        assert_ne!(red, blue);
        assert_eq!(red, tag_token("color", "red"));
        assert_ne!(tag_token("a", "bc"), tag_token("ab", "c"));
    }
}
