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

/// Everything needed to authenticate a request by session, read in one query on the hot path:
/// the session, its user, and the user's role in the active organization.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionGrantRecord {
    #[sqlx(flatten)]
    pub session: SessionFields,
    #[sqlx(flatten)]
    pub user: crate::users::UserRecord,
    /// The user's role in the active organization; `None` without one.
    pub member_role: Option<String>,
    pub role_capabilities: Option<sqlx::types::Json<Vec<String>>>,
    /// Whether the active organization requires two-factor sign-in; `None` without one.
    pub organization_requires_two_factor: Option<bool>,
    /// When the user turned two-factor on; `None` when it is off (or still being enrolled).
    pub two_factor_enabled_at: Option<i64>,
}

/// A session's columns under names that do not clash with the user's.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionFields {
    pub session_id: String,
    pub active_organization_id: Option<String>,
    pub expires_at: i64,
    pub ip_address: Option<String>,
    pub user_agent: Option<String>,
    pub session_created_at: i64,
    pub session_updated_at: i64,
}

pub(crate) const SESSION_GRANT_SQL: &str = "SELECT s.id AS session_id, s.active_organization_id, \
     s.expires_at, s.ip_address, s.user_agent, s.created_at AS session_created_at, \
     s.updated_at AS session_updated_at, u.*, m.role AS member_role, \
     r.capabilities AS role_capabilities, \
     o.require_two_factor AS organization_requires_two_factor, \
     t.enabled_at AS two_factor_enabled_at \
     FROM sessions s JOIN users u ON u.id = s.user_id \
     LEFT JOIN organizations o ON o.id = s.active_organization_id \
     LEFT JOIN two_factor t ON t.user_id = s.user_id \
     LEFT JOIN members m ON m.organization_id = s.active_organization_id AND m.user_id = s.user_id \
     LEFT JOIN roles r ON r.organization_id = m.organization_id AND r.name = m.role \
     WHERE s.token_hash = $1";

#[async_trait]
pub trait Sessions {
    /// The session with this token hash, its user and the user's current grant.
    async fn session_grant(&mut self, token_hash: &str) -> Result<Option<SessionGrantRecord>>;
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
    /// Leaves the user's sessions that had `organization_id` active without an active
    /// organization. How many sessions changed.
    async fn clear_active_organization(
        &mut self,
        user_id: &str,
        organization_id: &str,
        now: i64,
    ) -> Result<u64>;
    /// Revokes every session of the user. How many there were.
    async fn delete_sessions_of_user(&mut self, user_id: &str) -> Result<u64>;
    /// The user's sessions that have not expired at `now`, most recently renewed first.
    async fn sessions_of_user(&mut self, user_id: &str, now: i64) -> Result<Vec<SessionRecord>>;
    /// Deletes one session of the user; `false` when they have none of that id.
    async fn delete_session_of_user(&mut self, user_id: &str, id: &str) -> Result<bool>;
    /// Deletes every session of the user but `keep`; how many went.
    async fn delete_other_sessions_of_user(&mut self, user_id: &str, keep: &str) -> Result<u64>;
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
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn session_grant(
                &mut self,
                token_hash: &str,
            ) -> $crate::Result<Option<$crate::sessions::SessionGrantRecord>> {
                if let Some(points) = self.point_reads() {
                    return points.session_grant(token_hash);
                }
                Ok(sqlx::query_as($crate::sessions::SESSION_GRANT_SQL)
                .bind(token_hash)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn session_by_token_hash(
                &mut self,
                token_hash: &str,
            ) -> $crate::Result<Option<$crate::sessions::SessionRecord>> {
                Ok(sqlx::query_as("SELECT * FROM sessions WHERE token_hash = $1")
                    .bind(token_hash)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn extend_session(&mut self, id: &str, expires_at: i64, now: i64) -> $crate::Result<()> {
                sqlx::query("UPDATE sessions SET expires_at = $2, updated_at = $3 WHERE id = $1")
                    .bind(id)
                    .bind(expires_at)
                    .bind(now)
                    .execute(self.conn().await?)
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
                    .execute(self.conn().await?)
                    .await?;
                Ok(())
            }

            async fn delete_session(&mut self, id: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM sessions WHERE id = $1")
                    .bind(id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn clear_active_organization(
                &mut self,
                user_id: &str,
                organization_id: &str,
                now: i64,
            ) -> $crate::Result<u64> {
                let done = sqlx::query(
                    "UPDATE sessions SET active_organization_id = NULL, updated_at = $3 \
                     WHERE user_id = $1 AND active_organization_id = $2",
                )
                .bind(user_id)
                .bind(organization_id)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected())
            }

            async fn delete_sessions_of_user(&mut self, user_id: &str) -> $crate::Result<u64> {
                let done = sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                    .bind(user_id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected())
            }

            async fn sessions_of_user(
                &mut self,
                user_id: &str,
                now: i64,
            ) -> $crate::Result<Vec<$crate::sessions::SessionRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM sessions WHERE user_id = $1 AND expires_at > $2 \
                     ORDER BY updated_at DESC, id DESC",
                )
                .bind(user_id)
                .bind(now)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn delete_session_of_user(
                &mut self,
                user_id: &str,
                id: &str,
            ) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND id = $2")
                    .bind(user_id)
                    .bind(id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn delete_other_sessions_of_user(
                &mut self,
                user_id: &str,
                keep: &str,
            ) -> $crate::Result<u64> {
                let done = sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND id <> $2")
                    .bind(user_id)
                    .bind(keep)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected())
            }
        }
    };
}
pub(crate) use impl_sessions;
