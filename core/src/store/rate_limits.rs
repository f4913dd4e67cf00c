//! Fixed-window counters shared by replicas (login and token throttling).

use async_trait::async_trait;

use crate::Result;

/// Storage of rate-limit counters.
#[async_trait]
pub trait RateLimits: Send + Sync + 'static {
    /// Counts one event against `key` in the fixed window starting at `window_start_ms` and
    /// returns the count in that window (a new window starts over at 1). Shared by replicas.
    /// Keys whose window started more than [`crate::token::RATE_RETENTION_MS`] before `window_start_ms` are
    /// removed, so counters of invented keys do not accumulate.
    async fn rate_hit(&self, key: &str, window_start_ms: i64) -> Result<u32>;
    /// The count of `key` in the window starting at `window_start_ms` (0 when another window).
    async fn rate_count(&self, key: &str, window_start_ms: i64) -> Result<u32>;
}
