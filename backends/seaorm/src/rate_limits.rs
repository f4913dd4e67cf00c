//! Rate-limit counters shared by replicas.

use crate::{SeaOrmStore, exec, get, one};
use async_trait::async_trait;
use inlet_core::Result;
use inlet_core::store::RateLimits;

#[async_trait]
impl RateLimits for SeaOrmStore {
    async fn rate_hit(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        let _w = self.write_guard().await;
        let row = one(
            &self.db,
            self.stmt(
                "INSERT INTO rate_limits (rate_key, window_start, hits) VALUES ($1, $2, 1) \
                 ON CONFLICT (rate_key) DO UPDATE SET \
                 hits = CASE WHEN rate_limits.window_start = excluded.window_start \
                        THEN rate_limits.hits + 1 ELSE 1 END, \
                 window_start = excluded.window_start \
                 RETURNING hits",
                vec![key.to_string().into(), window_start_ms.into()],
            ),
        )
        .await?;
        let hits = row.as_ref().map_or(Ok(1), |r| get::<i64>(r, "hits"))?;
        // Counters whose window ended long ago go (indexed by m0011).
        exec(
            &self.db,
            self.stmt(
                "DELETE FROM rate_limits WHERE window_start < $1",
                vec![(window_start_ms - inlet_core::token::RATE_RETENTION_MS).into()],
            ),
        )
        .await?;
        Ok(u32::try_from(hits).unwrap_or(u32::MAX))
    }

    async fn rate_count(&self, key: &str, window_start_ms: i64) -> Result<u32> {
        let row = one(
            &self.db,
            self.stmt(
                "SELECT hits FROM rate_limits WHERE rate_key = $1 AND window_start = $2",
                vec![key.to_string().into(), window_start_ms.into()],
            ),
        )
        .await?;
        let hits = row.as_ref().map_or(Ok(0), |r| get::<i64>(r, "hits"))?;
        Ok(u32::try_from(hits).unwrap_or(u32::MAX))
    }
}
