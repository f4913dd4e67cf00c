//! Authentication: the security schemes handlers take, credential hashing and the bootstrap
//! administrator (DESIGN 2).
//!
//! Handlers take an [`Auth`] and call [`Auth::reader`] or [`Auth::writer`]; new schemes (Bearer)
//! become new variants of [`Auth`] without reshaping handlers.

use std::sync::Arc;

use inlet_core::{
    Error, TokenStore,
    oauth::{Grant, KNOWN_SCOPES, TokenKind},
    time,
    token::{Access, ApiToken, DEFAULT_WORKSPACE, Principal, Role, User, Workspace},
};
use poem::{Request, RequestBody};
use poem_openapi::{
    ApiExtractor, ApiExtractorType, ExtractParamOptions, SecurityScheme,
    auth::Basic,
    registry::{MetaOAuthFlow, MetaOAuthFlows, MetaOAuthScope, MetaSecurityScheme, Registry},
};
use uuid::Uuid;

use crate::{problem::ApiError, state::AppState};
pub use inlet_http::credentials::{
    CREDENTIAL_CACHE_TTL, CredentialCache, hash_password, hash_secret, new_password, new_secret,
};

/// HTTP Basic: a user's e-mail and one of their API tokens.
#[derive(SecurityScheme)]
#[oai(ty = "basic", rename = "basicAuth", checker = "check_basic")]
pub struct BasicAuth(pub Principal);

async fn check_basic(req: &Request, basic: Basic) -> poem::Result<Principal> {
    let state = req
        .data::<AppState>()
        .ok_or_else(|| ApiError::internal("application state missing"))?;
    let hash = hash_secret(&basic.password);
    let user = match state.credentials.get(&hash) {
        Some(user) => Some(user),
        None => {
            let user = state
                .tokens
                .user_by_token_hash(&hash)
                .await
                .map_err(ApiError::from)?;
            if let Some(u) = &user {
                state.credentials.put(hash, u.clone());
            }
            user
        }
    };
    match user {
        Some(u) if u.email.eq_ignore_ascii_case(&basic.username) => Ok(Principal::full(&u)),
        _ => Err(ApiError::unauthorized("invalid e-mail or API token").into()),
    }
}

/// What each OAuth2 scope (`inlet_core::oauth::KNOWN_SCOPES`) lets a token do (spec 2.1).
fn scope_description(scope: &str) -> &'static str {
    match scope {
        "default" => "Read and write (same as `*:*`).",
        "*:*" => "Read and write.",
        "read:*" => "Read only.",
        _ => "",
    }
}

/// Registers the Bearer schemes [`Auth`] checks: `bearerAuth` (an access token as HTTP Bearer)
/// and `oauth2` (how such a token is obtained: the authorization-code flow and its scopes).
fn register_bearer(registry: &mut Registry) {
    registry.create_security_scheme(
        "bearerAuth",
        MetaSecurityScheme {
            ty: "http",
            description: Some("HTTP Bearer: an OAuth2 access token."),
            name: None,
            key_in: None,
            scheme: Some("bearer"),
            bearer_format: None,
            flows: None,
            openid_connect_url: None,
        },
    );
    let scopes = KNOWN_SCOPES
        .iter()
        .map(|&name| MetaOAuthScope {
            name,
            description: Some(scope_description(name)),
        })
        .collect();
    registry.create_security_scheme(
        "oauth2",
        MetaSecurityScheme {
            ty: "oauth2",
            description: Some(
                "OAuth2 authorization-code flow: the access token it issues is sent as HTTP \
                 Bearer.",
            ),
            name: None,
            key_in: None,
            scheme: None,
            bearer_format: None,
            flows: Some(MetaOAuthFlows {
                implicit: None,
                password: None,
                client_credentials: None,
                authorization_code: Some(MetaOAuthFlow {
                    authorization_url: Some("/oauth/authorize"),
                    token_url: Some("/oauth/token"),
                    refresh_url: Some("/oauth/token"),
                    scopes,
                }),
            }),
            openid_connect_url: None,
        },
    );
}

/// The names of the Bearer schemes, as [`register_bearer`] registers them.
const BEARER_SCHEMES: [&str; 2] = ["bearerAuth", "oauth2"];

/// Every way a caller of the source and file endpoints can authenticate: HTTP Basic (e-mail and
/// API token) or an OAuth2 access token as `Authorization: Bearer`. The document lists the
/// schemes `basicAuth`, `bearerAuth` and `oauth2` as alternatives on every such operation.
pub struct Auth(Principal);

impl<'a> ApiExtractor<'a> for Auth {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        <BasicAuth as ApiExtractor>::register(registry);
        register_bearer(registry);
    }

    fn security_schemes() -> Vec<&'static str> {
        let mut names = <BasicAuth as ApiExtractor>::security_schemes();
        names.extend(BEARER_SCHEMES);
        names
    }

    async fn from_request(
        req: &'a Request,
        body: &mut RequestBody,
        param_opts: ExtractParamOptions<()>,
    ) -> poem::Result<Self> {
        let header = req
            .header(poem::http::header::AUTHORIZATION)
            .unwrap_or_default();
        let scheme = header.split_once(' ').map_or(header, |(s, _)| s);
        let principal = if scheme.eq_ignore_ascii_case("bearer") {
            check_bearer(req, header[scheme.len()..].trim()).await?
        } else {
            <BasicAuth as ApiExtractor>::from_request(req, body, param_opts)
                .await?
                .0
        };
        // Read-only credentials are refused before the request body is even parsed. A metadata
        // batch is a read sent as a POST (its body holds the externalIds).
        let read = matches!(
            *req.method(),
            poem::http::Method::GET | poem::http::Method::HEAD
        ) || (req.method() == poem::http::Method::POST
            && req.uri().path().ends_with(READ_BY_POST));
        if principal.access == Access::ReadOnly && !read {
            return Err(ApiError::forbidden(READ_ONLY).into());
        }
        Ok(Self(principal))
    }
}

const READ_ONLY: &str = "these credentials are read-only (scope read:*)";

/// The one POST that only reads: `batchMetadata`.
const READ_BY_POST: &str = "/batch/metadata";

/// Resolves an OAuth2 access token to the user it acts for, with the access its scope allows.
async fn check_bearer(req: &Request, token: &str) -> poem::Result<Principal> {
    let state = req
        .data::<AppState>()
        .ok_or_else(|| ApiError::internal("application state missing"))?;
    let hash = hash_secret(token);
    let Some(stored) = state.tokens.token(&hash).await.map_err(ApiError::from)? else {
        // The usual first mistake: an API token sent as Bearer.
        if state
            .tokens
            .user_by_token_hash(&hash)
            .await
            .map_err(ApiError::from)?
            .is_some()
        {
            return Err(ApiError::invalid_token(
                "this is an API token, not an OAuth2 access token: send it as HTTP Basic with \
                 your e-mail as the user name (curl -u you@example.com:TOKEN)",
            )
            .into());
        }
        return Err(ApiError::invalid_token("the access token is unknown or revoked").into());
    };
    if stored.kind != TokenKind::Access {
        return Err(ApiError::invalid_token("a refresh token is not an access token").into());
    }
    if stored.expires_at.is_none_or(|at| at <= time::now()) {
        return Err(ApiError::invalid_token("the access token has expired").into());
    }
    let user = state
        .tokens
        .user_by_id(stored.user_id)
        .await
        .map_err(ApiError::from)?
        .ok_or_else(|| ApiError::invalid_token("the token's user no longer exists"))?;
    let access = match inlet_oauth::token_standing(&*state.tokens, &stored).await? {
        Ok(standing) if standing.grant == Grant::ReadWrite => Access::ReadWrite,
        Ok(_) => Access::ReadOnly,
        Err(why) => return Err(ApiError::invalid_token(why).into()),
    };
    Ok(Principal {
        access,
        oauth: true,
        ..Principal::full(&user)
    })
}

impl Auth {
    /// The authenticated caller.
    pub fn principal(&self) -> &Principal {
        &self.0
    }

    /// The caller, for a read.
    pub fn reader(&self) -> &Principal {
        self.principal()
    }

    /// The caller, for a write: read-only credentials get 403.
    pub fn writer(&self) -> Result<&Principal, ApiError> {
        let p = self.principal();
        match p.access {
            Access::ReadWrite => Ok(p),
            Access::ReadOnly => Err(ApiError::forbidden(READ_ONLY)),
        }
    }
}

/// An ADMIN's HTTP Basic credentials in a workspace with OAuth enabled: the only way to the
/// client maintenance endpoints (DESIGN 3; Bearer tokens are refused).
pub struct ClientAdmin(pub Principal);

impl ClientAdmin {
    /// Checks that the Basic caller is an ADMIN of a workspace with OAuth enabled.
    pub async fn check(state: &AppState, auth: BasicAuth) -> Result<Self, ApiError> {
        let BasicAuth(p) = auth;
        if p.role != Role::Admin {
            return Err(ApiError::forbidden(
                "OAuth clients are managed by a workspace ADMIN",
            ));
        }
        let ws = state.tokens.workspace_by_id(p.workspace_id).await?;
        if !ws.is_some_and(|w| w.oauth_enabled) {
            return Err(ApiError::forbidden(
                "OAuth is disabled for this workspace; the operator enables it with \
                 `inlet admin oauth --workspace NAME --enable`",
            ));
        }
        Ok(Self(p))
    }
}

/// Credentials of a newly made user, shown once.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewCredentials {
    /// The workspace's name.
    pub workspace: String,
    /// E-mail (Basic user name).
    pub email: String,
    /// Browser-login password.
    pub password: String,
    /// API token (Basic password).
    pub api_token: String,
}

/// Options of [`create_user`].
#[derive(Debug, Clone, Default)]
pub struct NewUserOptions {
    /// E-mail.
    pub email: String,
    /// Make an ADMIN (else MEMBER).
    pub admin: bool,
    /// Workspace name; made (with OAuth enabled) when missing.
    pub workspace: String,
    /// Password; generated when absent.
    pub password: Option<String>,
    /// API token; generated when absent.
    pub api_token: Option<String>,
}

async fn workspace(tokens: &dyn TokenStore, name: &str) -> Result<Workspace, Error> {
    if let Some(w) = tokens.workspace_by_name(name).await? {
        return Ok(w);
    }
    let w = Workspace {
        id: Uuid::new_v4(),
        name: name.to_string(),
        oauth_enabled: true,
        created_date: time::now(),
    };
    match tokens.create_workspace(&w).await {
        Ok(()) => Ok(w),
        // Another replica made it meanwhile.
        Err(Error::Conflict(_)) => tokens
            .workspace_by_name(name)
            .await?
            .ok_or_else(|| Error::conflict(format!("workspace '{name}' vanished"))),
        Err(e) => Err(e),
    }
}

/// Makes a user with a password and an API token (`inlet admin create-user`).
pub async fn create_user(
    tokens: &dyn TokenStore,
    opts: NewUserOptions,
) -> Result<NewCredentials, Error> {
    let email = opts.email.trim().to_string();
    if !email.contains('@') {
        return Err(Error::invalid(format!(
            "'{email}' is not an e-mail address"
        )));
    }
    let ws = workspace(tokens, &opts.workspace).await?;
    let password = opts.password.unwrap_or_else(new_password);
    let api_token = opts.api_token.unwrap_or_else(new_secret);
    let user = User {
        id: Uuid::new_v4(),
        workspace_id: ws.id,
        email: email.clone(),
        role: if opts.admin {
            Role::Admin
        } else {
            Role::Member
        },
        password_hash: hash_password(&password)?,
        created_date: time::now(),
    };
    tokens.create_user(&user).await?;
    add_token(tokens, &user, &api_token).await?;
    Ok(NewCredentials {
        workspace: ws.name,
        email,
        password,
        api_token,
    })
}

async fn add_token(tokens: &dyn TokenStore, user: &User, token: &str) -> Result<(), Error> {
    tokens
        .add_api_token(&ApiToken {
            id: Uuid::new_v4(),
            user_id: user.id,
            token_hash: hash_secret(token),
            created_date: time::now(),
        })
        .await
}

/// The bootstrap administrator from `INLET_ADMIN_*` (all optional). Its `Debug` hides the
/// password and token.
#[derive(Clone, Default)]
pub struct AdminEnv {
    /// `INLET_ADMIN_EMAIL`.
    pub email: Option<String>,
    /// `INLET_ADMIN_PASSWORD`.
    pub password: Option<String>,
    /// `INLET_ADMIN_API_TOKEN`.
    pub api_token: Option<String>,
}

impl std::fmt::Debug for AdminEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hidden = |v: &Option<String>| v.as_ref().map(|_| "<hidden>");
        f.debug_struct("AdminEnv")
            .field("email", &self.email)
            .field("password", &hidden(&self.password))
            .field("api_token", &hidden(&self.api_token))
            .finish()
    }
}

/// E-mail of the bootstrap administrator when `INLET_ADMIN_EMAIL` is not set.
pub const DEFAULT_ADMIN_EMAIL: &str = "admin@inlet.local";

/// First start on an empty store: makes workspace `default` and an administrator and returns the
/// credentials to print. On a non-empty store with `INLET_ADMIN_EMAIL` set: keeps that
/// administrator (making it if missing) and makes sure the given token is valid; prints nothing.
pub async fn bootstrap(
    tokens: &Arc<dyn TokenStore>,
    env: AdminEnv,
) -> Result<Option<NewCredentials>, Error> {
    // Replicas started together race through here: whatever another one made first (the
    // administrator, or the token) is taken as made.
    let tokens = tokens.as_ref();
    if tokens.count_users().await? == 0 {
        let email = env.email.as_deref().unwrap_or(DEFAULT_ADMIN_EMAIL);
        if let Some(creds) = make_admin(tokens, email, &env).await? {
            return Ok(Some(creds));
        }
    }
    let Some(email) = env.email.as_deref() else {
        return Ok(None);
    };
    let user = match tokens.user_by_email(email).await? {
        Some(user) => user,
        None => {
            if make_admin(tokens, email, &env).await?.is_some() {
                return Ok(None);
            }
            tokens
                .user_by_email(email)
                .await?
                .ok_or_else(|| Error::conflict(format!("'{email}' could not be created")))?
        }
    };
    if let Some(token) = &env.api_token {
        ensure_token(tokens, &user, token).await?;
    }
    if let Some(password) = &env.password {
        // The password is set at creation only: a later one that differs is said, not applied.
        let (hash, given) = (user.password_hash.clone(), password.clone());
        let same = tokio::task::spawn_blocking(move || {
            inlet_http::credentials::password_matches(&hash, &given)
        })
        .await
        .unwrap_or(true);
        if !same {
            tracing::warn!(
                email = %user.email,
                "INLET_ADMIN_PASSWORD differs from the stored password and was not applied (it \
                 is used only when the administrator is created); to change the password, run \
                 `inlet admin reset-password --email EMAIL --password NEW`"
            );
        }
    }
    Ok(None)
}

/// Sets a new browser-login password for `email` (`password`, or a new random one): the
/// password set. [`Error::NotFound`] when there is no such user.
pub async fn reset_password(
    tokens: &dyn TokenStore,
    email: &str,
    password: Option<String>,
) -> Result<String, Error> {
    let user = tokens
        .user_by_email(email)
        .await?
        .ok_or_else(|| Error::not_found(format!("no user with e-mail '{email}'")))?;
    let password = password.unwrap_or_else(new_password);
    if password.is_empty() {
        return Err(Error::invalid("the password is empty"));
    }
    let given = password.clone();
    let hash = tokio::task::spawn_blocking(move || hash_password(&given))
        .await
        .map_err(Error::backend)??;
    if !tokens.set_password_hash(user.id, &hash).await? {
        return Err(Error::not_found(format!("no user with e-mail '{email}'")));
    }
    Ok(password)
}

/// Makes the administrator `email` in workspace `default` with the password and token of
/// `env`; `None` when a unique key says another process made it (or its token) first.
async fn make_admin(
    tokens: &dyn TokenStore,
    email: &str,
    env: &AdminEnv,
) -> Result<Option<NewCredentials>, Error> {
    let made = create_user(
        tokens,
        NewUserOptions {
            email: email.into(),
            admin: true,
            workspace: DEFAULT_WORKSPACE.into(),
            password: env.password.clone(),
            api_token: env.api_token.clone(),
        },
    )
    .await;
    match made {
        Ok(creds) => Ok(Some(creds)),
        Err(Error::Conflict(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Makes `token` a valid API token of `user`: nothing to do when it already is, added when
/// nobody holds it (a Conflict then means another process added it a moment earlier, which is
/// checked), refused when it belongs to someone else.
async fn ensure_token(tokens: &dyn TokenStore, user: &User, token: &str) -> Result<(), Error> {
    let hash = hash_secret(token);
    let owned = |owner: Option<User>| match owner {
        Some(o) if o.id == user.id => Ok(true),
        Some(_) => Err(Error::conflict(
            "INLET_ADMIN_API_TOKEN belongs to another user",
        )),
        None => Ok(false),
    };
    if owned(tokens.user_by_token_hash(&hash).await?)? {
        return Ok(());
    }
    match add_token(tokens, user, token).await {
        Err(Error::Conflict(_)) if owned(tokens.user_by_token_hash(&hash).await?)? => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scope_is_described() {
        for scope in KNOWN_SCOPES {
            assert!(!scope_description(scope).is_empty(), "{scope}");
        }
    }
}
