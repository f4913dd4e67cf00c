//! The example app against a real Inlet on a loopback port: the browser-like flow through
//! `/login`, Inlet's login and consent forms and `/callback`, the records list with the bearer
//! token, the state check, refresh after a refused token, and revocation at `/logout`.

use inlet_example_oauth_app::{App, Config, SESSION_COOKIE};
use inlet_tests::{ADMIN_EMAIL, TestServer, file_form, oauth::Browser};
use poem::{
    Server,
    listener::{Acceptor, Listener, TcpListener},
};
use reqwest::{Client, Method, Response, redirect::Policy};
use serde_json::{Value, json};

/// The title Inlet derives from the uploaded file name `O'Brien's Q1 report.txt`.
const TITLE: &str = "O'Brien's_Q1_report.txt";
const LINK: &str = "https://files.example.test/view?id=1&mode=read";

/// A running Inlet with two records and a client, and the app in front of it.
struct Setup {
    server: TestServer,
    app: App,
    app_base: String,
    client_id: String,
    client_secret: String,
}

async fn upload(server: &TestServer, object: &str, name: &str, text: &str, url: Option<&str>) {
    let resp = server
        .req(Method::PUT, &format!("{object}/file"))
        .query(&url.map(|u| [("externalUrl", u)]).unwrap_or_default())
        .multipart(file_form(name, text.to_string()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
}

async fn start() -> Setup {
    let server = TestServer::start().await;
    let paths = server.record_source().await;
    upload(
        &server,
        &paths.object("q1-report"),
        "O'Brien's Q1 report.txt",
        "Quarterly numbers for the north region.",
        Some(LINK),
    )
    .await;
    // Inlet refuses a javascript: url (docs/security.md, "Links are links"); the app shows a
    // record without a web link as plain text.
    let refused = server
        .req(Method::PUT, &format!("{}/file", paths.object("evil")))
        .query(&[("externalUrl", "javascript:alert(1)")])
        .multipart(file_form("evil.txt", "Nothing to see here.".to_string()))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    upload(
        &server,
        &paths.object("evil"),
        "evil.txt",
        "Nothing to see here.",
        None,
    )
    .await;
    // The app lists records through search, which trails writes by up to a second.
    server.settle().await;

    let acceptor = TcpListener::bind("127.0.0.1:0")
        .into_acceptor()
        .await
        .unwrap();
    let addr = acceptor.local_addr()[0].as_socket_addr().copied().unwrap();
    let app_base = format!("http://{addr}");

    let resp = server
        .req(Method::POST, "/oauthclients")
        .json(&json!({
            "name": "Record Viewer",
            "description": "Shows your records.",
            "bottomDescription": "",
            "redirectUris": [format!("{app_base}/callback")],
            "scopes": ["default"],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let client: Value = resp.json().await.unwrap();
    let client_id = client["clientId"].as_str().unwrap().to_string();
    let client_secret = client["clientSecret"].as_str().unwrap().to_string();

    let config = Config {
        inlet_url: server.base.parse().unwrap(),
        client_id: client_id.clone(),
        client_secret: client_secret.clone(),
        listen: addr,
        public_url: Some(app_base.parse().unwrap()),
        scope: "read:*".into(),
    };
    let app = App::new(&config).unwrap();
    assert_eq!(app.redirect_uri(), format!("{app_base}/callback"));
    let endpoint = app.endpoint();
    tokio::spawn(async move {
        let _ = Server::new_with_acceptor(acceptor).run(endpoint).await;
    });
    Setup {
        server,
        app,
        app_base,
        client_id,
        client_secret,
    }
}

/// The user's browser on the app's side: no redirects followed, the app's cookie kept by hand.
/// (Inlet's side is `inlet_tests::oauth::Browser`, which keeps Inlet's cookie.)
struct User {
    http: Client,
    cookie: Option<String>,
}

impl User {
    fn new() -> Self {
        Self {
            http: Client::builder().redirect(Policy::none()).build().unwrap(),
            cookie: None,
        }
    }

    /// GET an absolute URL with the app cookie; keeps any cookie the answer sets.
    async fn get(&mut self, url: &str) -> Response {
        let mut req = self.http.get(url);
        if let Some(c) = &self.cookie {
            req = req.header("cookie", c);
        }
        let resp = req.send().await.unwrap();
        if let Some(set) = resp
            .headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
        {
            let pair = set.split(';').next().unwrap_or_default().to_string();
            if let Some((name, value)) = pair.split_once('=')
                && name == SESSION_COOKIE
            {
                self.cookie = (!value.is_empty()).then(|| pair.clone());
            }
        }
        resp
    }

    /// The session id in the app cookie.
    fn session_id(&self) -> String {
        let cookie = self.cookie.as_deref().expect("app cookie");
        cookie
            .strip_prefix(&format!("{SESSION_COOKIE}="))
            .expect("session cookie")
            .to_string()
    }
}

fn location(resp: &Response) -> String {
    resp.headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .expect("location")
        .to_string()
}

async fn html(resp: Response, status: u16) -> String {
    assert_eq!(resp.status(), status);
    assert_eq!(
        resp.headers()["content-type"],
        "text/html; charset=utf-8",
        "every page, errors too, is HTML"
    );
    resp.text().await.unwrap()
}

/// `/login` → Inlet's authorize URL; returns its query parameters.
async fn start_login(s: &Setup, user: &mut User) -> Vec<(String, String)> {
    let resp = user.get(&format!("{}/login", s.app_base)).await;
    assert_eq!(resp.status(), 303);
    assert!(user.cookie.is_some(), "the login sets the session cookie");
    let to = location(&resp);
    assert!(
        to.starts_with(&format!("{}/oauth/authorize?", s.server.base)),
        "{to}"
    );
    // The browser follows the redirect: Inlet's sign-in page.
    let page = user.get(&to).await;
    let body = html(page, 200).await;
    assert!(body.contains("Record Viewer") && body.contains("name=\"password\""));

    let params: Vec<(String, String)> = url::Url::parse(&to)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("client_id"), Some(s.client_id.as_str()));
    assert_eq!(get("response_type"), Some("code"));
    assert_eq!(
        get("redirect_uri"),
        Some(format!("{}/callback", s.app_base).as_str())
    );
    assert_eq!(get("scope"), Some("read:*"));
    assert_eq!(get("code_challenge_method"), Some("S256"));
    assert_eq!(get("code_challenge").map(str::len), Some(43));
    assert!(get("state").is_some_and(|st| st.len() >= 32));
    params
}

fn borrowed(params: &[(String, String)]) -> Vec<(&str, &str)> {
    params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// Signs in at Inlet and approves; returns the callback URL Inlet redirects to.
async fn consent(s: &Setup, params: &[(String, String)], decision: &str) -> String {
    let params = borrowed(params);
    let mut inlet = Browser::new(&s.server);
    inlet.login(&params, ADMIN_EMAIL, "admin-password").await;
    let cb = inlet.decide(&params, decision).await;
    assert!(
        cb.location
            .starts_with(&format!("{}/callback?", s.app_base)),
        "{}",
        cb.location
    );
    cb.location
}

/// The whole sign-in; the user ends on the app's start page with a signed-in session.
async fn sign_in(s: &Setup) -> User {
    let mut user = User::new();
    let params = start_login(s, &mut user).await;
    let before = user.session_id();
    let back = consent(s, &params, "approve").await;
    let resp = user.get(&back).await;
    assert_eq!(resp.status(), 303, "{:?}", resp.text().await);
    assert_eq!(location(&resp), format!("{}/", s.app_base));
    assert_ne!(
        user.session_id(),
        before,
        "the session id changes at sign-in"
    );
    assert!(s.app.session_tokens(&before).is_none());
    assert!(s.app.session_tokens(&user.session_id()).is_some());
    user
}

async fn introspect(s: &Setup, token: &str) -> Value {
    let resp = s
        .server
        .client
        .post(format!("{}/oauth/introspect", s.server.base))
        .basic_auth(&s.client_id, Some(&s.client_secret))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

async fn revoke_at_inlet(s: &Setup, token: &str) {
    let resp = s
        .server
        .client
        .post(format!("{}/oauth/revoke", s.server.base))
        .basic_auth(&s.client_id, Some(&s.client_secret))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

async fn search_status(s: &Setup, access: &str) -> u16 {
    s.server
        .client
        .get(s.server.url("/search"))
        .bearer_auth(access)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn sign_in_then_records_are_listed_escaped() {
    let s = start().await;

    let mut anonymous = User::new();
    let home = html(anonymous.get(&format!("{}/", s.app_base)).await, 200).await;
    assert!(home.contains("<a href=\"login\">Sign in with Inlet</a>"));
    let resp = anonymous.get(&format!("{}/records", s.app_base)).await;
    assert_eq!(resp.status(), 303, "signed out: back to the start page");

    let mut user = sign_in(&s).await;
    let tokens = s.app.session_tokens(&user.session_id()).unwrap();
    assert_eq!(tokens.scope.as_deref(), Some("read:*"));
    assert_eq!(tokens.user_id.as_deref(), Some(ADMIN_EMAIL));
    let info = introspect(&s, &tokens.access_token).await;
    assert_eq!(info["active"], true);
    assert_eq!(info["scope"], "read:*");

    let resp = user.get(&format!("{}/records", s.app_base)).await;
    assert_eq!(resp.headers()["cache-control"], "no-store");
    assert!(resp.headers().contains_key("content-security-policy"));
    let page = html(resp, 200).await;
    assert!(page.contains("Signed in as <strong>admin@example.test</strong>"));
    assert!(page.contains("2 records found."), "{page}");
    assert!(
        page.contains(
            "<a href=\"https://files.example.test/view?id=1&amp;mode=read\" \
             rel=\"noopener noreferrer\">O&#x27;Brien&#x27;s_Q1_report.txt</a>"
        ),
        "{page}"
    );
    assert!(!page.contains(TITLE), "the title is HTML-escaped");
    assert!(
        page.contains("<li>evil.txt</li>"),
        "a record without a web link is no link"
    );
    assert!(!page.contains("javascript:"));

    // The start page shows the list when signed in; a search narrows it and shows the snippet.
    let start_page = html(user.get(&format!("{}/", s.app_base)).await, 200).await;
    assert!(start_page.contains("O&#x27;Brien&#x27;s_Q1_report.txt"));
    let found = html(
        user.get(&format!("{}/records?q=quarterly+north", s.app_base))
            .await,
        200,
    )
    .await;
    assert!(found.contains("1 record found."), "{found}");
    assert!(found.contains("<mark>"), "{found}");
    assert!(!found.contains("evil.txt"));

    // The same access token was used throughout: no refresh was needed.
    let after = s.app.session_tokens(&user.session_id()).unwrap();
    assert_eq!(after.access_token, tokens.access_token);
}

#[tokio::test]
async fn a_wrong_state_is_refused_and_the_real_callback_still_works() {
    let s = start().await;
    let mut user = User::new();
    let params = start_login(&s, &mut user).await;
    let back = consent(&s, &params, "approve").await;
    let code = url::Url::parse(&back)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .unwrap();

    let forged = format!("{}/callback?code={code}&state=forged", s.app_base);
    let page = html(user.get(&forged).await, 400).await;
    assert!(page.contains("400 Bad Request"));
    assert!(page.contains("state parameter does not match"), "{page}");
    let page = html(
        user.get(&format!("{}/callback?code={code}", s.app_base))
            .await,
        400,
    )
    .await;
    assert!(page.contains("no state parameter"));

    // Without the session cookie nothing matches either.
    let mut stranger = User::new();
    html(stranger.get(&back).await, 400).await;

    // The forged attempts did not cancel the sign-in; the real callback completes it, once.
    let resp = user.get(&back).await;
    assert_eq!(resp.status(), 303);
    let page = html(user.get(&format!("{}/records", s.app_base)).await, 200).await;
    assert!(page.contains("O&#x27;Brien&#x27;s_Q1_report.txt"));
    let replay = html(user.get(&back).await, 400).await;
    assert!(replay.contains("no sign-in is in progress"), "{replay}");
}

#[tokio::test]
async fn denied_consent_shows_an_error_page() {
    let s = start().await;
    let mut user = User::new();
    let params = start_login(&s, &mut user).await;
    let back = consent(&s, &params, "deny").await;
    let page = html(user.get(&back).await, 403).await;
    assert!(page.contains("did not allow"));
    assert!(page.contains("href=\"login\""));
    let resp = user.get(&format!("{}/records", s.app_base)).await;
    assert_eq!(resp.status(), 303, "not signed in");
}

#[tokio::test]
async fn a_refused_access_token_is_refreshed_once() {
    let s = start().await;
    let mut user = sign_in(&s).await;
    let first = s.app.session_tokens(&user.session_id()).unwrap();

    // Inlet stops accepting the access token; the app refreshes and retries.
    revoke_at_inlet(&s, &first.access_token).await;
    assert_eq!(search_status(&s, &first.access_token).await, 401);
    let page = html(user.get(&format!("{}/records", s.app_base)).await, 200).await;
    assert!(page.contains("O&#x27;Brien&#x27;s_Q1_report.txt"));
    let second = s.app.session_tokens(&user.session_id()).unwrap();
    assert_ne!(second.access_token, first.access_token);
    assert_eq!(second.refresh_token, first.refresh_token, "kept");
    assert_eq!(search_status(&s, &second.access_token).await, 200);

    // Once the whole grant is revoked the refresh fails too: sign in again.
    revoke_at_inlet(&s, first.refresh_token.as_deref().unwrap()).await;
    let page = html(user.get(&format!("{}/records", s.app_base)).await, 401).await;
    assert!(page.contains("sign in again"), "{page}");
    assert!(page.contains("href=\"login\""));
    assert!(s.app.session_tokens(&user.session_id()).is_none());
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_before_use() {
    let s = start().await;
    let mut user = sign_in(&s).await;
    let first = s.app.session_tokens(&user.session_id()).unwrap();
    assert!(!first.expired(), "3599 s to go");
    assert!(s.app.expire_access_token(&user.session_id()));
    let page = html(user.get(&format!("{}/records", s.app_base)).await, 200).await;
    assert!(page.contains("O&#x27;Brien&#x27;s_Q1_report.txt"));
    let second = s.app.session_tokens(&user.session_id()).unwrap();
    assert_ne!(second.access_token, first.access_token);
    assert!(!second.expired());
    // Refreshed ahead of time: Inlet never refused the old token, which is still valid there.
    assert_eq!(search_status(&s, &first.access_token).await, 200);
}

#[tokio::test]
async fn logout_revokes_the_tokens_at_inlet() {
    let s = start().await;
    let mut user = sign_in(&s).await;
    let tokens = s.app.session_tokens(&user.session_id()).unwrap();
    let old_cookie = user.cookie.clone();
    assert_eq!(search_status(&s, &tokens.access_token).await, 200);

    let resp = user.get(&format!("{}/logout", s.app_base)).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(location(&resp), format!("{}/", s.app_base));
    assert!(
        resp.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    assert!(user.cookie.is_none(), "the cookie is cleared");

    assert_eq!(search_status(&s, &tokens.access_token).await, 401);
    assert_eq!(introspect(&s, &tokens.access_token).await["active"], false);
    let refresh = tokens.refresh_token.as_deref().unwrap();
    assert_eq!(introspect(&s, refresh).await["active"], false);

    // The old cookie no longer names a session.
    user.cookie = old_cookie;
    let resp = user.get(&format!("{}/records", s.app_base)).await;
    assert_eq!(resp.status(), 303);
}

#[tokio::test]
async fn unknown_pages_are_html_errors() {
    let s = start().await;
    let page = html(User::new().get(&format!("{}/nope", s.app_base)).await, 404).await;
    assert!(page.contains("404 Not Found"));
}
