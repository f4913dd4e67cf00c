//! Folders of HIERARCHICAL tags.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::store::Folders;
use inlet_core::{
    Result, WorkspaceId,
    folder::{self, Folder},
};
use uuid::Uuid;

#[async_trait]
impl Folders for MemoryStore {
    async fn put_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        folder: &Folder,
    ) -> Result<bool> {
        let mut st = self.state.lock();
        st.source(workspace_id, source_id)?;
        let list = st.folders.entry((source_id, tag.to_string())).or_default();
        let created = !folder::check_put(list, folder)?;
        match list
            .iter_mut()
            .find(|f| f.external_id == folder.external_id)
        {
            Some(f) => *f = folder.clone(),
            None => list.push(folder.clone()),
        }
        Ok(created)
    }

    async fn folder_exists(&self, source_id: Uuid, tag: &str, external_id: &str) -> Result<bool> {
        let st = self.state.lock();
        Ok(st
            .folders
            .get(&(source_id, tag.to_string()))
            .is_some_and(|l| l.iter().any(|f| f.external_id == external_id)))
    }

    async fn list_folders(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<(Folder, u64)>> {
        let st = self.state.lock();
        let counts = st.folder_counts(workspace_id, source_id, tag)?;
        Ok(st
            .folders
            .get(&(source_id, tag.to_string()))
            .map(|list| {
                list.iter()
                    .map(|f| (f.clone(), counts.get(&f.external_id).copied().unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn delete_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        external_id: &str,
    ) -> Result<()> {
        let mut st = self.state.lock();
        let counts = st.folder_counts(workspace_id, source_id, tag)?;
        let list = st.folders.entry((source_id, tag.to_string())).or_default();
        folder::check_delete(
            list,
            external_id,
            counts.get(external_id).copied().unwrap_or(0),
        )?;
        list.retain(|f| f.external_id != external_id);
        Ok(())
    }
}
