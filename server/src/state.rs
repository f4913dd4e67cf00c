//! The shared state every handler sees.

use std::sync::Arc;

use inlet_core::{RecordStore, TokenStore};
use tokio::sync::Semaphore;

use crate::{auth::CredentialCache, config::Settings, ops::Metrics};

/// Stores, settings and the extraction concurrency bound.
#[derive(Clone)]
pub struct AppState {
    /// Sources, syncs and records.
    pub records: Arc<dyn RecordStore>,
    /// Workspaces, users and credentials.
    pub tokens: Arc<dyn TokenStore>,
    /// Limits and defaults.
    pub settings: Arc<Settings>,
    /// Permits for extractions running at once.
    pub extraction_permits: Arc<Semaphore>,
    /// Recently verified API tokens.
    pub credentials: Arc<CredentialCache>,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
}

impl AppState {
    /// State over the given stores.
    pub fn new(
        records: Arc<dyn RecordStore>,
        tokens: Arc<dyn TokenStore>,
        settings: Settings,
    ) -> Self {
        Self {
            records,
            tokens,
            extraction_permits: Arc::new(Semaphore::new(settings.extraction_concurrency.max(1))),
            settings: Arc::new(settings),
            credentials: Arc::default(),
            metrics: Arc::default(),
        }
    }
}
