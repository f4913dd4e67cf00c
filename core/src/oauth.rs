//! OAuth2 (spec 2.1, 2.2, 4.1–4.3; DESIGN 4): clients, authorization codes, issued tokens, login
//! sessions and rate-limit windows as stored, plus the pure scope rules.
//!
//! Secrets that only need to be recognised (codes, tokens, session ids) are stored as SHA-256
//! hashes. The client secret is kept as issued because the spec returns it on every read of the
//! client; it is compared in constant time by the server.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{WorkspaceId, time::Timestamp};

/// Lifetime of an access token in seconds, as observed (spec 2.2: `expires_in` 3599).
pub const ACCESS_TOKEN_SECONDS: i64 = 3599;
/// Lifetime of an authorization code in seconds (DESIGN 4: 10 minutes).
pub const CODE_SECONDS: i64 = 600;

/// An OAuth2 client of a workspace (spec 2.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthClient {
    /// The clientId.
    pub id: Uuid,
    /// Owning workspace.
    pub workspace_id: WorkspaceId,
    /// The clientSecret (hex), returned on reads as the spec shows.
    pub secret: String,
    /// Display name.
    pub name: String,
    /// Text on the consent page.
    pub description: String,
    /// Extra text at the bottom of the consent page; never in API responses.
    pub bottom_description: String,
    /// Allowed redirect targets, matched exactly.
    pub redirect_uris: Vec<String>,
    /// Scopes the client may request.
    pub scopes: Vec<String>,
    /// Whether a logo was uploaded.
    pub has_logo: bool,
    /// When it was made.
    pub created_date: Timestamp,
}

/// A client's logo image as uploaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Logo {
    /// Media type detected from the bytes (`image/png`, ...).
    pub content_type: String,
    /// The image.
    pub bytes: Vec<u8>,
}

/// An issued authorization code, bound to client, user, redirect URI and scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthCode {
    /// SHA-256 (hex) of the code.
    pub code_hash: String,
    /// The grant this code starts; every token issued from it carries this id.
    pub grant_id: Uuid,
    /// The client it was issued to.
    pub client_id: Uuid,
    /// The user's workspace.
    pub workspace_id: WorkspaceId,
    /// The user who approved.
    pub user_id: Uuid,
    /// The redirect URI of the authorization request.
    pub redirect_uri: String,
    /// The approved scope, as the client passed it.
    pub scope: String,
    /// PKCE S256 challenge, when the client sent one.
    pub code_challenge: Option<String>,
    /// When it stops being redeemable.
    pub expires_at: Timestamp,
}

/// The outcome of redeeming a code (atomically marks it used).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redemption {
    /// First use: the code as issued.
    Redeemed(AuthCode),
    /// The code was used before: the caller revokes its grant.
    Replayed(AuthCode),
    /// No such code (never issued, or its client was deleted).
    Unknown,
}

/// Access or refresh token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenKind {
    /// Bearer credential for the API, one hour.
    Access,
    /// Exchanged for new access tokens until revoked.
    Refresh,
}

/// An issued token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthToken {
    /// SHA-256 (hex) of the token.
    pub token_hash: String,
    /// Access or refresh.
    pub kind: TokenKind,
    /// The grant (authorization code) it descends from.
    pub grant_id: Uuid,
    /// The client it was issued to.
    pub client_id: Uuid,
    /// The user's workspace.
    pub workspace_id: WorkspaceId,
    /// The user acted for.
    pub user_id: Uuid,
    /// The granted scope, as the client passed it.
    pub scope: String,
    /// Expiry (access tokens); refresh tokens have none.
    pub expires_at: Option<Timestamp>,
    /// When it was issued.
    pub created_date: Timestamp,
}

/// A browser session of the login and consent pages, stored server side so replicas share it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// SHA-256 (hex) of the session cookie's value.
    pub id_hash: String,
    /// The logged-in user.
    pub user_id: Uuid,
    /// The CSRF token the consent form must carry.
    pub csrf_token: String,
    /// When it ends.
    pub expires_at: Timestamp,
}

/// What a set of scopes allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// `default` or `*:*`.
    ReadWrite,
    /// `read:*` only.
    ReadOnly,
}

/// Scopes the service knows (spec 2.1).
pub const KNOWN_SCOPES: [&str; 3] = ["default", "*:*", "read:*"];

/// Splits a scope parameter: comma- or space-separated, empty items dropped (DESIGN 12).
pub fn parse_scopes(raw: &str) -> Vec<String> {
    raw.split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The first scope the service does not know, if any.
pub fn unknown_scope<S: AsRef<str>>(scopes: &[S]) -> Option<&str> {
    scopes
        .iter()
        .map(AsRef::as_ref)
        .find(|s| !KNOWN_SCOPES.contains(s))
}

fn canonical(scope: &str) -> &str {
    if scope == "default" { "*:*" } else { scope }
}

fn covers(granted: &str, wanted: &str) -> bool {
    let (g, w) = (canonical(granted), canonical(wanted));
    g == w || (g == "*:*" && w == "read:*")
}

/// Whether every requested scope is allowed by the client's scopes (`default` == `*:*`, which
/// also covers `read:*`). An empty request is not a subset of anything.
pub fn is_subset<A: AsRef<str>, B: AsRef<str>>(requested: &[A], allowed: &[B]) -> bool {
    !requested.is_empty()
        && requested
            .iter()
            .all(|r| allowed.iter().any(|a| covers(a.as_ref(), r.as_ref())))
}

/// What tokens with these scopes may do: read/write if any scope is `default` or `*:*`, read-only
/// if they are all `read:*`, nothing otherwise.
pub fn grant_of<S: AsRef<str>>(scopes: &[S]) -> Option<Grant> {
    let mut grant = None;
    for s in scopes {
        match canonical(s.as_ref()) {
            "*:*" => return Some(Grant::ReadWrite),
            "read:*" => grant = Some(Grant::ReadOnly),
            _ => {}
        }
    }
    grant
}

/// What a token issued with `token_scopes` may do now that its client has `client_scopes`: the
/// lesser of the two grants, so narrowing a client's scopes narrows its existing tokens; `None`
/// when nothing is left.
pub fn current_grant<A: AsRef<str>, B: AsRef<str>>(
    token_scopes: &[A],
    client_scopes: &[B],
) -> Option<Grant> {
    match (grant_of(token_scopes)?, grant_of(client_scopes)?) {
        (Grant::ReadWrite, Grant::ReadWrite) => Some(Grant::ReadWrite),
        _ => Some(Grant::ReadOnly),
    }
}

impl Grant {
    /// The scope string tokens with this grant carry when it had to be narrowed.
    pub fn scope(self) -> &'static str {
        match self {
            Self::ReadWrite => "*:*",
            Self::ReadOnly => "read:*",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_split_on_commas_and_spaces() {
        assert_eq!(parse_scopes("default,read:*"), ["default", "read:*"]);
        assert_eq!(parse_scopes(" read:*  *:* ,"), ["read:*", "*:*"]);
        assert!(parse_scopes(" , ").is_empty());
    }

    #[test]
    fn unknown_scopes_are_named() {
        assert_eq!(unknown_scope(&["default", "write:all"]), Some("write:all"));
        assert_eq!(unknown_scope(&["default", "*:*", "read:*"]), None);
    }

    #[test]
    fn subset_treats_default_as_everything() {
        assert!(is_subset(&["read:*"], &["default"]));
        assert!(is_subset(&["*:*"], &["default"]));
        assert!(is_subset(&["default"], &["*:*"]));
        assert!(is_subset(&["read:*"], &["read:*"]));
        assert!(!is_subset(&["default"], &["read:*"]));
        assert!(!is_subset(&["*:*", "read:*"], &["read:*"]));
        assert!(!is_subset::<&str, &str>(&[], &["default"]));
    }

    #[test]
    fn grants_follow_the_widest_scope() {
        assert_eq!(grant_of(&["read:*"]), Some(Grant::ReadOnly));
        assert_eq!(grant_of(&["read:*", "default"]), Some(Grant::ReadWrite));
        assert_eq!(grant_of(&["*:*"]), Some(Grant::ReadWrite));
        assert_eq!(grant_of(&["other"]), None);
        assert_eq!(grant_of::<&str>(&[]), None);
    }

    #[test]
    fn a_narrowed_client_narrows_its_tokens() {
        let g = |t: &[&str], c: &[&str]| current_grant(t, c);
        assert_eq!(g(&["default"], &["default"]), Some(Grant::ReadWrite));
        assert_eq!(g(&["default"], &["read:*"]), Some(Grant::ReadOnly));
        assert_eq!(g(&["read:*"], &["*:*"]), Some(Grant::ReadOnly));
        assert_eq!(g(&["default"], &[]), None);
        assert_eq!(Grant::ReadOnly.scope(), "read:*");
    }
}
