//! Deleting a source with what core keeps of it as documents.

use uuid::Uuid;

use super::{documents::Documents, folders, groups, sources::Sources};
use crate::{Result, WorkspaceId};

/// Deletes a source ([`Sources::delete_source`]), then forgets its folders and groups. A
/// forgetting cut short leaves documents under the source's id, which nothing reads again
/// (ids are never reused: a group's index term names its source).
pub async fn delete_source<S: Sources + Documents + ?Sized>(
    store: &S,
    workspace_id: WorkspaceId,
    source_id: Uuid,
) -> Result<()> {
    store.delete_source(workspace_id, source_id).await?;
    folders::forget_source(store, source_id).await?;
    groups::forget_source(store, source_id).await
}
