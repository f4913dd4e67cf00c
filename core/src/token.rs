//! Identity: workspaces, users, API tokens, the authenticated [`Principal`] and the
//! [`TokenStore`] trait.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    Result, WorkspaceId,
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session},
    time::Timestamp,
};

/// Name of the workspace made at first start.
pub const DEFAULT_WORKSPACE: &str = "default";

/// How long a rate-limit counter outlives its window: a day (windows are minutes long).
pub const RATE_RETENTION_MS: i64 = 24 * 60 * 60 * 1000;

/// A user's role in their workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Role {
    /// May manage OAuth clients and everything else.
    Admin,
    /// May use sources and records.
    Member,
}

/// An organization; everything stored belongs to one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    /// Workspace id.
    pub id: WorkspaceId,
    /// Unique name.
    pub name: String,
    /// Whether the operator enabled OAuth2 clients for it.
    pub oauth_enabled: bool,
    /// When it was made.
    pub created_date: Timestamp,
}

/// A user of a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// User id.
    pub id: Uuid,
    /// The user's workspace.
    pub workspace_id: WorkspaceId,
    /// Unique e-mail address; the Basic-auth user name.
    pub email: String,
    /// ADMIN or MEMBER.
    pub role: Role,
    /// argon2id PHC string of the browser-login password.
    pub password_hash: String,
    /// When the user was made.
    pub created_date: Timestamp,
}

/// A stored API token: only its SHA-256 is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiToken {
    /// Token id.
    pub id: Uuid,
    /// Owner.
    pub user_id: Uuid,
    /// Lowercase hex SHA-256 of the token.
    pub token_hash: String,
    /// When it was made.
    pub created_date: Timestamp,
}

/// What an authenticated caller may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads and writes.
    ReadWrite,
    /// Reads only (`read:*`).
    ReadOnly,
}

/// The authenticated caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The caller's workspace: every lookup is confined to it.
    pub workspace_id: WorkspaceId,
    /// The user acted for.
    pub user_id: Uuid,
    /// The user's e-mail.
    pub email: String,
    /// The user's role.
    pub role: Role,
    /// What the credentials allow.
    pub access: Access,
}

impl Principal {
    /// The principal of a user authenticated with full rights (Basic auth).
    pub fn full(user: &User) -> Self {
        Self {
            workspace_id: user.workspace_id,
            user_id: user.id,
            email: user.email.clone(),
            role: user.role,
            access: Access::ReadWrite,
        }
    }
}

/// Storage of workspaces, users and credentials.
#[async_trait]
pub trait TokenStore: Send + Sync + 'static {
    /// Stores a new workspace; a taken name is [`crate::Error::Conflict`].
    async fn create_workspace(&self, workspace: &Workspace) -> Result<()>;
    /// The workspace with this name.
    async fn workspace_by_name(&self, name: &str) -> Result<Option<Workspace>>;
    /// Stores a new user; a taken e-mail is [`crate::Error::Conflict`].
    async fn create_user(&self, user: &User) -> Result<()>;
    /// The user with this e-mail (case-insensitive).
    async fn user_by_email(&self, email: &str) -> Result<Option<User>>;
    /// How many users exist in all workspaces (0 means first start).
    async fn count_users(&self) -> Result<u64>;
    /// Stores a new API token hash.
    async fn add_api_token(&self, token: &ApiToken) -> Result<()>;
    /// The user owning the token with this hash.
    async fn user_by_token_hash(&self, token_hash: &str) -> Result<Option<User>>;

    /// The workspace with this id.
    async fn workspace_by_id(&self, id: WorkspaceId) -> Result<Option<Workspace>>;
    /// Switches OAuth on or off for a workspace; false when there is no such workspace.
    /// Switching it off also revokes, in the same transaction, every OAuth token and unused
    /// code of the workspace's clients: switching it on again revives none of them.
    async fn set_oauth_enabled(&self, name: &str, enabled: bool) -> Result<bool>;
    /// The user with this id.
    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>>;
    /// A user's API tokens (hashes only), oldest first.
    async fn list_api_tokens(&self, user_id: Uuid) -> Result<Vec<ApiToken>>;
    /// Revokes one of a user's API tokens; false when the user has no such token.
    async fn delete_api_token(&self, user_id: Uuid, token_id: Uuid) -> Result<bool>;

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

    /// Counts one event against `key` in the fixed window starting at `window_start_ms` and
    /// returns the count in that window (a new window starts over at 1). Shared by replicas.
    /// Keys whose window started more than [`RATE_RETENTION_MS`] before `window_start_ms` are
    /// removed, so counters of invented keys do not accumulate.
    async fn rate_hit(&self, key: &str, window_start_ms: i64) -> Result<u32>;
    /// The count of `key` in the window starting at `window_start_ms` (0 when another window).
    async fn rate_count(&self, key: &str, window_start_ms: i64) -> Result<u32>;
}
