//! Sources.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::store::Sources;
use inlet_core::{
    Error, Result, WorkspaceId,
    record::{self},
    source::Source,
};
use uuid::Uuid;

#[async_trait]
impl Sources for MemoryStore {
    async fn create_source(&self, source: &Source) -> Result<()> {
        let mut st = self.state.lock();
        if st.sources.iter().any(|s| s.id == source.id) {
            return Err(Error::conflict(format!("source {} exists", source.id)));
        }
        if let Some(existing) = st
            .sources
            .iter()
            .find(|s| s.workspace_id == source.workspace_id && s.external_id == source.external_id)
        {
            return Err(record::duplicate_source(&source.external_id, existing.id));
        }
        st.sources.push(source.clone());
        Ok(())
    }

    async fn update_source(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        edit: record::SourceEdit,
    ) -> Result<Source> {
        let mut st = self.state.lock();
        let mut source = st.source(workspace_id, source_id)?.clone();
        edit(&mut source)?;
        if let Some(stored) = st.sources.iter_mut().find(|s| s.id == source_id) {
            *stored = source.clone();
        }
        Ok(source)
    }

    async fn delete_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<()> {
        let mut st = self.state.lock();
        let source = st.source(workspace_id, source_id)?.clone();
        let open: Vec<(Uuid, i64)> = source
            .object_types
            .iter()
            .filter_map(|ot| st.open_sync_number(ot.id).map(|n| (ot.id, n)))
            .collect();
        record::source_deletable(&source, &open)?;
        let mut gone = Vec::new();
        for ot in &source.object_types {
            st.syncs.remove(&ot.id);
            st.floors.remove(&ot.id);
            if let Some(records) = st.records.remove(&ot.id) {
                for r in records.values() {
                    gone.push(r.id);
                }
            }
        }
        st.log
            .source_deleted(workspace_id, source_id, gone.into_iter());
        st.sources.retain(|s| s.id != source_id);
        Ok(())
    }

    async fn list_sources(&self, workspace_id: WorkspaceId) -> Result<Vec<Source>> {
        let st = self.state.lock();
        Ok(st
            .sources
            .iter()
            .filter(|s| s.workspace_id == workspace_id)
            .cloned()
            .collect())
    }

    async fn get_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<Source> {
        self.state.lock().source(workspace_id, source_id).cloned()
    }
}
