//! Groups mirrored from source systems, for access lists ([`crate::access`]).

use async_trait::async_trait;
use uuid::Uuid;

use crate::{Result, WorkspaceId, access::Group};

/// Storage of groups; every method is atomic.
#[async_trait]
pub trait Groups: Send + Sync + 'static {
    /// Creates (`true`) or replaces (`false`) a group of a source of the workspace with its
    /// members; another workspace's source is [`crate::Error::NotFound`].
    async fn put_group(&self, workspace_id: WorkspaceId, group: &Group) -> Result<bool>;
    /// Deletes a group; `false` when the source has no such group.
    async fn delete_group(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        external_id: &str,
    ) -> Result<bool>;
    /// A page of a source's groups in externalId byte order, after `after`, at most `limit`.
    async fn list_groups(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Group>>;
    /// The terms ([`crate::access::group_term`]) of the workspace's groups that list any of
    /// `member_terms` ([`Group::member_terms`]) as a member, each once.
    async fn groups_containing(
        &self,
        workspace_id: WorkspaceId,
        member_terms: &[String],
    ) -> Result<Vec<String>>;
}
