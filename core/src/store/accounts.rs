//! Workspaces, users and their API tokens, kept as documents ([`super::Documents`]): this
//! module implements [`Accounts`] once for every store. Unique names and e-mails are documents
//! of their own, created in the same batch as what they name, so two creators of one name
//! cannot both succeed.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::documents::{
    ATTEMPTS, DocWrite, Documents, Expect, KeyRange, contended, get_as, scan_all, time_key,
};
use crate::{
    Error, Result, WorkspaceId,
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
    /// Stores a new API token hash; [`crate::Error::NotFound`] when its user does not exist.
    async fn add_api_token(&self, token: &ApiToken) -> Result<()>;
    /// The user owning the token with this hash.
    async fn user_by_token_hash(&self, token_hash: &str) -> Result<Option<User>>;
    /// The workspace with this id.
    async fn workspace_by_id(&self, id: WorkspaceId) -> Result<Option<Workspace>>;
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

/// Workspaces by id.
pub const WORKSPACES: &str = "workspaces";
/// Workspace ids by name.
pub const WORKSPACE_NAMES: &str = "workspace_names";
/// Users by id.
pub const USERS: &str = "users";
/// User ids by [`email_key`].
pub const USER_EMAILS: &str = "user_emails";
/// API tokens by hash.
pub const API_TOKENS: &str = "api_tokens";
/// A user's API tokens, oldest first: `user/created/id` → the token's hash.
pub const USER_API_TOKENS: &str = "user_api_tokens";
/// Deployment keys by name.
pub const DEPLOYMENT_KEYS: &str = "deployment_keys";

/// Case-insensitive key of an e-mail address.
pub fn email_key(email: &str) -> String {
    email.trim().to_lowercase()
}

/// An id other documents point at.
#[derive(Debug, Serialize, Deserialize)]
pub struct Pointer {
    /// The id.
    pub id: String,
}

/// The workspace named `name` and its document's revision.
pub async fn workspace_named<S: Documents + ?Sized>(
    store: &S,
    name: &str,
) -> Result<Option<(Workspace, u64)>> {
    follow(store, WORKSPACE_NAMES, name, WORKSPACES).await
}

fn pointer(id: impl ToString) -> Pointer {
    Pointer { id: id.to_string() }
}

/// The writes that store a new workspace with its name (the name must be free).
pub fn workspace_writes(w: &Workspace) -> Result<Vec<DocWrite>> {
    Ok(vec![
        DocWrite::put(WORKSPACE_NAMES, &w.name, &pointer(w.id), Expect::Absent)?,
        DocWrite::put(WORKSPACES, w.id.to_string(), w, Expect::Absent)?,
    ])
}

/// The writes that store a new user with its e-mail (the e-mail must be free).
pub fn user_writes(u: &User) -> Result<Vec<DocWrite>> {
    Ok(vec![
        DocWrite::put(
            USER_EMAILS,
            email_key(&u.email),
            &pointer(u.id),
            Expect::Absent,
        )?,
        DocWrite::put(USERS, u.id.to_string(), u, Expect::Absent)?,
    ])
}

fn user_token_key(t: &ApiToken) -> String {
    format!("{}/{}/{}", t.user_id, time_key(&t.created_date), t.id)
}

/// The writes that store a new API token with its place in the user's list.
pub fn api_token_writes(t: &ApiToken) -> Result<Vec<DocWrite>> {
    Ok(vec![
        DocWrite::put(API_TOKENS, &t.token_hash, t, Expect::Absent)?,
        DocWrite::put(
            USER_API_TOKENS,
            user_token_key(t),
            &pointer(&t.token_hash),
            Expect::Absent,
        )?,
    ])
}

/// What the pointer under `key` in `index` names in `collection`, with its revision (`None`
/// when either is gone).
async fn follow<S: Documents + ?Sized, T: serde::de::DeserializeOwned>(
    store: &S,
    index: &str,
    key: &str,
    collection: &str,
) -> Result<Option<(T, u64)>> {
    let Some((Pointer { id }, _)) = get_as(store, index, key).await? else {
        return Ok(None);
    };
    get_as(store, collection, &id).await
}

#[async_trait]
impl<S: Documents + ?Sized> Accounts for S {
    async fn create_workspace(&self, workspace: &Workspace) -> Result<()> {
        if self.write_documents(&workspace_writes(workspace)?).await? {
            return Ok(());
        }
        Err(Error::conflict(format!(
            "workspace '{}' exists",
            workspace.name
        )))
    }

    async fn workspace_by_name(&self, name: &str) -> Result<Option<Workspace>> {
        Ok(workspace_named(self, name).await?.map(|(w, _)| w))
    }

    async fn create_user(&self, user: &User) -> Result<()> {
        if self.write_documents(&user_writes(user)?).await? {
            return Ok(());
        }
        Err(Error::conflict(format!("user '{}' exists", user.email)))
    }

    async fn user_by_email(&self, email: &str) -> Result<Option<User>> {
        let found = follow(self, USER_EMAILS, &email_key(email), USERS).await?;
        Ok(found.map(|(u, _)| u))
    }

    async fn count_users(&self) -> Result<u64> {
        Ok(scan_all(self, USERS, KeyRange::default()).await?.len() as u64)
    }

    async fn add_api_token(&self, token: &ApiToken) -> Result<()> {
        for _ in 0..ATTEMPTS {
            let Some(user) = self.get_document(USERS, &token.user_id.to_string()).await? else {
                return Err(Error::not_found(format!(
                    "user {} not found",
                    token.user_id
                )));
            };
            // Written only while the user is as read (a password reset meanwhile: read again).
            let mut writes = vec![DocWrite::check(
                USERS,
                token.user_id.to_string(),
                Expect::Revision(user.revision),
            )];
            writes.extend(api_token_writes(token)?);
            if self.write_documents(&writes).await? {
                return Ok(());
            }
            if self
                .get_document(API_TOKENS, &token.token_hash)
                .await?
                .is_some()
            {
                return Err(Error::conflict("the token exists"));
            }
        }
        Err(contended())
    }

    async fn user_by_token_hash(&self, token_hash: &str) -> Result<Option<User>> {
        let Some((token, _)) = get_as::<_, ApiToken>(self, API_TOKENS, token_hash).await? else {
            return Ok(None);
        };
        self.user_by_id(token.user_id).await
    }

    async fn workspace_by_id(&self, id: WorkspaceId) -> Result<Option<Workspace>> {
        Ok(get_as(self, WORKSPACES, &id.to_string())
            .await?
            .map(|(w, _)| w))
    }

    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>> {
        Ok(get_as(self, USERS, &id.to_string()).await?.map(|(u, _)| u))
    }

    async fn list_api_tokens(&self, user_id: Uuid) -> Result<Vec<ApiToken>> {
        let prefix = format!("{user_id}/");
        let mut out = Vec::new();
        for p in scan_all(
            self,
            USER_API_TOKENS,
            KeyRange {
                prefix: &prefix,
                after: None,
            },
        )
        .await?
        {
            let p: Pointer = p.decode()?;
            if let Some((t, _)) = get_as(self, API_TOKENS, &p.id).await? {
                out.push(t);
            }
        }
        Ok(out)
    }

    async fn delete_api_token(&self, user_id: Uuid, token_id: Uuid) -> Result<bool> {
        // The user's index names each token's id last: the token is found without reading
        // the others.
        let prefix = format!("{user_id}/");
        let suffix = format!("/{token_id}");
        let range = KeyRange {
            prefix: &prefix,
            after: None,
        };
        let Some(entry) = scan_all(self, USER_API_TOKENS, range)
            .await?
            .into_iter()
            .find(|e| e.key.ends_with(&suffix))
        else {
            return Ok(false);
        };
        let Pointer { id: hash } = entry.decode()?;
        let Some(stored) = self.get_document(API_TOKENS, &hash).await? else {
            return Ok(false);
        };
        // Of two deletes at once, one finds the token.
        let writes = [
            DocWrite::delete(API_TOKENS, &hash, Expect::Revision(stored.revision)),
            DocWrite::delete(USER_API_TOKENS, entry.key, Expect::Any),
        ];
        self.write_documents(&writes).await
    }

    async fn deployment_key(&self, name: &str, candidate: &str) -> Result<String> {
        let write = DocWrite::put(DEPLOYMENT_KEYS, name, &candidate, Expect::Absent)?;
        self.write_documents(&[write]).await?;
        match get_as::<_, String>(self, DEPLOYMENT_KEYS, name).await? {
            Some((key, _)) => Ok(key),
            None => Err(Error::Unavailable(
                "the deployment key was not stored".into(),
            )),
        }
    }

    async fn set_password_hash(&self, user_id: Uuid, password_hash: &str) -> Result<bool> {
        for _ in 0..ATTEMPTS {
            let Some((mut user, revision)) =
                get_as::<_, User>(self, USERS, &user_id.to_string()).await?
            else {
                return Ok(false);
            };
            user.password_hash = password_hash.to_string();
            let write = DocWrite::put(
                USERS,
                user_id.to_string(),
                &user,
                Expect::Revision(revision),
            )?;
            if self.write_documents(&[write]).await? {
                return Ok(true);
            }
        }
        Err(contended())
    }
}
