//! Upgrading across m0022: workspaces, users, API tokens, deployment keys, OAuth clients with
//! their logos, codes, tokens and sessions stored in the tables of earlier versions are all
//! there after it, as documents, on SQLite and PostgreSQL: read back whole, found by every key
//! they were found by, and swept by the same rules (a client's deletion, a workspace's OAuth
//! switched off, a grant revoked).

use chrono::{DateTime, TimeDelta, Utc};
use inlet_core::{
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session, TokenKind},
    store::prelude::*,
    token::{ApiToken, Role, User, Workspace},
};
use inlet_store_seaorm::{Migrator, SeaOrmStore};
use sea_orm::{ConnectionTrait, Database, Value};
use sea_orm_migration::MigratorTrait;
use uuid::Uuid;

mod common;

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap()
}

struct Old {
    workspace: Workspace,
    user: User,
    api_token: ApiToken,
    client: OAuthClient,
    logo: Logo,
    unused: AuthCode,
    used: AuthCode,
    access: OAuthToken,
    refresh: OAuthToken,
    session: Session,
}

fn old() -> Old {
    let workspace = Workspace {
        id: Uuid::new_v4(),
        name: "acme".into(),
        oauth_enabled: true,
        created_date: at(1_700_000_000_000),
    };
    let user = User {
        id: Uuid::new_v4(),
        workspace_id: workspace.id,
        email: "Ada@Example.test".into(),
        role: Role::Admin,
        password_hash: "$argon2id$v=19$old".into(),
        created_date: at(1_700_000_000_001),
    };
    let api_token = ApiToken {
        id: Uuid::new_v4(),
        user_id: user.id,
        token_hash: "ab".repeat(32),
        created_date: at(1_700_000_000_002),
    };
    let client = OAuthClient {
        id: Uuid::new_v4(),
        workspace_id: workspace.id,
        secret: "hashed-secret".into(),
        name: "Old app".into(),
        description: "made before m0022".into(),
        bottom_description: String::new(),
        redirect_uris: vec!["https://app.example.test/cb".into()],
        scopes: vec!["read:*".into()],
        has_logo: true,
        created_date: at(1_700_000_000_003),
    };
    let code = |hash: &str| AuthCode {
        code_hash: hash.into(),
        grant_id: Uuid::new_v4(),
        client_id: client.id,
        workspace_id: workspace.id,
        user_id: user.id,
        redirect_uri: "https://app.example.test/cb".into(),
        scope: "read:*".into(),
        code_challenge: None,
        expires_at: Utc::now() + TimeDelta::minutes(5),
    };
    let (unused, used) = (code("code-unused"), code("code-used"));
    let token = |hash: &str, kind, expires_at| OAuthToken {
        token_hash: hash.into(),
        kind,
        grant_id: used.grant_id,
        client_id: client.id,
        workspace_id: workspace.id,
        user_id: user.id,
        scope: "read:*".into(),
        expires_at,
        created_date: at(1_700_000_000_004),
    };
    Old {
        access: token(
            "access-hash",
            TokenKind::Access,
            Some(Utc::now() + TimeDelta::hours(1)),
        ),
        refresh: token("refresh-hash", TokenKind::Refresh, None),
        session: Session {
            id_hash: "session-hash".into(),
            user_id: user.id,
            csrf_token: "csrf".into(),
            expires_at: Utc::now() + TimeDelta::hours(1),
        },
        logo: Logo {
            content_type: "image/png".into(),
            bytes: vec![0x89, b'P', b'N', b'G', 0, 1, 2, 255],
        },
        workspace,
        user,
        api_token,
        client,
        unused,
        used,
    }
}

/// Writes `old` as m0021's tables held it.
async fn write_old(url: &str, o: &Old) {
    let db = Database::connect(url).await.unwrap();
    Migrator::up(&db, Some(21)).await.unwrap();
    let backend = db.get_database_backend();
    let run =
        |sql: &str, values: Vec<Value>| db.execute_raw(common::statement(backend, sql, values));
    let ms = |t: &DateTime<Utc>| t.timestamp_millis();
    run(
        "INSERT INTO workspaces (id, name, oauth_enabled, created_date) VALUES ($1, $2, $3, $4)",
        vec![
            o.workspace.id.to_string().into(),
            o.workspace.name.clone().into(),
            true.into(),
            ms(&o.workspace.created_date).into(),
        ],
    )
    .await
    .unwrap();
    run(
        "INSERT INTO users (id, workspace_id, email, email_key, role, password_hash, \
         created_date) VALUES ($1, $2, $3, $4, 'ADMIN', $5, $6)",
        vec![
            o.user.id.to_string().into(),
            o.workspace.id.to_string().into(),
            o.user.email.clone().into(),
            o.user.email.to_lowercase().into(),
            o.user.password_hash.clone().into(),
            ms(&o.user.created_date).into(),
        ],
    )
    .await
    .unwrap();
    run(
        "INSERT INTO api_tokens (id, user_id, token_hash, created_date) VALUES ($1, $2, $3, $4)",
        vec![
            o.api_token.id.to_string().into(),
            o.user.id.to_string().into(),
            o.api_token.token_hash.clone().into(),
            ms(&o.api_token.created_date).into(),
        ],
    )
    .await
    .unwrap();
    run(
        "INSERT INTO deployment_keys (name, secret) VALUES ('cursor', 'old-secret')",
        vec![],
    )
    .await
    .unwrap();
    run(
        "INSERT INTO oauth_clients (id, workspace_id, created_date, body) VALUES ($1, $2, $3, $4)",
        vec![
            o.client.id.to_string().into(),
            o.workspace.id.to_string().into(),
            ms(&o.client.created_date).into(),
            json(&o.client).into(),
        ],
    )
    .await
    .unwrap();
    use base64::Engine;
    run(
        "INSERT INTO oauth_logos (client_id, content_type, data) VALUES ($1, $2, $3)",
        vec![
            o.client.id.to_string().into(),
            o.logo.content_type.clone().into(),
            base64::engine::general_purpose::STANDARD
                .encode(&o.logo.bytes)
                .into(),
        ],
    )
    .await
    .unwrap();
    for (code, used) in [(&o.unused, false), (&o.used, true)] {
        run(
            "INSERT INTO oauth_codes (code_hash, client_id, used, expires_at, body) \
             VALUES ($1, $2, $3, $4, $5)",
            vec![
                code.code_hash.clone().into(),
                o.client.id.to_string().into(),
                used.into(),
                ms(&code.expires_at).into(),
                json(code).into(),
            ],
        )
        .await
        .unwrap();
    }
    for t in [&o.access, &o.refresh] {
        run(
            "INSERT INTO oauth_tokens (token_hash, client_id, grant_id, expires_at, body) \
             VALUES ($1, $2, $3, $4, $5)",
            vec![
                t.token_hash.clone().into(),
                o.client.id.to_string().into(),
                t.grant_id.to_string().into(),
                t.expires_at.as_ref().map(ms).into(),
                json(t).into(),
            ],
        )
        .await
        .unwrap();
    }
    run(
        "INSERT INTO oauth_sessions (id_hash, expires_at, body) VALUES ($1, $2, $3)",
        vec![
            o.session.id_hash.clone().into(),
            ms(&o.session.expires_at).into(),
            json(&o.session).into(),
        ],
    )
    .await
    .unwrap();
    db.close().await.unwrap();
}

/// JSON text of a stored body.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}

async fn everything_survives(url: &str) {
    let o = old();
    write_old(url, &o).await;
    let store = SeaOrmStore::connect(url).await.unwrap();

    assert_eq!(
        store.workspace_by_name("acme").await.unwrap(),
        Some(o.workspace.clone())
    );
    assert_eq!(
        store.workspace_by_id(o.workspace.id).await.unwrap(),
        Some(o.workspace.clone())
    );
    assert_eq!(
        store.user_by_email("ada@example.TEST").await.unwrap(),
        Some(o.user.clone())
    );
    assert_eq!(
        store.user_by_id(o.user.id).await.unwrap(),
        Some(o.user.clone())
    );
    assert_eq!(store.count_users().await.unwrap(), 1);
    assert_eq!(
        store
            .user_by_token_hash(&o.api_token.token_hash)
            .await
            .unwrap(),
        Some(o.user.clone())
    );
    assert_eq!(
        store.list_api_tokens(o.user.id).await.unwrap(),
        std::slice::from_ref(&o.api_token)
    );
    assert_eq!(
        store.deployment_key("cursor", "new").await.unwrap(),
        "old-secret"
    );
    // A taken name and e-mail stay taken.
    let again = Workspace {
        id: Uuid::new_v4(),
        ..o.workspace.clone()
    };
    assert!(matches!(
        store.create_workspace(&again).await,
        Err(inlet_core::Error::Conflict(_))
    ));
    let twin = User {
        id: Uuid::new_v4(),
        email: "ADA@example.test".into(),
        ..o.user.clone()
    };
    assert!(matches!(
        store.create_user(&twin).await,
        Err(inlet_core::Error::Conflict(_))
    ));

    assert_eq!(
        store.client(o.client.id).await.unwrap(),
        Some(o.client.clone())
    );
    assert_eq!(
        store.list_clients(o.workspace.id).await.unwrap(),
        std::slice::from_ref(&o.client)
    );
    assert_eq!(
        store.client_logo(o.client.id).await.unwrap(),
        Some(o.logo.clone())
    );
    assert_eq!(
        store.session(&o.session.id_hash).await.unwrap(),
        Some(o.session.clone())
    );
    assert_eq!(
        store.token(&o.access.token_hash).await.unwrap(),
        Some(o.access.clone())
    );
    assert_eq!(
        store.token(&o.refresh.token_hash).await.unwrap(),
        Some(o.refresh.clone())
    );
    assert_eq!(
        store.redeem_code(&o.used.code_hash).await.unwrap(),
        Redemption::Replayed(o.used.clone())
    );
    // Revoking the grant finds both tokens through their grant.
    assert_eq!(store.revoke_grant(o.used.grant_id).await.unwrap(), 2);
    assert_eq!(store.token(&o.refresh.token_hash).await.unwrap(), None);
    // Switching OAuth off finds the unused code through its workspace.
    assert!(store.set_oauth_enabled("acme", false).await.unwrap());
    assert_eq!(
        store.redeem_code(&o.unused.code_hash).await.unwrap(),
        Redemption::Unknown
    );
    // The client's deletion takes its logo.
    assert!(
        store
            .delete_client(o.workspace.id, o.client.id)
            .await
            .unwrap()
    );
    assert_eq!(store.client_logo(o.client.id).await.unwrap(), None);
}

#[tokio::test]
async fn sqlite_accounts_and_oauth_state_survive_m0022() {
    common::on_sqlite(|url| async move { everything_survives(&url).await }).await;
}

#[tokio::test]
async fn postgres_accounts_and_oauth_state_survive_m0022() {
    common::on_postgres(|url| async move { everything_survives(&url).await }).await;
}
