//! What each caller may read ([`inlet_core::access::Viewer`]), expanded from the store and kept
//! for at most [`VIEWER_TTL`]: a membership change on any replica reaches every search within
//! that window, and one made through this replica clears its workspace at once.

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use inlet_core::{RecordStore, Result, WorkspaceId, access::Viewer, ingest, token::Principal};
use parking_lot::Mutex;

/// How long an expanded viewer is reused (the index's visibility window, DESIGN 7).
pub const VIEWER_TTL: Duration = Duration::from_secs(1);
/// Most viewers kept; past it the cache starts over.
const MAX_VIEWERS: usize = 10_000;

/// A viewer with when it was expanded.
type Kept = (Instant, Arc<Viewer>);

/// Viewers by (workspace, e-mail).
#[derive(Default)]
pub struct Viewers(Mutex<HashMap<(WorkspaceId, String), Kept>>);

impl Viewers {
    /// Forgets a workspace's viewers (its groups or object types changed).
    pub fn forget(&self, workspace_id: WorkspaceId) {
        self.0.lock().retain(|(ws, _), _| *ws != workspace_id);
    }

    /// The caller's viewer, expanded from `store` at most [`VIEWER_TTL`] ago.
    pub async fn of(&self, store: &dyn RecordStore, principal: &Principal) -> Result<Arc<Viewer>> {
        if principal.reads_everything() {
            return Ok(Arc::new(Viewer::All));
        }
        let key = (principal.workspace_id, principal.email.to_lowercase());
        if let Some((at, v)) = self.0.lock().get(&key)
            && at.elapsed() < VIEWER_TTL
        {
            return Ok(v.clone());
        }
        let viewer = Arc::new(ingest::viewer_of(store, principal).await?);
        let mut cache = self.0.lock();
        if cache.len() >= MAX_VIEWERS {
            cache.clear();
        }
        cache.insert(key, (Instant::now(), viewer.clone()));
        Ok(viewer)
    }
}
