//! Workspaces, users and API tokens.

use uuid::Uuid;

use crate::{
    Error, TokenStore, time,
    token::{ApiToken, Role, User, Workspace},
};

use super::*;

/// Workspaces, users and API tokens round-trip; e-mails are unique and matched case-insensitively.
pub async fn identities_roundtrip(store: &dyn TokenStore) {
    let ws = Workspace {
        id: Uuid::new_v4(),
        name: format!("ws-{}", Uuid::new_v4()),
        oauth_enabled: true,
        created_date: time::now(),
    };
    store.create_workspace(&ws).await.unwrap();
    assert_err(
        store.create_workspace(&ws).await,
        |e| matches!(e, Error::Conflict(_)),
        "Conflict",
    );
    assert_eq!(
        store.workspace_by_name(&ws.name).await.unwrap(),
        Some(ws.clone())
    );
    assert_eq!(store.workspace_by_name("no-such-ws").await.unwrap(), None);
    let before = store.count_users().await.unwrap();
    let email = format!("u{}@Example.test", Uuid::new_v4().simple());
    let user = User {
        id: Uuid::new_v4(),
        workspace_id: ws.id,
        email: email.clone(),
        role: Role::Admin,
        password_hash: "$argon2id$x".into(),
        created_date: time::now(),
    };
    store.create_user(&user).await.unwrap();
    let mut dup = user.clone();
    dup.id = Uuid::new_v4();
    dup.email = email.to_uppercase();
    assert_err(
        store.create_user(&dup).await,
        |e| matches!(e, Error::Conflict(_)),
        "Conflict",
    );
    assert_eq!(store.count_users().await.unwrap(), before + 1);
    assert_eq!(
        store.user_by_email(&email.to_lowercase()).await.unwrap(),
        Some(user.clone())
    );
    let hash = format!("{:064x}", Uuid::new_v4().as_u128());
    store
        .add_api_token(&ApiToken {
            id: Uuid::new_v4(),
            user_id: user.id,
            token_hash: hash.clone(),
            created_date: time::now(),
        })
        .await
        .unwrap();
    assert_eq!(store.user_by_token_hash(&hash).await.unwrap(), Some(user));
    assert_eq!(store.user_by_token_hash("00").await.unwrap(), None);
}

/// A workspace and an ADMIN user in it, for the identity cases.
pub(super) async fn new_user(store: &dyn TokenStore) -> User {
    let ws = Workspace {
        id: Uuid::new_v4(),
        name: format!("ws-{}", Uuid::new_v4()),
        oauth_enabled: true,
        created_date: time::now(),
    };
    store.create_workspace(&ws).await.unwrap();
    let user = User {
        id: Uuid::new_v4(),
        workspace_id: ws.id,
        email: format!("u{}@example.test", Uuid::new_v4().simple()),
        role: Role::Admin,
        password_hash: "$argon2id$x".into(),
        created_date: time::now(),
    };
    store.create_user(&user).await.unwrap();
    user
}

pub(super) fn hash_of(n: u128) -> String {
    format!("{n:064x}")
}

/// Workspaces by id, the OAuth switch, users by id, and API tokens are listed and revocable.
pub async fn identities_by_id_and_token_revocation(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let ws = store
        .workspace_by_id(user.workspace_id)
        .await
        .unwrap()
        .unwrap();
    assert!(ws.oauth_enabled);
    assert!(store.set_oauth_enabled(&ws.name, false).await.unwrap());
    assert!(
        !store
            .workspace_by_id(ws.id)
            .await
            .unwrap()
            .unwrap()
            .oauth_enabled
    );
    assert!(!store.set_oauth_enabled("no-such-ws", true).await.unwrap());
    assert_eq!(store.workspace_by_id(Uuid::new_v4()).await.unwrap(), None);
    assert_eq!(store.user_by_id(user.id).await.unwrap(), Some(user.clone()));
    assert_eq!(store.user_by_id(Uuid::new_v4()).await.unwrap(), None);
    let tokens: Vec<ApiToken> = (0..2u128)
        .map(|i| ApiToken {
            id: Uuid::new_v4(),
            user_id: user.id,
            token_hash: hash_of(Uuid::new_v4().as_u128() ^ i),
            created_date: time::now(),
        })
        .collect();
    for t in &tokens {
        store.add_api_token(t).await.unwrap();
    }
    let listed = store.list_api_tokens(user.id).await.unwrap();
    assert_eq!(listed.len(), 2);
    let other = new_user(store).await;
    assert!(
        !store
            .delete_api_token(other.id, tokens[0].id)
            .await
            .unwrap()
    );
    assert!(store.delete_api_token(user.id, tokens[0].id).await.unwrap());
    assert!(!store.delete_api_token(user.id, tokens[0].id).await.unwrap());
    assert_eq!(
        store
            .user_by_token_hash(&tokens[0].token_hash)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .user_by_token_hash(&tokens[1].token_hash)
            .await
            .unwrap(),
        Some(user.clone())
    );
}

/// A deployment key is stored by its first caller and answered to every later one, whatever
/// candidate they bring; keys of other names are apart.
pub async fn deployment_keys_are_stored_once(store: &dyn TokenStore) {
    let first = store.deployment_key("cursors", "aa11").await.unwrap();
    assert_eq!(first, "aa11");
    assert_eq!(
        store.deployment_key("cursors", "bb22").await.unwrap(),
        "aa11"
    );
    assert_eq!(store.deployment_key("other", "cc33").await.unwrap(), "cc33");
}

/// A user's password hash is replaced by id; an unknown id changes nothing.
pub async fn passwords_are_reset_by_user(store: &dyn TokenStore) {
    let ws = Workspace {
        id: Uuid::new_v4(),
        name: format!("reset-{}", Uuid::new_v4()),
        oauth_enabled: false,
        created_date: time::now(),
    };
    store.create_workspace(&ws).await.unwrap();
    let user = User {
        id: Uuid::new_v4(),
        workspace_id: ws.id,
        email: format!("{}@example.test", Uuid::new_v4()),
        role: Role::Admin,
        password_hash: "old-hash".into(),
        created_date: time::now(),
    };
    store.create_user(&user).await.unwrap();
    assert!(store.set_password_hash(user.id, "new-hash").await.unwrap());
    let read = store.user_by_email(&user.email).await.unwrap().unwrap();
    assert_eq!(read.password_hash, "new-hash");
    assert!(!store.set_password_hash(Uuid::new_v4(), "x").await.unwrap());
}
