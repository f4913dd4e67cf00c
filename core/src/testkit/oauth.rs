//! OAuth2 clients, codes, tokens, sessions and rate windows.

use std::sync::Arc;

use uuid::Uuid;

use crate::{
    Error, TokenStore, WorkspaceId,
    oauth::{AuthCode, Logo, OAuthClient, OAuthToken, Redemption, Session, TokenKind},
    time,
    token::User,
};

use super::*;

pub(super) fn new_client(workspace_id: WorkspaceId) -> OAuthClient {
    OAuthClient {
        id: Uuid::new_v4(),
        workspace_id,
        secret: format!("{:064x}", Uuid::new_v4().as_u128()),
        name: "Acme Sync".into(),
        description: "Syncs Acme files".into(),
        bottom_description: "Terms apply".into(),
        redirect_uris: vec!["https://acme.test/cb".into()],
        scopes: vec!["default".into()],
        has_logo: false,
        created_date: time::now(),
    }
}

/// Clients round-trip, stay in their workspace, keep their logo through updates.
pub async fn oauth_clients_roundtrip(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let a = new_client(user.workspace_id);
    let mut b = new_client(user.workspace_id);
    b.name = "Second".into();
    store.create_client(&a).await.unwrap();
    store.create_client(&b).await.unwrap();
    assert_eq!(store.client(a.id).await.unwrap(), Some(a.clone()));
    let listed = store.list_clients(user.workspace_id).await.unwrap();
    assert_eq!(listed.iter().map(|c| c.id).collect::<Vec<_>>().len(), 2);
    assert!(listed.contains(&a) && listed.contains(&b));
    assert!(store.list_clients(Uuid::new_v4()).await.unwrap().is_empty());

    let logo = Logo {
        content_type: "image/png".into(),
        bytes: vec![0x89, b'P', b'N', b'G', 0, 255],
    };
    assert!(
        !store
            .set_client_logo(Uuid::new_v4(), a.id, &logo)
            .await
            .unwrap()
    );
    assert!(
        store
            .set_client_logo(user.workspace_id, a.id, &logo)
            .await
            .unwrap()
    );
    assert_eq!(store.client_logo(a.id).await.unwrap(), Some(logo.clone()));
    assert!(store.client(a.id).await.unwrap().unwrap().has_logo);

    let mut changed = a.clone();
    changed.name = "Renamed".into();
    changed.redirect_uris.push("https://acme.test/other".into());
    changed.has_logo = false;
    let mut foreign = changed.clone();
    foreign.workspace_id = Uuid::new_v4();
    assert!(!store.update_client(&foreign).await.unwrap());
    assert!(store.update_client(&changed).await.unwrap());
    let stored = store.client(a.id).await.unwrap().unwrap();
    assert_eq!(stored.name, "Renamed");
    assert_eq!(stored.redirect_uris.len(), 2);
    assert!(stored.has_logo, "an update keeps the logo");

    assert!(!store.delete_client(Uuid::new_v4(), a.id).await.unwrap());
    assert!(store.delete_client(user.workspace_id, a.id).await.unwrap());
    assert!(!store.delete_client(user.workspace_id, a.id).await.unwrap());
    assert_eq!(store.client(a.id).await.unwrap(), None);
    assert_eq!(store.client_logo(a.id).await.unwrap(), None);
    assert_eq!(store.client(b.id).await.unwrap(), Some(b));
}

pub(super) fn code_for(client: &OAuthClient, user: &User) -> AuthCode {
    AuthCode {
        code_hash: hash_of(Uuid::new_v4().as_u128()),
        grant_id: Uuid::new_v4(),
        client_id: client.id,
        workspace_id: user.workspace_id,
        user_id: user.id,
        redirect_uri: client.redirect_uris[0].clone(),
        scope: "default".into(),
        code_challenge: Some("abc".into()),
        expires_at: time::now() + chrono::Duration::minutes(10),
    }
}

pub(super) fn token_for(code: &AuthCode, kind: TokenKind) -> OAuthToken {
    OAuthToken {
        token_hash: hash_of(Uuid::new_v4().as_u128()),
        kind,
        grant_id: code.grant_id,
        client_id: code.client_id,
        workspace_id: code.workspace_id,
        user_id: code.user_id,
        scope: code.scope.clone(),
        expires_at: (kind == TokenKind::Access).then(|| time::now() + chrono::Duration::hours(1)),
        created_date: time::now(),
    }
}

/// A code redeems once, even under concurrent redemption; a replay is recognised.
pub async fn codes_redeem_exactly_once(store: Arc<dyn Store>) {
    let user = new_user(&*store).await;
    let client = new_client(user.workspace_id);
    store.create_client(&client).await.unwrap();
    let code = code_for(&client, &user);
    store.save_code(&code).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            let hash = code.code_hash.clone();
            tokio::spawn(async move { store.redeem_code(&hash).await.unwrap() })
        })
        .collect();
    let mut redeemed = 0;
    for t in tasks {
        match t.await.unwrap() {
            Redemption::Redeemed(c) => {
                assert_eq!(c, code);
                redeemed += 1;
            }
            Redemption::Replayed(c) => assert_eq!(c.grant_id, code.grant_id),
            Redemption::Unknown => panic!("a saved code is known"),
        }
    }
    assert_eq!(redeemed, 1);
    assert_eq!(
        store.redeem_code(&hash_of(7)).await.unwrap(),
        Redemption::Unknown
    );
}

/// Tokens are found until revoked one by one, by grant, or with their client.
pub async fn tokens_revoke_by_token_grant_and_client(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let client = new_client(user.workspace_id);
    store.create_client(&client).await.unwrap();
    let code = code_for(&client, &user);
    store.save_code(&code).await.unwrap();
    let access = token_for(&code, TokenKind::Access);
    let refresh = token_for(&code, TokenKind::Refresh);
    // What has expired is forgotten by the next save: a code, an access token.
    let past = time::now() - chrono::Duration::minutes(1);
    let stale_code = AuthCode {
        expires_at: past,
        ..code_for(&client, &user)
    };
    store.save_code(&stale_code).await.unwrap();
    let stale = OAuthToken {
        expires_at: Some(past),
        ..token_for(&code, TokenKind::Access)
    };
    store.save_token(&stale).await.unwrap();
    store.save_token(&access).await.unwrap();
    store.save_token(&refresh).await.unwrap();
    assert_eq!(store.token(&stale.token_hash).await.unwrap(), None);
    assert_eq!(
        store.redeem_code(&stale_code.code_hash).await.unwrap(),
        Redemption::Unknown
    );
    assert_eq!(
        store.token(&access.token_hash).await.unwrap(),
        Some(access.clone())
    );
    assert_eq!(
        store.token(&refresh.token_hash).await.unwrap(),
        Some(refresh.clone())
    );

    assert_eq!(
        store.revoke_token(&access.token_hash).await.unwrap(),
        Some(access.clone())
    );
    assert_eq!(store.token(&access.token_hash).await.unwrap(), None);
    assert_eq!(store.revoke_token(&access.token_hash).await.unwrap(), None);

    let second = token_for(&code, TokenKind::Access);
    store.save_token(&second).await.unwrap();
    assert_eq!(store.revoke_grant(code.grant_id).await.unwrap(), 2);
    assert_eq!(store.token(&refresh.token_hash).await.unwrap(), None);

    // Deleting the client takes its codes and tokens with it; later tokens are refused.
    let code2 = code_for(&client, &user);
    store.save_code(&code2).await.unwrap();
    let t2 = token_for(&code2, TokenKind::Refresh);
    store.save_token(&t2).await.unwrap();
    assert!(
        store
            .delete_client(user.workspace_id, client.id)
            .await
            .unwrap()
    );
    assert_eq!(store.token(&t2.token_hash).await.unwrap(), None);
    assert_eq!(
        store.redeem_code(&code2.code_hash).await.unwrap(),
        Redemption::Unknown
    );
    assert_err(
        store
            .save_token(&token_for(&code2, TokenKind::Access))
            .await,
        |e| matches!(e, Error::NotFound(_)),
        "NotFound",
    );
}

/// Switching OAuth off revokes every token and unused code of the workspace (and only of it);
/// switching it on again revives none.
pub async fn disabling_oauth_revokes_the_workspace_grants(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let other = new_user(store).await;
    let ws = store
        .workspace_by_id(user.workspace_id)
        .await
        .unwrap()
        .unwrap();
    let mut grants = Vec::new();
    for u in [&user, &other] {
        let client = new_client(u.workspace_id);
        store.create_client(&client).await.unwrap();
        let used = code_for(&client, u);
        store.save_code(&used).await.unwrap();
        let unused = code_for(&client, u);
        store.save_code(&unused).await.unwrap();
        let tokens = [
            token_for(&used, TokenKind::Access),
            token_for(&used, TokenKind::Refresh),
        ];
        for t in &tokens {
            store.save_token(t).await.unwrap();
        }
        grants.push((unused, tokens));
    }
    assert!(store.set_oauth_enabled(&ws.name, false).await.unwrap());
    // While it is off, no code or token is written for the workspace.
    let (code, _) = &grants[0];
    let late = token_for(code, TokenKind::Refresh);
    assert!(matches!(
        store.save_token(&late).await,
        Err(crate::Error::Forbidden(_))
    ));
    let client = store.client(code.client_id).await.unwrap().unwrap();
    assert!(matches!(
        store.save_code(&code_for(&client, &user)).await,
        Err(crate::Error::Forbidden(_))
    ));
    // What a sweep cut short left behind goes when it is switched on again.
    let leftover = token_for(code, TokenKind::Refresh);
    assert!(
        store
            .write_documents(&crate::store::oauth::token_writes(&leftover).unwrap())
            .await
            .unwrap()
    );
    assert!(store.set_oauth_enabled(&ws.name, true).await.unwrap());
    assert_eq!(store.token(&leftover.token_hash).await.unwrap(), None);
    assert_eq!(store.token(&late.token_hash).await.unwrap(), None);
    let (unused, tokens) = &grants[0];
    for t in tokens {
        assert_eq!(store.token(&t.token_hash).await.unwrap(), None);
    }
    assert_eq!(
        store.redeem_code(&unused.code_hash).await.unwrap(),
        Redemption::Unknown
    );
    let (unused, tokens) = &grants[1];
    for t in tokens {
        assert_eq!(
            store.token(&t.token_hash).await.unwrap().as_ref(),
            Some(t),
            "another workspace keeps its tokens"
        );
    }
    assert!(matches!(
        store.redeem_code(&unused.code_hash).await.unwrap(),
        Redemption::Redeemed(_)
    ));
}

/// Sessions round-trip and end; rate windows count per key and start over in a new window.
pub async fn sessions_and_rate_windows(store: &dyn TokenStore) {
    let user = new_user(store).await;
    let session = Session {
        id_hash: hash_of(Uuid::new_v4().as_u128()),
        user_id: user.id,
        csrf_token: "csrf".into(),
        expires_at: time::now() + chrono::Duration::hours(1),
    };
    store.save_session(&session).await.unwrap();
    assert_eq!(
        store.session(&session.id_hash).await.unwrap(),
        Some(session.clone())
    );
    store.delete_session(&session.id_hash).await.unwrap();
    assert_eq!(store.session(&session.id_hash).await.unwrap(), None);
    // An expired session is forgotten by the next save.
    let expired = Session {
        id_hash: hash_of(Uuid::new_v4().as_u128()),
        expires_at: time::now() - chrono::Duration::minutes(1),
        ..session.clone()
    };
    store.save_session(&expired).await.unwrap();
    store.save_session(&session).await.unwrap();
    assert_eq!(store.session(&expired.id_hash).await.unwrap(), None);
    assert!(store.session(&session.id_hash).await.unwrap().is_some());

    let key = format!("login:{}", Uuid::new_v4());
    assert_eq!(store.rate_count(&key, 1000).await.unwrap(), 0);
    assert_eq!(store.rate_hit(&key, 1000).await.unwrap(), 1);
    assert_eq!(store.rate_hit(&key, 1000).await.unwrap(), 2);
    assert_eq!(store.rate_count(&key, 1000).await.unwrap(), 2);
    assert_eq!(store.rate_hit(&key, 2000).await.unwrap(), 1);
    assert_eq!(store.rate_count(&key, 2000).await.unwrap(), 1);
    assert_eq!(store.rate_count(&key, 3000).await.unwrap(), 0);
    // A past window keeps its count until the retention removes it.
    assert_eq!(store.rate_count(&key, 1000).await.unwrap(), 2);
    let later = 2000 + crate::token::RATE_RETENTION_MS + 1;
    assert_eq!(store.rate_hit(&key, later).await.unwrap(), 1);
    assert_eq!(store.rate_count(&key, 1000).await.unwrap(), 0);
    assert_eq!(store.rate_count(&key, 2000).await.unwrap(), 0);
}

/// Revocations racing over the same tokens (a client's deletion, its grant's revocation, each
/// token's own) all succeed and leave nothing: none waits on another in a cycle.
pub async fn revocations_race_without_failing(store: Arc<dyn Store>) {
    for _ in 0..5 {
        let user = new_user(&*store).await;
        let client = new_client(user.workspace_id);
        store.create_client(&client).await.unwrap();
        let code = code_for(&client, &user);
        store.save_code(&code).await.unwrap();
        let tokens: Vec<OAuthToken> = (0..12)
            .map(|i| {
                token_for(
                    &code,
                    if i % 2 == 0 {
                        TokenKind::Access
                    } else {
                        TokenKind::Refresh
                    },
                )
            })
            .collect();
        for t in &tokens {
            store.save_token(t).await.unwrap();
        }
        let mut tasks = Vec::new();
        {
            let store = store.clone();
            let (ws, id) = (client.workspace_id, client.id);
            tasks.push(tokio::spawn(async move {
                store.delete_client(ws, id).await.map(|_| ())
            }));
        }
        {
            let store = store.clone();
            let grant = code.grant_id;
            tasks.push(tokio::spawn(async move {
                store.revoke_grant(grant).await.map(|_| ())
            }));
        }
        for t in &tokens {
            let store = store.clone();
            let hash = t.token_hash.clone();
            tasks.push(tokio::spawn(async move {
                store.revoke_token(&hash).await.map(|_| ())
            }));
        }
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        for t in &tokens {
            assert_eq!(store.token(&t.token_hash).await.unwrap(), None);
        }
    }
}
