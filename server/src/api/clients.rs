//! OAuth2 client maintenance (spec 4.1): create, list, read, update, delete and the logo upload.
//! Only an ADMIN's HTTP Basic credentials are accepted, in a workspace with OAuth enabled.

use inlet_core::{
    oauth::{Logo, OAuthClient},
    time,
};
use poem::web::Data;
use poem_openapi::{ApiResponse, Object, OpenApi, param::Path, payload::Json};
use uuid::Uuid;

use inlet_oauth::{
    MAX_LOGO_BYTES,
    clients::{self, ClientSettings, image_type},
};

use super::ApiTags;
use crate::{
    auth::{BasicAuth, ClientAdmin},
    problem::ApiError,
    state::AppState,
    upload::{FileUpload, NamedPart},
};

/// Body of create and update (spec 2.1).
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct ClientIn {
    /// Display name.
    pub name: String,
    /// Text shown on the authorization screen.
    pub description: String,
    /// Extra text at the bottom of the authorization screen; may be empty.
    #[oai(default)]
    pub bottom_description: String,
    /// Allowed redirect targets (absolute http or https URIs, matched exactly).
    pub redirect_uris: Vec<String>,
    /// `default` or `*:*` = read/write; `read:*` = read-only.
    pub scopes: Vec<String>,
}

/// The client representation (spec 2.1; bottomDescription is not part of it).
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct ClientOut {
    /// Identifier of the client (UUID).
    pub client_id: Uuid,
    /// Secret of the client (hex, 256 bits); needed for the token exchange.
    pub client_secret: String,
    /// Allowed redirect targets.
    pub redirect_uris: Vec<String>,
    /// Scopes the client may request.
    pub scopes: Vec<String>,
    /// Display name.
    pub name: String,
    /// Text shown on the authorization screen.
    pub description: String,
}

impl From<OAuthClient> for ClientOut {
    fn from(c: OAuthClient) -> Self {
        Self {
            client_id: c.id,
            client_secret: c.secret,
            redirect_uris: c.redirect_uris,
            scopes: c.scopes,
            name: c.name,
            description: c.description,
        }
    }
}

/// Response of the logo upload.
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct LogoOut {
    /// Where the consent page loads the logo from.
    pub logo_url: String,
    /// Detected media type.
    pub content_type: String,
}

/// The part of a logo upload: `logo`.
pub struct LogoPart;

impl NamedPart for LogoPart {
    const NAME: &'static str = "logo";
    const DESCRIPTION: &'static str =
        "PNG, JPEG, GIF or WebP, detected by its bytes; at most 256 KiB.";
}

#[derive(ApiResponse)]
enum CreatedClient {
    /// The client was created.
    #[oai(status = 201)]
    Created(Json<ClientOut>),
}

#[derive(ApiResponse)]
enum Deleted {
    /// The client and every code and token issued to it are gone.
    #[oai(status = 204)]
    NoContent,
}

/// The registration rules' view of a create or update body.
fn settings(body: &ClientIn) -> ClientSettings<'_> {
    ClientSettings {
        name: &body.name,
        description: &body.description,
        bottom_description: &body.bottom_description,
        redirect_uris: &body.redirect_uris,
        scopes: &body.scopes,
    }
}

async fn owned(state: &AppState, admin: &ClientAdmin, id: Uuid) -> Result<OAuthClient, ApiError> {
    state
        .tokens
        .client(id)
        .await?
        .filter(|c| c.workspace_id == admin.0.workspace_id)
        .ok_or_else(|| ApiError::not_found(format!("OAuth client {id} not found")))
}

/// Client maintenance endpoints.
pub struct ClientsApi;

#[OpenApi(tag = "ApiTags::OAuthClients", prefix_path = "/api/v1")]
impl ClientsApi {
    /// Create an OAuth2 client; the response carries its clientId and clientSecret.
    #[oai(
        path = "/oauthclients",
        method = "post",
        operation_id = "createOAuthClient"
    )]
    async fn create(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        body: Json<ClientIn>,
    ) -> Result<CreatedClient, ApiError> {
        let admin = ClientAdmin::check(&state, auth).await?;
        clients::check(&settings(&body))?;
        let body = body.0;
        let client = OAuthClient {
            id: Uuid::new_v4(),
            workspace_id: admin.0.workspace_id,
            secret: crate::auth::new_secret(),
            name: body.name,
            description: body.description,
            bottom_description: body.bottom_description,
            redirect_uris: body.redirect_uris,
            scopes: body.scopes,
            has_logo: false,
            created_date: time::now(),
        };
        state.tokens.create_client(&client).await?;
        Ok(CreatedClient::Created(Json(client.into())))
    }

    /// List the workspace's OAuth2 clients, oldest first.
    #[oai(
        path = "/oauthclients",
        method = "get",
        operation_id = "listOAuthClients"
    )]
    async fn list(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
    ) -> Result<Json<Vec<ClientOut>>, ApiError> {
        let admin = ClientAdmin::check(&state, auth).await?;
        let clients = state.tokens.list_clients(admin.0.workspace_id).await?;
        Ok(Json(clients.into_iter().map(Into::into).collect()))
    }

    /// Read one OAuth2 client.
    #[oai(
        path = "/oauthclients/:clientId",
        method = "get",
        operation_id = "getOAuthClient"
    )]
    async fn get(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        #[oai(name = "clientId")] client_id: Path<Uuid>,
    ) -> Result<Json<ClientOut>, ApiError> {
        let admin = ClientAdmin::check(&state, auth).await?;
        Ok(Json(owned(&state, &admin, client_id.0).await?.into()))
    }

    /// Replace an OAuth2 client's fields (same body as create). Issued tokens keep working
    /// within the new scopes: narrowing the scopes narrows them at their next use (a refresh
    /// then issues the narrower scope), and removing a redirect URI makes unused codes issued
    /// for it fail.
    #[oai(
        path = "/oauthclients/:clientId",
        method = "put",
        operation_id = "updateOAuthClient"
    )]
    async fn update(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        #[oai(name = "clientId")] client_id: Path<Uuid>,
        body: Json<ClientIn>,
    ) -> Result<Json<ClientOut>, ApiError> {
        let admin = ClientAdmin::check(&state, auth).await?;
        clients::check(&settings(&body))?;
        let stored = owned(&state, &admin, client_id.0).await?;
        let body = body.0;
        let next = OAuthClient {
            name: body.name,
            description: body.description,
            bottom_description: body.bottom_description,
            redirect_uris: body.redirect_uris,
            scopes: body.scopes,
            ..stored
        };
        if !state.tokens.update_client(&next).await? {
            return Err(ApiError::not_found(format!(
                "OAuth client {} not found",
                client_id.0
            )));
        }
        Ok(Json(next.into()))
    }

    /// Delete an OAuth2 client and revoke every code and token issued to it, at once.
    /// Irreversible.
    #[oai(
        path = "/oauthclients/:clientId",
        method = "delete",
        operation_id = "deleteOAuthClient"
    )]
    async fn delete(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        #[oai(name = "clientId")] client_id: Path<Uuid>,
    ) -> Result<Deleted, ApiError> {
        let admin = ClientAdmin::check(&state, auth).await?;
        if !state
            .tokens
            .delete_client(admin.0.workspace_id, client_id.0)
            .await?
        {
            return Err(ApiError::not_found(format!(
                "OAuth client {} not found",
                client_id.0
            )));
        }
        Ok(Deleted::NoContent)
    }

    /// Upload the client's logo (multipart part `logo`): PNG, JPEG, GIF or WebP by its bytes,
    /// at most 256 KiB. Shown on the consent page.
    #[oai(
        path = "/oauthclients/:clientId/logoUrl",
        method = "post",
        operation_id = "uploadOAuthClientLogo"
    )]
    async fn logo(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        #[oai(name = "clientId")] client_id: Path<Uuid>,
        body: FileUpload<LogoPart>,
    ) -> Result<Json<LogoOut>, ApiError> {
        let admin = ClientAdmin::check(&state, auth).await?;
        owned(&state, &admin, client_id.0).await?;
        let parts = body.parts(MAX_LOGO_BYTES).await?;
        let Some(part) = parts.into_iter().find(|p| p.name == LogoPart::NAME) else {
            return Err(ApiError::bad_request(format!(
                "the multipart body needs a part named '{}' holding the image",
                LogoPart::NAME
            )));
        };
        let bytes = tokio::task::spawn_blocking(move || part.file.read_all())
            .await
            .map_err(ApiError::internal)?
            .map_err(ApiError::internal)?;
        let Some(content_type) = image_type(&bytes) else {
            return Err(ApiError::bad_request(
                "the logo must be a PNG, JPEG, GIF or WebP image",
            ));
        };
        let logo = Logo {
            content_type: content_type.into(),
            bytes,
        };
        if !state
            .tokens
            .set_client_logo(admin.0.workspace_id, client_id.0, &logo)
            .await?
        {
            return Err(ApiError::not_found(format!(
                "OAuth client {} not found",
                client_id.0
            )));
        }
        Ok(Json(LogoOut {
            logo_url: format!("/oauth/logo/{}", client_id.0),
            content_type: content_type.into(),
        }))
    }
}
