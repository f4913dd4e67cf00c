//! Fixed-window counters shared by replicas (login and token throttling), kept as documents
//! ([`super::Documents`]): this module implements [`RateLimits`] once for every store.
//!
//! A counter is one document per key and window, keyed by the window's start (20 digits)
//! then the key, so the counters of windows past the retention come first in key order and
//! are removed by reading only them.

use async_trait::async_trait;

use super::documents::{ATTEMPTS, DocWrite, Documents, Expect, before, contended};
use crate::{Result, token::RATE_RETENTION_MS};

/// Storage of rate-limit counters.
#[async_trait]
pub trait RateLimits: Send + Sync + 'static {
    /// Counts one event against `key` in the fixed window starting at `window_start_ms` and
    /// returns the count in that window (a new window starts over at 1). Shared by replicas.
    /// Counters whose window started more than [`RATE_RETENTION_MS`] before `window_start_ms`
    /// are removed, so counters of invented keys do not accumulate.
    async fn rate_hit(&self, key: &str, window_start_ms: i64) -> Result<u32>;
    /// The count of `key` in the window starting at `window_start_ms` (0 for a window without
    /// events, or one past the retention).
    async fn rate_count(&self, key: &str, window_start_ms: i64) -> Result<u32>;
}

/// The document collection counters are kept in.
pub const COLLECTION: &str = "rate_limits";

/// Expired counters removed per write.
const PURGE_PAGE: usize = 200;
/// Pages of expired counters one hit removes at most (the rest go with the next hits).
const PURGE_PAGES: usize = 20;

/// A counter's document key: the window's start, zero-padded so keys sort by window, then the
/// counted key.
pub fn counter_key(key: &str, window_start_ms: i64) -> String {
    format!("{:020}/{key}", window_start_ms.max(0))
}

#[async_trait]
impl<S: Documents + ?Sized> RateLimits for S {
    async fn rate_hit(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        let doc_key = counter_key(key, window_start_ms);
        let mut hits = None;
        for _ in 0..ATTEMPTS {
            let stored = self.get_document(COLLECTION, &doc_key).await?;
            let (count, expect) = match &stored {
                Some(d) => (d.decode::<u32>()?, Expect::Revision(d.revision)),
                None => (0, Expect::Absent),
            };
            let next = count.saturating_add(1);
            if self
                .write_documents(&[DocWrite::put(COLLECTION, doc_key.clone(), &next, expect)?])
                .await?
            {
                hits = Some(next);
                break;
            }
        }
        let hits = hits.ok_or_else(contended)?;
        // Counters of windows past the retention come first in key order: a page at a time
        // until none is left.
        let cutoff = format!("{:020}", (window_start_ms - RATE_RETENTION_MS).max(0));
        for _ in 0..PURGE_PAGES {
            let expired = before(self, COLLECTION, &cutoff, PURGE_PAGE).await?;
            let deletes: Vec<DocWrite> = expired
                .iter()
                .map(|d| DocWrite::delete(COLLECTION, d.key.clone(), Expect::Any))
                .collect();
            if !deletes.is_empty() {
                self.write_documents(&deletes).await?;
            }
            if deletes.len() < PURGE_PAGE {
                break;
            }
        }
        Ok(hits)
    }

    async fn rate_count(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        match self
            .get_document(COLLECTION, &counter_key(key, window_start_ms))
            .await?
        {
            Some(d) => d.decode(),
            None => Ok(0),
        }
    }
}
