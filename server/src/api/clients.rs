//! OAuth2 client maintenance (spec 4.1): create, list, read, update, delete and the logo upload.
//! Only an ADMIN's HTTP Basic credentials are accepted, in a workspace with OAuth enabled.

use inlet_core::{
    oauth::{self, Logo, OAuthClient},
    time,
};
use poem::web::Data;
use poem_openapi::{ApiResponse, Object, OpenApi, param::Path, payload::Json};
use uuid::Uuid;

use inlet_oauth::MAX_LOGO_BYTES;

use super::ApiTags;
use crate::{
    auth::{BasicAuth, ClientAdmin},
    problem::ApiError,
    rules::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_REDIRECT_URI_BYTES, MAX_REDIRECT_URIS},
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

fn check_text(field: &str, value: &str, max: usize, required: bool) -> Result<(), ApiError> {
    if required && value.trim().is_empty() {
        return Err(ApiError::bad_request(format!("{field} must not be empty")));
    }
    if value.chars().count() > max {
        return Err(ApiError::bad_request(format!(
            "{field} is longer than {max} characters"
        )));
    }
    Ok(())
}

/// Validates a create/update body.
fn validate(body: &ClientIn) -> Result<(), ApiError> {
    check_text("name", &body.name, MAX_NAME_CHARS, true)?;
    check_text(
        "description",
        &body.description,
        MAX_DESCRIPTION_CHARS,
        false,
    )?;
    check_text(
        "bottomDescription",
        &body.bottom_description,
        MAX_DESCRIPTION_CHARS,
        false,
    )?;
    if body.redirect_uris.is_empty() {
        return Err(ApiError::bad_request(
            "redirectUris must name at least one URI",
        ));
    }
    if body.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(ApiError::bad_request(format!(
            "at most {MAX_REDIRECT_URIS} redirectUris"
        )));
    }
    for uri in &body.redirect_uris {
        if uri.len() > MAX_REDIRECT_URI_BYTES {
            return Err(ApiError::bad_request(format!(
                "redirect URI longer than {MAX_REDIRECT_URI_BYTES} bytes"
            )));
        }
        let parsed = url::Url::parse(uri).map_err(|e| {
            ApiError::bad_request(format!("redirect URI '{uri}' is not an absolute URI: {e}"))
        })?;
        if parsed.fragment().is_some() {
            return Err(ApiError::bad_request(format!(
                "redirect URI '{uri}' must not have a fragment (RFC 6749 3.1.2)"
            )));
        }
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ApiError::bad_request(format!(
                "redirect URI scheme '{}' is not allowed: use http or https (a native app \
                 listens on a loopback address, RFC 8252)",
                parsed.scheme()
            )));
        }
    }
    if body.scopes.is_empty() {
        return Err(ApiError::bad_request("scopes must name at least one scope"));
    }
    if let Some(unknown) = oauth::unknown_scope(&body.scopes) {
        return Err(ApiError::bad_request(format!(
            "unknown scope '{unknown}': use default, *:* or read:*"
        )));
    }
    Ok(())
}

/// The image type of `bytes` by its signature, if it is one the consent page shows.
pub fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
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
        validate(&body)?;
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
        validate(&body)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_told_by_their_bytes() {
        assert_eq!(image_type(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(image_type(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(image_type(b"GIF89a..."), Some("image/gif"));
        assert_eq!(image_type(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_type(b"<svg xmlns=...>"), None);
        assert_eq!(image_type(b"RIFF\0\0\0\0WAVE"), None);
        assert_eq!(image_type(b""), None);
    }
}
