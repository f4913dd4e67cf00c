//! The caller's own API tokens: list, create (shown once), revoke. HTTP Basic only: an OAuth2
//! access token cannot mint or revoke API tokens.

use inlet_core::{time, token::ApiToken};
use poem::web::Data;
use poem_openapi::{ApiResponse, Object, OpenApi, param::Path, payload::Json};
use uuid::Uuid;

use super::ApiTags;
use crate::{
    auth::{BasicAuth, hash_secret, new_secret},
    problem::ApiError,
    state::AppState,
};

/// Most API tokens one user may hold.
pub const MAX_API_TOKENS_PER_USER: usize = 100;

/// An API token as listed (the secret itself is never shown again).
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct ApiTokenOut {
    /// The token's id (for revocation).
    pub id: Uuid,
    /// When it was made (RFC 3339, milliseconds).
    pub created_date: String,
}

/// A newly made API token: the only time its value is shown.
#[derive(Debug, Object)]
#[oai(rename_all = "camelCase")]
pub struct NewApiToken {
    /// The token's id (for revocation).
    pub id: Uuid,
    /// The token: the HTTP Basic password, with your e-mail as user name.
    pub api_token: String,
    /// When it was made.
    pub created_date: String,
}

#[derive(ApiResponse)]
enum Created {
    /// The token was made; store it now, it is not shown again.
    #[oai(status = 201)]
    Created(Json<NewApiToken>),
}

#[derive(ApiResponse)]
enum Revoked {
    /// The token no longer authenticates.
    #[oai(status = 204)]
    NoContent,
}

/// API token endpoints.
pub struct ApiTokensApi;

#[OpenApi(tag = "ApiTags::ApiTokens", prefix_path = "/api/v1")]
impl ApiTokensApi {
    /// List your API tokens (ids and creation dates only).
    #[oai(path = "/apitokens", method = "get", operation_id = "listApiTokens")]
    async fn list(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
    ) -> Result<Json<Vec<ApiTokenOut>>, ApiError> {
        let tokens = state.tokens.list_api_tokens(auth.0.user_id).await?;
        Ok(Json(
            tokens
                .into_iter()
                .map(|t| ApiTokenOut {
                    id: t.id,
                    created_date: time::format(&t.created_date),
                })
                .collect(),
        ))
    }

    /// Make a new API token for yourself; its value is in this response only.
    #[oai(path = "/apitokens", method = "post", operation_id = "createApiToken")]
    async fn create(&self, state: Data<&AppState>, auth: BasicAuth) -> Result<Created, ApiError> {
        let user_id = auth.0.user_id;
        if state.tokens.list_api_tokens(user_id).await?.len() >= MAX_API_TOKENS_PER_USER {
            return Err(ApiError::conflict(format!(
                "a user holds at most {MAX_API_TOKENS_PER_USER} API tokens; revoke one first"
            )));
        }
        let secret = new_secret();
        let token = ApiToken {
            id: Uuid::new_v4(),
            user_id,
            token_hash: hash_secret(&secret),
            created_date: time::now(),
        };
        state.tokens.add_api_token(&token).await?;
        Ok(Created::Created(Json(NewApiToken {
            id: token.id,
            api_token: secret,
            created_date: time::format(&token.created_date),
        })))
    }

    /// Revoke one of your API tokens (effective at once on this replica, within 5 s on others).
    #[oai(
        path = "/apitokens/:tokenId",
        method = "delete",
        operation_id = "revokeApiToken"
    )]
    async fn revoke(
        &self,
        state: Data<&AppState>,
        auth: BasicAuth,
        #[oai(name = "tokenId")] token_id: Path<Uuid>,
    ) -> Result<Revoked, ApiError> {
        if !state
            .tokens
            .delete_api_token(auth.0.user_id, token_id.0)
            .await?
        {
            return Err(ApiError::not_found(format!(
                "API token {} not found",
                token_id.0
            )));
        }
        state.credentials.clear();
        Ok(Revoked::NoContent)
    }
}
