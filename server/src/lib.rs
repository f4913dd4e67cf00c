//! The Inlet HTTP service: poem-openapi handlers over the stores and extractors, authentication,
//! problem+json errors, the OpenAPI document and the docs page. The `inlet` binary wraps it.

pub mod api;
pub mod auth;
pub mod config;
pub mod conn;
pub mod cursors;
pub mod extraction;
pub mod fair;
pub mod indexer;
pub mod input;
pub mod moving;
pub mod ops;
pub mod originals;
pub mod problem;
pub mod reader;
pub mod reextract;
pub mod routes;
pub mod rules;
pub mod schema;
pub mod state;
pub mod upload;
pub mod viewers;
pub mod webhooks;

use futures_util::StreamExt;
use inlet_core::Error;
use poem::{
    Body, Endpoint, EndpointExt, IntoResponse, Request, Response, get, handler,
    http::header,
    listener::{Acceptor, TcpAcceptor},
};

use crate::problem::ApiError;
pub use crate::{config::Settings, state::AppState};

/// The published OpenAPI document (`openapi/openapi.json`).
pub fn openapi_json() -> String {
    api::document()
}

#[handler]
fn openapi_document() -> impl IntoResponse {
    openapi_json().with_content_type("application/json; charset=utf-8")
}

/// Caps every non-multipart request body at [`config::MAX_JSON_BODY_BYTES`] (a batch at
/// [`config::MAX_BATCH_BODY_BYTES`], any body to `/oauth/…` at [`config::MAX_OAUTH_BODY_BYTES`]): a declared Content-Length beyond it is
/// refused with 413 before reading; an undeclared (chunked) body stops being read at the cap.
/// Multipart uploads enforce their own, larger limit while streaming, and a declared length
/// beyond it (plus [`config::MULTIPART_OVERHEAD_BYTES`]) is 413 before reading.
async fn limit_body<E: Endpoint>(next: E, mut req: Request) -> poem::Result<Response> {
    let oauth = req.uri().path().starts_with("/oauth/");
    let multipart = !oauth
        && req.content_type().is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/")
        });
    if multipart {
        // Refused before the body is read: an upload whose declared length cannot fit.
        let max = req
            .data::<AppState>()
            .map_or(config::DEFAULT_MAX_UPLOAD_BYTES, |s| {
                s.settings.max_upload_bytes
            });
        let declared = req
            .header(header::CONTENT_LENGTH)
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > max.saturating_add(config::MULTIPART_OVERHEAD_BYTES)) {
            return Err(ApiError::too_large(format!(
                "the file exceeds the maximum upload size of {max} bytes"
            ))
            .into());
        }
    } else {
        let max = if oauth {
            config::MAX_OAUTH_BODY_BYTES
        } else if req.uri().path().contains("/batch/") {
            config::MAX_BATCH_BODY_BYTES
        } else {
            config::MAX_JSON_BODY_BYTES
        };
        let declared = req
            .header(header::CONTENT_LENGTH)
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > max as u64) {
            return Err(ApiError::too_large(format!(
                "the request body exceeds the maximum of {max} bytes"
            ))
            .into());
        }
        let mut seen = 0usize;
        let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = over.clone();
        let stream = req.take_body().into_bytes_stream().map(move |chunk| {
            let chunk = chunk?;
            seen += chunk.len();
            if seen > max {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
                return Err(std::io::Error::other(format!(
                    "the request body exceeds the maximum of {max} bytes"
                )));
            }
            Ok(chunk)
        });
        req.set_body(Body::from_bytes_stream(stream));
        let answer = next.call(req).await.map(IntoResponse::into_response);
        // A chunked body cut at the cap fails the handler's read (a parse error): the answer is
        // the 413 that says why, whatever the handler made of the cut body.
        if over.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(ApiError::too_large(format!(
                "the request body exceeds the maximum of {max} bytes"
            ))
            .into());
        }
        return answer;
    }
    next.call(req).await.map(IntoResponse::into_response)
}

/// The whole HTTP application.
pub fn app(state: AppState) -> impl Endpoint {
    routes::install(api::routes);
    let api = api::service();
    let docs = api.swagger_ui();
    let metrics = state.metrics.clone();
    let body_idle = state.settings.body_idle_timeout;
    let oauth = inlet_oauth::OAuthState {
        tokens: state.tokens.clone(),
        public_url: state.settings.public_url.clone(),
        trusted_proxies: state.settings.trusted_proxies.clone(),
    };
    inlet_oauth::routes()
        .at("/api/v1/openapi.json", get(openapi_document))
        .nest("/", api)
        .nest("/docs", docs)
        .at("/healthz", get(ops::healthz))
        .at("/readyz", get(ops::readyz))
        .at("/metrics", get(ops::prometheus))
        .around(ops::start_page)
        .around(input::check_request)
        .around(limit_body)
        .data(state)
        .data(oauth)
        .around(move |next, req| conn::body_idle(next, req, body_idle))
        .around(move |next, req| ops::observe(next, req, metrics.clone()))
        .around(ops::nosniff)
}

pub use inlet_core::backend::Stores;

/// Opens the stores a database URL names with the backend linked for its scheme
/// (`inlet_backends`: `sqlite:`, `postgres://`, `memory:`); migrations run here.
pub async fn open_database(url: &str) -> Result<inlet_core::backend::Opened, Error> {
    let opened = inlet_backends::open(url).await?;
    tracing::info!("database ready: {}", opened.description);
    Ok(opened)
}

/// The stores of [`open_database`].
pub async fn open_stores(url: &str) -> Result<Stores, Error> {
    Ok(open_database(url).await?.stores)
}

/// Serves the app on an already bound acceptor until `shutdown` resolves; then stops accepting
/// connections and lets requests in flight (uploads included) finish for up to
/// [`Settings::shutdown_grace`] before returning. Connection limits and timeouts: [`conn`].
pub async fn serve(
    acceptor: TcpAcceptor,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    for addr in acceptor.local_addr() {
        match addr.as_socket_addr() {
            Some(addr) => tracing::info!("listening on http://{addr}"),
            None => tracing::info!("listening on {addr}"),
        }
    }
    let state = match (&state.settings.public_url, acceptor.local_addr().first()) {
        (None, Some(addr)) => match addr.as_socket_addr() {
            Some(addr) => {
                let url = config::url_of_bound(*addr);
                tracing::warn!(
                    "no --public-url: the OAuth issuer and the service's own links use {url} \
                     (the bound address); set --public-url to the URL users and clients reach"
                );
                let settings = Settings {
                    public_url: Some(url),
                    ..(*state.settings).clone()
                };
                state.with_settings(settings)
            }
            None => state,
        },
        _ => state,
    };
    state.start_indexing();
    webhooks::start(&state);
    originals::start_sweeping(&state);
    reextract::start(&state);
    let limits = conn::Limits::from(state.settings.as_ref());
    // Boxed: the middleware stack's type is too deep for the connection future's layout.
    conn::serve(acceptor, app(state).boxed(), limits, shutdown).await
}
