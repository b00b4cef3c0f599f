//! Instance state: one-off facts about the whole installation.

use async_trait::async_trait;

use crate::Result;

#[async_trait]
pub trait Instance {
    /// Records `key` once. `true` for the caller that recorded it, `false` when it already was:
    /// the primary key decides races between concurrent callers on every engine.
    async fn claim_instance_flag(&mut self, key: &str, value: &str, now: i64) -> Result<bool>;
    async fn instance_flag(&mut self, key: &str) -> Result<Option<String>>;
    /// Sets `key` to `value`, whether or not it was set before.
    async fn put_instance_value(&mut self, key: &str, value: &str, now: i64) -> Result<()>;
    /// Removes `key`; `true` when it was there.
    async fn delete_instance_value(&mut self, key: &str) -> Result<bool>;
}

macro_rules! impl_instance {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::instance::Instance for $tx {
            async fn claim_instance_flag(
                &mut self,
                key: &str,
                value: &str,
                now: i64,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "INSERT INTO instance_state (key, value, updated_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (key) DO NOTHING",
                )
                .bind(key)
                .bind(value)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn instance_flag(&mut self, key: &str) -> $crate::Result<Option<String>> {
                Ok(
                    sqlx::query_scalar("SELECT value FROM instance_state WHERE key = $1")
                        .bind(key)
                        .fetch_optional(self.conn().await?)
                        .await?,
                )
            }

            async fn put_instance_value(
                &mut self,
                key: &str,
                value: &str,
                now: i64,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO instance_state (key, value, updated_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                )
                .bind(key)
                .bind(value)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn delete_instance_value(&mut self, key: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM instance_state WHERE key = $1")
                    .bind(key)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() == 1)
            }
        }
    };
}
pub(crate) use impl_instance;
