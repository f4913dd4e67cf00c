//! Folders of HIERARCHICAL tags.

use async_trait::async_trait;
use uuid::Uuid;

use crate::{Result, WorkspaceId, folder::Folder};

/// Storage of folders.
#[async_trait]
pub trait Folders: Send + Sync + 'static {
    /// Creates (`true`) or renames/moves (`false`) a folder of a HIERARCHICAL tag of a source.
    /// A missing parent is [`crate::Error::NotFound`]; a parent that would close a cycle
    /// [`crate::Error::Invalid`].
    async fn put_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        folder: &Folder,
    ) -> Result<bool>;
    /// Whether a folder exists (uploads tagging a record with a folder check this).
    async fn folder_exists(&self, source_id: Uuid, tag: &str, external_id: &str) -> Result<bool>;
    /// A tag's folders with the number of live records tagged with each (not rolled up).
    async fn list_folders(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<(Folder, u64)>>;
    /// A tag's folders without their counts (search names folder facet values with these). The
    /// default asks [`Self::list_folders`]; a store that counts with a query overrides it.
    async fn folder_names(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<Folder>> {
        Ok(self
            .list_folders(workspace_id, source_id, tag)
            .await?
            .into_iter()
            .map(|(f, _)| f)
            .collect())
    }
    /// Deletes a folder: [`crate::Error::NotFound`] when absent, [`crate::Error::Conflict`] while it has child
    /// folders or live records.
    async fn delete_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        external_id: &str,
    ) -> Result<()>;
}
