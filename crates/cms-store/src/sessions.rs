//! Sessions: server-side records behind the session cookie and Bearer tokens.

use async_trait::async_trait;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionRecord {
    pub id: String,
    /// HMAC of the session token under the auth secret; the token itself is never stored.
    pub token_hash: String,
    pub user_id: String,
    pub active_organization_id: Option<String>,
    pub expires_at: i64,
    pub ip_address: Option<String>,
    pub user_agent: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[async_trait]
pub trait Sessions {
    async fn insert_session(&mut self, session: &SessionRecord) -> Result<()>;
    async fn session_by_token_hash(&mut self, token_hash: &str) -> Result<Option<SessionRecord>>;
    /// Slides the expiry of a session forward.
    async fn extend_session(&mut self, id: &str, expires_at: i64, now: i64) -> Result<()>;
    async fn set_active_organization(
        &mut self,
        id: &str,
        org: Option<&str>,
        now: i64,
    ) -> Result<()>;
    /// `true` when a session was deleted.
    async fn delete_session(&mut self, id: &str) -> Result<bool>;
}

macro_rules! impl_sessions {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::sessions::Sessions for $tx {
            async fn insert_session(&mut self, s: &$crate::sessions::SessionRecord) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO sessions (id, token_hash, user_id, active_organization_id, expires_at, \
                     ip_address, user_agent, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(&s.id)
                .bind(&s.token_hash)
                .bind(&s.user_id)
                .bind(&s.active_organization_id)
                .bind(s.expires_at)
                .bind(&s.ip_address)
                .bind(&s.user_agent)
                .bind(s.created_at)
                .bind(s.updated_at)
                .execute(self.conn())
                .await?;
                Ok(())
            }

            async fn session_by_token_hash(
                &mut self,
                token_hash: &str,
            ) -> $crate::Result<Option<$crate::sessions::SessionRecord>> {
                Ok(sqlx::query_as("SELECT * FROM sessions WHERE token_hash = $1")
                    .bind(token_hash)
                    .fetch_optional(self.conn())
                    .await?)
            }

            async fn extend_session(&mut self, id: &str, expires_at: i64, now: i64) -> $crate::Result<()> {
                sqlx::query("UPDATE sessions SET expires_at = $2, updated_at = $3 WHERE id = $1")
                    .bind(id)
                    .bind(expires_at)
                    .bind(now)
                    .execute(self.conn())
                    .await?;
                Ok(())
            }

            async fn set_active_organization(
                &mut self,
                id: &str,
                org: Option<&str>,
                now: i64,
            ) -> $crate::Result<()> {
                sqlx::query("UPDATE sessions SET active_organization_id = $2, updated_at = $3 WHERE id = $1")
                    .bind(id)
                    .bind(org)
                    .bind(now)
                    .execute(self.conn())
                    .await?;
                Ok(())
            }

            async fn delete_session(&mut self, id: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM sessions WHERE id = $1")
                    .bind(id)
                    .execute(self.conn())
                    .await?;
                Ok(done.rows_affected() > 0)
            }
        }
    };
}
pub(crate) use impl_sessions;
