//! Sources and their object types, tag configs and facets (spec 2.3).

use async_trait::async_trait;
use uuid::Uuid;

use crate::{Error, Result, WorkspaceId, record::SourceEdit, source::Source};

/// Storage of sources.
#[async_trait]
pub trait Sources: Send + Sync + 'static {
    /// Checks the store can serve requests: one round trip to its database (`/readyz`). A store
    /// without a remote part is always ready.
    async fn ping(&self) -> Result<()> {
        Ok(())
    }
    /// Stores a new source (ids already assigned by [`crate::source::NewSource::build`]). A
    /// source of the same workspace with the same externalId is [`crate::Error::Conflict`], its detail
    /// from [`crate::record::duplicate_source`].
    async fn create_source(&self, source: &Source) -> Result<()>;
    /// Applies `edit` to the stored source atomically (no concurrent edit is lost) and stores
    /// the result; object types it adds can be written at once. Returns the source as stored.
    async fn update_source(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        edit: SourceEdit,
    ) -> Result<Source>;
    /// Deletes a source with its object types, records and sync runs.
    /// [`crate::Error::Conflict`] while a sync of one of its object types is open. Callers use
    /// [`super::deletion::delete_source`], which also forgets the source's folders and groups.
    async fn delete_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<()>;
    /// The workspace's sources, oldest first.
    async fn list_sources(&self, workspace_id: WorkspaceId) -> Result<Vec<Source>>;
    /// One source; another workspace's source is [`crate::Error::NotFound`]. The default
    /// looks in [`Self::list_sources`]; a database store reads the one row (and may cache it).
    async fn get_source(&self, workspace_id: WorkspaceId, source_id: Uuid) -> Result<Source> {
        self.list_sources(workspace_id)
            .await?
            .into_iter()
            .find(|s| s.id == source_id)
            .ok_or_else(|| Error::not_found(format!("source {source_id} not found")))
    }
}
