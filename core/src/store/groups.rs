//! Groups mirrored from source systems, for access lists ([`crate::access`]), kept as
//! documents ([`super::Documents`]): this module implements [`Groups`] once for every store.
//! A group is one document; each of its member terms has an index document in its workspace
//! (`workspace/member/group`), written in the same batch, so expanding a reader's groups is
//! one prefix scan per member term ([`Documents::keys_under`]: one query on a database).

use std::collections::BTreeSet;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::documents::{
    ATTEMPTS, DocWrite, Documents, Expect, KeyRange, contended, get_as, key_part, scan_all,
};
use super::sources::Sources;
use crate::{Result, WorkspaceId, access::Group};

/// Groups by `source/externalId`.
pub const GROUPS: &str = "access_groups";
/// Who is in which group: `workspace/member term/group term` (the member term made a key part
/// by [`key_part`]).
pub const GROUP_MEMBERS: &str = "access_group_members";

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

/// A stored group with its workspace (its member index lives there).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupDoc {
    /// The group's workspace.
    pub workspace_id: WorkspaceId,
    /// The group.
    pub group: Group,
}

fn group_key(source_id: Uuid, external_id: &str) -> String {
    format!("{source_id}/{external_id}")
}

fn member_prefix(workspace_id: WorkspaceId, member_term: &str) -> String {
    format!("{workspace_id}/{}/", key_part(member_term))
}

fn member_terms(doc: Option<&GroupDoc>) -> BTreeSet<String> {
    doc.map(|d| d.group.member_terms().into_iter().collect())
        .unwrap_or_default()
}

/// The writes that store `group` of `workspace_id` over `old` (what is stored, at revision
/// `revision`; 0 when nothing is): the group first, then its member index.
pub fn group_writes(
    workspace_id: WorkspaceId,
    group: &Group,
    old: Option<&GroupDoc>,
    revision: u64,
) -> Result<Vec<DocWrite>> {
    let key = group_key(group.source_id, &group.external_id);
    let doc = GroupDoc {
        workspace_id,
        group: group.clone(),
    };
    let mut writes = vec![DocWrite::put(GROUPS, key, &doc, Expect::at(revision))?];
    let (before, after) = (member_terms(old), member_terms(Some(&doc)));
    let term = group.term();
    for gone in before.difference(&after) {
        let key = format!("{}{term}", member_prefix(workspace_id, gone));
        writes.push(DocWrite::delete(GROUP_MEMBERS, key, Expect::Any));
    }
    for new in after.difference(&before) {
        let key = format!("{}{term}", member_prefix(workspace_id, new));
        writes.push(DocWrite::put(
            GROUP_MEMBERS,
            key,
            &serde_json::json!({}),
            Expect::Any,
        )?);
    }
    Ok(writes)
}

/// The writes that delete `doc` (stored at `expect`) with its member index.
fn group_deletes(doc: &GroupDoc, expect: Expect) -> Vec<DocWrite> {
    let g = &doc.group;
    let mut writes = vec![DocWrite::delete(
        GROUPS,
        group_key(g.source_id, &g.external_id),
        expect,
    )];
    let term = g.term();
    writes.extend(member_terms(Some(doc)).iter().map(|m| {
        let key = format!("{}{term}", member_prefix(doc.workspace_id, m));
        DocWrite::delete(GROUP_MEMBERS, key, Expect::Any)
    }));
    writes
}

/// Forgets the groups of a deleted source ([`super::deletion::delete_source`]).
pub async fn forget_source<S: Documents + ?Sized>(store: &S, source_id: Uuid) -> Result<()> {
    let prefix = format!("{source_id}/");
    let range = KeyRange {
        prefix: &prefix,
        after: None,
    };
    for found in scan_all(store, GROUPS, range).await? {
        let doc: GroupDoc = found.decode()?;
        store
            .write_documents(&group_deletes(&doc, Expect::Any))
            .await?;
    }
    Ok(())
}

#[async_trait]
impl<S: Documents + Sources + ?Sized> Groups for S {
    async fn put_group(&self, workspace_id: WorkspaceId, group: &Group) -> Result<bool> {
        self.get_source(workspace_id, group.source_id).await?;
        let key = group_key(group.source_id, &group.external_id);
        for _ in 0..ATTEMPTS {
            let old = get_as::<_, GroupDoc>(self, GROUPS, &key).await?;
            let revision = old.as_ref().map_or(0, |(_, r)| *r);
            let doc = old.as_ref().map(|(d, _)| d);
            if self
                .write_documents(&group_writes(workspace_id, group, doc, revision)?)
                .await?
            {
                return Ok(old.is_none());
            }
        }
        Err(contended())
    }

    async fn delete_group(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        external_id: &str,
    ) -> Result<bool> {
        self.get_source(workspace_id, source_id).await?;
        let key = group_key(source_id, external_id);
        for _ in 0..ATTEMPTS {
            let Some((doc, revision)) = get_as::<_, GroupDoc>(self, GROUPS, &key).await? else {
                return Ok(false);
            };
            if self
                .write_documents(&group_deletes(&doc, Expect::Revision(revision)))
                .await?
            {
                return Ok(true);
            }
        }
        Err(contended())
    }

    async fn list_groups(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Group>> {
        self.get_source(workspace_id, source_id).await?;
        let prefix = format!("{source_id}/");
        let after = after.map(|a| group_key(source_id, a));
        let range = KeyRange {
            prefix: &prefix,
            after: after.as_deref(),
        };
        self.scan_documents(GROUPS, range, limit)
            .await?
            .iter()
            .map(|d| Ok(d.decode::<GroupDoc>()?.group))
            .collect()
    }

    async fn groups_containing(
        &self,
        workspace_id: WorkspaceId,
        member_terms: &[String],
    ) -> Result<Vec<String>> {
        let prefixes: Vec<String> = member_terms
            .iter()
            .map(|t| member_prefix(workspace_id, t))
            .collect();
        let mut found: Vec<String> = self
            .keys_under(GROUP_MEMBERS, &prefixes)
            .await?
            .into_iter()
            .filter_map(|key| key.splitn(3, '/').nth(2).map(str::to_string))
            .collect();
        found.sort();
        found.dedup();
        Ok(found)
    }
}
