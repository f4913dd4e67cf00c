//! The bootstrap administrator (DESIGN 2 and 12): made once on an empty store, kept on restart,
//! with a given API token made valid.

use inlet_server::{auth, open_stores};

fn env(email: Option<&str>, token: Option<&str>) -> auth::AdminEnv {
    auth::AdminEnv {
        email: email.map(Into::into),
        password: None,
        api_token: token.map(Into::into),
    }
}

#[tokio::test]
async fn first_start_makes_default_workspace_and_admin_once() {
    let stores = open_stores("memory:").await.unwrap();
    let creds = auth::bootstrap(&stores.tokens, env(None, None))
        .await
        .unwrap()
        .expect("first start");
    assert_eq!(creds.workspace, "default");
    assert_eq!(creds.email, auth::DEFAULT_ADMIN_EMAIL);
    let user = stores
        .tokens
        .user_by_token_hash(&auth::hash_secret(&creds.api_token))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.role, inlet_core::token::Role::Admin);
    assert!(user.password_hash.starts_with("$argon2id$"));
    let ws = stores
        .tokens
        .workspace_by_name("default")
        .await
        .unwrap()
        .unwrap();
    assert!(ws.oauth_enabled);
    // A restart prints nothing and makes nothing.
    assert!(
        auth::bootstrap(&stores.tokens, env(None, None))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(stores.tokens.count_users().await.unwrap(), 1);
}

#[tokio::test]
async fn restart_with_admin_env_keeps_the_admin_and_validates_the_token() {
    let stores = open_stores("memory:").await.unwrap();
    let first = auth::bootstrap(
        &stores.tokens,
        env(Some("ops@example.test"), Some("token-1")),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(first.api_token, "token-1");
    // Same admin, new token: the new one becomes valid too, nothing else is made.
    assert!(
        auth::bootstrap(
            &stores.tokens,
            env(Some("ops@example.test"), Some("token-2"))
        )
        .await
        .unwrap()
        .is_none()
    );
    for t in ["token-1", "token-2"] {
        let u = stores
            .tokens
            .user_by_token_hash(&auth::hash_secret(t))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(u.email, "ops@example.test");
    }
    assert_eq!(stores.tokens.count_users().await.unwrap(), 1);
    // A token owned by someone else is refused rather than shared.
    let other = auth::bootstrap(
        &stores.tokens,
        env(Some("second@example.test"), Some("token-3")),
    )
    .await
    .unwrap();
    assert!(other.is_none());
    assert!(
        auth::bootstrap(
            &stores.tokens,
            env(Some("ops@example.test"), Some("token-3"))
        )
        .await
        .is_err()
    );
}

/// Replicas started together over one database all bootstrap at once: whichever makes the
/// administrator, the others must take it as made (and the given token as added) rather than
/// fail on the unique keys. Eight replicas, several rounds, on PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_bootstrapping_at_once_all_start() {
    for round in 0..5 {
        let Some(schema) = inlet_tests::postgres::Schema::for_test().await else {
            return;
        };
        let mut replicas = Vec::new();
        for _ in 0..8 {
            replicas.push(open_stores(&schema.url).await.unwrap());
        }
        let started = futures_util::future::join_all(replicas.iter().map(|stores| {
            let tokens = stores.tokens.clone();
            tokio::spawn(async move {
                auth::bootstrap(&tokens, env(Some("ops@example.test"), Some("shared-token"))).await
            })
        }))
        .await;
        let mut made = 0;
        for s in started {
            match s.unwrap() {
                Ok(Some(_)) => made += 1,
                Ok(None) => {}
                Err(e) => panic!("round {round}: a replica failed to start: {e}"),
            }
        }
        assert!(made <= 1, "round {round}: {made} replicas made the admin");
        let tokens = &replicas[0].tokens;
        assert_eq!(tokens.count_users().await.unwrap(), 1);
        let owner = tokens
            .user_by_token_hash(&auth::hash_secret("shared-token"))
            .await
            .unwrap()
            .expect("the given token works");
        assert_eq!(owner.email, "ops@example.test");
        drop(replicas);
        schema.drop().await;
    }
}
