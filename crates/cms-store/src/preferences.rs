//! Editor preferences: one JSON object per user, opaque to the service.

use async_trait::async_trait;
use sqlx::types::Json;

use crate::Result;

#[async_trait]
pub trait Preferences {
    /// The user's stored preferences; `None` before the first save.
    async fn preferences(&mut self, user_id: &str) -> Result<Option<Json<serde_json::Value>>>;
    /// Replaces the user's preferences.
    async fn save_preferences(
        &mut self,
        user_id: &str,
        data: &Json<serde_json::Value>,
        now: i64,
    ) -> Result<()>;
}

macro_rules! impl_preferences {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::preferences::Preferences for $tx {
            async fn preferences(
                &mut self,
                user_id: &str,
            ) -> $crate::Result<Option<sqlx::types::Json<serde_json::Value>>> {
                Ok(sqlx::query_scalar("SELECT data FROM user_preferences WHERE user_id = $1")
                    .bind(user_id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn save_preferences(
                &mut self,
                user_id: &str,
                data: &sqlx::types::Json<serde_json::Value>,
                now: i64,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO user_preferences (user_id, data, updated_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (user_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
                )
                .bind(user_id)
                .bind(data)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }
        }
    };
}
pub(crate) use impl_preferences;
