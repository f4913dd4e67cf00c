//! Search and folders over SQL (DESIGN 6, 7): the full-text index (SQLite FTS5 `records_fts`,
//! PostgreSQL `record_search` tsvector with GIN), the tag index `record_tags`, and folder trees.
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
    SeaOrmStore, all, db_error, exec, get, one,
    records::{RECORD_COLUMNS, record_from_row},
    stmt,
};

/// Tag rows inserted per statement.
const TAG_ROWS_PER_INSERT: usize = 200;

/// The FTS5 rowid of a record: the first 8 bytes of its id (collisions are 2^-64 per pair).
fn fts_rowid(id: Uuid) -> i64 {
    let b = id.as_bytes();
    i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// Replaces a record's entries in the full-text and tag indexes.
pub(crate) async fn index_record(
    db: &impl ConnectionTrait,
    id: Uuid,
    content: &str,
    rows: &[TagRow],
) -> Result<()> {
    let backend = db.get_database_backend();
    let body = search::index_text(content);
    let id_text = id.to_string();
    match backend {
        DbBackend::Postgres => {
            exec(
                db,
                stmt(
                    backend,
                    "INSERT INTO record_search (record_id, vector) VALUES ($1, to_tsvector('simple', $2)) \
                     ON CONFLICT (record_id) DO UPDATE SET vector = excluded.vector",
                    vec![id_text.clone().into(), body.into()],
                ),
            )
            .await?;
        }
        _ => {
            exec(
                db,
                stmt(
                    backend,
                    "DELETE FROM records_fts WHERE rowid = $1",
                    vec![fts_rowid(id).into()],
                ),
            )
            .await?;
            if !body.is_empty() {
                exec(
                    db,
                    stmt(
                        backend,
                        "INSERT INTO records_fts (rowid, record_id, body) VALUES ($1, $2, $3)",
                        vec![fts_rowid(id).into(), id_text.clone().into(), body.into()],
                    ),
                )
                .await?;
            }
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

/// Indexes the live records stored before the search migration.
pub(crate) async fn backfill<C: ConnectionTrait>(db: &C) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let custom = |e: Error| DbErr::Custom(e.to_string());
    let sources = all(db, stmt(backend, "SELECT body FROM sources", vec![]))
        .await
        .map_err(custom)?;
    let mut object_types: HashMap<Uuid, ObjectType> = HashMap::new();
    for row in &sources {
        let body: String = get(row, "body").map_err(custom)?;
        let source: Source =
            serde_json::from_str(&body).map_err(|e| DbErr::Custom(e.to_string()))?;
        for ot in source.object_types {
            object_types.insert(ot.id, ot);
        }
    }
    let mut after = String::new();
    loop {
        let rows = all(
            db,
            stmt(
                backend,
                "SELECT id, object_type_id, content, tags FROM records \
                 WHERE NOT removed AND id > $1 ORDER BY id LIMIT 500",
                vec![after.clone().into()],
            ),
        )
        .await
        .map_err(custom)?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = get(last, "id").map_err(custom)?;
        for row in &rows {
            let id: String = get(row, "id").map_err(custom)?;
            let ot: String = get(row, "object_type_id").map_err(custom)?;
            let content: String = get(row, "content").map_err(custom)?;
            let tags: String = get(row, "tags").map_err(custom)?;
            let tags: Tags =
                serde_json::from_str(&tags).map_err(|e| DbErr::Custom(e.to_string()))?;
            let id = Uuid::parse_str(&id).map_err(|e| DbErr::Custom(e.to_string()))?;
            let ot = Uuid::parse_str(&ot)
                .ok()
                .and_then(|ot| object_types.get(&ot));
            index_record(db, id, &content, &search::tag_rows(ot, &tags))
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

fn fts5_query(terms: &[Term]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.join(" ")))
        .collect::<Vec<_>>()
        .join(" ")
}

fn tsquery(terms: &[Term]) -> String {
    terms
        .iter()
        .map(|t| format!("({})", t.join(" <-> ")))
        .collect::<Vec<_>>()
        .join(" & ")
}

/// The matching set as a CTE `m(id, score)`, with its parameters.
fn matching(backend: DbBackend, q: &SearchQuery) -> (String, Params) {
    let mut p = Params { values: Vec::new() };
    let ws = p.push(q.workspace_id.to_string());
    let (from, score, mut filter) = if q.terms.is_empty() {
        (
            "records r".to_string(),
            "CAST(r.modified_date AS DOUBLE PRECISION)".to_string(),
            String::new(),
        )
    } else if backend == DbBackend::Postgres {
        let m = p.push(tsquery(&q.terms));
        (
            "record_search f JOIN records r ON r.id = f.record_id".to_string(),
            format!("CAST(ts_rank_cd(f.vector, to_tsquery('simple', {m})) AS DOUBLE PRECISION)"),
            format!(" AND f.vector @@ to_tsquery('simple', {m})"),
        )
    } else {
        let m = p.push(fts5_query(&q.terms));
        // CROSS JOIN fixes SQLite's join order: the full-text match drives, each hit looks its
        // record up by primary key (the other order runs the match once per record).
        (
            "records_fts f CROSS JOIN records r ON r.id = f.record_id".to_string(),
            "-bm25(records_fts)".to_string(),
            format!(" AND records_fts MATCH {m}"),
        )
    };
    if let Some(s) = q.source_id {
        filter.push_str(&format!(" AND r.source_id = {}", p.push(s.to_string())));
    }
    if let Some(o) = q.object_type_id {
        filter.push_str(&format!(
            " AND r.object_type_id = {}",
            p.push(o.to_string())
        ));
    }
    for f in &q.tags {
        let tag = p.push(f.tag.clone());
        let values: Vec<String> = f.values.iter().map(|v| p.push(v.clone())).collect();
        // Uncorrelated: the set of records carrying a value is found once through the
        // (tag, value) index, then each match is a membership test.
        filter.push_str(&format!(
            " AND r.id IN (SELECT t.record_id FROM record_tags t WHERE t.tag = {tag} \
             AND t.value IN ({}))",
            values.join(", ")
        ));
    }
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
    let cte = format!(
        "WITH m AS (SELECT r.id AS id, {score} AS score FROM {from} \
         JOIN object_types o ON o.id = r.object_type_id \
         WHERE o.workspace_id = {ws} AND NOT r.removed AND r.sync_number >= o.complete_floor{filter})"
    );
    (cte, p)
}

impl SeaOrmStore {
    /// [`inlet_core::RecordStore::search`].
    pub(crate) async fn search_records(&self, q: &SearchQuery) -> Result<SearchPage> {
        let backend = self.backend();
        // One snapshot for the count, the page and the facets.
        let txn = self.db.begin().await.map_err(db_error)?;
        let (cte, p) = matching(backend, q);
        // One pass for the page and the total (a window count over the whole match).
        let mut page_params = Params {
            values: p.values.clone(),
        };
        let limit = page_params.push(i64::from(q.limit));
        let offset = page_params.push(i64::try_from(q.offset).unwrap_or(i64::MAX));
        let rows = all(
            &txn,
            stmt(
                backend,
                &format!(
                    "{cte}, c AS (SELECT m.id, m.score, COUNT(*) OVER () AS total_count FROM m \
                     ORDER BY m.score DESC, m.id LIMIT {limit} OFFSET {offset}) \
                     SELECT {RECORD_COLUMNS}, c.total_count FROM c JOIN records r ON r.id = c.id \
                     JOIN object_types o ON o.id = r.object_type_id \
                     ORDER BY c.score DESC, r.id"
                ),
                page_params.values,
            ),
        )
        .await?;
        let total = match rows.first() {
            Some(row) => get::<i64>(row, "total_count")?,
            // Past the last page (or nothing matches): count separately.
            None => one(
                &txn,
                stmt(
                    backend,
                    &format!("{cte} SELECT COUNT(*) AS n FROM m"),
                    p.values.clone(),
                ),
            )
            .await?
            .map_or(Ok(0), |r| get::<i64>(&r, "n"))?,
        };
        let records = rows
            .iter()
            .map(record_from_row)
            .collect::<Result<Vec<Record>>>()?;
        let mut facets = BTreeMap::new();
        if !q.facet_tags.is_empty() && total > 0 {
            let mut fp = Params {
                values: p.values.clone(),
            };
            let tags: Vec<String> = q.facet_tags.iter().map(|t| fp.push(t.clone())).collect();
            let rows = all(
                &txn,
                stmt(
                    backend,
                    &format!(
                        "{cte} SELECT t.tag AS tag, t.value AS value, COUNT(DISTINCT t.record_id) AS n \
                         FROM m JOIN record_tags t ON t.record_id = m.id \
                         WHERE t.tag IN ({}) GROUP BY t.tag, t.value",
                        tags.join(", ")
                    ),
                    fp.values,
                ),
            )
            .await?;
            let mut by_tag: HashMap<String, Vec<(String, u64)>> = HashMap::new();
            for row in &rows {
                let n: i64 = get(row, "n")?;
                by_tag
                    .entry(get(row, "tag")?)
                    .or_default()
                    .push((get(row, "value")?, n.max(0) as u64));
            }
            for tag in &q.facet_tags {
                facets.insert(
                    tag.clone(),
                    search::top_values(by_tag.remove(tag).unwrap_or_default()),
                );
            }
        } else {
            for tag in &q.facet_tags {
                facets.insert(tag.clone(), Vec::new());
            }
        }
        txn.commit().await.map_err(db_error)?;
        Ok(SearchPage {
            total: total.max(0) as u64,
            records,
            facets,
        })
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
        assert_eq!(fts5_query(&terms), r#""sales" "quarterly report" "東 京""#);
        assert_eq!(
            tsquery(&terms),
            "(sales) & (quarterly <-> report) & (東 <-> 京)"
        );
    }
}
