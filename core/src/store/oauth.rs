//! OAuth2 clients and their logos, authorization codes, tokens and login sessions.

use async_trait::async_trait;
use uuid::Uuid;

use crate::{
    Result, WorkspaceId,
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session},
};

/// Storage of OAuth2 clients, codes, tokens and sessions.
#[async_trait]
pub trait OAuthStore: Send + Sync + 'static {
    /// Stores a new OAuth client.
    async fn create_client(&self, client: &OAuthClient) -> Result<()>;
    /// The client with this id, in any workspace (callers confine it).
    async fn client(&self, id: Uuid) -> Result<Option<OAuthClient>>;
    /// A workspace's clients, oldest first.
    async fn list_clients(&self, workspace_id: WorkspaceId) -> Result<Vec<OAuthClient>>;
    /// Replaces a client's fields (matched by id and workspace); false when absent.
    async fn update_client(&self, client: &OAuthClient) -> Result<bool>;
    /// Deletes a client with every code and token issued to it, in one transaction; false when
    /// absent.
    async fn delete_client(&self, workspace_id: WorkspaceId, id: Uuid) -> Result<bool>;
    /// Stores a client's logo (and sets `has_logo`); false when the client is absent.
    async fn set_client_logo(
        &self,
        workspace_id: WorkspaceId,
        id: Uuid,
        logo: &Logo,
    ) -> Result<bool>;
    /// A client's logo.
    async fn client_logo(&self, id: Uuid) -> Result<Option<Logo>>;
    /// Stores an authorization code (and forgets expired ones).
    async fn save_code(&self, code: &AuthCode) -> Result<()>;
    /// Redeems a code: the first call gets it, later calls learn it was replayed. Atomic.
    async fn redeem_code(&self, code_hash: &str) -> Result<Redemption>;
    /// Stores an issued token; [`crate::Error::NotFound`] when its client no longer exists.
    async fn save_token(&self, token: &OAuthToken) -> Result<()>;
    /// The token with this hash, unless revoked (expiry is the caller's to check).
    async fn token(&self, token_hash: &str) -> Result<Option<OAuthToken>>;
    /// Revokes one token; returns it if it existed.
    async fn revoke_token(&self, token_hash: &str) -> Result<Option<OAuthToken>>;
    /// Revokes every token of a grant; returns how many.
    async fn revoke_grant(&self, grant_id: Uuid) -> Result<u64>;
    /// Stores a login session (and forgets expired ones).
    async fn save_session(&self, session: &Session) -> Result<()>;
    /// The session with this id hash (expiry is the caller's to check).
    async fn session(&self, id_hash: &str) -> Result<Option<Session>>;
    /// Ends a session.
    async fn delete_session(&self, id_hash: &str) -> Result<()>;
}
