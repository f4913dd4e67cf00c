//! The OAuth2 authorization server (spec 4.2, 4.3; DESIGN 4): the browser pages of
//! `/oauth/authorize`, the token, revocation and introspection endpoints, the RFC 8414 metadata,
//! client logos, and the shared rate limits. It reads and writes through core's [`TokenStore`]
//! only; the API server mounts [`routes`] and [`OAuthApi`] with an [`OAuthState`] as data.

pub mod clients;
pub mod pages;
mod token;
mod web;

use inlet_core::{
    oauth::{self, Grant, OAuthClient, OAuthToken},
    time,
};
use std::net::IpAddr;

use poem::{Request, Route, get};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use std::sync::Arc;

use inlet_core::TokenStore;
use inlet_http::credentials::new_secret;
use inlet_http::{credentials::hash_secret, problem::ApiError};
pub use token::OAuthApi;

/// What the authorization server needs: the store of users, clients and tokens, and two
/// settings. Cheap to clone.
#[derive(Clone)]
pub struct OAuthState {
    /// Workspaces, users, clients, codes, sessions, tokens and the failure counters.
    pub tokens: Arc<dyn TokenStore>,
    /// `--public-url`: the origin the service is reached at, when given.
    pub public_url: Option<String>,
    /// `--trusted-proxy` networks, whose `X-Forwarded-For` names the client address.
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

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
pub fn identity_key(
    state: &OAuthState,
    kind: &str,
    identity: &str,
    req: &Request,
) -> Option<String> {
    (identity.len() <= MAX_COUNTED_IDENTITY_BYTES).then(|| {
        format!(
            "{kind}:{}|{}",
            identity.to_lowercase(),
            remote_key(state, req)
        )
    })
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
    pub async fn blocked(&self, state: &OAuthState, key: &str) -> Result<Option<i64>, ApiError> {
        let (start, retry) = self.window();
        let n = state.tokens.rate_count(key, start).await?;
        Ok((n >= self.limit).then_some(retry))
    }

    /// Counts one failure against `key`.
    pub async fn fail(&self, state: &OAuthState, key: &str) -> Result<(), ApiError> {
        let (start, _) = self.window();
        state.tokens.rate_hit(key, start).await?;
        Ok(())
    }
}

/// Compares two secrets in constant time (for equal lengths).
pub fn secrets_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// The client address for per-address limits: the connection's peer, or, when the peer is a
/// `--trusted-proxy`, the address that proxy chain reports in `X-Forwarded-For`.
pub fn remote_key(state: &OAuthState, req: &Request) -> String {
    let Some(peer) = req.remote_addr().as_socket_addr().map(|a| a.ip()) else {
        return "unknown".into();
    };
    let forwarded = req
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok());
    client_address(peer, forwarded, &state.trusted_proxies).to_string()
}

/// Walks `X-Forwarded-For` from the right while the hop is a trusted proxy: the first address
/// not trusted is the client. An unparsable entry stops the walk at the last trusted hop (an
/// address can only be vouched for by the proxy that appended it).
fn client_address<'a>(
    peer: IpAddr,
    forwarded: impl Iterator<Item = &'a str>,
    trusted: &[ipnet::IpNet],
) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let hops: Vec<&str> = forwarded.flat_map(|v| v.split(',')).collect();
    let mut client = peer;
    for hop in hops.iter().rev() {
        let Ok(ip) = hop.trim().parse::<IpAddr>() else {
            break;
        };
        client = ip;
        if !is_trusted(&ip) {
            break;
        }
    }
    client
}

/// The client `id` if its secret matches (constant time).
pub async fn authenticate_client(
    state: &OAuthState,
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
    tokens: &dyn TokenStore,
    token: &OAuthToken,
) -> Result<Result<Standing, &'static str>, ApiError> {
    let enabled = tokens
        .workspace_by_id(token.workspace_id)
        .await?
        .is_some_and(|w| w.oauth_enabled);
    if !enabled {
        return Ok(Err("OAuth is disabled for this workspace"));
    }
    let Some(client) = tokens.client(token.client_id).await? else {
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

/// The base URL the service is reached at: `--public-url`, or the bound address when it was
/// not given (the server fills it in); never a request header, which anyone can write.
pub fn base_url(state: &OAuthState) -> String {
    state
        .public_url
        .as_deref()
        .unwrap_or("http://localhost")
        .trim_end_matches('/')
        .to_string()
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

#[cfg(test)]
mod tests {
    use super::client_address;

    #[test]
    fn forwarded_addresses_count_only_behind_trusted_proxies() {
        let trusted = ["10.0.0.0/8".parse().unwrap()];
        let ip = |s: &str| s.parse().unwrap();
        let walk = |peer: &str, xff: &[&'static str]| {
            client_address(ip(peer), xff.iter().copied(), &trusted).to_string()
        };
        // An untrusted peer's header is ignored.
        assert_eq!(walk("203.0.113.9", &["198.51.100.1"]), "203.0.113.9");
        // Behind a trusted proxy: the rightmost address not trusted, across repeated headers.
        assert_eq!(walk("10.0.0.2", &["198.51.100.1"]), "198.51.100.1");
        assert_eq!(
            walk("10.0.0.2", &["192.0.2.66, 198.51.100.1", "10.1.1.1"]),
            "198.51.100.1",
            "a client cannot pick its address by writing the header's left end"
        );
        // No header, or garbage: the last hop that can be vouched for.
        assert_eq!(walk("10.0.0.2", &[]), "10.0.0.2");
        assert_eq!(walk("10.0.0.2", &["unknown"]), "10.0.0.2");
        assert_eq!(walk("10.0.0.2", &["junk, 10.3.3.3"]), "10.3.3.3");
    }
}
