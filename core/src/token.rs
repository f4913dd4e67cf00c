//! Identity: workspaces, users, API tokens and the authenticated [`Principal`] (stored through
//! [`crate::store::Accounts`]).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{WorkspaceId, time::Timestamp};

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
    /// Authenticated with an OAuth2 access token (an application acting for the user).
    pub oauth: bool,
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
            oauth: false,
        }
    }

    /// Whether the caller reads every record regardless of access lists: an administrator's
    /// API token (a connector). A member's API token and every OAuth2 access token read as
    /// their user ([`crate::access`]).
    pub fn reads_everything(&self) -> bool {
        self.role == Role::Admin && !self.oauth
    }
}
