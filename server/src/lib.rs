//! The Inlet HTTP service: poem-openapi handlers over the stores and extractors, authentication,
//! problem+json errors, the OpenAPI document and the docs page. The `inlet` binary wraps it.

pub mod api;
pub mod auth;
pub mod config;
pub mod extraction;
pub mod oauth;
pub mod ops;
pub mod problem;
pub mod state;
pub mod upload;

use std::sync::Arc;

use futures_util::StreamExt;
use inlet_core::{Error, RecordStore, TokenStore};
use inlet_store_memory::MemoryStore;
use inlet_store_seaorm::SeaOrmStore;
use poem::{
    Body, Endpoint, EndpointExt, IntoResponse, Request, get, handler,
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

/// Caps every non-multipart request body at [`config::MAX_JSON_BODY_BYTES`]: a declared
/// Content-Length beyond it is refused with 413 before reading; an undeclared (chunked) body stops
/// being read at the cap. Multipart uploads enforce their own, larger limit while streaming.
async fn limit_body<E: Endpoint>(next: E, mut req: Request) -> poem::Result<E::Output> {
    let multipart = req.content_type().is_some_and(|ct| {
        ct.trim_start()
            .to_ascii_lowercase()
            .starts_with("multipart/")
    });
    if !multipart {
        let max = config::MAX_JSON_BODY_BYTES;
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
        let stream = req.take_body().into_bytes_stream().map(move |chunk| {
            let chunk = chunk?;
            seen += chunk.len();
            if seen > max {
                return Err(std::io::Error::other(format!(
                    "the request body exceeds the maximum of {max} bytes"
                )));
            }
            Ok(chunk)
        });
        req.set_body(Body::from_bytes_stream(stream));
    }
    next.call(req).await
}

/// The whole HTTP application.
pub fn app(state: AppState) -> impl Endpoint {
    let api = api::service();
    let docs = api.swagger_ui();
    let metrics = state.metrics.clone();
    oauth::routes()
        .at("/api/v1/openapi.json", get(openapi_document))
        .nest("/", api)
        .nest("/docs", docs)
        .at("/healthz", get(ops::healthz))
        .at("/readyz", get(ops::readyz))
        .at("/metrics", get(ops::prometheus))
        .around(limit_body)
        .data(state)
        .around(move |next, req| ops::observe(next, req, metrics.clone()))
}

/// Both stores behind one database URL.
pub struct Stores {
    /// Sources, syncs, records.
    pub records: Arc<dyn RecordStore>,
    /// Identities.
    pub tokens: Arc<dyn TokenStore>,
}

/// Opens the stores a database URL names: `sqlite://...` and `postgres://...` the SeaORM store
/// (migrations run here), `memory:` the in-memory store.
pub async fn open_stores(url: &str) -> Result<Stores, Error> {
    if url == "memory:" || url == "memory" {
        let store = Arc::new(MemoryStore::new());
        return Ok(Stores {
            records: store.clone(),
            tokens: store,
        });
    }
    if ["sqlite:", "postgres://", "postgresql://"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
    {
        let store = Arc::new(SeaOrmStore::connect(url).await?);
        return Ok(Stores {
            records: store.clone(),
            tokens: store,
        });
    }
    Err(Error::invalid(format!(
        "unsupported database URL '{url}': use sqlite://FILE?mode=rwc, postgres://... or memory:"
    )))
}

/// Serves the app on an already bound acceptor until `shutdown` resolves; then stops accepting
/// connections and lets requests in flight (uploads included) finish for up to
/// [`Settings::shutdown_grace`] before returning.
pub async fn serve(
    acceptor: TcpAcceptor,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    tracing::info!(addr = ?acceptor.local_addr(), "inlet listening");
    let grace = state.settings.shutdown_grace;
    poem::Server::new_with_acceptor(acceptor)
        .run_with_graceful_shutdown(app(state), shutdown, Some(grace))
        .await
}
