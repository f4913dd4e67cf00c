//! Drives the OAuth2 flow as a browser would (login form, consent form, redirects by hand), for
//! the HTTP tests.

use reqwest::{Client, StatusCode, redirect::Policy};
use serde_json::{Value, json};

use crate::TestServer;

/// A registered client as the maintenance API returned it.
#[derive(Debug, Clone)]
pub struct TestClient {
    /// clientId.
    pub id: String,
    /// clientSecret.
    pub secret: String,
    /// Its first redirect URI.
    pub redirect_uri: String,
}

/// Redirect URI every test client registers.
pub const REDIRECT_URI: &str = "https://app.example.test/callback";

/// Creates a client as the administrator with these scopes.
pub async fn create_client(server: &TestServer, scopes: &[&str]) -> TestClient {
    let resp = server
        .req(reqwest::Method::POST, "/oauthclients")
        .json(&json!({
            "name": "Acme Sync",
            "description": "Keeps your Acme files in Inlet.",
            "bottomDescription": "By continuing you accept Acme's terms.",
            "redirectUris": [REDIRECT_URI, "http://127.0.0.1:9/cb"],
            "scopes": scopes,
        }))
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), 201);
    let v: Value = resp.json().await.expect("json");
    TestClient {
        id: v["clientId"].as_str().expect("clientId").into(),
        secret: v["clientSecret"].as_str().expect("clientSecret").into(),
        redirect_uri: REDIRECT_URI.into(),
    }
}

/// A cookie-keeping, non-redirecting HTTP client standing in for the user's browser.
pub struct Browser {
    http: Client,
    base: String,
    /// Cookies by name, as the server set them.
    cookies: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
    /// The sign-in form's anti-forgery token from the last sign-in page shown.
    login_token: std::sync::Mutex<Option<String>>,
}

/// What the final redirect carried.
#[derive(Debug, Clone, Default)]
pub struct Callback {
    /// `code`.
    pub code: Option<String>,
    /// `state`.
    pub state: Option<String>,
    /// `error`.
    pub error: Option<String>,
    /// The whole Location.
    pub location: String,
}

fn attr_value(html: &str, name: &str) -> Option<String> {
    let at = html.find(&format!("name=\"{name}\" value=\""))?;
    let rest = &html[at + name.len() + 15..];
    Some(
        rest[..rest.find('"')?]
            .replace("&quot;", "\"")
            .replace("&amp;", "&"),
    )
}

impl Browser {
    /// A browser without a session.
    pub fn new(server: &TestServer) -> Self {
        Self {
            http: Client::builder()
                .redirect(Policy::none())
                .build()
                .expect("client"),
            base: server.base.clone(),
            cookies: Default::default(),
            login_token: Default::default(),
        }
    }

    /// The `Cookie` header value, if any cookie is kept.
    fn cookie_header(&self) -> Option<String> {
        let cookies = self.cookies.lock().expect("cookies");
        (!cookies.is_empty()).then(|| {
            cookies
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// Keeps the cookies a response sets.
    fn keep_cookies(&self, resp: &reqwest::Response) {
        let mut cookies = self.cookies.lock().expect("cookies");
        for set in resp.headers().get_all("set-cookie") {
            if let Some((k, v)) = set
                .to_str()
                .ok()
                .and_then(|c| c.split(';').next())
                .and_then(|kv| kv.split_once('='))
            {
                cookies.insert(k.trim().to_string(), v.to_string());
            }
        }
    }

    /// GET /oauth/authorize with these parameters: (status, body, location).
    pub async fn authorize(&self, params: &[(&str, &str)]) -> (StatusCode, String, Option<String>) {
        let mut req = self
            .http
            .get(format!("{}/oauth/authorize", self.base))
            .query(params);
        if let Some(c) = self.cookie_header() {
            req = req.header("cookie", c);
        }
        let resp = req.send().await.expect("authorize");
        self.keep_cookies(&resp);
        let status = resp.status();
        let location = resp
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = resp.text().await.unwrap_or_default();
        if let Some(token) = attr_value(&body, "login_token") {
            *self.login_token.lock().expect("token") = Some(token);
        }
        (status, body, location)
    }

    /// POST the authorize form with the request parameters and `extra` fields. A sign-in
    /// (`step=login`) carries the sign-in page's anti-forgery token, as a browser's form does:
    /// the page is shown first when it has not been.
    pub async fn post(
        &mut self,
        params: &[(&str, &str)],
        extra: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut form: Vec<(&str, &str)> = params.to_vec();
        form.extend_from_slice(extra);
        let signing_in =
            extra.contains(&("step", "login")) && !extra.iter().any(|(k, _)| *k == "login_token");
        if signing_in && self.login_token.lock().expect("token").is_none() {
            self.authorize(params).await;
        }
        let token = self.login_token.lock().expect("token").clone();
        if signing_in && let Some(t) = &token {
            form.push(("login_token", t));
        }
        let mut req = self
            .http
            .post(format!("{}/oauth/authorize", self.base))
            .form(&form);
        if let Some(c) = self.cookie_header() {
            req = req.header("cookie", c);
        }
        let resp = req.send().await.expect("post authorize");
        self.keep_cookies(&resp);
        resp
    }

    /// Signs in; panics unless the login succeeds.
    pub async fn login(&mut self, params: &[(&str, &str)], email: &str, password: &str) {
        let resp = self
            .post(
                params,
                &[("step", "login"), ("email", email), ("password", password)],
            )
            .await;
        assert_eq!(resp.status(), 303, "login: {:?}", resp.text().await);
    }

    /// Shows the consent page and submits `decision`; returns the callback's parameters.
    pub async fn decide(&mut self, params: &[(&str, &str)], decision: &str) -> Callback {
        let (status, html, _) = self.authorize(params).await;
        assert_eq!(status, 200, "consent page: {html}");
        let csrf = attr_value(&html, "csrf_token").expect("csrf token on consent page");
        let resp = self
            .post(
                params,
                &[
                    ("step", "consent"),
                    ("csrf_token", &csrf),
                    ("decision", decision),
                ],
            )
            .await;
        assert_eq!(resp.status(), 303);
        let location = resp
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .expect("location")
            .to_string();
        callback(&location)
    }

    /// The whole flow for the administrator: login, approve, return the code.
    pub async fn admin_code(&mut self, params: &[(&str, &str)]) -> String {
        self.login(params, crate::ADMIN_EMAIL, "admin-password")
            .await;
        let cb = self.decide(params, "approve").await;
        cb.code.expect("code in callback")
    }
}

/// Parses a redirect's query.
pub fn callback(location: &str) -> Callback {
    let url = url::Url::parse(location).expect("absolute location");
    let mut cb = Callback {
        location: location.into(),
        ..Callback::default()
    };
    for (k, v) in url.query_pairs() {
        match k.as_ref() {
            "code" => cb.code = Some(v.into_owned()),
            "state" => cb.state = Some(v.into_owned()),
            "error" => cb.error = Some(v.into_owned()),
            _ => {}
        }
    }
    cb
}

/// The standard authorization request parameters for a client.
pub fn auth_params<'a>(
    client: &'a TestClient,
    scope: &'a str,
    state: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("client_id", client.id.as_str()),
        ("response_type", "code"),
        ("redirect_uri", client.redirect_uri.as_str()),
        ("scope", scope),
        ("state", state),
    ]
}

/// A 1x1 PNG, for client logos.
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\0\x05\0\x01\xff\xa5\xf7\xa3\xd6\0\0\0\0IEND\xaeB`\x82";

/// A token request with its parameters in the query string; a 200 must say `no-store`.
pub async fn token_query(server: &TestServer, params: &[(&str, &str)]) -> (u16, Value) {
    let resp = server
        .client
        .post(format!("{}/oauth/token", server.base))
        .query(params)
        .send()
        .await
        .expect("token");
    let status = resp.status().as_u16();
    if status == 200 {
        assert_eq!(resp.headers()["cache-control"], "no-store");
    }
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// A token request with its parameters as a form body.
pub async fn token_form(server: &TestServer, params: &[(&str, &str)]) -> (u16, Value) {
    let resp = server
        .client
        .post(format!("{}/oauth/token", server.base))
        .form(params)
        .send()
        .await
        .expect("token");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// A request to the API with a Bearer token.
pub async fn bearer(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    token: &str,
) -> reqwest::Response {
    server
        .client
        .request(method, server.url(path))
        .bearer_auth(token)
        .send()
        .await
        .expect("send")
}

/// An authorization-code grant for `client`.
pub async fn exchange(server: &TestServer, client: &TestClient, code: &str) -> (u16, Value) {
    token_query(
        server,
        &[
            ("client_id", &client.id),
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT_URI),
            ("client_secret", &client.secret),
        ],
    )
    .await
}

/// Shows the sign-in page to `http`: its pre-login cookie (`name=value`) and form token.
pub async fn sign_in_page(
    http: &reqwest::Client,
    server: &TestServer,
    params: &[(&str, &str)],
) -> (String, String) {
    let page = http
        .get(format!("{}/oauth/authorize", server.base))
        .query(params)
        .send()
        .await
        .unwrap();
    let cookie = page
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("the sign-in page sets its cookie")
        .to_string();
    let body = page.text().await.unwrap();
    let at = body
        .find("name=\"login_token\" value=\"")
        .expect("token field")
        + 26;
    (cookie, body[at..at + 64].to_string())
}

/// A refresh-token grant for `client`.
pub async fn refresh(
    server: &TestServer,
    client: &TestClient,
    refresh_token: &str,
) -> (u16, Value) {
    token_query(
        server,
        &[
            ("client_id", &client.id),
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_secret", &client.secret),
        ],
    )
    .await
}

/// Replaces `client`'s scopes and redirect URIs through the API.
pub async fn update_client(
    server: &TestServer,
    client: &TestClient,
    scopes: &[&str],
    redirects: &[&str],
) {
    let resp = server
        .req(reqwest::Method::PUT, &format!("/oauthclients/{}", client.id))
        .json(&json!({"name": "Acme Sync", "description": "Keeps your Acme files in Inlet.", "redirectUris": redirects, "scopes": scopes}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
}
