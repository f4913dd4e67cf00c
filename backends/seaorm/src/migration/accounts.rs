//! m0022: workspaces, users, API tokens, deployment keys and every OAuth table move into
//! `documents` as core keeps them ([`inlet_core::store::Accounts`],
//! [`inlet_core::store::OAuthStore`]): each row is read as the type it stored, core's own
//! functions say which documents hold it, and the tables are dropped.

use base64::Engine;
use inlet_core::{
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Session},
    store::{accounts, documents::DocWrite, oauth},
    token::{ApiToken, Role, User, Workspace},
};
use sea_orm_migration::{
    MigrationTrait, SchemaManager, async_trait,
    prelude::{ConnectionTrait, DbErr},
    sea_orm::{QueryResult, Statement},
};

use super::documents::{bad, col, insert_puts};

/// The migration.
pub struct M0022Accounts;

impl sea_orm_migration::MigrationName for M0022Accounts {
    fn name(&self) -> &str {
        "m0022_accounts_as_documents"
    }
}

fn time(row: &QueryResult, c: &str) -> Result<inlet_core::time::Timestamp, DbErr> {
    let ms: i64 = col(row, c)?;
    chrono::DateTime::from_timestamp_millis(ms).ok_or_else(|| bad(format!("time {ms}")))
}

fn id(row: &QueryResult, c: &str) -> Result<uuid::Uuid, DbErr> {
    uuid::Uuid::parse_str(&col::<String>(row, c)?).map_err(bad)
}

fn json<T: serde::de::DeserializeOwned>(row: &QueryResult, c: &str) -> Result<T, DbErr> {
    serde_json::from_str(&col::<String>(row, c)?).map_err(bad)
}

async fn rows(db: &impl ConnectionTrait, sql: &str) -> Result<Vec<QueryResult>, DbErr> {
    db.query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
}

/// The writes of every row of every table this migration moves.
async fn writes(db: &impl ConnectionTrait) -> Result<Vec<DocWrite>, DbErr> {
    let ok = |r: inlet_core::Result<Vec<DocWrite>>| r.map_err(bad);
    let mut out = Vec::new();
    for r in rows(
        db,
        "SELECT id, name, oauth_enabled, created_date FROM workspaces",
    )
    .await?
    {
        out.extend(ok(accounts::workspace_writes(&Workspace {
            id: id(&r, "id")?,
            name: col(&r, "name")?,
            oauth_enabled: col(&r, "oauth_enabled")?,
            created_date: time(&r, "created_date")?,
        }))?);
    }
    let users = "SELECT id, workspace_id, email, role, password_hash, created_date FROM users";
    for r in rows(db, users).await? {
        let role: Role =
            serde_json::from_value(serde_json::Value::String(col(&r, "role")?)).map_err(bad)?;
        out.extend(ok(accounts::user_writes(&User {
            id: id(&r, "id")?,
            workspace_id: id(&r, "workspace_id")?,
            email: col(&r, "email")?,
            role,
            password_hash: col(&r, "password_hash")?,
            created_date: time(&r, "created_date")?,
        }))?);
    }
    for r in rows(
        db,
        "SELECT id, user_id, token_hash, created_date FROM api_tokens",
    )
    .await?
    {
        out.extend(ok(accounts::api_token_writes(&ApiToken {
            id: id(&r, "id")?,
            user_id: id(&r, "user_id")?,
            token_hash: col(&r, "token_hash")?,
            created_date: time(&r, "created_date")?,
        }))?);
    }
    for r in rows(db, "SELECT name, secret FROM deployment_keys").await? {
        let secret: String = col(&r, "secret")?;
        out.push(
            DocWrite::put(
                accounts::DEPLOYMENT_KEYS,
                col::<String>(&r, "name")?,
                &secret,
                inlet_core::store::documents::Expect::Any,
            )
            .map_err(bad)?,
        );
    }
    for r in rows(db, "SELECT body FROM oauth_clients").await? {
        out.extend(ok(oauth::client_writes(&json::<OAuthClient>(&r, "body")?))?);
    }
    for r in rows(db, "SELECT client_id, content_type, data FROM oauth_logos").await? {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(col::<String>(&r, "data")?)
            .map_err(bad)?;
        let logo = Logo {
            content_type: col(&r, "content_type")?,
            bytes,
        };
        out.push(oauth::logo_write(id(&r, "client_id")?, &logo).map_err(bad)?);
    }
    for r in rows(db, "SELECT used, body FROM oauth_codes").await? {
        let code: AuthCode = json(&r, "body")?;
        out.extend(ok(oauth::code_writes(&code, col(&r, "used")?))?);
    }
    for r in rows(db, "SELECT body FROM oauth_tokens").await? {
        out.extend(ok(oauth::token_writes(&json::<OAuthToken>(&r, "body")?))?);
    }
    for r in rows(db, "SELECT body FROM oauth_sessions").await? {
        out.extend(ok(oauth::session_writes(&json::<Session>(&r, "body")?))?);
    }
    Ok(out)
}

#[async_trait::async_trait]
impl MigrationTrait for M0022Accounts {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        insert_puts(db, writes(db).await?).await?;
        // Children before the tables their keys refer to.
        for table in [
            "api_tokens",
            "users",
            "workspaces",
            "deployment_keys",
            "oauth_logos",
            "oauth_codes",
            "oauth_tokens",
            "oauth_sessions",
            "oauth_clients",
        ] {
            db.execute_unprepared(&format!("DROP TABLE {table}"))
                .await?;
        }
        Ok(())
    }
}
