//! The app's routes: `/`, `/login`, `/callback`, `/records`, `/logout`.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use poem::{
    IntoResponse, Request, Response, handler,
    http::{StatusCode, header},
    web::{Data, Html, Query},
};
use serde::Deserialize;

use crate::{
    error::{self, AppError},
    html,
    inlet::{Grant, Inlet, InletError, TokenResponse},
    pkce,
    session::{self, PendingLogin, Sessions, Tokens},
};

/// Everything the handlers share.
pub(crate) struct Shared {
    pub inlet: Inlet,
    pub sessions: Sessions,
    pub scope: String,
    /// The app's public URL without a trailing `/`.
    pub base: String,
    pub redirect_uri: String,
    pub cookie_path: String,
    pub secure: bool,
}

impl Shared {
    fn set_cookie(&self, id: &str) -> String {
        session::set_cookie(id, &self.cookie_path, self.secure)
    }

    fn clear_cookie(&self) -> String {
        session::clear_cookie(&self.cookie_path, self.secure)
    }

    /// A 303 to the start page.
    fn to_start(&self) -> Response {
        see_other(&format!("{}/", self.base))
    }
}

fn see_other(location: &str) -> Response {
    Response::builder()
        .status(StatusCode::SEE_OTHER)
        .header(header::LOCATION, location)
        .header(header::CACHE_CONTROL, "no-store")
        .finish()
}

/// Query of `/` and `/records`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ListParams {
    q: Option<String>,
    cursor: Option<String>,
}

/// Query of `/callback`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CallbackParams {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `/`: the sign-in link, or the records when signed in.
#[handler]
pub(crate) async fn index(
    shared: Data<&Arc<Shared>>,
    req: &Request,
    Query(params): Query<ListParams>,
) -> Result<Response, AppError> {
    match signed_in(&shared, req) {
        Some((sid, tokens)) => list(&shared, &sid, tokens, &params).await,
        None => Ok(Html(html::home())
            .with_header(header::CACHE_CONTROL, "no-store")
            .into_response()),
    }
}

/// `/records`: the signed-in user's records; signed out, back to the start page.
#[handler]
pub(crate) async fn records(
    shared: Data<&Arc<Shared>>,
    req: &Request,
    Query(params): Query<ListParams>,
) -> Result<Response, AppError> {
    match signed_in(&shared, req) {
        Some((sid, tokens)) => list(&shared, &sid, tokens, &params).await,
        None => Ok(shared.to_start()),
    }
}

fn signed_in(shared: &Shared, req: &Request) -> Option<(String, Tokens)> {
    let sid = session::cookie_id(req)?;
    let tokens = shared.sessions.tokens(&sid)?;
    Some((sid, tokens))
}

/// Lists records; an expired token is refreshed first, a refused one refreshed once and the
/// call retried.
async fn list(
    shared: &Shared,
    sid: &str,
    mut tokens: Tokens,
    params: &ListParams,
) -> Result<Response, AppError> {
    let q = params.q.as_deref().map(str::trim).filter(|q| !q.is_empty());
    let cursor = params.cursor.as_deref().filter(|c| !c.is_empty());
    let mut refreshed = false;
    if tokens.expired() && tokens.refresh_token.is_some() {
        tokens = refresh(shared, sid, &tokens).await?;
        refreshed = true;
    }
    let mut result = shared.inlet.search(&tokens.access_token, q, cursor).await;
    if matches!(result, Err(InletError::Unauthorized))
        && !refreshed
        && tokens.refresh_token.is_some()
    {
        tokens = refresh(shared, sid, &tokens).await?;
        result = shared.inlet.search(&tokens.access_token, q, cursor).await;
    }
    match result {
        Ok(page) => Ok(Html(html::records(tokens.user_id.as_deref(), q, &page))
            .with_header(header::CACHE_CONTROL, "no-store")
            .into_response()),
        Err(InletError::Unauthorized) => {
            shared.sessions.clear_tokens(sid);
            Err(AppError::new(
                StatusCode::UNAUTHORIZED,
                "Inlet no longer accepts this application's access; please sign in again.",
            )
            .with_sign_in())
        }
        Err(e) => {
            tracing::warn!(error = %e, "search at Inlet failed");
            Err(e.into())
        }
    }
}

/// Exchanges the refresh token for a new access token and stores it in the session.
async fn refresh(shared: &Shared, sid: &str, old: &Tokens) -> Result<Tokens, AppError> {
    let Some(refresh_token) = old.refresh_token.as_deref() else {
        return Err(AppError::from(InletError::Unauthorized));
    };
    match shared.inlet.token(Grant::Refresh { refresh_token }).await {
        Ok(resp) => {
            let mut fresh = tokens_from(resp, old.user_id.clone());
            if fresh.refresh_token.is_none() {
                // Inlet keeps the refresh token valid and sends no new one (spec 4.3).
                fresh.refresh_token = Some(refresh_token.to_string());
            }
            shared
                .sessions
                .replace_tokens(sid, refresh_token, fresh.clone());
            tracing::info!("access token refreshed");
            Ok(fresh)
        }
        Err(InletError::OAuth { error, .. }) if error == "invalid_grant" => {
            shared.sessions.clear_tokens(sid);
            Err(AppError::new(
                StatusCode::UNAUTHORIZED,
                "Your authorization at Inlet has ended (revoked or expired); please sign in again.",
            )
            .with_sign_in())
        }
        Err(e) => {
            tracing::warn!(error = %e, "refresh at Inlet failed");
            Err(e.into())
        }
    }
}

fn tokens_from(resp: TokenResponse, user_fallback: Option<String>) -> Tokens {
    Tokens {
        expires_at: resp
            .expires_in
            .map(|s| Instant::now() + Duration::from_secs(s)),
        access_token: resp.access_token,
        refresh_token: resp.refresh_token,
        user_id: resp.user_id.or(user_fallback),
        scope: resp.scope,
    }
}

/// `/login`: a new state and PKCE verifier in the session, then off to Inlet's authorize page.
#[handler]
pub(crate) async fn login(shared: Data<&Arc<Shared>>, req: &Request) -> Result<Response, AppError> {
    let meta = shared.inlet.metadata().await.map_err(|e| {
        tracing::warn!(error = %e, "discovery at Inlet failed");
        AppError::from(e)
    })?;
    let state = pkce::random_token();
    let verifier = pkce::random_token();
    let url = shared.inlet.authorize_url(
        &meta,
        &shared.redirect_uri,
        &shared.scope,
        &state,
        &pkce::challenge(&verifier),
    )?;
    let sid = shared.sessions.begin_login(
        session::cookie_id(req).as_deref(),
        PendingLogin {
            state,
            verifier,
            started: Instant::now(),
        },
    );
    let mut resp = see_other(url.as_str());
    if let Ok(v) = shared.set_cookie(&sid).parse() {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(resp)
}

/// `/callback`: checks `state`, exchanges the code (with the PKCE verifier) and signs in.
#[handler]
pub(crate) async fn callback(
    shared: Data<&Arc<Shared>>,
    req: &Request,
    Query(params): Query<CallbackParams>,
) -> Result<Response, AppError> {
    let bad = |msg: String| AppError::new(StatusCode::BAD_REQUEST, msg).with_sign_in();
    let sid =
        session::cookie_id(req).ok_or_else(|| bad(session::PendingError::NoSession.to_string()))?;
    let state = params
        .state
        .as_deref()
        .ok_or_else(|| bad("the callback carries no state parameter".into()))?;
    let pending = shared.sessions.take_pending(&sid, state).map_err(|e| {
        tracing::warn!(reason = %e, "callback refused");
        bad(e.to_string())
    })?;
    if let Some(error) = params.error.as_deref() {
        let detail = params
            .error_description
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(if error == "access_denied" {
            AppError::new(
                StatusCode::FORBIDDEN,
                "You did not allow this application to access Inlet.",
            )
            .with_sign_in()
        } else {
            bad(format!(
                "Inlet did not authorize the application: {error}{detail}"
            ))
        });
    }
    let code = params
        .code
        .as_deref()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| bad("the callback carries no code".into()))?;
    let grant = Grant::Code {
        code,
        redirect_uri: &shared.redirect_uri,
        verifier: &pending.verifier,
        scope: &shared.scope,
    };
    let tokens = match shared.inlet.token(grant).await {
        Ok(resp) => tokens_from(resp, None),
        Err(InletError::OAuth {
            status,
            error,
            description,
        }) if status == StatusCode::BAD_REQUEST => {
            let detail = description.map(|d| format!(" ({d})")).unwrap_or_default();
            return Err(bad(format!(
                "Inlet refused the authorization code: {error}{detail}"
            )));
        }
        Err(e) => {
            tracing::warn!(error = %e, "code exchange at Inlet failed");
            return Err(e.into());
        }
    };
    tracing::info!(
        user = tokens.user_id.as_deref().unwrap_or("?"),
        scope = tokens.scope.as_deref().unwrap_or("?"),
        "signed in"
    );
    let new_sid = shared.sessions.sign_in(&sid, tokens);
    let mut resp = shared.to_start();
    if let Ok(v) = shared.set_cookie(&new_sid).parse() {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(resp)
}

/// `/logout` (GET or POST): revokes the tokens at Inlet and forgets the session.
#[handler]
pub(crate) async fn logout(shared: Data<&Arc<Shared>>, req: &Request) -> Response {
    let tokens = session::cookie_id(req).and_then(|sid| shared.sessions.remove(&sid));
    let mut failure = None;
    if let Some(t) = tokens {
        // Inlet revokes the whole grant with the refresh token; the access token is revoked
        // first as well, for servers that do not.
        let mut pairs = vec![(t.access_token.as_str(), "access_token")];
        if let Some(r) = t.refresh_token.as_deref() {
            pairs.push((r, "refresh_token"));
        }
        for (token, hint) in pairs {
            if let Err(e) = shared.inlet.revoke(token, hint).await {
                tracing::warn!(error = %e, hint, "revocation at Inlet failed");
                failure = Some(e);
            }
        }
    }
    let mut resp = match failure {
        None => shared.to_start(),
        Some(e) => error::page(
            StatusCode::BAD_GATEWAY,
            &format!("You are signed out here, but revoking the token at Inlet failed: {e}"),
            false,
        ),
    };
    if let Ok(v) = shared.clear_cookie().parse() {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
}
