//! Calls to Inlet: the discovery document (RFC 8414), the token endpoint (codes and refresh
//! tokens), revocation (RFC 7009) and the search API with a bearer token.

use std::{fmt, sync::Arc, time::Duration};

use base64::{Engine, engine::general_purpose::STANDARD};
use parking_lot::Mutex;
use reqwest::{Client, RequestBuilder, Response, StatusCode, redirect::Policy};
use serde::Deserialize;
use url::Url;

/// Results per page of the records list.
pub const PAGE_SIZE: u32 = 50;
/// Time allowed for one call to Inlet.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Time allowed to connect to Inlet.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Where Inlet publishes its authorization server metadata, below its base URL.
pub const DISCOVERY_PATH: &str = "/.well-known/oauth-authorization-server";

/// Inlet's authorization server metadata (the fields this app uses).
#[derive(Debug, Clone, Deserialize)]
pub struct Metadata {
    /// The issuer (Inlet's base URL as it sees itself).
    pub issuer: String,
    /// Where the browser is sent to authorize.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// Where tokens are revoked.
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
    /// How clients may authenticate at the token endpoint (RFC 8414 default: Basic).
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// How clients may authenticate at the revocation endpoint.
    #[serde(default)]
    pub revocation_endpoint_auth_methods_supported: Option<Vec<String>>,
}

/// A successful token response (spec 2.2).
#[derive(Clone, Deserialize)]
pub struct TokenResponse {
    /// The access token.
    pub access_token: String,
    /// `bearer`.
    pub token_type: String,
    /// Only from the code exchange.
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// Seconds the access token lives.
    #[serde(default)]
    pub expires_in: Option<u64>,
    /// The granted scope.
    #[serde(default)]
    pub scope: Option<String>,
    /// The user's e-mail address.
    #[serde(default)]
    pub user_id: Option<String>,
}

impl fmt::Debug for TokenResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenResponse")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("scope", &self.scope)
            .field("user_id", &self.user_id)
            .finish_non_exhaustive()
    }
}

/// What is exchanged at the token endpoint.
pub enum Grant<'a> {
    /// An authorization code with its PKCE verifier.
    Code {
        /// The code from the callback.
        code: &'a str,
        /// The redirect URI of the authorization request.
        redirect_uri: &'a str,
        /// The PKCE verifier.
        verifier: &'a str,
        /// The scope of the authorization request.
        scope: &'a str,
    },
    /// A refresh token.
    Refresh {
        /// The refresh token from the code exchange.
        refresh_token: &'a str,
    },
}

/// One search result (the fields the list shows).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// The caller's id of the record.
    #[serde(default)]
    pub external_id: String,
    /// The title.
    #[serde(default)]
    pub title: String,
    /// Link into the external system.
    #[serde(default)]
    pub url: Option<String>,
    /// HTML-escaped extract with `<mark>`ed matches.
    #[serde(default)]
    pub snippet: String,
}

/// A page of search results.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchPage {
    /// Matches in all pages.
    pub total: u64,
    /// This page.
    pub results: Vec<Hit>,
    /// The cursor of the next page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// A failed call to Inlet.
#[derive(Debug)]
pub enum InletError {
    /// No answer (connection, timeout).
    Unreachable(String),
    /// An RFC 6749 5.2 error from an OAuth endpoint.
    OAuth {
        /// HTTP status.
        status: StatusCode,
        /// The `error` code.
        error: String,
        /// The `error_description`.
        description: Option<String>,
    },
    /// The bearer token was refused (401).
    Unauthorized,
    /// Any other unexpected status.
    Status {
        /// HTTP status.
        status: StatusCode,
        /// The problem's `detail` or the body's start.
        detail: String,
    },
    /// A 2xx answer that could not be read.
    BadResponse(String),
}

impl fmt::Display for InletError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreachable(e) => write!(f, "Inlet could not be reached: {e}"),
            Self::OAuth {
                error, description, ..
            } => match description {
                Some(d) => write!(f, "Inlet refused the request: {error} ({d})"),
                None => write!(f, "Inlet refused the request: {error}"),
            },
            Self::Unauthorized => f.write_str("Inlet no longer accepts the access token"),
            Self::Status { status, detail } => write!(f, "Inlet answered {status}: {detail}"),
            Self::BadResponse(e) => write!(f, "Inlet's answer could not be read: {e}"),
        }
    }
}

impl std::error::Error for InletError {}

impl From<reqwest::Error> for InletError {
    fn from(e: reqwest::Error) -> Self {
        if e.is_decode() {
            Self::BadResponse(e.to_string())
        } else {
            Self::Unreachable(e.to_string())
        }
    }
}

#[derive(Deserialize)]
struct OAuthErrorBody {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// A client of one Inlet service for one registered OAuth client.
pub struct Inlet {
    http: Client,
    base: String,
    client_id: String,
    client_secret: String,
    metadata: Mutex<Option<Arc<Metadata>>>,
}

impl Inlet {
    /// A client for the Inlet at `base` (its origin, plus a path prefix if it has one).
    pub fn new(base: &Url, client_id: &str, client_secret: &str) -> reqwest::Result<Self> {
        let http = Client::builder()
            .redirect(Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!(
                "inlet-example-oauth-app/",
                env!("CARGO_PKG_VERSION")
            ))
            .build()?;
        Ok(Self {
            http,
            base: base.as_str().trim_end_matches('/').to_string(),
            client_id: client_id.to_string(),
            client_secret: client_secret.to_string(),
            metadata: Mutex::new(None),
        })
    }

    /// The discovery document, read once and then kept (a failed read is retried next time).
    pub async fn metadata(&self) -> Result<Arc<Metadata>, InletError> {
        if let Some(m) = self.metadata.lock().clone() {
            return Ok(m);
        }
        let resp = self
            .http
            .get(format!("{}{DISCOVERY_PATH}", self.base))
            .send()
            .await?;
        if !resp.status().is_success() {
            return Err(unexpected(resp).await);
        }
        let meta: Metadata = resp.json().await?;
        if meta.issuer.trim_end_matches('/') != self.base {
            // RFC 8414 3.3 asks for equality; Inlet derives its issuer from --public-url or the
            // Host header, so a mismatch is usually a configuration detail, not an attack.
            tracing::warn!(issuer = %meta.issuer, inlet_url = %self.base, "Inlet's issuer differs from --inlet-url");
        }
        let meta = Arc::new(meta);
        *self.metadata.lock() = Some(meta.clone());
        Ok(meta)
    }

    /// The authorization request URL: code flow with `state` and an S256 PKCE challenge.
    pub fn authorize_url(
        &self,
        meta: &Metadata,
        redirect_uri: &str,
        scope: &str,
        state: &str,
        challenge: &str,
    ) -> Result<Url, InletError> {
        let mut url = Url::parse(&meta.authorization_endpoint).map_err(|e| {
            InletError::BadResponse(format!(
                "authorization_endpoint '{}': {e}",
                meta.authorization_endpoint
            ))
        })?;
        url.query_pairs_mut()
            .append_pair("client_id", &self.client_id)
            .append_pair("response_type", "code")
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", scope)
            .append_pair("state", state)
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256");
        Ok(url)
    }

    /// Authenticates the client as the endpoint supports: HTTP Basic when allowed (the RFC 8414
    /// default), otherwise `client_id` + `client_secret` in the form.
    fn authenticated(
        &self,
        req: RequestBuilder,
        methods: Option<&Vec<String>>,
        form: &mut Vec<(&'static str, String)>,
    ) -> RequestBuilder {
        let basic = methods.is_none_or(|m| m.iter().any(|x| x == "client_secret_basic"));
        if basic {
            // RFC 6749 2.3.1: both parts are form-urlencoded before they are joined.
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(&self.client_id), enc(&self.client_secret));
            req.header(
                reqwest::header::AUTHORIZATION,
                format!("Basic {}", STANDARD.encode(pair)),
            )
        } else {
            form.push(("client_id", self.client_id.clone()));
            form.push(("client_secret", self.client_secret.clone()));
            req
        }
    }

    /// Exchanges a code or a refresh token at the token endpoint.
    pub async fn token(&self, grant: Grant<'_>) -> Result<TokenResponse, InletError> {
        let meta = self.metadata().await?;
        let mut form: Vec<(&'static str, String)> = match grant {
            Grant::Code {
                code,
                redirect_uri,
                verifier,
                scope,
            } => vec![
                ("grant_type", "authorization_code".into()),
                ("code", code.into()),
                ("redirect_uri", redirect_uri.into()),
                ("code_verifier", verifier.into()),
                ("scope", scope.into()),
            ],
            Grant::Refresh { refresh_token } => vec![
                ("grant_type", "refresh_token".into()),
                ("refresh_token", refresh_token.into()),
            ],
        };
        let req = self.http.post(&meta.token_endpoint);
        let req = self.authenticated(
            req,
            meta.token_endpoint_auth_methods_supported.as_ref(),
            &mut form,
        );
        let resp = req.form(&form).send().await?;
        if !resp.status().is_success() {
            return Err(oauth_error(resp).await);
        }
        let tokens: TokenResponse = resp.json().await?;
        if !tokens.token_type.eq_ignore_ascii_case("bearer") {
            return Err(InletError::BadResponse(format!(
                "token_type '{}' is not bearer",
                tokens.token_type
            )));
        }
        Ok(tokens)
    }

    /// Revokes a token (RFC 7009). `hint` is `access_token` or `refresh_token`.
    pub async fn revoke(&self, token: &str, hint: &str) -> Result<(), InletError> {
        let meta = self.metadata().await?;
        let Some(endpoint) = &meta.revocation_endpoint else {
            return Err(InletError::BadResponse(
                "the discovery document names no revocation_endpoint".into(),
            ));
        };
        let mut form = vec![
            ("token", token.to_string()),
            ("token_type_hint", hint.into()),
        ];
        let methods = meta
            .revocation_endpoint_auth_methods_supported
            .as_ref()
            .or(meta.token_endpoint_auth_methods_supported.as_ref());
        let req = self.authenticated(self.http.post(endpoint), methods, &mut form);
        let resp = req.form(&form).send().await?;
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(oauth_error(resp).await)
        }
    }

    /// One page of `GET /api/v1/search` as the token's user.
    pub async fn search(
        &self,
        access_token: &str,
        q: Option<&str>,
        cursor: Option<&str>,
    ) -> Result<SearchPage, InletError> {
        let mut query = vec![("limit", PAGE_SIZE.to_string())];
        if let Some(q) = q {
            query.push(("q", q.to_string()));
        }
        if let Some(c) = cursor {
            query.push(("cursor", c.to_string()));
        }
        let resp = self
            .http
            .get(format!("{}/api/v1/search", self.base))
            .query(&query)
            .bearer_auth(access_token)
            .send()
            .await?;
        match resp.status() {
            StatusCode::OK => Ok(resp.json().await?),
            StatusCode::UNAUTHORIZED => Err(InletError::Unauthorized),
            _ => Err(unexpected(resp).await),
        }
    }
}

/// An OAuth endpoint's error: the RFC 6749 5.2 body if there is one.
async fn oauth_error(resp: Response) -> InletError {
    let status = resp.status();
    let body = resp.text().await.unwrap_or_default();
    match serde_json::from_str::<OAuthErrorBody>(&body) {
        Ok(e) => InletError::OAuth {
            status,
            error: e.error,
            description: e.error_description,
        },
        Err(_) => InletError::Status {
            status,
            detail: shorten(&body),
        },
    }
}

/// Any other error: the problem+json `detail` if there is one.
async fn unexpected(resp: Response) -> InletError {
    let status = resp.status();
    let body = resp.text().await.unwrap_or_default();
    let detail = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("detail").and_then(|d| d.as_str()).map(str::to_string))
        .unwrap_or_else(|| shorten(&body));
    InletError::Status { status, detail }
}

fn shorten(body: &str) -> String {
    let mut s: String = body.chars().take(300).collect();
    if s.len() < body.len() {
        s.push('…');
    }
    s
}
