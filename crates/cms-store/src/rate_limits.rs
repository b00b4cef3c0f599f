//! Rate-limit counters: fixed windows kept in the database, so every instance on one
//! PostgreSQL counts against the same limit.

use async_trait::async_trait;

use crate::Result;

/// A counter after a hit: the hits in the current window, and when that window began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct RateCount {
    pub window_start: i64,
    pub hits: i64,
}

#[async_trait]
pub trait RateLimits {
    /// Counts one hit on `key` at `now` in one atomic statement: a window that began at or
    /// before `expired_before` is over, so the counter starts again at 1 with a window at `now`.
    /// Concurrent hits on any engine each see a distinct count.
    async fn hit_rate_limit(
        &mut self,
        key: &str,
        now: i64,
        expired_before: i64,
    ) -> Result<RateCount>;
    /// Deletes the counters whose window began at or before `expired_before`; how many.
    async fn purge_rate_limits(&mut self, expired_before: i64) -> Result<u64>;
}

macro_rules! impl_rate_limits {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::rate_limits::RateLimits for $tx {
            async fn hit_rate_limit(
                &mut self,
                key: &str,
                now: i64,
                expired_before: i64,
            ) -> $crate::Result<$crate::rate_limits::RateCount> {
                // Both engines evaluate every SET expression against the row as it was, so the
                // two CASEs agree on whether the window is over.
                Ok(sqlx::query_as(
                    "INSERT INTO rate_limits (key, window_start, hits) VALUES ($1, $2, 1) \
                     ON CONFLICT (key) DO UPDATE SET \
                     hits = CASE WHEN rate_limits.window_start <= $3 THEN 1 ELSE rate_limits.hits + 1 END, \
                     window_start = CASE WHEN rate_limits.window_start <= $3 THEN $2 ELSE rate_limits.window_start END \
                     RETURNING window_start, hits",
                )
                .bind(key)
                .bind(now)
                .bind(expired_before)
                .fetch_one(self.conn().await?)
                .await?)
            }

            async fn purge_rate_limits(&mut self, expired_before: i64) -> $crate::Result<u64> {
                let done = sqlx::query("DELETE FROM rate_limits WHERE window_start <= $1")
                    .bind(expired_before)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected())
            }
        }
    };
}
pub(crate) use impl_rate_limits;
