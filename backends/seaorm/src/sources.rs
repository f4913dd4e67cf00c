//! Sources, with a short-lived per-process cache of what was read.

use crate::millis;
use crate::uuid;
use crate::{SeaOrmStore, all, db_error, exec, get, json_error, one};
use async_trait::async_trait;
use inlet_core::store::Sources;
use inlet_core::{
    Error, Result, WorkspaceId,
    record::{self},
    source::Source,
};
use sea_orm::ConnectionTrait;
use uuid::Uuid;

#[async_trait]
impl Sources for SeaOrmStore {
    async fn ping(&self) -> Result<()> {
        self.db.ping().await.map_err(db_error)
    }

    async fn create_source(&self, source: &Source) -> Result<()> {
        let _w = self.write_guard().await;
        if let Some(existing) = self.source_with_external_id(source).await? {
            return Err(record::duplicate_source(&source.external_id, existing));
        }
        let body = serde_json::to_string(source).map_err(json_error)?;
        let txn = self.begin_write().await?;
        let inserted = exec(
            &txn,
            self.stmt(
                "INSERT INTO sources (id, workspace_id, seq, body, external_id) \
                 VALUES ($1, $2, $3, $4, $5)",
                vec![
                    source.id.to_string().into(),
                    source.workspace_id.to_string().into(),
                    millis(&source.created_date).into(),
                    body.into(),
                    source.external_id.clone().into(),
                ],
            ),
        )
        .await;
        if let Err(e) = inserted {
            drop(txn);
            // Another replica created the same externalId a moment ago.
            if matches!(e, Error::Conflict(_))
                && let Some(existing) = self.source_with_external_id(source).await?
            {
                return Err(record::duplicate_source(&source.external_id, existing));
            }
            return Err(e);
        }
        self.insert_object_types(&txn, source, &source.object_types)
            .await?;
        txn.commit().await.map_err(db_error)
    }

    async fn update_source(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        edit: record::SourceEdit,
    ) -> Result<Source> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let lock = match self.backend() {
            sea_orm::DbBackend::Postgres => " FOR UPDATE",
            _ => "",
        };
        let row = one(
            &txn,
            self.stmt(
                &format!("SELECT body FROM sources WHERE id = $1 AND workspace_id = $2{lock}"),
                vec![
                    source_id.to_string().into(),
                    workspace_id.to_string().into(),
                ],
            ),
        )
        .await?
        .ok_or_else(|| Error::not_found(format!("source {source_id} not found")))?;
        let mut source: Source =
            serde_json::from_str(&get::<String>(&row, "body")?).map_err(json_error)?;
        let before: Vec<Uuid> = source.object_types.iter().map(|o| o.id).collect();
        edit(&mut source)?;
        let added: Vec<_> = source
            .object_types
            .iter()
            .filter(|o| !before.contains(&o.id))
            .cloned()
            .collect();
        self.insert_object_types(&txn, &source, &added).await?;
        for ot in &source.object_types {
            exec(
                &txn,
                self.stmt(
                    "UPDATE object_types SET name = $2 WHERE id = $1",
                    vec![ot.id.to_string().into(), ot.name.clone().into()],
                ),
            )
            .await?;
        }
        exec(
            &txn,
            self.stmt(
                "UPDATE sources SET body = $2 WHERE id = $1",
                vec![
                    source_id.to_string().into(),
                    serde_json::to_string(&source).map_err(json_error)?.into(),
                ],
            ),
        )
        .await?;
        txn.commit().await.map_err(db_error)?;
        self.forget_source(source_id);
        Ok(source)
    }

    async fn delete_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<()> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let source = self.get_source(workspace_id, source_id).await?;
        // Locks every object type of the source, so no write (which holds its row FOR SHARE)
        // or sync lands while the source goes.
        let lock = match self.backend() {
            sea_orm::DbBackend::Postgres => " FOR UPDATE",
            _ => "",
        };
        let rows = all(
            &txn,
            self.stmt(
                &format!(
                    "SELECT id, open_sync FROM object_types WHERE source_id = $1 \
                     AND workspace_id = $2 ORDER BY id{lock}"
                ),
                vec![
                    source_id.to_string().into(),
                    workspace_id.to_string().into(),
                ],
            ),
        )
        .await?;
        let mut open = Vec::new();
        for row in &rows {
            if let Some(n) = get::<Option<i64>>(row, "open_sync")? {
                open.push((uuid(row, "id")?, n));
            }
        }
        record::source_deletable(&source, &open)?;
        crate::folders::delete_source_tag_rows(&txn, source_id).await?;
        let of_types = "(SELECT id FROM object_types WHERE source_id = $1)";
        for sql in [
            "DELETE FROM records WHERE source_id = $1".to_string(),
            format!("DELETE FROM sync_counters WHERE object_type_id IN {of_types}"),
            format!("DELETE FROM sync_runs WHERE object_type_id IN {of_types}"),
            "DELETE FROM object_types WHERE source_id = $1".to_string(),
            "DELETE FROM sources WHERE id = $1".to_string(),
        ] {
            exec(&txn, self.stmt(&sql, vec![source_id.to_string().into()])).await?;
        }
        self.log_source_deleted(&txn, workspace_id, source_id)
            .await?;
        txn.commit().await.map_err(db_error)?;
        self.forget_source(source_id);
        Ok(())
    }

    async fn list_sources(&self, workspace_id: WorkspaceId) -> Result<Vec<Source>> {
        let rows = all(
            &self.db,
            self.stmt(
                "SELECT body FROM sources WHERE workspace_id = $1 ORDER BY seq, id",
                vec![workspace_id.to_string().into()],
            ),
        )
        .await?;
        rows.iter()
            .map(|r| serde_json::from_str(&get::<String>(r, "body")?).map_err(json_error))
            .collect()
    }

    async fn get_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<Source> {
        if let Ok(cache) = self.sources.read()
            && let Some((s, at)) = cache.get(&source_id)
            && at.elapsed() < crate::SOURCE_CACHE_TTL
        {
            return if s.workspace_id == workspace_id {
                Ok(s.clone())
            } else {
                Err(Error::not_found(format!("source {source_id} not found")))
            };
        }
        let row = one(
            &self.db,
            self.stmt(
                "SELECT body FROM sources WHERE id = $1 AND workspace_id = $2",
                vec![
                    source_id.to_string().into(),
                    workspace_id.to_string().into(),
                ],
            ),
        )
        .await?
        .ok_or_else(|| Error::not_found(format!("source {source_id} not found")))?;
        let source: Source =
            serde_json::from_str(&get::<String>(&row, "body")?).map_err(json_error)?;
        if let Ok(mut cache) = self.sources.write() {
            if cache.len() >= crate::SOURCE_CACHE_ENTRIES {
                cache.clear();
            }
            cache.insert(source_id, (source.clone(), std::time::Instant::now()));
        }
        Ok(source)
    }
}

impl SeaOrmStore {
    /// The id of the workspace's source with `source`'s externalId, if any.
    pub(crate) async fn source_with_external_id(&self, source: &Source) -> Result<Option<Uuid>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT id FROM sources WHERE workspace_id = $1 AND external_id = $2",
                vec![
                    source.workspace_id.to_string().into(),
                    source.external_id.clone().into(),
                ],
            ),
        )
        .await?;
        row.as_ref().map(|r| uuid(r, "id")).transpose()
    }

    /// Inserts the rows of new object types of `source`.
    pub(crate) async fn insert_object_types(
        &self,
        db: &impl ConnectionTrait,
        source: &Source,
        object_types: &[inlet_core::source::ObjectType],
    ) -> Result<()> {
        for ot in object_types {
            exec(
                db,
                self.stmt(
                    "INSERT INTO object_types (id, source_id, workspace_id, name) VALUES ($1, $2, $3, $4)",
                    vec![
                        ot.id.to_string().into(),
                        source.id.to_string().into(),
                        source.workspace_id.to_string().into(),
                        ot.name.clone().into(),
                    ],
                ),
            )
            .await?;
        }
        Ok(())
    }

    /// Drops a source from this process's cache (it changed or went).
    pub(crate) fn forget_source(&self, source_id: Uuid) {
        if let Ok(mut cache) = self.sources.write() {
            cache.remove(&source_id);
        }
    }
}
