//! Workspaces, users and their API tokens.

use async_trait::async_trait;
use uuid::Uuid;

use crate::{
    Result, WorkspaceId,
    token::{ApiToken, User, Workspace},
};

/// Storage of workspaces, users and API tokens.
#[async_trait]
pub trait Accounts: Send + Sync + 'static {
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
    /// The deployment's secret key called `name`: `candidate` is stored when none is, and the
    /// stored one is answered either way, so every replica gets the same key (the change feed
    /// encrypts its cursors with one).
    async fn deployment_key(&self, name: &str, candidate: &str) -> Result<String>;
    /// Replaces a user's password hash (`inlet admin reset-password`); false when there is no
    /// such user.
    async fn set_password_hash(&self, user_id: Uuid, password_hash: &str) -> Result<bool>;
}
