//! Groups mirrored from source systems.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::store::Groups;
use inlet_core::{Result, WorkspaceId, access::Group};
use uuid::Uuid;

#[async_trait]
impl Groups for MemoryStore {
    async fn put_group(&self, workspace_id: WorkspaceId, group: &Group) -> Result<bool> {
        let mut st = self.state.lock();
        st.source(workspace_id, group.source_id)?;
        let key = (group.source_id, group.external_id.clone());
        Ok(st.groups.insert(key, group.clone()).is_none())
    }

    async fn delete_group(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        external_id: &str,
    ) -> Result<bool> {
        let mut st = self.state.lock();
        st.source(workspace_id, source_id)?;
        Ok(st
            .groups
            .remove(&(source_id, external_id.to_string()))
            .is_some())
    }

    async fn list_groups(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Group>> {
        let st = self.state.lock();
        st.source(workspace_id, source_id)?;
        Ok(st
            .groups
            .range((source_id, after.unwrap_or_default().to_string())..)
            .take_while(|((s, _), _)| *s == source_id)
            .filter(|((_, id), _)| after.is_none_or(|a| id.as_str() > a))
            .take(limit)
            .map(|(_, g)| g.clone())
            .collect())
    }

    async fn groups_containing(
        &self,
        workspace_id: WorkspaceId,
        member_terms: &[String],
    ) -> Result<Vec<String>> {
        let st = self.state.lock();
        let sources: Vec<Uuid> = st
            .sources
            .iter()
            .filter(|s| s.workspace_id == workspace_id)
            .map(|s| s.id)
            .collect();
        let mut found: Vec<String> = st
            .groups
            .values()
            .filter(|g| sources.contains(&g.source_id))
            .filter(|g| g.member_terms().iter().any(|t| member_terms.contains(t)))
            .map(Group::term)
            .collect();
        found.sort();
        found.dedup();
        Ok(found)
    }
}
