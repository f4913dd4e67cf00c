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
