//! Server-side sessions keyed by a random cookie: the sign-in in progress (state + PKCE verifier)
//! and, once signed in, the user's tokens. Tokens never reach the browser.

use std::{
    collections::HashMap,
    fmt,
    time::{Duration, Instant},
};

use parking_lot::Mutex;
use poem::{Request, http::header};

use crate::pkce::{random_token, secrets_equal};

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "oauth_app_session";
/// A session unused this long is forgotten (and its cookie expires with it).
pub const SESSION_IDLE: Duration = Duration::from_secs(8 * 3600);
/// How long a sign-in may take between `/login` and `/callback` (Inlet's codes live 10 minutes).
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(600);
/// Most sessions kept at once; beyond it the least recently used one is dropped.
pub const MAX_SESSIONS: usize = 10_000;
/// An access token this close to its expiry is refreshed before use.
pub const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// A sign-in between `/login` and `/callback`.
pub struct PendingLogin {
    /// The `state` sent to the authorization endpoint.
    pub state: String,
    /// The PKCE verifier whose challenge was sent.
    pub verifier: String,
    /// When `/login` ran.
    pub started: Instant,
}

/// The tokens of a signed-in session.
#[derive(Clone)]
pub struct Tokens {
    /// The bearer access token.
    pub access_token: String,
    /// The refresh token, if the server issued one.
    pub refresh_token: Option<String>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<Instant>,
    /// The user (Inlet's `user_id`: the e-mail address).
    pub user_id: Option<String>,
    /// The granted scope.
    pub scope: Option<String>,
}

impl Tokens {
    /// Whether the access token has expired or is about to.
    pub fn expired(&self) -> bool {
        self.expires_at
            .is_some_and(|at| at <= Instant::now() + EXPIRY_MARGIN)
    }
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .field("user_id", &self.user_id)
            .field("scope", &self.scope)
            .finish()
    }
}

struct Session {
    pending: Option<PendingLogin>,
    tokens: Option<Tokens>,
    last_seen: Instant,
}

impl Session {
    fn live(&self, now: Instant) -> bool {
        now.duration_since(self.last_seen) < SESSION_IDLE
    }
}

/// Why a callback does not continue a sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingError {
    /// No (live) session for the cookie, or no cookie.
    NoSession,
    /// The session has no sign-in in progress.
    NoLogin,
    /// The sign-in took longer than [`LOGIN_TIMEOUT`].
    Expired,
    /// The `state` differs from the one sent.
    StateMismatch,
}

impl fmt::Display for PendingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoSession => "no sign-in is in progress in this browser (no session cookie)",
            Self::NoLogin => "no sign-in is in progress in this session",
            Self::Expired => "the sign-in took too long; please start again",
            Self::StateMismatch => "the state parameter does not match this sign-in",
        })
    }
}

/// All sessions of the process.
#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    /// No sessions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a sign-in in the session `id` names (when it is live) or in a new one; returns the
    /// session id to set as the cookie.
    pub fn begin_login(&self, id: Option<&str>, pending: PendingLogin) -> String {
        let now = Instant::now();
        let mut map = self.map.lock();
        if let Some(id) = id
            && let Some(session) = map.get_mut(id).filter(|s| s.live(now))
        {
            session.pending = Some(pending);
            session.last_seen = now;
            return id.to_string();
        }
        let id = random_token();
        insert(
            &mut map,
            id.clone(),
            Session {
                pending: Some(pending),
                tokens: None,
                last_seen: now,
            },
        );
        id
    }

    /// Takes the sign-in in progress when `state` is the one sent. A mismatch leaves it in place
    /// (a forged callback must not cancel the user's real sign-in); an expired one is dropped.
    pub fn take_pending(&self, id: &str, state: &str) -> Result<PendingLogin, PendingError> {
        let now = Instant::now();
        let mut map = self.map.lock();
        let session = map
            .get_mut(id)
            .filter(|s| s.live(now))
            .ok_or(PendingError::NoSession)?;
        let pending = session.pending.as_ref().ok_or(PendingError::NoLogin)?;
        if now.duration_since(pending.started) >= LOGIN_TIMEOUT {
            session.pending = None;
            return Err(PendingError::Expired);
        }
        if !secrets_equal(&pending.state, state) {
            return Err(PendingError::StateMismatch);
        }
        session.last_seen = now;
        session.pending.take().ok_or(PendingError::NoLogin)
    }

    /// Signs the session in: its tokens move to a fresh session id (so an id known before the
    /// sign-in is worthless after it); returns the new id.
    pub fn sign_in(&self, old_id: &str, tokens: Tokens) -> String {
        let mut map = self.map.lock();
        map.remove(old_id);
        let id = random_token();
        insert(
            &mut map,
            id.clone(),
            Session {
                pending: None,
                tokens: Some(tokens),
                last_seen: Instant::now(),
            },
        );
        id
    }

    /// The tokens of a live, signed-in session (and marks it used).
    pub fn tokens(&self, id: &str) -> Option<Tokens> {
        let now = Instant::now();
        let mut map = self.map.lock();
        match map.get_mut(id) {
            Some(s) if s.live(now) => {
                s.last_seen = now;
                s.tokens.clone()
            }
            Some(_) => {
                map.remove(id);
                None
            }
            None => None,
        }
    }

    /// Replaces the tokens after a refresh, unless the session was signed out or signed in
    /// again meanwhile (its refresh token is no longer `used_refresh`).
    pub fn replace_tokens(&self, id: &str, used_refresh: &str, tokens: Tokens) -> bool {
        let mut map = self.map.lock();
        let Some(session) = map.get_mut(id) else {
            return false;
        };
        let current = session
            .tokens
            .as_ref()
            .and_then(|t| t.refresh_token.as_deref());
        if current != Some(used_refresh) {
            return false;
        }
        session.tokens = Some(tokens);
        true
    }

    /// Marks the session's access token as expired, so the next use refreshes it first.
    pub fn expire_access_token(&self, id: &str) -> bool {
        match self.map.lock().get_mut(id).and_then(|s| s.tokens.as_mut()) {
            Some(t) => {
                t.expires_at = Some(Instant::now());
                true
            }
            None => false,
        }
    }

    /// Forgets the session's tokens (Inlet no longer accepts them); the session stays.
    pub fn clear_tokens(&self, id: &str) {
        if let Some(s) = self.map.lock().get_mut(id) {
            s.tokens = None;
        }
    }

    /// Removes the session; returns its tokens.
    pub fn remove(&self, id: &str) -> Option<Tokens> {
        self.map.lock().remove(id).and_then(|s| s.tokens)
    }

    /// How many sessions are held (live or not yet pruned).
    pub fn len(&self) -> usize {
        self.map.lock().len()
    }

    /// Whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Inserts a session after dropping idle ones and, at the cap, the least recently used.
fn insert(map: &mut HashMap<String, Session>, id: String, session: Session) {
    let now = Instant::now();
    map.retain(|_, s| s.live(now));
    if map.len() >= MAX_SESSIONS
        && let Some(oldest) = map
            .iter()
            .min_by_key(|(_, s)| s.last_seen)
            .map(|(k, _)| k.clone())
    {
        map.remove(&oldest);
    }
    map.insert(id, session);
}

/// The session id from the request's cookies, if any.
pub fn cookie_id(req: &Request) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == SESSION_COOKIE && !value.is_empty())
        .map(|(_, value)| value.to_string())
}

/// A `Set-Cookie` value that sets the session cookie.
pub fn set_cookie(id: &str, path: &str, secure: bool) -> String {
    format!(
        "{SESSION_COOKIE}={id}; Path={path}; Max-Age={}; HttpOnly; SameSite=Lax{}",
        SESSION_IDLE.as_secs(),
        if secure { "; Secure" } else { "" }
    )
}

/// A `Set-Cookie` value that deletes the session cookie.
pub fn clear_cookie(path: &str, secure: bool) -> String {
    format!(
        "{SESSION_COOKIE}=; Path={path}; Max-Age=0; HttpOnly; SameSite=Lax{}",
        if secure { "; Secure" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(state: &str) -> PendingLogin {
        PendingLogin {
            state: state.into(),
            verifier: "v".into(),
            started: Instant::now(),
        }
    }

    fn tokens(refresh: &str) -> Tokens {
        Tokens {
            access_token: "a".into(),
            refresh_token: Some(refresh.into()),
            expires_at: None,
            user_id: None,
            scope: None,
        }
    }

    #[test]
    fn state_must_match_and_a_mismatch_keeps_the_login() {
        let s = Sessions::new();
        let id = s.begin_login(None, pending("right"));
        assert_eq!(
            s.take_pending(&id, "wrong").err(),
            Some(PendingError::StateMismatch)
        );
        assert!(s.take_pending(&id, "right").is_ok());
        assert_eq!(
            s.take_pending(&id, "right").err(),
            Some(PendingError::NoLogin),
            "single use"
        );
        assert_eq!(
            s.take_pending("nope", "right").err(),
            Some(PendingError::NoSession)
        );
    }

    #[test]
    fn an_old_login_is_refused() {
        // On a machine up for less than the timeout, Instant cannot go back that far.
        let Some(started) = Instant::now().checked_sub(LOGIN_TIMEOUT + Duration::from_secs(1))
        else {
            return;
        };
        let s = Sessions::new();
        let id = s.begin_login(
            None,
            PendingLogin {
                started,
                ..pending("st")
            },
        );
        assert_eq!(s.take_pending(&id, "st").err(), Some(PendingError::Expired));
        assert_eq!(s.take_pending(&id, "st").err(), Some(PendingError::NoLogin));
    }

    #[test]
    fn sign_in_rotates_the_id_and_refresh_replaces_only_the_same_grant() {
        let s = Sessions::new();
        let id = s.begin_login(None, pending("st"));
        assert_eq!(s.begin_login(Some(&id), pending("st2")), id, "reused");
        assert!(s.take_pending(&id, "st2").is_ok());
        let new_id = s.sign_in(&id, tokens("r1"));
        assert_ne!(new_id, id);
        assert!(s.tokens(&id).is_none());
        assert!(s.tokens(&new_id).is_some());
        assert!(!s.replace_tokens(&new_id, "other", tokens("r2")));
        assert!(s.replace_tokens(&new_id, "r1", tokens("r1")));
        assert!(s.remove(&new_id).is_some());
        assert!(!s.replace_tokens(&new_id, "r1", tokens("r1")));
        assert!(s.is_empty());
    }

    #[test]
    fn cookie_header_parsing_and_formatting() {
        let req = Request::builder()
            .header("cookie", "a=1; oauth_app_session=abc; b=2")
            .finish();
        assert_eq!(cookie_id(&req).as_deref(), Some("abc"));
        let req = Request::builder()
            .header("cookie", "xoauth_app_session=no")
            .finish();
        assert_eq!(cookie_id(&req), None);
        assert_eq!(
            set_cookie("abc", "/", true),
            "oauth_app_session=abc; Path=/; Max-Age=28800; HttpOnly; SameSite=Lax; Secure"
        );
        assert!(clear_cookie("/", false).contains("Max-Age=0"));
    }

    #[test]
    fn tokens_debug_hides_secrets() {
        let shown = format!("{:?}", tokens("very-secret"));
        assert!(!shown.contains("very-secret"));
    }
}
