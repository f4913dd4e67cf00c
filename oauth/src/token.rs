//! The token endpoint (spec 4.3, RFC 6749 4.1.3 and 6), revocation (RFC 7009), introspection
//! (RFC 7662) and the authorization server metadata (RFC 8414), as OpenAPI operations.
//!
//! Parameters are read from the query string (as the spec shows) and from an
//! `application/x-www-form-urlencoded` body (RFC 6749); a parameter given twice is refused.

use base64::{
    Engine,
    engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD},
};
use chrono::Duration;
use inlet_core::{
    oauth::{self, ACCESS_TOKEN_SECONDS, OAuthClient, OAuthToken, Redemption, TokenKind},
    time,
};
use poem::{Request, RequestBody, web::Data};
use poem_openapi::{
    ApiExtractor, ApiExtractorType, ApiResponse, ExtractParamOptions, Object, OpenApi, Tags,
    payload::Json,
    registry::{MetaMediaType, MetaRequest, Registry},
    types::Type,
};
use serde::{Deserialize, de::DeserializeOwned};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{
    TOKEN_FAILURES, authenticate_client, base_url, identity_key, new_secret, remote_key,
    stored_hash, token_standing,
};
use inlet_http::problem::ApiError;

use crate::OAuthState;

#[derive(Tags)]
enum OAuthTags {
    /// OAuth2 authorization server: tokens, revocation, introspection, metadata.
    #[oai(rename = "OAuth2")]
    OAuth,
}

/// Parameters of a token request.
// The document's form body and what the handler reads, so the two cannot differ.
#[derive(Debug, Default, Object, Deserialize)]
#[serde(default)]
struct TokenRequest {
    /// `authorization_code` or `refresh_token`.
    grant_type: String,
    /// The authorization code (authorization_code grant).
    code: Option<String>,
    /// The redirect URI of the authorization request (authorization_code grant).
    redirect_uri: Option<String>,
    /// Optional: equal to the authorized scope (code grant) or narrower (refresh grant).
    scope: Option<String>,
    /// The refresh token (refresh_token grant).
    refresh_token: Option<String>,
    /// PKCE verifier, when the authorization request carried a code_challenge.
    code_verifier: Option<String>,
    /// The client's id (or use HTTP Basic).
    client_id: Option<String>,
    /// The client's secret (or use HTTP Basic).
    client_secret: Option<String>,
}

/// Parameters of a revocation or introspection request.
// The document's form body and what the handlers read, so the two cannot differ.
#[derive(Debug, Default, Object, Deserialize)]
#[serde(default)]
struct TokenLookup {
    /// The access or refresh token.
    token: String,
    /// `access_token` or `refresh_token` (a hint only).
    token_type_hint: Option<String>,
    /// The client's id (or use HTTP Basic).
    client_id: Option<String>,
    /// The client's secret (or use HTTP Basic).
    client_secret: Option<String>,
}

/// The client credentials a form may carry (RFC 6749 2.3.1).
trait ClientForm {
    /// `client_id`, when given.
    fn client_id(&self) -> Option<&str>;
    /// `client_secret`, when given.
    fn client_secret(&self) -> Option<&str>;
}

impl ClientForm for TokenRequest {
    fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }
    fn client_secret(&self) -> Option<&str> {
        self.client_secret.as_deref()
    }
}

impl ClientForm for TokenLookup {
    fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }
    fn client_secret(&self) -> Option<&str> {
        self.client_secret.as_deref()
    }
}

/// Request parameters merged from the query string and a form body, read as the form `D` the
/// document shows. An empty value counts as absent; a parameter given twice is noted.
pub struct Params<D> {
    form: D,
    repeated: Option<String>,
}

/// Adds name/value pairs to `values`, noting the first name given twice.
fn add_pairs(
    values: &mut serde_json::Map<String, serde_json::Value>,
    repeated: &mut Option<String>,
    pairs: url::form_urlencoded::Parse<'_>,
) {
    for (k, v) in pairs {
        if values.contains_key(k.as_ref()) {
            repeated.get_or_insert_with(|| k.to_string());
        } else {
            values.insert(k.into_owned(), v.into_owned().into());
        }
    }
}

impl<'a, D: Type + DeserializeOwned> ApiExtractor<'a> for Params<D> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        D::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: Some(
                "Parameters as an application/x-www-form-urlencoded body (RFC 6749); the same \
                 parameters are also accepted in the query string (spec 4.3).",
            ),
            content: vec![MetaMediaType {
                content_type: "application/x-www-form-urlencoded",
                schema: D::schema_ref(),
            }],
            required: false,
        })
    }

    async fn from_request(
        req: &'a Request,
        body: &mut RequestBody,
        _opts: ExtractParamOptions<()>,
    ) -> poem::Result<Self> {
        let mut values = serde_json::Map::new();
        let mut repeated = None;
        add_pairs(
            &mut values,
            &mut repeated,
            url::form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes()),
        );
        let form = req.content_type().is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        });
        if form {
            let bytes = body.take()?.into_vec().await?;
            add_pairs(
                &mut values,
                &mut repeated,
                url::form_urlencoded::parse(&bytes),
            );
        }
        values.retain(|_, v| v.as_str().is_some_and(|v| !v.is_empty()));
        // Every field is a string with a default, so only a malformed form could fail here.
        let form = serde_json::from_value(values.into())
            .map_err(|_| ApiError::bad_request("the parameters cannot be read"))?;
        Ok(Self { form, repeated })
    }
}

/// A successful token response (spec 2.2).
#[derive(Debug, Object)]
pub struct TokenResponse {
    /// Always `bearer`.
    pub token_type: String,
    /// The scope as the client passed it.
    pub scope: String,
    /// The access token (opaque, one hour).
    pub access_token: String,
    /// Only from the authorization-code exchange.
    #[oai(skip_serializing_if_is_none)]
    pub refresh_token: Option<String>,
    /// The user's e-mail address.
    pub user_id: String,
    /// Seconds until the access token expires: 3599.
    pub expires_in: i64,
}

/// An RFC 6749 5.2 error body.
#[derive(Debug, Object)]
pub struct OAuthErrorBody {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
    /// `unsupported_grant_type`, `invalid_scope` or `too_many_requests`.
    pub error: String,
    /// Human-readable detail.
    #[oai(skip_serializing_if_is_none)]
    pub error_description: Option<String>,
}

/// Responses of the token, revocation and introspection endpoints.
#[derive(ApiResponse)]
pub enum OAuthResult<T: poem_openapi::types::ToJSON + Send + Sync> {
    /// Success. Never cached.
    #[oai(status = 200)]
    Ok(
        Json<T>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Pragma")] String,
    ),
    /// RFC 6749 5.2 error.
    #[oai(status = 400)]
    BadRequest(
        Json<OAuthErrorBody>,
        #[oai(header = "Cache-Control")] String,
    ),
    /// Client authentication failed (`invalid_client`).
    #[oai(status = 401)]
    Unauthorized(
        Json<OAuthErrorBody>,
        #[oai(header = "WWW-Authenticate")] String,
    ),
    /// Too many failed requests from this client or address; retry after the given seconds.
    #[oai(status = 429)]
    TooManyRequests(Json<OAuthErrorBody>, #[oai(header = "Retry-After")] String),
}

/// An OAuth error before it becomes a response.
struct Fail {
    status: u16,
    error: &'static str,
    description: String,
}

fn fail(error: &'static str, description: impl Into<String>) -> Fail {
    Fail {
        status: if error == "invalid_client" { 401 } else { 400 },
        error,
        description: description.into(),
    }
}

impl<T: poem_openapi::types::ToJSON + Send + Sync> OAuthResult<T> {
    fn ok(value: T) -> Self {
        Self::Ok(Json(value), "no-store".into(), "no-cache".into())
    }

    fn from_fail(f: Fail) -> Self {
        let body = Json(OAuthErrorBody {
            error: f.error.into(),
            error_description: Some(f.description),
        });
        match f.status {
            401 => Self::Unauthorized(body, "Basic realm=\"inlet-oauth\"".into()),
            429 => Self::TooManyRequests(body, "60".into()),
            _ => Self::BadRequest(body, "no-store".into()),
        }
    }
}

/// Client credentials from HTTP Basic (RFC 6749 2.3.1) or the parameters, never both.
fn client_credentials<D: ClientForm>(
    req: &Request,
    p: &Params<D>,
) -> Result<(String, String), Fail> {
    let header = req
        .header(poem::http::header::AUTHORIZATION)
        .unwrap_or_default();
    let basic = header
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, rest)| rest.trim());
    if let Some(encoded) = basic {
        if p.form.client_secret().is_some() {
            return Err(fail(
                "invalid_request",
                "authenticate the client with HTTP Basic or client_secret, not both",
            ));
        }
        let decoded = STANDARD
            .decode(encoded)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| fail("invalid_client", "malformed HTTP Basic credentials"))?;
        let (id, secret) = decoded
            .split_once(':')
            .ok_or_else(|| fail("invalid_client", "malformed HTTP Basic credentials"))?;
        let unescape = |s: &str| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        };
        let (id, secret) = (unescape(id), unescape(secret));
        if p.form.client_id().is_some_and(|given| given != id) {
            return Err(fail(
                "invalid_request",
                "client_id differs from the HTTP Basic user",
            ));
        }
        return Ok((id, secret));
    }
    match (p.form.client_id(), p.form.client_secret()) {
        (Some(id), Some(secret)) => Ok((id.to_string(), secret.to_string())),
        _ => Err(fail(
            "invalid_client",
            "client authentication required: client_id and client_secret, or HTTP Basic",
        )),
    }
}

/// Common start of every endpoint: repeated parameters, rate limits, client authentication.
async fn begin<D: ClientForm>(
    state: &OAuthState,
    req: &Request,
    p: &Params<D>,
) -> Result<Result<OAuthClient, Fail>, ApiError> {
    let ip_key = format!("token-ip:{}", remote_key(state, req));
    let client_key = p
        .form
        .client_id()
        .and_then(|id| identity_key(state, "token-client", id, req));
    for key in std::iter::once(&ip_key).chain(client_key.as_ref()) {
        if let Some(retry) = TOKEN_FAILURES.blocked(state, key).await? {
            return Ok(Err(Fail {
                status: 429,
                error: "too_many_requests",
                description: format!("too many failed requests; retry in {retry} s"),
            }));
        }
    }
    if let Some(name) = &p.repeated {
        return Ok(Err(fail(
            "invalid_request",
            format!("parameter '{name}' is given more than once"),
        )));
    }
    let (id, secret) = match client_credentials(req, p) {
        Ok(c) => c,
        Err(f) => return Ok(Err(f)),
    };
    Ok(authenticate_client(state, &id, &secret)
        .await?
        .ok_or_else(|| fail("invalid_client", "unknown client or wrong secret")))
}

/// Counts a failed request against the client and the remote address.
async fn count_failure<D: ClientForm>(
    state: &OAuthState,
    req: &Request,
    p: &Params<D>,
) -> Result<(), ApiError> {
    TOKEN_FAILURES
        .fail(state, &format!("token-ip:{}", remote_key(state, req)))
        .await?;
    if let Some(key) = p
        .form
        .client_id()
        .and_then(|id| identity_key(state, "token-client", id, req))
    {
        TOKEN_FAILURES.fail(state, &key).await?;
    }
    Ok(())
}

fn scopes_equal(a: &str, b: &str) -> bool {
    let mut a = oauth::parse_scopes(a);
    let mut b = oauth::parse_scopes(b);
    a.sort();
    a.dedup();
    b.sort();
    b.dedup();
    a == b
}

async fn issue(
    state: &OAuthState,
    kind: TokenKind,
    from: &OAuthToken,
) -> Result<Result<String, Fail>, ApiError> {
    let secret = new_secret();
    let token = OAuthToken {
        token_hash: stored_hash(&secret),
        kind,
        expires_at: (kind == TokenKind::Access)
            .then(|| time::now() + Duration::seconds(ACCESS_TOKEN_SECONDS)),
        created_date: time::now(),
        ..from.clone()
    };
    match state.tokens.save_token(&token).await {
        Ok(()) => Ok(Ok(secret)),
        Err(inlet_core::Error::NotFound(_)) => {
            Ok(Err(fail("invalid_client", "the client was deleted")))
        }
        // The workspace's OAuth was switched off since the request was checked.
        Err(inlet_core::Error::Forbidden(_)) => Ok(Err(fail(
            "invalid_grant",
            "OAuth is disabled for this workspace",
        ))),
        Err(e) => Err(e.into()),
    }
}

async fn user_email(state: &OAuthState, user_id: Uuid) -> Result<Result<String, Fail>, ApiError> {
    Ok(state
        .tokens
        .user_by_id(user_id)
        .await?
        .map(|u| u.email)
        .ok_or_else(|| fail("invalid_grant", "the user no longer exists")))
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(f) => return Ok(Err(f)),
        }
    };
}

/// The detail of an exchange refused after its code was redeemed: the code stays used up (single
/// use, as OAuth 2.1 advises), and the caller should know no tokens came of it.
fn burned(why: &str) -> String {
    format!(
        "{why}; the code is now used up (a code is single-use) and no tokens were issued: start \
         a new authorization"
    )
}

async fn code_grant(
    state: &OAuthState,
    client: &OAuthClient,
    p: &Params<TokenRequest>,
) -> Result<Result<TokenResponse, Fail>, ApiError> {
    let Some(code) = p.form.code.as_deref() else {
        return Ok(Err(fail("invalid_request", "code is required")));
    };
    let code = match state.tokens.redeem_code(&stored_hash(code)).await? {
        Redemption::Redeemed(c) => c,
        Redemption::Replayed(c) => {
            let revoked = state.tokens.revoke_grant(c.grant_id).await?;
            tracing::warn!(client = %c.client_id, revoked, "authorization code replayed; its tokens are revoked");
            return Ok(Err(fail(
                "invalid_grant",
                if revoked > 0 {
                    "the code was already used; the tokens issued from it are revoked"
                } else {
                    "the code was already used by an exchange that failed, so no tokens were \
                     issued from it; start a new authorization"
                },
            )));
        }
        Redemption::Unknown => {
            return Ok(Err(fail("invalid_grant", "the code is invalid")));
        }
    };
    if code.client_id != client.id {
        return Ok(Err(fail(
            "invalid_grant",
            burned("the code was issued to another client"),
        )));
    }
    if code.expires_at <= time::now() {
        return Ok(Err(fail("invalid_grant", burned("the code has expired"))));
    }
    if p.form.redirect_uri.as_deref() != Some(code.redirect_uri.as_str()) {
        return Ok(Err(fail(
            "invalid_grant",
            burned(&format!(
                "redirect_uri {} is not the one of the authorization request",
                p.form
                    .redirect_uri
                    .as_deref()
                    .map_or_else(|| "is missing and".to_string(), |r| format!("'{r}'"))
            )),
        )));
    }
    if let Some(scope) = p.form.scope.as_deref()
        && !scopes_equal(scope, &code.scope)
    {
        return Ok(Err(fail(
            "invalid_scope",
            burned("scope must equal the authorized scope"),
        )));
    }
    match (&code.code_challenge, p.form.code_verifier.as_deref()) {
        (None, None) => {}
        (Some(challenge), Some(verifier)) => {
            let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
            if !super::secrets_equal(&computed, challenge) {
                return Ok(Err(fail(
                    "invalid_grant",
                    burned("code_verifier does not match"),
                )));
            }
        }
        (Some(_), None) => {
            return Ok(Err(fail(
                "invalid_grant",
                burned("code_verifier is required"),
            )));
        }
        (None, Some(_)) => {
            return Ok(Err(fail(
                "invalid_grant",
                burned("code_verifier given but the authorization request had no code_challenge"),
            )));
        }
    }
    // Access withdrawn since the user approved: the redirect URI removed, OAuth switched off,
    // or the client's scopes narrowed below what was approved.
    if !super::web::redirect_allowed(&client.redirect_uris, &code.redirect_uri) {
        return Ok(Err(fail(
            "invalid_grant",
            burned("the authorization request's redirect_uri was removed from the client"),
        )));
    }
    let scope = p
        .form
        .scope
        .as_deref()
        .map_or_else(|| code.scope.clone(), str::to_string);
    let email = tri!(user_email(state, code.user_id).await?);
    let base = OAuthToken {
        token_hash: String::new(),
        kind: TokenKind::Access,
        grant_id: code.grant_id,
        client_id: client.id,
        workspace_id: code.workspace_id,
        user_id: code.user_id,
        scope: code.scope.clone(),
        expires_at: None,
        created_date: time::now(),
    };
    match token_standing(&*state.tokens, &base).await? {
        Err(why) => return Ok(Err(fail("invalid_grant", burned(why)))),
        Ok(standing) if standing.scope != code.scope => {
            return Ok(Err(fail(
                "invalid_scope",
                burned("the client's scopes were narrowed after the user approved"),
            )));
        }
        Ok(_) => {}
    }
    let access = tri!(issue(state, TokenKind::Access, &base).await?);
    let refresh = tri!(issue(state, TokenKind::Refresh, &base).await?);
    Ok(Ok(TokenResponse {
        token_type: "bearer".into(),
        scope,
        access_token: access,
        refresh_token: Some(refresh),
        user_id: email,
        expires_in: ACCESS_TOKEN_SECONDS,
    }))
}

async fn refresh_grant(
    state: &OAuthState,
    client: &OAuthClient,
    p: &Params<TokenRequest>,
) -> Result<Result<TokenResponse, Fail>, ApiError> {
    let Some(refresh) = p.form.refresh_token.as_deref() else {
        return Ok(Err(fail("invalid_request", "refresh_token is required")));
    };
    let stored = state.tokens.token(&stored_hash(refresh)).await?;
    let Some(stored) = stored.filter(|t| t.kind == TokenKind::Refresh && t.client_id == client.id)
    else {
        return Ok(Err(fail(
            "invalid_grant",
            "the refresh token is invalid or revoked",
        )));
    };
    // What the token may still do: nothing once OAuth is off; less once the client's scopes
    // were narrowed (the new access token carries the narrowed scope).
    let held = match token_standing(&*state.tokens, &stored).await? {
        Err(why) => return Ok(Err(fail("invalid_grant", why))),
        Ok(standing) => standing.scope,
    };
    let scope = match p.form.scope.as_deref() {
        Some(requested) => {
            let wanted = oauth::parse_scopes(requested);
            if !oauth::is_subset(&wanted, &oauth::parse_scopes(&held)) {
                return Ok(Err(fail(
                    "invalid_scope",
                    "a refresh may narrow the scope but not widen it",
                )));
            }
            requested.to_string()
        }
        None => held,
    };
    let email = tri!(user_email(state, stored.user_id).await?);
    let base = OAuthToken {
        scope: scope.clone(),
        ..stored
    };
    let access = tri!(issue(state, TokenKind::Access, &base).await?);
    Ok(Ok(TokenResponse {
        token_type: "bearer".into(),
        scope,
        access_token: access,
        refresh_token: None,
        user_id: email,
        expires_in: ACCESS_TOKEN_SECONDS,
    }))
}

/// Result of a revocation: empty on success (RFC 7009 2.2).
#[derive(Debug, Object)]
pub struct Revoked {}

/// RFC 7662 introspection response.
#[derive(Debug, Object)]
pub struct Introspection {
    /// Whether the token is currently valid.
    pub active: bool,
    /// The granted scope.
    #[oai(skip_serializing_if_is_none)]
    pub scope: Option<String>,
    /// The client the token was issued to.
    #[oai(skip_serializing_if_is_none)]
    pub client_id: Option<String>,
    /// The user's e-mail.
    #[oai(skip_serializing_if_is_none)]
    pub username: Option<String>,
    /// `access_token` or `refresh_token`.
    #[oai(skip_serializing_if_is_none)]
    pub token_type: Option<String>,
    /// Expiry, seconds since the epoch (access tokens).
    #[oai(skip_serializing_if_is_none)]
    pub exp: Option<i64>,
    /// Issue time, seconds since the epoch.
    #[oai(skip_serializing_if_is_none)]
    pub iat: Option<i64>,
    /// The user's id.
    #[oai(skip_serializing_if_is_none)]
    pub sub: Option<String>,
}

impl Introspection {
    fn inactive() -> Self {
        Self {
            active: false,
            scope: None,
            client_id: None,
            username: None,
            token_type: None,
            exp: None,
            iat: None,
            sub: None,
        }
    }
}

/// RFC 8414 authorization server metadata.
#[derive(Debug, Object)]
pub struct ServerMetadata {
    /// The issuer identifier (the service's base URL).
    pub issuer: String,
    /// Where users authorize clients.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// RFC 7009 revocation.
    pub revocation_endpoint: String,
    /// RFC 7662 introspection.
    pub introspection_endpoint: String,
    /// `code`.
    pub response_types_supported: Vec<String>,
    /// `authorization_code`, `refresh_token`.
    pub grant_types_supported: Vec<String>,
    /// `client_secret_basic`, `client_secret_post`.
    pub token_endpoint_auth_methods_supported: Vec<String>,
    /// Same as the token endpoint's.
    pub revocation_endpoint_auth_methods_supported: Vec<String>,
    /// Same as the token endpoint's.
    pub introspection_endpoint_auth_methods_supported: Vec<String>,
    /// `S256`.
    pub code_challenge_methods_supported: Vec<String>,
    /// The scopes of spec 2.1.
    pub scopes_supported: Vec<String>,
    /// The API documentation page.
    pub service_documentation: String,
}

/// The OAuth2 endpoints that are part of the API document.
pub struct OAuthApi;

#[OpenApi(tag = "OAuthTags::OAuth")]
impl OAuthApi {
    /// Exchange an authorization code (returns access and refresh token) or a refresh token
    /// (returns a new access token) — spec 4.3. The client authenticates with client_id and
    /// client_secret parameters or HTTP Basic.
    #[oai(path = "/oauth/token", method = "post", operation_id = "token")]
    async fn token(
        &self,
        state: Data<&OAuthState>,
        req: &Request,
        params: Params<TokenRequest>,
    ) -> Result<OAuthResult<TokenResponse>, ApiError> {
        let outcome = match begin(&state, req, &params).await? {
            Err(f) => Err(f),
            Ok(client) => match params.form.grant_type.as_str() {
                "authorization_code" => code_grant(&state, &client, &params).await?,
                "refresh_token" => refresh_grant(&state, &client, &params).await?,
                "" => Err(fail("invalid_request", "grant_type is required")),
                other => Err(fail(
                    "unsupported_grant_type",
                    format!("grant_type '{other}' is not supported"),
                )),
            },
        };
        match outcome {
            Ok(resp) => Ok(OAuthResult::ok(resp)),
            Err(f) => {
                if f.status != 429 {
                    count_failure(&state, req, &params).await?;
                }
                Ok(OAuthResult::from_fail(f))
            }
        }
    }

    /// Revoke an access or refresh token (RFC 7009). Revoking a refresh token revokes every
    /// token of its grant. Unknown tokens are not an error.
    #[oai(path = "/oauth/revoke", method = "post", operation_id = "revokeToken")]
    async fn revoke(
        &self,
        state: Data<&OAuthState>,
        req: &Request,
        params: Params<TokenLookup>,
    ) -> Result<OAuthResult<Revoked>, ApiError> {
        let client = match begin(&state, req, &params).await? {
            Ok(c) => c,
            Err(f) => {
                if f.status != 429 {
                    count_failure(&state, req, &params).await?;
                }
                return Ok(OAuthResult::from_fail(f));
            }
        };
        let token = params.form.token.as_str();
        if token.is_empty() {
            return Ok(OAuthResult::from_fail(fail(
                "invalid_request",
                "token is required",
            )));
        }
        let hash = stored_hash(token);
        if let Some(t) = state.tokens.token(&hash).await?
            && t.client_id == client.id
        {
            match t.kind {
                TokenKind::Refresh => {
                    state.tokens.revoke_grant(t.grant_id).await?;
                }
                TokenKind::Access => {
                    state.tokens.revoke_token(&hash).await?;
                }
            }
        }
        Ok(OAuthResult::ok(Revoked {}))
    }

    /// Introspect a token issued to the calling client (RFC 7662).
    #[oai(
        path = "/oauth/introspect",
        method = "post",
        operation_id = "introspectToken"
    )]
    async fn introspect(
        &self,
        state: Data<&OAuthState>,
        req: &Request,
        params: Params<TokenLookup>,
    ) -> Result<OAuthResult<Introspection>, ApiError> {
        let client = match begin(&state, req, &params).await? {
            Ok(c) => c,
            Err(f) => {
                if f.status != 429 {
                    count_failure(&state, req, &params).await?;
                }
                return Ok(OAuthResult::from_fail(f));
            }
        };
        let token = params.form.token.as_str();
        if token.is_empty() {
            return Ok(OAuthResult::from_fail(fail(
                "invalid_request",
                "token is required",
            )));
        }
        let stored = state.tokens.token(&stored_hash(token)).await?;
        let Some(t) = stored
            .filter(|t| t.client_id == client.id && t.expires_at.is_none_or(|at| at > time::now()))
        else {
            return Ok(OAuthResult::ok(Introspection::inactive()));
        };
        let Ok(standing) = token_standing(&*state.tokens, &t).await? else {
            return Ok(OAuthResult::ok(Introspection::inactive()));
        };
        let user = state.tokens.user_by_id(t.user_id).await?;
        Ok(OAuthResult::ok(Introspection {
            active: user.is_some(),
            scope: Some(standing.scope),
            client_id: Some(t.client_id.to_string()),
            username: user.map(|u| u.email),
            token_type: Some(
                match t.kind {
                    TokenKind::Access => "access_token",
                    TokenKind::Refresh => "refresh_token",
                }
                .into(),
            ),
            exp: t.expires_at.map(|at| at.timestamp()),
            iat: Some(t.created_date.timestamp()),
            sub: Some(t.user_id.to_string()),
        }))
    }

    /// Authorization server metadata (RFC 8414).
    #[oai(
        path = "/.well-known/oauth-authorization-server",
        method = "get",
        operation_id = "authorizationServerMetadata"
    )]
    async fn metadata(&self, state: Data<&OAuthState>) -> Json<ServerMetadata> {
        let base = base_url(&state);
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let auth_methods = strings(&["client_secret_basic", "client_secret_post"]);
        Json(ServerMetadata {
            issuer: base.clone(),
            authorization_endpoint: format!("{base}/oauth/authorize"),
            token_endpoint: format!("{base}/oauth/token"),
            revocation_endpoint: format!("{base}/oauth/revoke"),
            introspection_endpoint: format!("{base}/oauth/introspect"),
            response_types_supported: strings(&["code"]),
            grant_types_supported: strings(&["authorization_code", "refresh_token"]),
            token_endpoint_auth_methods_supported: auth_methods.clone(),
            revocation_endpoint_auth_methods_supported: auth_methods.clone(),
            introspection_endpoint_auth_methods_supported: auth_methods,
            code_challenge_methods_supported: strings(&["S256"]),
            scopes_supported: strings(&oauth::KNOWN_SCOPES),
            service_documentation: format!("{base}/docs"),
        })
    }
}
