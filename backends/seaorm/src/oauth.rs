//! OAuth2 clients, logos, codes, tokens and sessions.

use crate::{SeaOrmStore, all, db_error, exec, get, json_error, one};
use async_trait::async_trait;
use base64::{Engine, engine::general_purpose::STANDARD as BASE64};
use inlet_core::store::OAuthStore;
use inlet_core::{
    Error, Result, WorkspaceId,
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session},
    time,
};
use sea_orm::QueryResult;
use serde::{Serialize, de::DeserializeOwned};
use uuid::Uuid;

#[async_trait]
impl OAuthStore for SeaOrmStore {
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
        let txn = self.begin_write().await?;
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
        let txn = self.begin_write().await?;
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
        let txn = self.begin_write().await?;
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
}

fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(json_error)
}

/// Decodes the JSON `body` column of a row.
fn body<T: DeserializeOwned>(row: &QueryResult) -> Result<T> {
    serde_json::from_str(&get::<String>(row, "body")?).map_err(json_error)
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
