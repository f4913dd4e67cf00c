//! Folders of HIERARCHICAL tags, kept as documents ([`super::Documents`]): this module
//! implements [`Folders`] once for every store. A folder is one document; each tree (a tag of
//! a source) has a document every change of the tree rewrites, expecting the revision it read,
//! so two changes of one tree cannot both pass the cycle check. Counts come from the records
//! ([`super::Records::tag_counts`]).

use async_trait::async_trait;
use uuid::Uuid;

use super::documents::{
    ATTEMPTS, DocWrite, Documents, Expect, KeyRange, contended, key_part, scan_all,
};
use super::{records::Records, sources::Sources};
use crate::{
    Result, WorkspaceId,
    folder::{self, Folder},
};

/// Folders by `source/tag/externalId` (the tag made a key part by [`key_part`]).
pub const FOLDERS: &str = "folders";
/// One document per tree (`source/tag`), rewritten by every change of the tree.
pub const FOLDER_TREES: &str = "folder_trees";

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
    /// A tag's folders, in externalId byte order, with the number of live records tagged with
    /// each (not rolled up).
    async fn list_folders(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<(Folder, u64)>>;
    /// A tag's folders without their counts (search names folder facet values with these).
    async fn folder_names(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<Folder>>;
    /// Deletes a folder: [`crate::Error::NotFound`] when absent, [`crate::Error::Conflict`]
    /// while it has child folders or live records.
    async fn delete_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        external_id: &str,
    ) -> Result<()>;
}

fn tree_key(source_id: Uuid, tag: &str) -> String {
    format!("{source_id}/{}", key_part(tag))
}

fn folder_key(source_id: Uuid, tag: &str, external_id: &str) -> String {
    format!("{}/{external_id}", tree_key(source_id, tag))
}

/// The writes that store `folder` in its tree, the tree's document first.
pub fn folder_writes(
    source_id: Uuid,
    tag: &str,
    folder: &Folder,
    tree_revision: u64,
) -> Result<Vec<DocWrite>> {
    Ok(vec![
        tree_write(source_id, tag, tree_revision)?,
        DocWrite::put(
            FOLDERS,
            folder_key(source_id, tag, &folder.external_id),
            folder,
            Expect::Any,
        )?,
    ])
}

fn tree_write(source_id: Uuid, tag: &str, revision: u64) -> Result<DocWrite> {
    DocWrite::put(
        FOLDER_TREES,
        tree_key(source_id, tag),
        &serde_json::json!({}),
        Expect::at(revision),
    )
}

/// A tree's folders in externalId byte order, with the revision of its document (0: none).
async fn tree<S: Documents + ?Sized>(
    store: &S,
    source_id: Uuid,
    tag: &str,
) -> Result<(Vec<Folder>, u64)> {
    let key = tree_key(source_id, tag);
    let revision = store
        .get_document(FOLDER_TREES, &key)
        .await?
        .map_or(0, |d| d.revision);
    let prefix = format!("{key}/");
    let range = KeyRange {
        prefix: &prefix,
        after: None,
    };
    let folders = scan_all(store, FOLDERS, range)
        .await?
        .iter()
        .map(|d| d.decode())
        .collect::<Result<_>>()?;
    Ok((folders, revision))
}

/// Forgets the folders of a deleted source ([`super::deletion::delete_source`]).
pub async fn forget_source<S: Documents + ?Sized>(store: &S, source_id: Uuid) -> Result<()> {
    let prefix = format!("{source_id}/");
    for collection in [FOLDERS, FOLDER_TREES] {
        let range = KeyRange {
            prefix: &prefix,
            after: None,
        };
        let found = scan_all(store, collection, range).await?;
        for page in found.chunks(500) {
            let writes: Vec<DocWrite> = page
                .iter()
                .map(|d| DocWrite::delete(collection, d.key.clone(), Expect::Any))
                .collect();
            store.write_documents(&writes).await?;
        }
    }
    Ok(())
}

#[async_trait]
impl<S: Documents + Sources + Records + ?Sized> Folders for S {
    async fn put_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        folder: &Folder,
    ) -> Result<bool> {
        self.get_source(workspace_id, source_id).await?;
        for _ in 0..ATTEMPTS {
            let (folders, revision) = tree(self, source_id, tag).await?;
            let exists = folder::check_put(&folders, folder)?;
            if self
                .write_documents(&folder_writes(source_id, tag, folder, revision)?)
                .await?
            {
                return Ok(!exists);
            }
        }
        Err(contended())
    }

    async fn folder_exists(&self, source_id: Uuid, tag: &str, external_id: &str) -> Result<bool> {
        let key = folder_key(source_id, tag, external_id);
        Ok(self.get_document(FOLDERS, &key).await?.is_some())
    }

    async fn list_folders(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<(Folder, u64)>> {
        self.get_source(workspace_id, source_id).await?;
        let (folders, _) = tree(self, source_id, tag).await?;
        let counts = self.tag_counts(source_id, tag).await?;
        Ok(folders
            .into_iter()
            .map(|f| {
                let n = counts.get(&f.external_id).copied().unwrap_or(0);
                (f, n)
            })
            .collect())
    }

    async fn folder_names(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
    ) -> Result<Vec<Folder>> {
        self.get_source(workspace_id, source_id).await?;
        Ok(tree(self, source_id, tag).await?.0)
    }

    async fn delete_folder(
        &self,
        workspace_id: WorkspaceId,
        source_id: Uuid,
        tag: &str,
        external_id: &str,
    ) -> Result<()> {
        self.get_source(workspace_id, source_id).await?;
        for _ in 0..ATTEMPTS {
            let (folders, revision) = tree(self, source_id, tag).await?;
            let counts = self.tag_counts(source_id, tag).await?;
            let held = counts.get(external_id).copied().unwrap_or(0);
            folder::check_delete(&folders, external_id, held)?;
            let writes = [
                tree_write(source_id, tag, revision)?,
                DocWrite::delete(
                    FOLDERS,
                    folder_key(source_id, tag, external_id),
                    Expect::Any,
                ),
            ];
            if self.write_documents(&writes).await? {
                return Ok(());
            }
        }
        Err(contended())
    }
}
