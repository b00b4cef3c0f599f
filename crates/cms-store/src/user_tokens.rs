//! Single-use tokens sent by e-mail (address verification, password reset). Only a keyed hash
//! of a token is stored; taking a token deletes it, so it works once.

use async_trait::async_trait;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UserTokenRecord {
    /// A keyed hash of the token; the token itself is never stored.
    pub token_hash: String,
    pub user_id: String,
    /// What the token is for: the service's own names.
    pub purpose: String,
    /// The address the token proves, for an e-mail change (the new address); `None` otherwise.
    pub email: Option<String>,
    pub expires_at: i64,
    pub created_at: i64,
}

#[async_trait]
pub trait UserTokens {
    async fn insert_user_token(&mut self, token: &UserTokenRecord) -> Result<()>;
    /// The token with this hash and purpose, left in place.
    async fn user_token(
        &mut self,
        token_hash: &str,
        purpose: &str,
    ) -> Result<Option<UserTokenRecord>>;
    /// Deletes and returns the token with this hash and purpose, expired or not. Of two
    /// concurrent callers, one gets it.
    async fn take_user_token(
        &mut self,
        token_hash: &str,
        purpose: &str,
    ) -> Result<Option<UserTokenRecord>>;
    /// Counts one wrong answer against the token with this hash and purpose: how many it has
    /// had, or `None` when there is no such token.
    async fn count_user_token_failure(
        &mut self,
        token_hash: &str,
        purpose: &str,
    ) -> Result<Option<i64>>;
    /// Deletes the user's tokens of one purpose. How many there were.
    async fn delete_user_tokens(&mut self, user_id: &str, purpose: &str) -> Result<u64>;
    /// Deletes every token that expired before `now`.
    async fn delete_expired_user_tokens(&mut self, now: i64) -> Result<u64>;
}

macro_rules! impl_user_tokens {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::user_tokens::UserTokens for $tx {
            async fn insert_user_token(
                &mut self,
                t: &$crate::user_tokens::UserTokenRecord,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO user_tokens (token_hash, user_id, purpose, email, expires_at, created_at) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(&t.token_hash)
                .bind(&t.user_id)
                .bind(&t.purpose)
                .bind(&t.email)
                .bind(t.expires_at)
                .bind(t.created_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn user_token(
                &mut self,
                token_hash: &str,
                purpose: &str,
            ) -> $crate::Result<Option<$crate::user_tokens::UserTokenRecord>> {
                Ok(sqlx::query_as("SELECT * FROM user_tokens WHERE token_hash = $1 AND purpose = $2")
                    .bind(token_hash)
                    .bind(purpose)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn take_user_token(
                &mut self,
                token_hash: &str,
                purpose: &str,
            ) -> $crate::Result<Option<$crate::user_tokens::UserTokenRecord>> {
                Ok(sqlx::query_as(
                    "DELETE FROM user_tokens WHERE token_hash = $1 AND purpose = $2 RETURNING *",
                )
                .bind(token_hash)
                .bind(purpose)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn count_user_token_failure(
                &mut self,
                token_hash: &str,
                purpose: &str,
            ) -> $crate::Result<Option<i64>> {
                Ok(sqlx::query_scalar::<_, i32>(
                    "UPDATE user_tokens SET failures = failures + 1 \
                     WHERE token_hash = $1 AND purpose = $2 RETURNING failures",
                )
                .bind(token_hash)
                .bind(purpose)
                .fetch_optional(self.conn().await?)
                .await?
                .map(i64::from))
            }

            async fn delete_user_tokens(&mut self, user_id: &str, purpose: &str) -> $crate::Result<u64> {
                let done = sqlx::query("DELETE FROM user_tokens WHERE user_id = $1 AND purpose = $2")
                    .bind(user_id)
                    .bind(purpose)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected())
            }

            async fn delete_expired_user_tokens(&mut self, now: i64) -> $crate::Result<u64> {
                let done = sqlx::query("DELETE FROM user_tokens WHERE expires_at <= $1")
                    .bind(now)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected())
            }
        }
    };
}
pub(crate) use impl_user_tokens;
