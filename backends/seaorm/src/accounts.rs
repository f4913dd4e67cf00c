//! Workspaces, users and API tokens.

use crate::ts;
use crate::uuid;
use crate::{SeaOrmStore, all, db_error, exec, get, json_error, one};
use async_trait::async_trait;
use inlet_core::store::Accounts;
use inlet_core::{
    Error, Result, WorkspaceId,
    token::{ApiToken, User, Workspace},
};
use sea_orm::QueryResult;
use uuid::Uuid;

#[async_trait]
impl Accounts for SeaOrmStore {
    async fn create_workspace(&self, w: &Workspace) -> Result<()> {
        let _w = self.write_guard().await;
        exec(
            &self.db,
            self.stmt(
                "INSERT INTO workspaces (id, name, oauth_enabled, created_date) VALUES ($1, $2, $3, $4)",
                vec![
                    w.id.to_string().into(),
                    w.name.clone().into(),
                    w.oauth_enabled.into(),
                    w.created_date.timestamp_millis().into(),
                ],
            ),
        )
        .await
        .map_err(|e| match e {
            Error::Conflict(_) => Error::conflict(format!("workspace '{}' exists", w.name)),
            other => other,
        })?;
        Ok(())
    }

    async fn workspace_by_name(&self, name: &str) -> Result<Option<Workspace>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT * FROM workspaces WHERE name = $1",
                vec![name.to_string().into()],
            ),
        )
        .await?;
        row.as_ref().map(workspace_from_row).transpose()
    }

    async fn create_user(&self, u: &User) -> Result<()> {
        let _w = self.write_guard().await;
        let role = serde_json::to_value(u.role).map_err(json_error)?;
        exec(
            &self.db,
            self.stmt(
                "INSERT INTO users (id, workspace_id, email, email_key, role, password_hash, created_date) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                vec![
                    u.id.to_string().into(),
                    u.workspace_id.to_string().into(),
                    u.email.clone().into(),
                    email_key(&u.email).into(),
                    role.as_str().unwrap_or_default().to_string().into(),
                    u.password_hash.clone().into(),
                    u.created_date.timestamp_millis().into(),
                ],
            ),
        )
        .await
        .map_err(|e| match e {
            Error::Conflict(_) => Error::conflict(format!("user '{}' exists", u.email)),
            other => other,
        })?;
        Ok(())
    }

    async fn user_by_email(&self, email: &str) -> Result<Option<User>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT * FROM users WHERE email_key = $1",
                vec![email_key(email).into()],
            ),
        )
        .await?;
        row.as_ref().map(user_from_row).transpose()
    }

    async fn count_users(&self) -> Result<u64> {
        let row = one(
            &self.db,
            self.stmt("SELECT COUNT(*) AS n FROM users", vec![]),
        )
        .await?;
        Ok(row.as_ref().map_or(Ok(0), |r| get::<i64>(r, "n"))?.max(0) as u64)
    }

    async fn add_api_token(&self, t: &ApiToken) -> Result<()> {
        let _w = self.write_guard().await;
        let owner = one(
            &self.db,
            self.stmt(
                "SELECT id FROM users WHERE id = $1",
                vec![t.user_id.to_string().into()],
            ),
        )
        .await?;
        if owner.is_none() {
            return Err(Error::not_found(format!("user {} not found", t.user_id)));
        }
        exec(
            &self.db,
            self.stmt(
                "INSERT INTO api_tokens (id, user_id, token_hash, created_date) VALUES ($1, $2, $3, $4)",
                vec![
                    t.id.to_string().into(),
                    t.user_id.to_string().into(),
                    t.token_hash.clone().into(),
                    t.created_date.timestamp_millis().into(),
                ],
            ),
        )
        .await?;
        Ok(())
    }

    async fn user_by_token_hash(&self, token_hash: &str) -> Result<Option<User>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT u.* FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1",
                vec![token_hash.to_string().into()],
            ),
        )
        .await?;
        row.as_ref().map(user_from_row).transpose()
    }

    async fn workspace_by_id(&self, id: WorkspaceId) -> Result<Option<Workspace>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT * FROM workspaces WHERE id = $1",
                vec![id.to_string().into()],
            ),
        )
        .await?;
        row.as_ref().map(workspace_from_row).transpose()
    }

    async fn set_oauth_enabled(&self, name: &str, enabled: bool) -> Result<bool> {
        let _w = self.write_guard().await;
        let txn = self.begin_write().await?;
        let n = exec(
            &txn,
            self.stmt(
                "UPDATE workspaces SET oauth_enabled = $1 WHERE name = $2",
                vec![enabled.into(), name.to_string().into()],
            ),
        )
        .await?;
        if n > 0 && !enabled {
            for table in ["oauth_tokens", "oauth_codes"] {
                exec(
                    &txn,
                    self.stmt(
                        &format!(
                            "DELETE FROM {table} WHERE client_id IN (SELECT c.id FROM \
                             oauth_clients c JOIN workspaces w ON w.id = c.workspace_id \
                             WHERE w.name = $1)"
                        ),
                        vec![name.to_string().into()],
                    ),
                )
                .await?;
            }
        }
        txn.commit().await.map_err(db_error)?;
        Ok(n > 0)
    }

    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT * FROM users WHERE id = $1",
                vec![id.to_string().into()],
            ),
        )
        .await?;
        row.as_ref().map(user_from_row).transpose()
    }

    async fn list_api_tokens(&self, user_id: Uuid) -> Result<Vec<ApiToken>> {
        let rows = all(
            &self.db,
            self.stmt(
                "SELECT * FROM api_tokens WHERE user_id = $1 ORDER BY created_date, id",
                vec![user_id.to_string().into()],
            ),
        )
        .await?;
        rows.iter().map(api_token_from_row).collect()
    }

    async fn delete_api_token(&self, user_id: Uuid, token_id: Uuid) -> Result<bool> {
        let _w = self.write_guard().await;
        let n = exec(
            &self.db,
            self.stmt(
                "DELETE FROM api_tokens WHERE user_id = $1 AND id = $2",
                vec![user_id.to_string().into(), token_id.to_string().into()],
            ),
        )
        .await?;
        Ok(n > 0)
    }

    async fn set_password_hash(&self, user_id: Uuid, password_hash: &str) -> Result<bool> {
        let _w = self.write_guard().await;
        let n = exec(
            &self.db,
            self.stmt(
                "UPDATE users SET password_hash = $2 WHERE id = $1",
                vec![user_id.to_string().into(), password_hash.into()],
            ),
        )
        .await?;
        Ok(n > 0)
    }

    async fn deployment_key(&self, name: &str, candidate: &str) -> Result<String> {
        {
            let _w = self.write_guard().await;
            exec(
                &self.db,
                self.stmt(
                    "INSERT INTO deployment_keys (name, secret) VALUES ($1, $2) \
                     ON CONFLICT (name) DO NOTHING",
                    vec![name.into(), candidate.into()],
                ),
            )
            .await?;
        }
        let row = one(
            &self.db,
            self.stmt(
                "SELECT secret FROM deployment_keys WHERE name = $1",
                vec![name.into()],
            ),
        )
        .await?
        .ok_or_else(|| Error::backend(std::io::Error::other("the deployment key vanished")))?;
        get(&row, "secret")
    }
}

fn user_from_row(row: &QueryResult) -> Result<User> {
    let role: String = get(row, "role")?;
    Ok(User {
        id: uuid(row, "id")?,
        workspace_id: uuid(row, "workspace_id")?,
        email: get(row, "email")?,
        role: serde_json::from_value(serde_json::Value::String(role)).map_err(json_error)?,
        password_hash: get(row, "password_hash")?,
        created_date: ts(row, "created_date")?,
    })
}

fn workspace_from_row(r: &QueryResult) -> Result<Workspace> {
    Ok(Workspace {
        id: uuid(r, "id")?,
        name: get(r, "name")?,
        oauth_enabled: get(r, "oauth_enabled")?,
        created_date: ts(r, "created_date")?,
    })
}

fn api_token_from_row(r: &QueryResult) -> Result<ApiToken> {
    Ok(ApiToken {
        id: uuid(r, "id")?,
        user_id: uuid(r, "user_id")?,
        token_hash: get(r, "token_hash")?,
        created_date: ts(r, "created_date")?,
    })
}

/// Case-insensitive key of an e-mail address.
fn email_key(email: &str) -> String {
    email.trim().to_lowercase()
}
