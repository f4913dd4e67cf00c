//! Sources: create, list, read, and correct (`PATCH`, added object types, tag configs and
//! facets, `DELETE`).

use inlet_core::{
    source::{NewSource, ObjectType, Source},
    time,
};
use poem::web::Data;
use poem_openapi::{ApiResponse, OpenApi, param::Path, payload::Json, types::MaybeUndefined};
use uuid::Uuid;

use super::{
    ApiTags,
    dto::{
        CreateSource, FacetInput, FacetOut, ObjectTypeInput, ObjectTypeOut, PatchObjectType,
        PatchSource, SourceOut, TagConfigInput, TagConfigOut,
    },
};
use crate::{auth::Auth, problem::ApiError, state::AppState};

/// Source endpoints.
pub struct SourcesApi;

#[derive(ApiResponse)]
enum Created {
    /// The source was created; its id, object type ids and field ids are used in later calls.
    #[oai(status = 201)]
    Created(Json<SourceOut>),
}

#[derive(ApiResponse)]
enum ObjectTypeCreated {
    /// The object type was added; its id and its fields' ids are used in later calls.
    #[oai(status = 201)]
    Created(Json<ObjectTypeOut>),
}

#[derive(ApiResponse)]
enum TagConfigCreated {
    /// The tag config was added; uploads may carry the tag from now on.
    #[oai(status = 201)]
    Created(Json<TagConfigOut>),
}

#[derive(ApiResponse)]
enum FacetCreated {
    /// The facet was added.
    #[oai(status = 201)]
    Created(Json<FacetOut>),
}

#[derive(ApiResponse)]
enum Deleted {
    /// The source, its object types, records, folders and sync runs are gone.
    #[oai(status = 204)]
    Deleted,
}

/// Runs an edit that adds one item to a stored source; returns the source as stored and the
/// new item's id.
async fn add_to_source(
    state: &AppState,
    auth: &Auth,
    source_id: Uuid,
    add: impl FnOnce(&mut Source) -> inlet_core::Result<Uuid> + Send + 'static,
) -> Result<(Source, Uuid), ApiError> {
    let principal = auth.writer()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let source = state
        .records
        .update_source(
            principal.workspace_id,
            source_id,
            Box::new(move |s| {
                // The receiver lives until the store returns, so the send cannot fail.
                let _ = tx.send(add(s)?);
                Ok(())
            }),
        )
        .await?;
    let id = rx
        .try_recv()
        .map_err(|_| ApiError::internal("the source edit did not run"))?;
    Ok((source, id))
}

/// An object type of a stored source, by id.
fn object_type_of(source: &Source, id: Uuid) -> Result<&ObjectType, ApiError> {
    source
        .object_type(id)
        .ok_or_else(|| ApiError::internal("the edited object type is missing"))
}

#[OpenApi(tag = "ApiTags::Sources", prefix_path = "/api/v1")]
impl SourcesApi {
    /// Create a custom source with its whole configuration (spec 2.3).
    #[oai(path = "/sources", method = "post", operation_id = "createSource")]
    async fn create(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        body: Json<CreateSource>,
    ) -> Result<Created, ApiError> {
        let principal = auth.writer()?;
        let source = NewSource::from(body.0).build(principal.workspace_id, time::now())?;
        if let Err(e) = state.records.create_source(&source).await {
            let mut e = ApiError::from(e);
            if e.status == poem::http::StatusCode::CONFLICT {
                // The source that holds the externalId, as a field: a connector needs not
                // parse the sentence to find it.
                e.existing_source_id = state
                    .records
                    .list_sources(principal.workspace_id)
                    .await
                    .ok()
                    .and_then(|all| {
                        all.into_iter()
                            .find(|s| s.external_id == source.external_id && s.id != source.id)
                    })
                    .map(|s| s.id);
            }
            return Err(e);
        }
        let out: super::dto::SourceOut = source.into();
        let data = poem_openapi::types::ToJSON::to_json(&out).unwrap_or_default();
        crate::webhooks::emit(
            &state,
            principal.workspace_id,
            inlet_core::webhook::Event::SourceCreated,
            data,
            inlet_core::webhook::Subject::Setup,
        )
        .await;
        Ok(Created::Created(Json(out)))
    }

    /// List the workspace's sources, oldest first.
    #[oai(path = "/sources", method = "get", operation_id = "listSources")]
    async fn list(
        &self,
        state: Data<&AppState>,
        auth: Auth,
    ) -> Result<Json<Vec<SourceOut>>, ApiError> {
        let principal = auth.reader();
        let sources = state.records.list_sources(principal.workspace_id).await?;
        Ok(Json(sources.into_iter().map(Into::into).collect()))
    }

    /// Read one source.
    #[oai(
        path = "/sources/:sourceId",
        method = "get",
        operation_id = "getSource"
    )]
    async fn get(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
    ) -> Result<Json<SourceOut>, ApiError> {
        let principal = auth.reader();
        let source = state
            .records
            .get_source(principal.workspace_id, source_id.0)
            .await?;
        Ok(Json(source.into()))
    }

    /// Change a source's name or trackStatus; absent fields keep their value.
    #[oai(
        path = "/sources/:sourceId",
        method = "patch",
        operation_id = "updateSource"
    )]
    async fn update(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        body: Json<PatchSource>,
    ) -> Result<Json<SourceOut>, ApiError> {
        let principal = auth.writer()?;
        let patch = body.0.into();
        let source = state
            .records
            .update_source(
                principal.workspace_id,
                source_id.0,
                Box::new(move |s| s.patch(patch)),
            )
            .await?;
        Ok(Json(source.into()))
    }

    /// Add an object type to an existing source (validated as at creation).
    #[oai(
        path = "/sources/:sourceId/objecttypes",
        method = "post",
        operation_id = "addObjectType"
    )]
    async fn add_object_type(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        body: Json<ObjectTypeInput>,
    ) -> Result<ObjectTypeCreated, ApiError> {
        let new = body.0.into();
        let (source, id) =
            add_to_source(&state, &auth, source_id.0, move |s| s.add_object_type(new)).await?;
        let ot = object_type_of(&source, id)?.clone();
        Ok(ObjectTypeCreated::Created(Json(ot.into())))
    }

    /// Change an object type's settings: its own mass-removal guard (`completeMaxRemoval`,
    /// percent; `null` falls back to the operator's `--complete-max-removal`).
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId",
        method = "patch",
        operation_id = "updateObjectType"
    )]
    async fn update_object_type(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        body: Json<PatchObjectType>,
    ) -> Result<Json<ObjectTypeOut>, ApiError> {
        let principal = auth.writer()?;
        let id = object_type_id.0;
        let guard = body.0.complete_max_removal;
        let default_access = body.0.default_access;
        if default_access.is_some() {
            super::access::connector_only(principal)?;
        }
        let source = state
            .records
            .update_source(
                principal.workspace_id,
                source_id.0,
                Box::new(move |s| {
                    let ot = s
                        .object_types
                        .iter_mut()
                        .find(|o| o.id == id)
                        .ok_or_else(|| {
                            inlet_core::Error::not_found(format!(
                                "object type {id} not found in source {}",
                                s.id
                            ))
                        })?;
                    match guard {
                        MaybeUndefined::Value(p) => {
                            ot.complete_max_removal =
                                Some(inlet_core::sync::check_removal_share(p)?);
                        }
                        MaybeUndefined::Null => ot.complete_max_removal = None,
                        MaybeUndefined::Undefined => {}
                    }
                    if let Some(access) = default_access {
                        ot.default_access = access.into();
                    }
                    Ok(())
                }),
            )
            .await?;
        state.viewers.forget(principal.workspace_id);
        let ot = object_type_of(&source, id)?.clone();
        Ok(Json(ot.into()))
    }

    /// Add a tag config to an object type; uploads may carry the tag from then on.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/tagconfigs",
        method = "post",
        operation_id = "addTagConfig"
    )]
    async fn add_tag_config(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        body: Json<TagConfigInput>,
    ) -> Result<TagConfigCreated, ApiError> {
        let new = body.0.into();
        let ot_id = object_type_id.0;
        let (source, id) = add_to_source(&state, &auth, source_id.0, move |s| {
            s.add_tag_config(ot_id, new)
        })
        .await?;
        let tag = object_type_of(&source, ot_id)?
            .tag_configs
            .iter()
            .find(|t| t.id == id)
            .cloned()
            .ok_or_else(|| ApiError::internal("the added tag config is missing"))?;
        Ok(TagConfigCreated::Created(Json(tag.into())))
    }

    /// Add a facet over one of an object type's tag configs.
    #[oai(
        path = "/sources/:sourceId/objecttypes/:objectTypeId/facets",
        method = "post",
        operation_id = "addFacet"
    )]
    async fn add_facet(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
        #[oai(name = "objectTypeId")] object_type_id: Path<Uuid>,
        body: Json<FacetInput>,
    ) -> Result<FacetCreated, ApiError> {
        let new = body.0.into();
        let ot_id = object_type_id.0;
        let (source, id) =
            add_to_source(&state, &auth, source_id.0, move |s| s.add_facet(ot_id, new)).await?;
        let facet = object_type_of(&source, ot_id)?
            .facets
            .iter()
            .find(|f| f.id == id)
            .cloned()
            .ok_or_else(|| ApiError::internal("the added facet is missing"))?;
        Ok(FacetCreated::Created(Json(facet.into())))
    }

    /// Delete a source with its object types, records, folders and sync runs. Refused with 409
    /// while a sync of one of its object types is open (close it first; FAIL removes nothing).
    #[oai(
        path = "/sources/:sourceId",
        method = "delete",
        operation_id = "deleteSource"
    )]
    async fn delete(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        #[oai(name = "sourceId")] source_id: Path<Uuid>,
    ) -> Result<Deleted, ApiError> {
        let principal = auth.writer()?;
        inlet_core::store::deletion::delete_source(
            &*state.records,
            principal.workspace_id,
            source_id.0,
        )
        .await?;
        Ok(Deleted::Deleted)
    }
}
