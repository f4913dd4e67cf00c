//! The shared state every handler sees.

use std::sync::Arc;

use crate::{config::Settings, fair::FairPool, indexer::Indexer, ops::Metrics};
use inlet_core::{RecordStore, TokenStore, index::SearchIndex, webhook::WebhookStore};
use inlet_http::credentials::CredentialCache;

/// Stores, settings and the extraction concurrency bound.
#[derive(Clone)]
pub struct AppState {
    /// Sources, syncs and records.
    pub records: Arc<dyn RecordStore>,
    /// Workspaces, users and credentials.
    pub tokens: Arc<dyn TokenStore>,
    /// Limits and defaults.
    pub settings: Arc<Settings>,
    /// Extractions running at once, shared fairly between workspaces.
    pub extraction_pool: Arc<FairPool>,
    /// Tesseract processes running at once ([`Settings::ocr`]), shared fairly between
    /// workspaces; an extraction waiting for one lends its extraction slot back.
    pub ocr_pool: Arc<FairPool>,
    /// Recently verified API tokens.
    pub credentials: Arc<CredentialCache>,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// This replica's search index.
    pub index: Arc<dyn SearchIndex>,
    /// What keeps the index following the store.
    pub indexer: Arc<Indexer>,
    /// Webhooks and their delivery queue.
    pub webhooks: Arc<dyn WebhookStore>,
    /// Wakes the webhook sender when deliveries are queued.
    pub webhook_wake: Arc<tokio::sync::Notify>,
    /// Change-feed long polls open, per user.
    pub feed_waits: Arc<Waits>,
    /// The key change-feed cursors are sealed with, read from the store once.
    pub feed_key: Arc<tokio::sync::OnceCell<crate::cursors::CursorKey>>,
    /// What each caller may read, briefly kept ([`crate::viewers`]).
    pub viewers: Arc<crate::viewers::Viewers>,
    /// Where uploaded files' originals are kept; `None` when they are not
    /// (`--keep-originals=false`).
    pub blobs: Option<Arc<dyn inlet_core::blob::BlobStore>>,
    /// What reads files into text ([`crate::reader::Linked`] but in tests).
    pub reader: Arc<dyn crate::reader::Reader>,
    /// Wakes the re-extraction worker when a job is queued.
    pub reextract_wake: Arc<tokio::sync::Notify>,
}

/// Long polls open per user, each counted while its [`Waiting`] lives.
#[derive(Default)]
pub struct Waits(parking_lot::Mutex<std::collections::HashMap<uuid::Uuid, usize>>);

impl Waits {
    /// Counts one more wait of `user`; `None` when it has
    /// [`crate::config::MAX_FEED_WAITS_PER_USER`] open already.
    pub fn enter(self: &Arc<Self>, user: uuid::Uuid) -> Option<Waiting> {
        let mut open = self.0.lock();
        let n = open.entry(user).or_default();
        if *n >= crate::config::MAX_FEED_WAITS_PER_USER {
            return None;
        }
        *n += 1;
        Some(Waiting {
            waits: self.clone(),
            user,
        })
    }
}

/// One open wait; counted until dropped (the answer sent, or the client gone).
pub struct Waiting {
    waits: Arc<Waits>,
    user: uuid::Uuid,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut open = self.waits.0.lock();
        if let Some(n) = open.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.user);
            }
        }
    }
}

impl AppState {
    /// State over the given stores, searched through an index in memory (built from the
    /// store when serving starts); [`AppState::with_index`] gives another.
    ///
    /// # Panics
    /// When tantivy cannot create an index in memory (it only fails on a bad schema).
    pub fn new(stores: crate::Stores, settings: Settings) -> Self {
        let crate::Stores {
            records,
            tokens,
            webhooks,
        } = stores;
        #[allow(clippy::expect_used)]
        let opened = crate::indexer::open_index(None).expect("an index in memory");
        Self {
            records,
            tokens,
            extraction_pool: FairPool::new(settings.extraction_concurrency),
            ocr_pool: FairPool::new(settings.ocr.concurrency),
            settings: Arc::new(settings),
            credentials: Arc::default(),
            metrics: Arc::default(),
            index: opened.index,
            indexer: Arc::default(),
            webhooks,
            webhook_wake: Arc::default(),
            feed_waits: Arc::default(),
            feed_key: Arc::default(),
            viewers: Arc::default(),
            blobs: None,
            reader: Arc::new(crate::reader::Linked),
            reextract_wake: Arc::default(),
        }
    }

    /// The same state reading files with `reader` (a stand-in whose extractor versions change,
    /// in tests).
    pub fn with_reader(mut self, reader: Arc<dyn crate::reader::Reader>) -> Self {
        self.reader = reader;
        self
    }

    /// The same state keeping originals in `blobs` (`None`: keeping none).
    pub fn with_blobs(mut self, blobs: Option<Arc<dyn inlet_core::blob::BlobStore>>) -> Self {
        self.blobs = blobs;
        self
    }

    /// The same state searched through `index`.
    pub fn with_index(mut self, index: Arc<dyn SearchIndex>) -> Self {
        self.index = index;
        self
    }

    /// The same state with other settings (the extraction and OCR pools stay as they were made).
    pub fn with_settings(mut self, settings: Settings) -> Self {
        self.settings = Arc::new(settings);
        self
    }

    /// Starts following the store's write log into the index (once).
    pub fn start_indexing(&self) {
        self.indexer.start(
            self.records.clone(),
            self.index.clone(),
            self.settings.change_retention,
        );
    }
}
