//! Rate-limit counters.

use crate::MemoryStore;
use async_trait::async_trait;
use inlet_core::Result;
use inlet_core::store::RateLimits;

/// Rate-limit keys kept before those of past windows are dropped.
const MAX_RATE_KEYS: usize = 100_000;

#[async_trait]
impl RateLimits for MemoryStore {
    async fn rate_hit(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        let mut st = self.state.lock();
        let expired = window_start_ms - inlet_core::token::RATE_RETENTION_MS;
        let cutoff = if st.rates.len() >= MAX_RATE_KEYS {
            window_start_ms
        } else {
            expired
        };
        st.rates.retain(|_, (w, _)| *w >= cutoff);
        let entry = st
            .rates
            .entry(key.to_string())
            .or_insert((window_start_ms, 0));
        if entry.0 != window_start_ms {
            *entry = (window_start_ms, 0);
        }
        entry.1 = entry.1.saturating_add(1);
        Ok(entry.1)
    }

    async fn rate_count(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        let st = self.state.lock();
        Ok(st
            .rates
            .get(key)
            .filter(|(w, _)| *w == window_start_ms)
            .map_or(0, |(_, n)| *n))
    }
}
