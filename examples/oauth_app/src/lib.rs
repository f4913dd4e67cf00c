#![doc = include_str!("../README.md")]

pub mod error;
pub mod html;
pub mod inlet;
pub mod pkce;
pub mod session;
mod web;

use std::{fmt, net::SocketAddr, sync::Arc};

use poem::{Endpoint, EndpointExt, Route, get, http::StatusCode, middleware::SetHeader};
use url::Url;

pub use error::AppError;
pub use session::{SESSION_COOKIE, Tokens};

/// Read scope: lets the app read records, nothing else (see `inlet_core::oauth::KNOWN_SCOPES`).
pub const DEFAULT_SCOPE: &str = "read:*";

/// The app's configuration: flags, each with an environment fallback.
#[derive(Clone, clap::Parser)]
#[command(
    name = "oauth-app",
    version,
    about = "Example web application: signs users in with Inlet (OAuth2 code + PKCE) and lists their records."
)]
pub struct Config {
    /// Inlet's base URL (its discovery document and /api/v1 live below it).
    #[arg(long, env = "INLET_URL", default_value = "http://127.0.0.1:8080")]
    pub inlet_url: Url,
    /// The clientId of the OAuth client registered at Inlet.
    #[arg(long, env = "INLET_CLIENT_ID")]
    pub client_id: String,
    /// The clientSecret of that client.
    #[arg(long, env = "INLET_CLIENT_SECRET", hide_env_values = true)]
    pub client_secret: String,
    /// Address the app listens on.
    #[arg(long, env = "OAUTH_APP_LISTEN", default_value = "127.0.0.1:8090")]
    pub listen: SocketAddr,
    /// The app's URL as browsers reach it (default `http://<listen>`); the redirect URI is
    /// `<public-url>/callback` and must be registered with the client exactly.
    #[arg(long, env = "OAUTH_APP_PUBLIC_URL")]
    pub public_url: Option<Url>,
    /// Scopes to ask for, comma-separated: `read:*` (read-only), `default` or `*:*` (read/write).
    #[arg(long, env = "OAUTH_APP_SCOPE", default_value = DEFAULT_SCOPE)]
    pub scope: String,
}

impl Config {
    /// The app's public base URL without a trailing `/`.
    pub fn public_base(&self) -> String {
        match &self.public_url {
            Some(u) => u.as_str().trim_end_matches('/').to_string(),
            None => format!("http://{}", self.listen),
        }
    }

    /// The redirect URI to register at Inlet: `<public-url>/callback`.
    pub fn redirect_uri(&self) -> String {
        format!("{}/callback", self.public_base())
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("inlet_url", &self.inlet_url.as_str())
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("listen", &self.listen)
            .field("public_url", &self.public_url.as_ref().map(Url::as_str))
            .field("scope", &self.scope)
            .finish()
    }
}

/// The application: its sessions and its Inlet client.
#[derive(Clone)]
pub struct App {
    shared: Arc<web::Shared>,
}

impl App {
    /// An app for this configuration.
    pub fn new(config: &Config) -> anyhow::Result<Self> {
        let base = config.public_base();
        let public = Url::parse(&format!("{base}/"))?;
        if !matches!(public.scheme(), "http" | "https") {
            anyhow::bail!("--public-url must be an http or https URL, not '{base}'");
        }
        if !matches!(config.inlet_url.scheme(), "http" | "https") {
            anyhow::bail!("--inlet-url must be an http or https URL");
        }
        if config.scope.trim().is_empty() {
            anyhow::bail!("--scope must name at least one scope");
        }
        let inlet = inlet::Inlet::new(&config.inlet_url, &config.client_id, &config.client_secret)?;
        Ok(Self {
            shared: Arc::new(web::Shared {
                inlet,
                sessions: session::Sessions::new(),
                scope: config.scope.trim().to_string(),
                redirect_uri: config.redirect_uri(),
                cookie_path: public.path().to_string(),
                secure: public.scheme() == "https",
                base,
            }),
        })
    }

    /// The redirect URI this app sends (register it with the client).
    pub fn redirect_uri(&self) -> &str {
        &self.shared.redirect_uri
    }

    /// The tokens held for a session cookie value, if it is signed in (for tests and
    /// diagnostics; the browser never sees them).
    pub fn session_tokens(&self, session_id: &str) -> Option<Tokens> {
        self.shared.sessions.tokens(session_id)
    }

    /// Treats the session's access token as expired from now on (for tests: the next list
    /// refreshes it before calling Inlet). Returns whether the session is signed in.
    pub fn expire_access_token(&self, session_id: &str) -> bool {
        self.shared.sessions.expire_access_token(session_id)
    }

    /// The HTTP endpoint: the routes, HTML error pages for every error and defensive headers.
    pub fn endpoint(&self) -> impl Endpoint<Output = poem::Response> + use<> {
        Route::new()
            .at("/", get(web::index))
            .at("/login", get(web::login))
            .at("/callback", get(web::callback))
            .at("/records", get(web::records))
            .at("/logout", get(web::logout).post(web::logout))
            .data(self.shared.clone())
            .catch_all_error(|err: poem::Error| async move {
                match err.downcast_ref::<AppError>() {
                    Some(e) => e.page(),
                    None => {
                        let status = err.status();
                        let message = if status == StatusCode::NOT_FOUND {
                            "There is no such page.".to_string()
                        } else {
                            err.to_string()
                        };
                        error::page(status, &message, false)
                    }
                }
            })
            .with(
                SetHeader::new()
                    .overriding(
                        "content-security-policy",
                        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
                         frame-ancestors 'none'; base-uri 'none'",
                    )
                    .overriding("referrer-policy", "no-referrer")
                    .overriding("x-content-type-options", "nosniff"),
            )
            .map_to_response()
    }
}

/// The endpoint of an app for this configuration.
pub fn app(config: &Config) -> anyhow::Result<impl Endpoint<Output = poem::Response> + use<>> {
    Ok(App::new(config)?.endpoint())
}
