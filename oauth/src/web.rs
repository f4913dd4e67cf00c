//! `/oauth/authorize`: request validation, the login page, the consent page and the redirect back
//! to the client (RFC 6749 4.1.1–4.1.2), and the public logo route for the consent page.

use chrono::Duration;
use inlet_core::{
    oauth::{self, AuthCode, CODE_SECONDS, OAuthClient, Session},
    time,
    token::User,
};
use poem::{
    Body, IntoResponse, Request, Response, handler,
    http::{StatusCode, header},
    web::{Data, Form, Path, Query},
};
use serde::Deserialize;
use uuid::Uuid;

use super::{
    LOGIN_ADDRESS_FAILURES, LOGIN_FAILURES, SESSION_COOKIE, SESSION_SECONDS, base_url,
    identity_key, new_secret,
    pages::{self, AppView},
    remote_key, secrets_equal, stored_hash,
};
use inlet_http::problem::ApiError;

use crate::OAuthState;

/// The authorization request's parameters (query of GET, hidden fields of the forms).
#[derive(Debug, Default, Clone, Deserialize)]
pub struct AuthorizeParams {
    client_id: Option<String>,
    response_type: Option<String>,
    redirect_uri: Option<String>,
    state: Option<String>,
    scope: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
}

impl AuthorizeParams {
    fn pairs(&self) -> Vec<(&'static str, &str)> {
        [
            ("client_id", &self.client_id),
            ("response_type", &self.response_type),
            ("redirect_uri", &self.redirect_uri),
            ("state", &self.state),
            ("scope", &self.scope),
            ("code_challenge", &self.code_challenge),
            ("code_challenge_method", &self.code_challenge_method),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
        .collect()
    }

    fn hidden(&self) -> String {
        pages::hidden(&self.pairs())
    }

    fn query(&self) -> String {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in self.pairs() {
            q.append_pair(k, v);
        }
        q.finish()
    }
}

/// The forms posted back to `/oauth/authorize`.
#[derive(Debug, Deserialize)]
pub struct AuthorizeForm {
    #[serde(flatten)]
    params: AuthorizeParams,
    step: Option<String>,
    email: Option<String>,
    password: Option<String>,
    csrf_token: Option<String>,
    login_token: Option<String>,
    decision: Option<String>,
}

/// A request that passed validation.
struct Valid {
    client: OAuthClient,
    redirect_uri: String,
    scope: String,
    scopes: Vec<String>,
    state: Option<String>,
    challenge: Option<String>,
}

/// An HTML page with the headers every page of the flow carries.
fn html(status: StatusCode, body: String) -> Response {
    Response::builder()
        .status(status)
        .content_type("text/html; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::X_FRAME_OPTIONS, "DENY")
        // Nothing of the page's URL (the authorization request) goes to another site, and the
        // page's own form posts still carry their real `Origin` (under `no-referrer` browsers
        // send `Origin: null`, which the sign-in check must refuse).
        .header(header::REFERRER_POLICY, "same-origin")
        .header(
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; \
             frame-ancestors 'none'; base-uri 'none'",
        )
        .body(body)
}

fn error_page(title: &str, detail: &str) -> Response {
    html(StatusCode::BAD_REQUEST, pages::error(title, detail))
}

/// `redirect_uri` with extra query parameters.
fn redirect_to(uri: &str, pairs: &[(&str, &str)]) -> Response {
    match url::Url::parse(uri) {
        Ok(mut url) => {
            {
                let mut q = url.query_pairs_mut();
                for (k, v) in pairs {
                    q.append_pair(k, v);
                }
            }
            Response::builder()
                .status(StatusCode::SEE_OTHER)
                .header(header::LOCATION, url.as_str())
                .header(header::CACHE_CONTROL, "no-store")
                .finish()
        }
        Err(_) => error_page(
            "Invalid redirect URI",
            "The application's redirect URI is not a valid URL.",
        ),
    }
}

fn redirect_error(v: &Valid, error: &str, description: &str) -> Response {
    let mut pairs = vec![("error", error), ("error_description", description)];
    if let Some(s) = &v.state {
        pairs.push(("state", s));
    }
    redirect_to(&v.redirect_uri, &pairs)
}

/// Whether `requested` is one of the `registered` redirect URIs: exactly, or (RFC 8252 7.3) a
/// registered `http` URI on the loopback address `127.0.0.1` or `[::1]` with any port, as a
/// native app listens on whatever port it was given. `localhost` is matched exactly only
/// (RFC 8252 8.3: it may resolve elsewhere).
pub(super) fn redirect_allowed(registered: &[String], requested: &str) -> bool {
    if registered.iter().any(|r| r == requested) {
        return true;
    }
    let Ok(asked) = url::Url::parse(requested) else {
        return false;
    };
    let loopback = |u: &url::Url| {
        let host = match u.host() {
            Some(url::Host::Ipv4(ip)) => ip == std::net::Ipv4Addr::LOCALHOST,
            Some(url::Host::Ipv6(ip)) => ip == std::net::Ipv6Addr::LOCALHOST,
            _ => false,
        };
        u.scheme() == "http" && host
    };
    if !loopback(&asked) || asked.username() != "" || asked.password().is_some() {
        return false;
    }
    registered.iter().any(|r| {
        url::Url::parse(r).is_ok_and(|reg| {
            loopback(&reg)
                && reg.host() == asked.host()
                && reg.path() == asked.path()
                && reg.query() == asked.query()
        })
    })
}

/// Validates client and redirect URI first (errors shown, never redirected), then the rest
/// (errors redirected with `error` and `state`).
async fn validate(state: &OAuthState, p: &AuthorizeParams) -> Result<Valid, Response> {
    let client_id = p.client_id.as_deref().unwrap_or_default();
    let client = match Uuid::parse_str(client_id.trim()) {
        Ok(id) => state.tokens.client(id).await.map_err(store_error)?,
        Err(_) => None,
    };
    let Some(client) = client else {
        return Err(error_page(
            "Unknown application",
            "The client_id of this request does not name a registered application.",
        ));
    };
    let redirect_uri = p.redirect_uri.clone().unwrap_or_default();
    if !redirect_allowed(&client.redirect_uris, &redirect_uri) {
        return Err(error_page(
            "Invalid redirect URI",
            "The redirect_uri of this request is not registered for this application.",
        ));
    }
    let ws = state
        .tokens
        .workspace_by_id(client.workspace_id)
        .await
        .map_err(store_error)?;
    let mut v = Valid {
        redirect_uri,
        scope: String::new(),
        scopes: Vec::new(),
        state: p.state.clone(),
        challenge: None,
        client,
    };
    if !ws.is_some_and(|w| w.oauth_enabled) {
        return Err(redirect_error(
            &v,
            "unauthorized_client",
            "OAuth is disabled for this workspace",
        ));
    }
    if p.response_type.as_deref() != Some("code") {
        return Err(redirect_error(
            &v,
            "unsupported_response_type",
            "response_type must be code",
        ));
    }
    let raw = p.scope.clone().unwrap_or_default();
    let mut scopes = oauth::parse_scopes(&raw);
    if scopes.is_empty() {
        scopes = v.client.scopes.clone();
        v.scope = scopes.join(",");
    } else {
        v.scope = raw;
    }
    if let Some(unknown) = oauth::unknown_scope(&scopes) {
        let msg = format!("unknown scope '{unknown}'");
        return Err(redirect_error(&v, "invalid_scope", &msg));
    }
    if !oauth::is_subset(&scopes, &v.client.scopes) {
        return Err(redirect_error(
            &v,
            "invalid_scope",
            "the requested scope exceeds the application's scopes",
        ));
    }
    v.scopes = scopes;
    match (
        p.code_challenge.as_deref(),
        p.code_challenge_method.as_deref(),
    ) {
        (None, None) => {}
        (Some(c), Some("S256")) if (43..=128).contains(&c.len()) => {
            v.challenge = Some(c.to_string());
        }
        (Some(_), None | Some("plain")) => {
            return Err(redirect_error(
                &v,
                "invalid_request",
                "only code_challenge_method=S256 is supported",
            ));
        }
        _ => {
            return Err(redirect_error(
                &v,
                "invalid_request",
                "code_challenge must be 43-128 characters with code_challenge_method=S256",
            ));
        }
    }
    Ok(v)
}

fn store_error(e: inlet_core::Error) -> Response {
    let e = ApiError::from(e);
    html(
        e.status,
        pages::error("Temporarily unavailable", "Please try again in a moment."),
    )
}

fn app_view<'a>(client: &'a OAuthClient) -> AppView<'a> {
    AppView {
        name: &client.name,
        description: &client.description,
        bottom_description: &client.bottom_description,
        logo_url: client
            .has_logo
            .then(|| format!("/oauth/logo/{}", client.id)),
    }
}

fn cookie_value(req: &Request, name: &str) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// Name of the pre-login cookie the sign-in form's anti-forgery token is bound to.
const LOGIN_COOKIE: &str = "inlet_login";

/// The request's pre-login token (from its cookie), or a new one with the `Set-Cookie` value
/// that binds it to this browser. A cross-site page can neither read the cookie nor, under
/// `SameSite=Strict`, have the browser send it, so it cannot post a sign-in form that matches.
fn login_token(state: &OAuthState, req: &Request) -> (String, Option<String>) {
    if let Some(token) = cookie_value(req, LOGIN_COOKIE)
        .filter(|t| t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return (token, None);
    }
    let token = new_secret();
    let cookie = format!(
        "{LOGIN_COOKIE}={token}; Path=/oauth; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECONDS}{}",
        secure_attribute(state)
    );
    (token, Some(cookie))
}

/// `; Secure` when the service is reached over https.
fn secure_attribute(state: &OAuthState) -> &'static str {
    if base_url(state).starts_with("https://") {
        "; Secure"
    } else {
        ""
    }
}

/// Whether a form post comes from a page of this service: a browser's `Origin` header, when
/// sent, must name this host (the request's `Host`, or `--public-url`'s). `Origin: null`
/// (sandboxed or privacy-redirected contexts) is refused too.
fn same_origin(state: &OAuthState, req: &Request) -> bool {
    let Some(origin) = req.header(header::ORIGIN) else {
        return true;
    };
    let Some(origin) = authority_of(origin) else {
        return false;
    };
    // HTTP/1 says where it was sent in `Host`, HTTP/2 in the request's `:authority`.
    let host = req
        .header(header::HOST)
        .map(str::to_ascii_lowercase)
        .or_else(|| {
            req.uri()
                .authority()
                .map(|a| a.as_str().to_ascii_lowercase())
        });
    let public = state.public_url.as_deref().and_then(authority_of);
    host.as_deref() == Some(origin.as_str()) || public.as_deref() == Some(origin.as_str())
}

/// `host[:port]` of a URL, lower-cased.
fn authority_of(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    let host = url.host_str()?;
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    Some(authority.to_ascii_lowercase())
}

/// The page a form post from another site gets: nothing is done.
fn cross_site_refusal() -> Response {
    html(
        StatusCode::FORBIDDEN,
        pages::error(
            "Request not accepted",
            "The form was not sent from this service's own page. Start again from the application.",
        ),
    )
}

/// The logged-in user of the request's session, if they belong to the client's workspace.
async fn session_user(
    state: &OAuthState,
    req: &Request,
    client: &OAuthClient,
) -> Result<Option<(Session, User)>, Response> {
    let Some(value) = cookie_value(req, SESSION_COOKIE) else {
        return Ok(None);
    };
    let Some(session) = state
        .tokens
        .session(&stored_hash(&value))
        .await
        .map_err(store_error)?
    else {
        return Ok(None);
    };
    if session.expires_at <= time::now() {
        return Ok(None);
    }
    let user = state
        .tokens
        .user_by_id(session.user_id)
        .await
        .map_err(store_error)?;
    Ok(user
        .filter(|u| u.workspace_id == client.workspace_id)
        .map(|u| (session, u)))
}

/// The sign-in page, carrying the pre-login token (and setting its cookie when it is new).
fn login_page(
    state: &OAuthState,
    req: &Request,
    v: &Valid,
    p: &AuthorizeParams,
    status: StatusCode,
    msg: Option<&str>,
    email: &str,
) -> Response {
    let (token, cookie) = login_token(state, req);
    let hidden = format!(
        "{}{}",
        p.hidden(),
        pages::hidden(&[("login_token", token.as_str())])
    );
    let mut resp = html(
        status,
        pages::login(&app_view(&v.client), &hidden, msg, email),
    );
    if let Some(value) = cookie.and_then(|c| header::HeaderValue::from_str(&c).ok()) {
        resp.headers_mut().insert(header::SET_COOKIE, value);
    }
    resp
}

fn consent_page(v: &Valid, p: &AuthorizeParams, session: &Session, user: &User) -> Response {
    html(
        StatusCode::OK,
        pages::consent(
            &app_view(&v.client),
            &user.email,
            &v.scopes,
            &p.hidden(),
            &session.csrf_token,
        ),
    )
}

/// `GET /oauth/authorize`: the login page, or the consent page for a signed-in user.
#[handler]
pub async fn authorize_get(
    req: &Request,
    state: Data<&OAuthState>,
    Query(p): Query<AuthorizeParams>,
) -> Response {
    let v = match validate(&state, &p).await {
        Ok(v) => v,
        Err(resp) => return resp,
    };
    match session_user(&state, req, &v.client).await {
        Ok(Some((session, user))) => consent_page(&v, &p, &session, &user),
        Ok(None) => login_page(&state, req, &v, &p, StatusCode::OK, None, ""),
        Err(resp) => resp,
    }
}

/// `POST /oauth/authorize`: the login form (`step=login`) or the consent form (`step=consent`).
#[handler]
pub async fn authorize_post(
    req: &Request,
    state: Data<&OAuthState>,
    Form(form): Form<AuthorizeForm>,
) -> Response {
    let v = match validate(&state, &form.params).await {
        Ok(v) => v,
        Err(resp) => return resp,
    };
    if !same_origin(&state, req) {
        return cross_site_refusal();
    }
    let result = match form.step.as_deref() {
        Some("login") => login(&state, req, &v, &form).await,
        Some("consent") => consent(&state, req, &v, &form).await,
        _ => Ok(login_page(
            &state,
            req,
            &v,
            &form.params,
            StatusCode::BAD_REQUEST,
            None,
            "",
        )),
    };
    result.unwrap_or_else(store_error_api)
}

fn store_error_api(e: ApiError) -> Response {
    html(
        e.status,
        pages::error("Something went wrong", "Please try again in a moment."),
    )
}

/// Checks a password against a user's hash. Without a user it checks against a hash of a
/// password nobody has, so an unknown e-mail costs the same time as a wrong password and the
/// answer's timing does not tell which e-mails have accounts.
async fn verify_password(user: Option<&User>, password: String) -> bool {
    static NOBODY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let hash = match user {
        Some(u) => u.password_hash.clone(),
        None => {
            let hash = NOBODY
                .get_or_init(|| {
                    inlet_http::credentials::hash_password(&Uuid::new_v4().to_string())
                        .unwrap_or_default()
                })
                .clone();
            // Verify against it, then refuse whatever the outcome.
            let _ = verify_hash(hash, password).await;
            return false;
        }
    };
    verify_hash(hash, password).await
}

async fn verify_hash(hash: String, password: String) -> bool {
    tokio::task::spawn_blocking(move || inlet_http::credentials::password_matches(&hash, &password))
        .await
        .unwrap_or(false)
}

async fn login(
    state: &OAuthState,
    req: &Request,
    v: &Valid,
    form: &AuthorizeForm,
) -> Result<Response, ApiError> {
    let email = form.email.clone().unwrap_or_default().trim().to_string();
    let bound = cookie_value(req, LOGIN_COOKIE).is_some_and(|cookie| {
        form.login_token
            .as_deref()
            .is_some_and(|t| !t.is_empty() && secrets_equal(t, &cookie))
    });
    if !bound {
        // Not posted from the sign-in page this browser was shown (a cross-site form, or the
        // cookie expired): sign no one in; show the page again with a fresh token.
        return Ok(login_page(
            state,
            req,
            v,
            &form.params,
            StatusCode::FORBIDDEN,
            Some(
                "This sign-in form has expired or was not sent from this page. Please sign in again.",
            ),
            &email,
        ));
    }
    let password = form.password.clone().unwrap_or_default();
    let key = identity_key(state, "login", &email, req);
    let address_key = format!("login-ip:{}", remote_key(state, req));
    let mut wait = LOGIN_ADDRESS_FAILURES.blocked(state, &address_key).await?;
    if let Some(key) = &key
        && wait.is_none()
    {
        wait = LOGIN_FAILURES.blocked(state, key).await?;
    }
    if let Some(retry) = wait {
        let mut resp = login_page(
            state,
            req,
            v,
            &form.params,
            StatusCode::TOO_MANY_REQUESTS,
            Some(&format!(
                "Too many failed sign-ins. Try again in {} minute(s).",
                (retry + 59) / 60
            )),
            &email,
        );
        if let Ok(value) = header::HeaderValue::from_str(&retry.to_string()) {
            resp.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return Ok(resp);
    }
    let user = state.tokens.user_by_email(&email).await?;
    let ok = verify_password(user.as_ref(), password).await;
    let Some(user) = user.filter(|_| ok) else {
        LOGIN_ADDRESS_FAILURES.fail(state, &address_key).await?;
        if let Some(key) = &key {
            LOGIN_FAILURES.fail(state, key).await?;
        }
        return Ok(login_page(
            state,
            req,
            v,
            &form.params,
            StatusCode::UNAUTHORIZED,
            Some("Wrong e-mail or password."),
            &email,
        ));
    };
    if user.workspace_id != v.client.workspace_id {
        return Ok(login_page(
            state,
            req,
            v,
            &form.params,
            StatusCode::FORBIDDEN,
            Some(
                "This application belongs to another workspace; sign in with an account of that workspace.",
            ),
            &email,
        ));
    }
    let secret = new_secret();
    let session = Session {
        id_hash: stored_hash(&secret),
        user_id: user.id,
        csrf_token: new_secret(),
        expires_at: time::now() + Duration::seconds(SESSION_SECONDS),
    };
    state.tokens.save_session(&session).await?;
    let secure = secure_attribute(state);
    let cookie = format!(
        "{SESSION_COOKIE}={secret}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age={SESSION_SECONDS}{secure}"
    );
    Ok(Response::builder()
        .status(StatusCode::SEE_OTHER)
        .header(
            header::LOCATION,
            format!("/oauth/authorize?{}", form.params.query()),
        )
        .header(header::SET_COOKIE, cookie)
        .header(header::CACHE_CONTROL, "no-store")
        .finish())
}

async fn consent(
    state: &OAuthState,
    req: &Request,
    v: &Valid,
    form: &AuthorizeForm,
) -> Result<Response, ApiError> {
    let session = match session_user(state, req, &v.client).await {
        Ok(s) => s,
        Err(resp) => return Ok(resp),
    };
    let Some((session, user)) = session else {
        return Ok(login_page(
            state,
            req,
            v,
            &form.params,
            StatusCode::UNAUTHORIZED,
            Some("Your session has ended; sign in again."),
            "",
        ));
    };
    let csrf = form.csrf_token.as_deref().unwrap_or_default();
    if !secrets_equal(csrf, &session.csrf_token) {
        return Ok(html(
            StatusCode::FORBIDDEN,
            pages::error(
                "Request not accepted",
                "The form was not sent from this consent page. Start again from the application.",
            ),
        ));
    }
    if form.decision.as_deref() != Some("approve") {
        return Ok(redirect_error(
            v,
            "access_denied",
            "the user denied the request",
        ));
    }
    let code = new_secret();
    state
        .tokens
        .save_code(&AuthCode {
            code_hash: stored_hash(&code),
            grant_id: Uuid::new_v4(),
            client_id: v.client.id,
            workspace_id: user.workspace_id,
            user_id: user.id,
            redirect_uri: v.redirect_uri.clone(),
            scope: v.scope.clone(),
            code_challenge: v.challenge.clone(),
            expires_at: time::now() + Duration::seconds(CODE_SECONDS),
        })
        .await?;
    let mut pairs = vec![("code", code.as_str())];
    if let Some(s) = &v.state {
        pairs.push(("state", s));
    }
    Ok(redirect_to(&v.redirect_uri, &pairs))
}

/// `GET /oauth/logo/{clientId}`: the client's logo for the consent page.
#[handler]
pub async fn logo(state: Data<&OAuthState>, Path(client_id): Path<String>) -> Response {
    let Ok(id) = Uuid::parse_str(&client_id) else {
        return ApiError::not_found("no such logo").into_response();
    };
    match state.tokens.client_logo(id).await {
        Ok(Some(logo)) => Response::builder()
            .content_type(logo.content_type)
            .header(header::CACHE_CONTROL, "public, max-age=300")
            .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
            .header(
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; sandbox",
            )
            .body(Body::from(logo.bytes)),
        Ok(None) => ApiError::not_found("no such logo").into_response(),
        Err(e) => ApiError::from(e).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::redirect_allowed;

    #[test]
    fn loopback_redirects_match_any_port_and_nothing_else_does() {
        let registered = [
            "http://127.0.0.1/callback".to_string(),
            "http://[::1]:8000/cb".to_string(),
            "https://app.test/cb".to_string(),
            "http://localhost/cb".to_string(),
        ];
        for ok in [
            "http://127.0.0.1/callback",
            "http://127.0.0.1:51234/callback",
            "http://[::1]:9/cb",
            "http://[::1]/cb",
            "https://app.test/cb",
            "http://localhost/cb",
        ] {
            assert!(redirect_allowed(&registered, ok), "{ok}");
        }
        for refused in [
            "http://127.0.0.1:51234/other",
            "http://127.0.0.1:51234/callback?x=1",
            "http://127.0.0.2:51234/callback",
            "http://[::1]:9/callback",
            "https://127.0.0.1:443/callback",
            "https://app.test:8443/cb",
            "http://localhost:8080/cb",
            "http://user@127.0.0.1:5/callback",
            "not a url",
        ] {
            assert!(!redirect_allowed(&registered, refused), "{refused}");
        }
    }
}
