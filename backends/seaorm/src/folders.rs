//! Folders and the tag index over SQL (DESIGN 6): `record_tags` (one row per tag value of a
//! live record, written in the record's transaction) counts the records of each folder, and
//! `folders` holds the trees. Search itself is the search index (`inlet_core::index`).

use crate::one;
use async_trait::async_trait;
use inlet_core::store::Folders;
use std::collections::HashMap;

use inlet_core::{
    Error, Result, WorkspaceId,
    folder::{self, Folder},
    search::{self, TagRow},
    source::{ObjectType, Source},
    tag::Tags,
};
use sea_orm::{ConnectionTrait, DbBackend, DbErr, Value};
use uuid::Uuid;

use crate::{SeaOrmStore, all, db_error, exec, get, stmt};

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
        use inlet_core::store::Sources;
        self.get_source(workspace_id, source_id).await?;
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
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
        let exists = folder::check_put(&folders, folder)?;
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
        use inlet_core::store::Sources;
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
        use inlet_core::store::Sources;
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
        use inlet_core::store::Sources;
        self.get_source(workspace_id, source_id).await?;
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let folders = self.folders_of(&txn, source_id, tag).await?;
        let counts = self.folder_counts(&txn, source_id, tag).await?;
        folder::check_delete(
            &folders,
            external_id,
            counts.get(external_id).copied().unwrap_or(0),
        )?;
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

#[async_trait]
impl Folders for SeaOrmStore {
    async fn put_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        folder: &Folder,
    ) -> Result<bool> {
        self.put_folder_row(workspace_id, source_id, tag, folder)
            .await
    }

    async fn folder_exists(&self, source_id: Uuid, tag: &str, external_id: &str) -> Result<bool> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT 1 AS x FROM folders WHERE source_id = $1 AND tag = $2 AND external_id = $3",
                vec![
                    source_id.to_string().into(),
                    tag.to_string().into(),
                    external_id.to_string().into(),
                ],
            ),
        )
        .await?;
        Ok(row.is_some())
    }

    async fn list_folders(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<(Folder, u64)>> {
        self.list_folder_rows(workspace_id, source_id, tag).await
    }

    async fn folder_names(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<Folder>> {
        self.folder_name_rows(workspace_id, source_id, tag).await
    }

    async fn delete_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        external_id: &str,
    ) -> Result<()> {
        self.delete_folder_row(workspace_id, source_id, tag, external_id)
            .await
    }
}
