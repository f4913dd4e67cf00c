//! [`TokenStore`] over SQL.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use inlet_core::{
    Error, Result, TokenStore,
    token::{ApiToken, User, Workspace},
};
use sea_orm::QueryResult;
use uuid::Uuid;

use crate::{SeaOrmStore, exec, get, json_error, one};

fn uuid(row: &QueryResult, col: &str) -> Result<Uuid> {
    Uuid::parse_str(&get::<String>(row, col)?).map_err(Error::backend)
}

fn ts(row: &QueryResult, col: &str) -> Result<DateTime<Utc>> {
    let ms: i64 = get(row, col)?;
    DateTime::<Utc>::from_timestamp_millis(ms)
        .ok_or_else(|| Error::backend(std::io::Error::other(format!("bad timestamp {ms}"))))
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

/// Case-insensitive key of an e-mail address.
fn email_key(email: &str) -> String {
    email.trim().to_lowercase()
}

#[async_trait]
impl TokenStore for SeaOrmStore {
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
        row.map(|r| {
            Ok(Workspace {
                id: uuid(&r, "id")?,
                name: get(&r, "name")?,
                oauth_enabled: get(&r, "oauth_enabled")?,
                created_date: ts(&r, "created_date")?,
            })
        })
        .transpose()
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
}
