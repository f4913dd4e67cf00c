//! The OAuth2 authorization server (spec 4.2, 4.3; DESIGN 4): the browser pages of
//! `/oauth/authorize`, the token, revocation and introspection endpoints, the RFC 8414 metadata,
//! client logos, and the shared rate limits.

pub mod pages;
mod token;
mod web;

use inlet_core::{
    oauth::{self, Grant, OAuthClient, OAuthToken},
    time,
};
use poem::{Request, Route, get};
use rand::Rng;
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::{auth::hash_secret, problem::ApiError, state::AppState};
pub use token::OAuthApi;

/// Name of the login-session cookie.
pub const SESSION_COOKIE: &str = "inlet_session";
/// Lifetime of a login session.
pub const SESSION_SECONDS: i64 = 3600;
/// Largest accepted client logo: 256 KiB.
pub const MAX_LOGO_BYTES: u64 = 256 * 1024;

/// A fixed-window limit on failures, counted in the store so replicas share it.
#[derive(Debug, Clone, Copy)]
pub struct RateRule {
    /// Failures allowed per window.
    pub limit: u32,
    /// Window length in seconds.
    pub window_secs: i64,
}

/// Failed logins per (e-mail address, client address): 10 per 15 minutes. Counted with the
/// client address, so failures from one address never lock the user out from another.
pub const LOGIN_FAILURES: RateRule = RateRule {
    limit: 10,
    window_secs: 900,
};
/// Failed logins per client address, whatever the e-mail: 50 per 15 minutes (slows one
/// address trying a common password against many e-mails).
pub const LOGIN_ADDRESS_FAILURES: RateRule = RateRule {
    limit: 50,
    window_secs: 900,
};
/// Longest identity (e-mail, client id) a failure counter is keyed by: longer ones are counted
/// against the client address only, so invented over-long ids add no rows.
pub const MAX_COUNTED_IDENTITY_BYTES: usize = 320;

/// The counter key of failures of `identity` from the request's address, or `None` when the
/// identity is too long to be real (then only the address is counted).
pub fn identity_key(kind: &str, identity: &str, req: &Request) -> Option<String> {
    (identity.len() <= MAX_COUNTED_IDENTITY_BYTES)
        .then(|| format!("{kind}:{}|{}", identity.to_lowercase(), remote_key(req)))
}
/// Failed token requests per (client, remote address) and per remote address: 30 per minute.
pub const TOKEN_FAILURES: RateRule = RateRule {
    limit: 30,
    window_secs: 60,
};

impl RateRule {
    fn window(&self) -> (i64, i64) {
        let now = time::now().timestamp_millis();
        let len = self.window_secs * 1000;
        let start = now - now.rem_euclid(len);
        (start, (start + len - now).div_euclid(1000) + 1)
    }

    /// `Some(seconds to wait)` when `key` has used up its failures in the current window.
    pub async fn blocked(&self, state: &AppState, key: &str) -> Result<Option<i64>, ApiError> {
        let (start, retry) = self.window();
        let n = state.tokens.rate_count(key, start).await?;
        Ok((n >= self.limit).then_some(retry))
    }

    /// Counts one failure against `key`.
    pub async fn fail(&self, state: &AppState, key: &str) -> Result<(), ApiError> {
        let (start, _) = self.window();
        state.tokens.rate_hit(key, start).await?;
        Ok(())
    }
}

/// A new random secret: 64 hex characters (256 bits).
pub fn new_secret() -> String {
    hex::encode(rand::rng().random::<[u8; 32]>())
}

/// Compares two secrets in constant time (for equal lengths).
pub fn secrets_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// The remote address for per-address limits (the peer of the connection).
pub fn remote_key(req: &Request) -> String {
    req.remote_addr()
        .as_socket_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The client `id` if its secret matches (constant time).
pub async fn authenticate_client(
    state: &AppState,
    id: &str,
    secret: &str,
) -> Result<Option<OAuthClient>, ApiError> {
    let Ok(id) = Uuid::parse_str(id.trim()) else {
        return Ok(None);
    };
    let client = state.tokens.client(id).await?;
    Ok(client.filter(|c| secrets_equal(&c.secret, secret)))
}

/// What a stored OAuth token may still do.
pub struct Standing {
    /// Read/write or read-only.
    pub grant: Grant,
    /// The token's scope, or the narrower one its client now allows.
    pub scope: String,
}

/// What a stored OAuth token may do now, or why it may do nothing: its workspace's OAuth is
/// switched off, its client is gone, or the client's scopes no longer cover any of its own
/// (narrowing a client's scopes narrows its tokens at their next use).
pub async fn token_standing(
    state: &AppState,
    token: &OAuthToken,
) -> Result<Result<Standing, &'static str>, ApiError> {
    let enabled = state
        .tokens
        .workspace_by_id(token.workspace_id)
        .await?
        .is_some_and(|w| w.oauth_enabled);
    if !enabled {
        return Ok(Err("OAuth is disabled for this workspace"));
    }
    let Some(client) = state.tokens.client(token.client_id).await? else {
        return Ok(Err("the token's client no longer exists"));
    };
    let scopes = oauth::parse_scopes(&token.scope);
    let Some(grant) = oauth::current_grant(&scopes, &client.scopes) else {
        return Ok(Err("the client no longer has any of the token's scopes"));
    };
    let scope = if oauth::grant_of(&scopes) == Some(grant) {
        token.scope.clone()
    } else {
        grant.scope().to_string()
    };
    Ok(Ok(Standing { grant, scope }))
}

/// The base URL the service is reached at: `--public-url`, else from the request's Host.
pub fn base_url(state: &AppState, req: &Request) -> String {
    if let Some(url) = &state.settings.public_url {
        return url.trim_end_matches('/').to_string();
    }
    let host = req
        .header(poem::http::header::HOST)
        .unwrap_or("localhost")
        .to_string();
    format!("http://{host}")
}

/// SHA-256 of a secret handed to a browser or client (sessions, codes, tokens).
pub fn stored_hash(secret: &str) -> String {
    hash_secret(secret)
}

/// The browser routes (`/oauth/authorize`, `/oauth/logo/{clientId}`); the token endpoints are
/// in [`OAuthApi`].
pub fn routes() -> Route {
    Route::new()
        .at(
            "/oauth/authorize",
            get(web::authorize_get).post(web::authorize_post),
        )
        .at("/oauth/logo/:client_id", get(web::logo))
}
