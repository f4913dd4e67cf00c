//! Groups mirrored from source systems: one row per group with its members, and one per
//! (member term, group) for expanding a reader's groups.

use async_trait::async_trait;
use inlet_core::store::{Groups, Sources};
use inlet_core::{Result, WorkspaceId, access::Group};
use uuid::Uuid;

use crate::{SeaOrmStore, all, db_error, exec, get, json_error};

impl SeaOrmStore {
    /// Deletes a group's row and its member rows in `txn`; answers the group rows deleted.
    async fn remove(
        &self,
        txn: &impl sea_orm::ConnectionTrait,
        source_id: Uuid,
        external_id: &str,
    ) -> Result<u64> {
        let key = || vec![source_id.to_string().into(), external_id.to_string().into()];
        exec(
            txn,
            self.stmt(
                "DELETE FROM access_group_members WHERE source_id = $1 AND group_id = $2",
                key(),
            ),
        )
        .await?;
        exec(
            txn,
            self.stmt(
                "DELETE FROM access_groups WHERE source_id = $1 AND external_id = $2",
                key(),
            ),
        )
        .await
    }
}

#[async_trait]
impl Groups for SeaOrmStore {
    async fn put_group(&self, workspace_id: WorkspaceId, group: &Group) -> Result<bool> {
        self.get_source(workspace_id, group.source_id).await?;
        let members = serde_json::to_string(&group.members).map_err(json_error)?;
        let source = group.source_id.to_string();
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let removed = self
            .remove(&txn, group.source_id, &group.external_id)
            .await?;
        exec(
            &txn,
            self.stmt(
                "INSERT INTO access_groups (source_id, external_id, workspace_id, members) \
                 VALUES ($1, $2, $3, $4)",
                vec![
                    source.clone().into(),
                    group.external_id.clone().into(),
                    workspace_id.to_string().into(),
                    members.into(),
                ],
            ),
        )
        .await?;
        // Many rows per statement, well under either database's parameter limit.
        for chunk in group.member_terms().chunks(200) {
            let mut values = vec![
                workspace_id.to_string().into(),
                source.clone().into(),
                group.external_id.clone().into(),
            ];
            let rows: Vec<String> = chunk
                .iter()
                .map(|term| {
                    values.push(term.clone().into());
                    format!("($1, ${}, $2, $3)", values.len())
                })
                .collect();
            exec(
                &txn,
                self.stmt(
                    &format!(
                        "INSERT INTO access_group_members (workspace_id, member, source_id, \
                         group_id) VALUES {}",
                        rows.join(", ")
                    ),
                    values,
                ),
            )
            .await?;
        }
        txn.commit().await.map_err(db_error)?;
        Ok(removed == 0)
    }

    async fn delete_group(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        external_id: &str,
    ) -> Result<bool> {
        self.get_source(workspace_id, source_id).await?;
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let removed = self.remove(&txn, source_id, external_id).await?;
        txn.commit().await.map_err(db_error)?;
        Ok(removed > 0)
    }

    async fn list_groups(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Group>> {
        self.get_source(workspace_id, source_id).await?;
        let rows = all(
            &self.db,
            self.stmt(
                "SELECT external_id, members FROM access_groups WHERE source_id = $1 \
                 AND external_id > $2 ORDER BY external_id LIMIT $3",
                vec![
                    source_id.to_string().into(),
                    after.unwrap_or_default().to_string().into(),
                    i64::try_from(limit).unwrap_or(i64::MAX).into(),
                ],
            ),
        )
        .await?;
        rows.iter()
            .map(|row| {
                let members: String = get(row, "members")?;
                Ok(Group {
                    source_id,
                    external_id: get(row, "external_id")?,
                    members: serde_json::from_str(&members).map_err(json_error)?,
                })
            })
            .collect()
    }

    async fn groups_containing(
        &self,
        workspace_id: WorkspaceId,
        member_terms: &[String],
    ) -> Result<Vec<String>> {
        let mut found = Vec::new();
        for chunk in member_terms.chunks(500) {
            let mut values = vec![workspace_id.to_string().into()];
            let marks: Vec<String> = chunk
                .iter()
                .map(|t| {
                    values.push(t.clone().into());
                    format!("${}", values.len())
                })
                .collect();
            let rows = all(
                &self.db,
                self.stmt(
                    &format!(
                        "SELECT DISTINCT source_id, group_id FROM access_group_members \
                         WHERE workspace_id = $1 AND member IN ({})",
                        marks.join(", ")
                    ),
                    values,
                ),
            )
            .await?;
            for row in rows {
                let source = crate::uuid(&row, "source_id")?;
                let group: String = get(&row, "group_id")?;
                found.push(inlet_core::access::group_term(source, &group));
            }
        }
        found.sort();
        found.dedup();
        Ok(found)
    }
}
