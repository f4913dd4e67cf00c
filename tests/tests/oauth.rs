//! OAuth2 end to end against the real server: client maintenance, the browser flow, the token
//! endpoint in both parameter styles, bearer access with scopes, replay, revocation, PKCE,
//! introspection and metadata. Limits, isolation and withdrawn access: `oauth_access.rs`.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use inlet_server::auth::{self, NewUserOptions};
use inlet_tests::{
    ADMIN_EMAIL, TestServer, expect_problem, file_form,
    oauth::{
        Browser, PNG, REDIRECT_URI, auth_params, bearer, callback, create_client, exchange,
        token_form, token_query,
    },
};
use reqwest::Method;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

#[tokio::test]
async fn client_maintenance_shapes_and_rules() {
    let server = TestServer::start().await;
    let client = create_client(&server, &["default"]).await;
    assert!(uuid::Uuid::parse_str(&client.id).is_ok());
    assert!(client.secret.len() >= 64 && client.secret.chars().all(|c| c.is_ascii_hexdigit()));

    let one: Value = server
        .req(Method::GET, &format!("/oauthclients/{}", client.id))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut keys: Vec<_> = one.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "clientId",
            "clientSecret",
            "description",
            "name",
            "redirectUris",
            "scopes"
        ]
    );
    assert_eq!(one["clientSecret"], client.secret.as_str());

    let list: Value = server
        .req(Method::GET, "/oauthclients")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);

    let updated = server
        .req(Method::PUT, &format!("/oauthclients/{}", client.id))
        .json(
            &json!({"name": "Acme 2", "description": "d", "bottomDescription": "",
                      "redirectUris": [REDIRECT_URI], "scopes": ["read:*"]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(updated.status(), 200);
    let updated: Value = updated.json().await.unwrap();
    assert_eq!(updated["name"], "Acme 2");
    assert_eq!(updated["clientSecret"], client.secret.as_str());

    for bad in [
        json!({"name": "", "description": "d", "redirectUris": [REDIRECT_URI], "scopes": ["default"]}),
        json!({"name": "n", "description": "d", "redirectUris": ["not a uri"], "scopes": ["default"]}),
        json!({"name": "n", "description": "d", "redirectUris": ["https://a.test/#x"], "scopes": ["default"]}),
        json!({"name": "n", "description": "d", "redirectUris": ["javascript:alert(1)"], "scopes": ["default"]}),
        json!({"name": "n", "description": "d", "redirectUris": ["com.example.app:/cb"], "scopes": ["default"]}),
        json!({"name": "n", "description": "d", "redirectUris": [REDIRECT_URI], "scopes": ["write:all"]}),
        json!({"name": "n", "description": "d", "redirectUris": [], "scopes": ["default"]}),
    ] {
        let resp = server
            .req(Method::POST, "/oauthclients")
            .json(&bad)
            .send()
            .await
            .unwrap();
        expect_problem(resp, 400).await;
    }

    // Logo: an image by its bytes, anything else 400.
    let logo = |bytes: &'static [u8]| {
        reqwest::multipart::Form::new().part(
            "logo",
            reqwest::multipart::Part::bytes(bytes).file_name("logo.png"),
        )
    };
    let resp = server
        .req(
            Method::POST,
            &format!("/oauthclients/{}/logoUrl", client.id),
        )
        .multipart(logo(b"<svg xmlns='http://www.w3.org/2000/svg'/>"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 400).await;
    let resp = server
        .req(
            Method::POST,
            &format!("/oauthclients/{}/logoUrl", client.id),
        )
        .multipart(logo(PNG))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let url = resp.json::<Value>().await.unwrap()["logoUrl"]
        .as_str()
        .unwrap()
        .to_string();
    let img = server
        .client
        .get(format!("{}{url}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(img.headers()["content-type"], "image/png");
    assert_eq!(img.bytes().await.unwrap().as_ref(), PNG);

    // Only an ADMIN's Basic credentials.
    let member = auth::create_user(
        server.state.tokens.as_ref(),
        NewUserOptions {
            email: "member@example.test".into(),
            workspace: "default".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let resp = server
        .client
        .get(server.url("/oauthclients"))
        .basic_auth(&member.email, Some(&member.api_token))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 403).await;
    let resp = server
        .client
        .get(server.url("/oauthclients"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 401).await;

    // A disabled workspace answers 403.
    server
        .state
        .tokens
        .set_oauth_enabled("default", false)
        .await
        .unwrap();
    let resp = server
        .req(Method::GET, "/oauthclients")
        .send()
        .await
        .unwrap();
    assert!(expect_problem(resp, 403).await.contains("disabled"));
    server
        .state
        .tokens
        .set_oauth_enabled("default", true)
        .await
        .unwrap();

    let resp = server
        .req(Method::DELETE, &format!("/oauthclients/{}", client.id))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    let resp = server
        .req(Method::GET, &format!("/oauthclients/{}", client.id))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 404).await;
}

#[tokio::test]
async fn authorization_code_flow_both_parameter_styles_and_refresh() {
    let server = TestServer::start().await;
    let client = create_client(&server, &["default"]).await;
    for style in ["query", "form"] {
        let params = auth_params(&client, "default", "xyz 1");
        let mut browser = Browser::new(&server);
        let (status, html, _) = browser.authorize(&params).await;
        assert_eq!(status, 200);
        assert!(html.contains("Acme Sync") && html.contains("name=\"password\""));
        browser.login(&params, ADMIN_EMAIL, "admin-password").await;
        let (_, consent, _) = browser.authorize(&params).await;
        assert!(consent.contains("Keeps your Acme files in Inlet."));
        assert!(consent.contains("By continuing you accept Acme&#39;s terms."));
        assert!(consent.contains("<code>default</code>"));
        let cb = browser.decide(&params, "approve").await;
        assert_eq!(cb.state.as_deref(), Some("xyz 1"));
        assert!(cb.location.starts_with(REDIRECT_URI));
        let code = cb.code.unwrap();
        let exchange = [
            ("client_id", client.id.as_str()),
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT_URI),
            ("scope", "default"),
            ("client_secret", client.secret.as_str()),
        ];
        let (status, tokens) = match style {
            "query" => token_query(&server, &exchange).await,
            _ => token_form(&server, &exchange).await,
        };
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["token_type"], "bearer");
        assert_eq!(tokens["scope"], "default");
        assert_eq!(tokens["user_id"], ADMIN_EMAIL);
        assert_eq!(tokens["expires_in"], 3599);
        let access = tokens["access_token"].as_str().unwrap().to_string();
        let refresh = tokens["refresh_token"].as_str().unwrap().to_string();

        let resp = bearer(&server, Method::GET, "/sources", &access).await;
        assert_eq!(resp.status(), 200);
        let resp = server
            .client
            .post(server.url("/sources"))
            .bearer_auth(&access)
            .json(&inlet_tests::record_source(&format!("bearer-{style}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201, "default scope writes");

        // Refresh twice with the same refresh token; no new refresh token is returned.
        for _ in 0..2 {
            let refresh_params = [
                ("client_id", client.id.as_str()),
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh.as_str()),
                ("client_secret", client.secret.as_str()),
            ];
            let (status, renewed) = match style {
                "query" => token_query(&server, &refresh_params).await,
                _ => token_form(&server, &refresh_params).await,
            };
            assert_eq!(status, 200, "{renewed}");
            assert!(renewed.get("refresh_token").is_none());
            assert_eq!(renewed["expires_in"], 3599);
            let fresh = renewed["access_token"].as_str().unwrap();
            assert_ne!(fresh, access);
            assert_eq!(
                bearer(&server, Method::GET, "/sources", fresh)
                    .await
                    .status(),
                200
            );
        }
    }
}

#[tokio::test]
async fn read_scope_reads_only_and_bad_tokens_get_bearer_challenges() {
    let server = TestServer::start().await;
    let paths = server.record_source().await;
    let client = create_client(&server, &["default"]).await;
    let params = auth_params(&client, "read:*", "s");
    let code = Browser::new(&server).admin_code(&params).await;
    let (status, tokens) = token_form(
        &server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT_URI),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
        ],
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        tokens["scope"], "read:*",
        "the code's scope when none is passed"
    );
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        bearer(&server, Method::GET, "/sources", access)
            .await
            .status(),
        200
    );
    let resp = server
        .client
        .put(server.url(&format!("{}/file", paths.object("a"))))
        .bearer_auth(access)
        .multipart(file_form("a.txt", "hello"))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 403).await;
    let resp = server
        .client
        .post(server.url(&paths.syncs()))
        .bearer_auth(access)
        .json(&json!({"operation": "START_INITIAL"}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 403).await;
    // Authorization comes before the body's schema: a body the schema refuses still gets 403
    // for a read-only token, and 401 without credentials.
    let resp = server
        .client
        .post(server.url("/sources"))
        .bearer_auth(access)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 403).await;
    let resp = server
        .client
        .post(server.url("/sources"))
        .json(&json!({"nonsense": 1}))
        .send()
        .await
        .unwrap();
    expect_problem(resp, 401).await;

    for token in ["nonsense", tokens["refresh_token"].as_str().unwrap()] {
        let resp = bearer(&server, Method::GET, "/sources", token).await;
        let challenge = resp.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(challenge.starts_with("Bearer") && challenge.contains("error=\"invalid_token\""));
        expect_problem(resp, 401).await;
    }
    // Bearer tokens are refused on client maintenance.
    let resp = bearer(&server, Method::GET, "/oauthclients", access).await;
    expect_problem(resp, 401).await;

    // Scope wider than the client's: the authorization request is refused by redirect.
    let narrow = create_client(&server, &["read:*"]).await;
    let (status, _, location) = Browser::new(&server)
        .authorize(&auth_params(&narrow, "default", "st"))
        .await;
    assert_eq!(status, 303);
    let cb = callback(&location.unwrap());
    assert_eq!(cb.error.as_deref(), Some("invalid_scope"));
    assert_eq!(cb.state.as_deref(), Some("st"));
}

#[tokio::test]
async fn authorize_errors_deny_and_isolation_of_redirects() {
    let server = TestServer::start().await;
    let client = create_client(&server, &["default"]).await;
    let mut browser = Browser::new(&server);
    // Unknown client and unregistered redirect URI: an error page, never a redirect.
    for params in [
        vec![
            ("client_id", "00000000-0000-0000-0000-000000000000"),
            ("response_type", "code"),
            ("redirect_uri", REDIRECT_URI),
        ],
        vec![
            ("client_id", client.id.as_str()),
            ("response_type", "code"),
            ("redirect_uri", "https://evil.test/cb"),
        ],
        vec![
            ("client_id", client.id.as_str()),
            ("response_type", "code"),
            ("redirect_uri", "https://app.example.test/callback/"),
        ],
        // A registered loopback URI matches with any port, but only with its own path.
        vec![
            ("client_id", client.id.as_str()),
            ("response_type", "code"),
            ("redirect_uri", "http://127.0.0.1:51234/other"),
        ],
    ] {
        let (status, html, location) = browser.authorize(&params).await;
        assert_eq!(status, 400);
        assert!(location.is_none());
        assert!(html.contains("<h1>"));
    }
    // RFC 8252 7.3: "http://127.0.0.1:9/cb" is registered; a native app that got port 51234
    // is sent to the sign-in page, not refused.
    let loopback = [
        ("client_id", client.id.as_str()),
        ("response_type", "code"),
        ("redirect_uri", "http://127.0.0.1:51234/cb"),
        ("scope", "default"),
        ("state", "lo"),
    ];
    let (status, html, location) = Browser::new(&server).authorize(&loopback).await;
    assert_eq!(status, 200, "{html}");
    assert!(location.is_none());
    assert!(html.contains("name=\"password\""), "{html}");
    let params = auth_params(&client, "default", "abc");
    let mut bad_type = params.clone();
    bad_type[1] = ("response_type", "token");
    let (status, _, location) = browser.authorize(&bad_type).await;
    assert_eq!(status, 303);
    assert_eq!(
        callback(&location.unwrap()).error.as_deref(),
        Some("unsupported_response_type")
    );

    // Wrong password: the login page again, 401.
    let resp = browser
        .post(
            &params,
            &[
                ("step", "login"),
                ("email", ADMIN_EMAIL),
                ("password", "nope"),
            ],
        )
        .await;
    assert_eq!(resp.status(), 401);
    assert!(
        resp.text()
            .await
            .unwrap()
            .contains("Wrong e-mail or password")
    );

    browser.login(&params, ADMIN_EMAIL, "admin-password").await;
    // A consent post without the CSRF token is refused.
    let resp = browser
        .post(&params, &[("step", "consent"), ("decision", "approve")])
        .await;
    assert_eq!(resp.status(), 403);
    let cb = browser.decide(&params, "deny").await;
    assert_eq!(cb.error.as_deref(), Some("access_denied"));
    assert_eq!(cb.state.as_deref(), Some("abc"));
    assert!(cb.code.is_none());
}

#[tokio::test]
async fn replayed_code_revokes_and_client_deletion_revokes_everything() {
    let server = TestServer::start().await;
    let client = create_client(&server, &["default"]).await;
    let params = auth_params(&client, "default", "s");
    let code = Browser::new(&server).admin_code(&params).await;
    let (status, tokens) = exchange(&server, &client, &code).await;
    assert_eq!(status, 200);
    let access = tokens["access_token"].as_str().unwrap().to_string();
    let (status, err) = exchange(&server, &client, &code).await;
    assert_eq!(status, 400);
    assert_eq!(err["error"], "invalid_grant");
    assert_eq!(
        bearer(&server, Method::GET, "/sources", &access)
            .await
            .status(),
        401
    );

    // Wrong secret, via HTTP Basic.
    let resp = server
        .client
        .post(format!("{}/oauth/token", server.base))
        .basic_auth(&client.id, Some("wrong"))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(
        resp.json::<Value>().await.unwrap()["error"],
        "invalid_client"
    );

    let code = Browser::new(&server).admin_code(&params).await;
    let unused = Browser::new(&server).admin_code(&params).await;
    let resp = server
        .client
        .post(format!("{}/oauth/token", server.base))
        .basic_auth(&client.id, Some(&client.secret))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT_URI),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "client authentication by HTTP Basic");
    let tokens: Value = resp.json().await.unwrap();
    let access = tokens["access_token"].as_str().unwrap();
    let refresh = tokens["refresh_token"].as_str().unwrap();
    assert_eq!(
        bearer(&server, Method::GET, "/sources", access)
            .await
            .status(),
        200
    );

    let resp = server
        .req(Method::DELETE, &format!("/oauthclients/{}", client.id))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    assert_eq!(
        bearer(&server, Method::GET, "/sources", access)
            .await
            .status(),
        401
    );
    let (status, err) = token_query(
        &server,
        &[
            ("client_id", &client.id),
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_secret", &client.secret),
        ],
    )
    .await;
    assert_eq!(status, 401, "{err}");
    let (status, _) = exchange(&server, &client, &unused).await;
    assert_eq!(status, 401, "codes die with their client");
}

#[tokio::test]
async fn pkce_revocation_introspection_and_metadata() {
    let server = TestServer::start().await;
    let client = create_client(&server, &["default"]).await;
    let verifier = "a-very-long-verifier-string-of-at-least-43-characters-0123456789";
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let mut params = auth_params(&client, "default", "s");
    params.push(("code_challenge", &challenge));
    params.push(("code_challenge_method", "S256"));
    let code = Browser::new(&server).admin_code(&params).await;
    let base = [
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT_URI),
    ];
    let mut wrong = base.to_vec();
    wrong.push((
        "code_verifier",
        "wrong-wrong-wrong-wrong-wrong-wrong-wrong-wrong",
    ));
    let (status, err) = token_form(&server, &wrong).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    let code = Browser::new(&server).admin_code(&params).await;
    let mut right = base.to_vec();
    right[3] = ("code", code.as_str());
    right.push(("code_verifier", verifier));
    let (status, tokens) = token_form(&server, &right).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    let refresh = tokens["refresh_token"].as_str().unwrap();

    let introspect = |token: String| {
        let server = &server;
        let client = &client;
        async move {
            server
                .client
                .post(format!("{}/oauth/introspect", server.base))
                .basic_auth(&client.id, Some(&client.secret))
                .form(&[("token", token)])
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let info = introspect(access.to_string()).await;
    assert_eq!(info["active"], true);
    assert_eq!(info["username"], ADMIN_EMAIL);
    assert_eq!(info["scope"], "default");
    assert!(info["exp"].as_i64().is_some());

    let resp = server
        .client
        .post(format!("{}/oauth/revoke", server.base))
        .form(&[
            ("token", refresh),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        introspect(access.to_string()).await["active"],
        false,
        "revoking the refresh token revokes its grant"
    );
    assert_eq!(introspect("unknown".into()).await["active"], false);

    let meta: Value = server
        .client
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            server.base
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(meta["issuer"], server.base.as_str());
    assert_eq!(
        meta["token_endpoint"],
        format!("{}/oauth/token", server.base)
    );
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    // Without --public-url the issuer is the bound address, whatever Host a request claims.
    let forged: Value = server
        .client
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            server.base
        ))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(forged["issuer"], server.base.as_str());
    assert_eq!(
        forged["authorization_endpoint"],
        format!("{}/oauth/authorize", server.base)
    );
}
