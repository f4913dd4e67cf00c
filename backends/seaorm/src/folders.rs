//! The tag index over SQL (DESIGN 6): `record_tags`, one row per tag value of a live record,
//! written in the record's transaction, counts the records of each folder
//! ([`inlet_core::store::Records::tag_counts`]). The folder trees are documents
//! ([`inlet_core::store::Folders`]); search itself is the search index (`inlet_core::index`).

use std::collections::HashMap;

use inlet_core::{
    Error, Result,
    search::{self, TagRow},
    source::{ObjectType, Source},
    tag::Tags,
};
use sea_orm::{ConnectionTrait, DbErr, Value};
use uuid::Uuid;

use crate::{SeaOrmStore, all, exec, get, stmt};

/// Tag rows inserted per statement.
const TAG_ROWS_PER_INSERT: usize = 200;

/// Replaces a record's rows in the tag index, in the caller's transaction.
pub(crate) async fn write_tag_rows(
    db: &impl ConnectionTrait,
    id: Uuid,
    rows: &[TagRow],
) -> Result<()> {
    let backend = db.get_database_backend();
    let id_text = id.to_string();
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

/// Removes the tag rows of every record of a source (the source is being deleted, in the
/// caller's transaction).
pub(crate) async fn delete_source_tag_rows(
    db: &impl ConnectionTrait,
    source_id: Uuid,
) -> Result<()> {
    let backend = db.get_database_backend();
    exec(
        db,
        stmt(
            backend,
            "DELETE FROM record_tags WHERE record_id IN (SELECT id FROM records WHERE source_id = $1)",
            vec![source_id.to_string().into()],
        ),
    )
    .await?;
    Ok(())
}

/// Writes the tag rows of every live record that has none (records from before `record_tags`,
/// or whose rows an earlier migration cleared for its own backfill).
pub(crate) async fn backfill_tag_rows<C: ConnectionTrait>(db: &C) -> Result<(), DbErr> {
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
                "SELECT id, object_type_id, tags FROM records r WHERE NOT removed AND id > $1 \
                 AND NOT EXISTS (SELECT 1 FROM record_tags t WHERE t.record_id = r.id) \
                 ORDER BY id LIMIT 500",
                vec![after.clone().into()],
            ),
        )
        .await
        .map_err(custom)?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = get(last, "id").map_err(custom)?;
        let parse = |s: &str| Uuid::parse_str(s).map_err(|e| DbErr::Custom(e.to_string()));
        for row in &rows {
            let id = parse(&get::<String>(row, "id").map_err(custom)?)?;
            let ot_id = parse(&get::<String>(row, "object_type_id").map_err(custom)?)?;
            let tags: String = get(row, "tags").map_err(custom)?;
            let tags: Tags =
                serde_json::from_str(&tags).map_err(|e| DbErr::Custom(e.to_string()))?;
            let rows = search::tag_rows(object_types.get(&ot_id), &tags);
            write_tag_rows(db, id, &rows).await.map_err(custom)?;
        }
    }
}

impl SeaOrmStore {
    /// [`inlet_core::store::Records::tag_counts`]: live records of the source per value of
    /// the tag, from the tag index.
    pub(crate) async fn folder_counts(
        &self,
        source_id: Uuid,
        tag: &str,
    ) -> Result<HashMap<String, u64>> {
        let rows = all(
            &self.db,
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
}
