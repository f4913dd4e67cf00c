//! [`TokenStore`] over SQL.

use async_trait::async_trait;
use base64::{Engine, engine::general_purpose::STANDARD as BASE64};
use chrono::{DateTime, Utc};
use inlet_core::{
    Error, Result, TokenStore, WorkspaceId,
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session},
    time,
    token::{ApiToken, User, Workspace},
};
use sea_orm::{QueryResult, TransactionTrait};
use serde::{Serialize, de::DeserializeOwned};
use uuid::Uuid;

use crate::{SeaOrmStore, all, db_error, exec, get, json_error, one};

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

fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(json_error)
}

/// Decodes the JSON `body` column of a row.
fn body<T: DeserializeOwned>(row: &QueryResult) -> Result<T> {
    serde_json::from_str(&get::<String>(row, "body")?).map_err(json_error)
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
        let txn = self.db.begin().await.map_err(db_error)?;
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

    async fn create_client(&self, c: &OAuthClient) -> Result<()> {
        let _w = self.write_guard().await;
        exec(
            &self.db,
            self.stmt(
                "INSERT INTO oauth_clients (id, workspace_id, created_date, body) VALUES ($1, $2, $3, $4)",
                vec![
                    c.id.to_string().into(),
                    c.workspace_id.to_string().into(),
                    c.created_date.timestamp_millis().into(),
                    to_json(c)?.into(),
                ],
            ),
        )
        .await?;
        Ok(())
    }

    async fn client(&self, id: Uuid) -> Result<Option<OAuthClient>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT body FROM oauth_clients WHERE id = $1",
                vec![id.to_string().into()],
            ),
        )
        .await?;
        row.as_ref().map(body).transpose()
    }

    async fn list_clients(&self, workspace_id: WorkspaceId) -> Result<Vec<OAuthClient>> {
        let rows = all(
            &self.db,
            self.stmt(
                "SELECT body FROM oauth_clients WHERE workspace_id = $1 ORDER BY created_date, id",
                vec![workspace_id.to_string().into()],
            ),
        )
        .await?;
        rows.iter().map(body).collect()
    }

    async fn update_client(&self, c: &OAuthClient) -> Result<bool> {
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        let row = one(
            &txn,
            self.stmt(
                &format!(
                    "SELECT body FROM oauth_clients WHERE id = $1 AND workspace_id = $2{}",
                    self.for_update()
                ),
                vec![c.id.to_string().into(), c.workspace_id.to_string().into()],
            ),
        )
        .await?;
        let Some(row) = row else {
            return Ok(false);
        };
        let stored: OAuthClient = body(&row)?;
        let mut next = c.clone();
        next.has_logo = stored.has_logo;
        exec(
            &txn,
            self.stmt(
                "UPDATE oauth_clients SET body = $1 WHERE id = $2",
                vec![to_json(&next)?.into(), c.id.to_string().into()],
            ),
        )
        .await?;
        txn.commit().await.map_err(db_error)?;
        Ok(true)
    }

    async fn delete_client(&self, workspace_id: WorkspaceId, id: Uuid) -> Result<bool> {
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        let n = exec(
            &txn,
            self.stmt(
                "DELETE FROM oauth_clients WHERE id = $1 AND workspace_id = $2",
                vec![id.to_string().into(), workspace_id.to_string().into()],
            ),
        )
        .await?;
        if n == 0 {
            return Ok(false);
        }
        for table in ["oauth_tokens", "oauth_codes", "oauth_logos"] {
            exec(
                &txn,
                self.stmt(
                    &format!("DELETE FROM {table} WHERE client_id = $1"),
                    vec![id.to_string().into()],
                ),
            )
            .await?;
        }
        txn.commit().await.map_err(db_error)?;
        Ok(true)
    }

    async fn set_client_logo(
        &self,
        workspace_id: WorkspaceId,
        id: Uuid,
        logo: &Logo,
    ) -> Result<bool> {
        let _w = self.write_guard().await;
        let txn = self.db.begin().await.map_err(db_error)?;
        let row = one(
            &txn,
            self.stmt(
                &format!(
                    "SELECT body FROM oauth_clients WHERE id = $1 AND workspace_id = $2{}",
                    self.for_update()
                ),
                vec![id.to_string().into(), workspace_id.to_string().into()],
            ),
        )
        .await?;
        let Some(row) = row else {
            return Ok(false);
        };
        let mut client: OAuthClient = body(&row)?;
        client.has_logo = true;
        exec(
            &txn,
            self.stmt(
                "UPDATE oauth_clients SET body = $1 WHERE id = $2",
                vec![to_json(&client)?.into(), id.to_string().into()],
            ),
        )
        .await?;
        exec(
            &txn,
            self.stmt(
                "INSERT INTO oauth_logos (client_id, content_type, data) VALUES ($1, $2, $3) \
                 ON CONFLICT (client_id) DO UPDATE SET content_type = excluded.content_type, data = excluded.data",
                vec![
                    id.to_string().into(),
                    logo.content_type.clone().into(),
                    BASE64.encode(&logo.bytes).into(),
                ],
            ),
        )
        .await?;
        txn.commit().await.map_err(db_error)?;
        Ok(true)
    }

    async fn client_logo(&self, id: Uuid) -> Result<Option<Logo>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT content_type, data FROM oauth_logos WHERE client_id = $1",
                vec![id.to_string().into()],
            ),
        )
        .await?;
        row.map(|r| {
            Ok(Logo {
                content_type: get(&r, "content_type")?,
                bytes: BASE64
                    .decode(get::<String>(&r, "data")?)
                    .map_err(Error::backend)?,
            })
        })
        .transpose()
    }

    async fn save_code(&self, code: &AuthCode) -> Result<()> {
        let _w = self.write_guard().await;
        self.forget_expired("oauth_codes").await?;
        exec(
            &self.db,
            self.stmt(
                "INSERT INTO oauth_codes (code_hash, client_id, used, expires_at, body) VALUES ($1, $2, FALSE, $3, $4)",
                vec![
                    code.code_hash.clone().into(),
                    code.client_id.to_string().into(),
                    code.expires_at.timestamp_millis().into(),
                    to_json(code)?.into(),
                ],
            ),
        )
        .await?;
        Ok(())
    }

    async fn redeem_code(&self, code_hash: &str) -> Result<Redemption> {
        let _w = self.write_guard().await;
        let first = one(
            &self.db,
            self.stmt(
                "UPDATE oauth_codes SET used = TRUE WHERE code_hash = $1 AND NOT used RETURNING body",
                vec![code_hash.to_string().into()],
            ),
        )
        .await?;
        if let Some(row) = first {
            return Ok(Redemption::Redeemed(body(&row)?));
        }
        let again = one(
            &self.db,
            self.stmt(
                "SELECT body FROM oauth_codes WHERE code_hash = $1",
                vec![code_hash.to_string().into()],
            ),
        )
        .await?;
        Ok(match again {
            Some(row) => Redemption::Replayed(body(&row)?),
            None => Redemption::Unknown,
        })
    }

    async fn save_token(&self, t: &OAuthToken) -> Result<()> {
        let _w = self.write_guard().await;
        self.forget_expired("oauth_tokens").await?;
        // Inserted only while the client exists, so a token issued during the client's deletion
        // is never left behind.
        let n = exec(
            &self.db,
            self.stmt(
                "INSERT INTO oauth_tokens (token_hash, client_id, grant_id, expires_at, body) \
                 SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM oauth_clients WHERE id = $2)",
                vec![
                    t.token_hash.clone().into(),
                    t.client_id.to_string().into(),
                    t.grant_id.to_string().into(),
                    t.expires_at.map(|at| at.timestamp_millis()).into(),
                    to_json(t)?.into(),
                ],
            ),
        )
        .await?;
        if n == 0 {
            return Err(Error::not_found(format!(
                "client {} not found",
                t.client_id
            )));
        }
        Ok(())
    }

    async fn token(&self, token_hash: &str) -> Result<Option<OAuthToken>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT body FROM oauth_tokens WHERE token_hash = $1",
                vec![token_hash.to_string().into()],
            ),
        )
        .await?;
        row.as_ref().map(body).transpose()
    }

    async fn revoke_token(&self, token_hash: &str) -> Result<Option<OAuthToken>> {
        let _w = self.write_guard().await;
        let row = one(
            &self.db,
            self.stmt(
                "DELETE FROM oauth_tokens WHERE token_hash = $1 RETURNING body",
                vec![token_hash.to_string().into()],
            ),
        )
        .await?;
        row.as_ref().map(body).transpose()
    }

    async fn revoke_grant(&self, grant_id: Uuid) -> Result<u64> {
        let _w = self.write_guard().await;
        exec(
            &self.db,
            self.stmt(
                "DELETE FROM oauth_tokens WHERE grant_id = $1",
                vec![grant_id.to_string().into()],
            ),
        )
        .await
    }

    async fn save_session(&self, s: &Session) -> Result<()> {
        let _w = self.write_guard().await;
        self.forget_expired("oauth_sessions").await?;
        exec(
            &self.db,
            self.stmt(
                "INSERT INTO oauth_sessions (id_hash, expires_at, body) VALUES ($1, $2, $3)",
                vec![
                    s.id_hash.clone().into(),
                    s.expires_at.timestamp_millis().into(),
                    to_json(s)?.into(),
                ],
            ),
        )
        .await?;
        Ok(())
    }

    async fn session(&self, id_hash: &str) -> Result<Option<Session>> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT body FROM oauth_sessions WHERE id_hash = $1",
                vec![id_hash.to_string().into()],
            ),
        )
        .await?;
        row.as_ref().map(body).transpose()
    }

    async fn delete_session(&self, id_hash: &str) -> Result<()> {
        let _w = self.write_guard().await;
        exec(
            &self.db,
            self.stmt(
                "DELETE FROM oauth_sessions WHERE id_hash = $1",
                vec![id_hash.to_string().into()],
            ),
        )
        .await?;
        Ok(())
    }

    async fn rate_hit(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        let _w = self.write_guard().await;
        let row = one(
            &self.db,
            self.stmt(
                "INSERT INTO rate_limits (rate_key, window_start, hits) VALUES ($1, $2, 1) \
                 ON CONFLICT (rate_key) DO UPDATE SET \
                 hits = CASE WHEN rate_limits.window_start = excluded.window_start \
                        THEN rate_limits.hits + 1 ELSE 1 END, \
                 window_start = excluded.window_start \
                 RETURNING hits",
                vec![key.to_string().into(), window_start_ms.into()],
            ),
        )
        .await?;
        let hits = row.as_ref().map_or(Ok(1), |r| get::<i64>(r, "hits"))?;
        // Counters whose window ended long ago go (indexed by m0011).
        exec(
            &self.db,
            self.stmt(
                "DELETE FROM rate_limits WHERE window_start < $1",
                vec![(window_start_ms - inlet_core::token::RATE_RETENTION_MS).into()],
            ),
        )
        .await?;
        Ok(u32::try_from(hits).unwrap_or(u32::MAX))
    }

    async fn rate_count(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT hits FROM rate_limits WHERE rate_key = $1 AND window_start = $2",
                vec![key.to_string().into(), window_start_ms.into()],
            ),
        )
        .await?;
        let hits = row.as_ref().map_or(Ok(0), |r| get::<i64>(r, "hits"))?;
        Ok(u32::try_from(hits).unwrap_or(u32::MAX))
    }
}

impl SeaOrmStore {
    /// Deletes rows of an expiring table whose time is up (called by the table's writer; the
    /// caller holds the write guard).
    async fn forget_expired(&self, table: &'static str) -> Result<()> {
        let now = time::now().timestamp_millis();
        exec(
            &self.db,
            self.stmt(
                &format!("DELETE FROM {table} WHERE expires_at < $1"),
                vec![now.into()],
            ),
        )
        .await?;
        Ok(())
    }
}
