//! The folder endpoints of HIERARCHICAL tags (DESIGN 6): create, rename, move, delete, list.

use std::collections::HashMap;

use inlet_core::{
    folder::{self, Folder},
    index::IndexQuery,
    token::Principal,
};
use poem::web::Data;
use poem_openapi::{ApiResponse, Object, OpenApi, param::Path, payload::Json};
use uuid::Uuid;

use super::ApiTags;
use crate::{auth::Auth, problem::ApiError, state::AppState};

/// A folder of a HIERARCHICAL tag.
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct FolderOut {
    /// The caller's id (records carry it as the tag value).
    pub external_id: String,
    /// Display name.
    pub name: String,
    /// Parent folder; absent for a root.
    #[oai(skip_serializing_if_is_none)]
    pub parent_external_id: Option<String>,
    /// Live records in this folder and all folders below it.
    pub count: u64,
}

/// Body of a folder create / rename / move.
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct FolderIn {
    /// Display name.
    pub name: String,
    /// Parent folder's externalId; null or absent for a root.
    pub parent_external_id: Option<String>,
}

#[derive(ApiResponse)]
enum PutFolder {
    /// The folder was created.
    #[oai(status = 201)]
    Created(Json<FolderOut>),
    /// The folder was renamed or moved.
    #[oai(status = 200)]
    Updated(Json<FolderOut>),
}

#[derive(ApiResponse)]
enum Deleted {
    /// The folder is gone.
    #[oai(status = 204)]
    NoContent,
}

async fn folders_with_counts(
    state: &AppState,
    principal: &Principal,
    source_id: Uuid,
    tag: &str,
) -> Result<Vec<FolderOut>, ApiError> {
    let workspace_id = principal.workspace_id;
    let listed = state
        .records
        .list_folders(workspace_id, source_id, tag)
        .await?;
    let mut own: HashMap<String, u64> = listed
        .iter()
        .map(|(f, n)| (f.external_id.clone(), *n))
        .collect();
    // A reader who may not read everything counts only what they may read: the index's facet
    // of the folder tag over their records (as current as search, DESIGN 7).
    if let Some(viewer) = state.viewers.of(&*state.records, principal).await?.terms() {
        let query = IndexQuery {
            workspace_id,
            source_id: Some(source_id),
            limit: 1,
            facet_tags: vec![tag.to_string()],
            viewer: Some(viewer),
            ..IndexQuery::default()
        };
        let index = state.index.clone();
        let mut hits = tokio::task::spawn_blocking(move || index.search(&query))
            .await
            .map_err(|e| ApiError::from(inlet_core::Error::backend(e)))??;
        own = hits
            .facets
            .remove(tag)
            .unwrap_or_default()
            .into_iter()
            .collect();
    }
    let folders: Vec<Folder> = listed.into_iter().map(|(f, _)| f).collect();
    let rolled = folder::rolled_up_counts(&folders, &own);
    Ok(folders
        .into_iter()
        .map(|f| FolderOut {
            count: rolled.get(&f.external_id).copied().unwrap_or(0),
            external_id: f.external_id,
            name: f.name,
            parent_external_id: f.parent_external_id,
        })
        .collect())
}

/// Folder endpoints.
pub struct FoldersApi;

#[OpenApi(tag = "ApiTags::Search", prefix_path = "/api/v1")]
impl FoldersApi {
    /// Create (201) or rename / move (200) a folder of a HIERARCHICAL tag. A missing parent is
    /// 404; moving a folder under its own descendant 400.
    #[oai(
        path = "/sources/:sourceId/tagconfigs/:tagConfigId/hierarchies/:externalId",
        method = "put",
        operation_id = "putFolder"
    )]
    async fn put_folder(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "tagConfigId")] tag_config_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
        body: Json<FolderIn>,
    ) -> Result<PutFolder, ApiError> {
        let principal = auth.writer()?;
        let source = state
            .records
            .get_source(principal.workspace_id, source_id.0)
            .await?;
        let tc = folder::folder_tag(&source, tag_config_id.0)?;
        let body = body.0;
        let folder = Folder::new(external_id.0, &body.name, body.parent_external_id)?;
        let id = folder.external_id.clone();
        let created = state
            .records
            .put_folder(principal.workspace_id, source.id, &tc.external_id, &folder)
            .await?;
        let out = folders_with_counts(&state, principal, source.id, &tc.external_id)
            .await?
            .into_iter()
            .find(|f| f.external_id == id)
            .ok_or_else(|| ApiError::not_found(format!("folder '{id}' not found")))?;
        Ok(if created {
            PutFolder::Created(Json(out))
        } else {
            PutFolder::Updated(Json(out))
        })
    }

    /// Delete a folder; 409 while it has child folders or records.
    #[oai(
        path = "/sources/:sourceId/tagconfigs/:tagConfigId/hierarchies/:externalId",
        method = "delete",
        operation_id = "deleteFolder"
    )]
    async fn delete_folder(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "tagConfigId")] tag_config_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
    ) -> Result<Deleted, ApiError> {
        let principal = auth.writer()?;
        let source = state
            .records
            .get_source(principal.workspace_id, source_id.0)
            .await?;
        let tc = folder::folder_tag(&source, tag_config_id.0)?;
        state
            .records
            .delete_folder(
                principal.workspace_id,
                source.id,
                &tc.external_id,
                &external_id.0,
            )
            .await?;
        Ok(Deleted::NoContent)
    }

    /// The root folders of a HIERARCHICAL facet, with record counts that roll up.
    #[oai(
        path = "/sources/:sourceId/facets/:facetId/hierarchies",
        method = "get",
        operation_id = "listRootFolders"
    )]
    async fn roots(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "facetId")] facet_id: Path<Uuid>,
    ) -> Result<Json<Vec<FolderOut>>, ApiError> {
        let principal = auth.reader();
        let source = state
            .records
            .get_source(principal.workspace_id, source_id.0)
            .await?;
        let tc = folder::facet_folder_tag(&source, facet_id.0)?;
        let all = folders_with_counts(&state, principal, source.id, &tc.external_id).await?;
        Ok(Json(
            all.into_iter()
                .filter(|f| f.parent_external_id.is_none())
                .collect(),
        ))
    }

    /// The child folders of a folder, with record counts that roll up.
    #[oai(
        path = "/sources/:sourceId/facets/:facetId/hierarchies/:externalId/children",
        method = "get",
        operation_id = "listChildFolders"
    )]
    async fn children(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "facetId")] facet_id: Path<Uuid>,
        #[oai(name = "externalId")] external_id: Path<String>,
    ) -> Result<Json<Vec<FolderOut>>, ApiError> {
        let principal = auth.reader();
        let source = state
            .records
            .get_source(principal.workspace_id, source_id.0)
            .await?;
        let tc = folder::facet_folder_tag(&source, facet_id.0)?;
        let all = folders_with_counts(&state, principal, source.id, &tc.external_id).await?;
        if !all.iter().any(|f| f.external_id == external_id.0) {
            return Err(ApiError::not_found(format!(
                "folder '{}' not found",
                external_id.0
            )));
        }
        Ok(Json(
            all.into_iter()
                .filter(|f| f.parent_external_id.as_deref() == Some(external_id.0.as_str()))
                .collect(),
        ))
    }
}
