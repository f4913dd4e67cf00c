//! The Inlet HTTP service: poem-openapi handlers over the stores and extractors, authentication,
//! problem+json errors, the OpenAPI document and the docs page. The `inlet` binary wraps it.

pub mod api;
pub mod auth;
pub mod config;
pub mod extraction;
pub mod problem;
pub mod shim;
pub mod state;
pub mod upload;

use std::sync::Arc;

use inlet_core::{Error, RecordStore, TokenStore};
use inlet_store_memory::MemoryStore;
use poem::{
    Endpoint, EndpointExt, IntoResponse, Route, get, handler,
    listener::{Acceptor, TcpAcceptor},
    web::Json,
};

pub use crate::{config::Settings, state::AppState};

/// The published OpenAPI document (`openapi/openapi.json`).
pub fn openapi_json() -> String {
    api::service().spec()
}

#[handler]
fn healthz() -> impl IntoResponse {
    Json(serde_json::json!({ "status": "ok" }))
}

/// The whole HTTP application.
pub fn app(state: AppState) -> impl Endpoint {
    let api = api::service();
    let spec = api.spec_endpoint();
    let docs = api.swagger_ui();
    Route::new()
        .at("/api/v1/openapi.json", spec)
        .nest(api::PREFIX, api)
        .nest("/docs", docs)
        .at("/healthz", get(healthz))
        .data(state)
        .catch_all_error(problem::catch_all)
}

/// Both stores behind one database URL.
pub struct Stores {
    /// Sources, syncs, records.
    pub records: Arc<dyn RecordStore>,
    /// Identities.
    pub tokens: Arc<dyn TokenStore>,
}

/// Opens the stores a database URL names: `memory:` is the in-memory store.
pub async fn open_stores(url: &str) -> Result<Stores, Error> {
    if url == "memory:" || url == "memory" {
        let store = Arc::new(MemoryStore::new());
        return Ok(Stores {
            records: store.clone(),
            tokens: store,
        });
    }
    Err(Error::invalid(format!(
        "unsupported database URL '{url}': this build supports 'memory:'"
    )))
}

/// Serves the app on an already bound acceptor until `shutdown` resolves.
pub async fn serve(
    acceptor: TcpAcceptor,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    tracing::info!(addr = ?acceptor.local_addr(), "inlet listening");
    poem::Server::new_with_acceptor(acceptor)
        .run_with_graceful_shutdown(app(state), shutdown, None)
        .await
}
