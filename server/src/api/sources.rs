//! `POST /sources`, `GET /sources`, `GET /sources/{sourceId}`.

use inlet_core::{source::NewSource, time};
use poem::web::Data;
use poem_openapi::{ApiResponse, OpenApi, param::Path, payload::Json};
use uuid::Uuid;

use super::{
    ApiTags,
    dto::{CreateSource, SourceOut},
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
        state.records.create_source(&source).await?;
        Ok(Created::Created(Json(source.into())))
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
}
