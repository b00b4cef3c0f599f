//! Two-factor sign-in (CONTRACT.md section 20): a person's authenticator secret, sealed by the
//! service before it gets here, and their single-use recovery codes, as hashes only.

use async_trait::async_trait;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TwoFactorRecord {
    pub user_id: String,
    /// The sealed secret; the store never sees it in clear.
    pub secret: String,
    /// When enrolment was confirmed; `None` while it waits for a first code.
    pub enabled_at: Option<i64>,
    /// The last time step a code was accepted for: a code of this step or an earlier one is
    /// refused, so each code works once.
    pub last_step: i64,
    pub created_at: i64,
}

#[async_trait]
pub trait TwoFactor {
    async fn two_factor(&mut self, user_id: &str) -> Result<Option<TwoFactorRecord>>;
    /// Starts (or restarts) an enrolment: a new secret, not yet enabled, and no recovery
    /// codes. The service never calls it while two-factor is on.
    async fn begin_two_factor(&mut self, user_id: &str, secret: &str, now: i64) -> Result<()>;
    /// Turns a pending enrolment on, with the step its first code was for and the hashes of
    /// its recovery codes. `false` when there was no pending enrolment (already on, or none).
    async fn enable_two_factor(
        &mut self,
        user_id: &str,
        step: i64,
        recovery_code_hashes: &[String],
        now: i64,
    ) -> Result<bool>;
    /// Records that a code of `step` was accepted, when no code of this step or a later one
    /// was: `false` means the code was already used. Of two concurrent callers, one wins.
    async fn claim_two_factor_step(&mut self, user_id: &str, step: i64) -> Result<bool>;
    /// Deletes the recovery code with this hash: `true` when it was there (it works once).
    async fn take_recovery_code(&mut self, user_id: &str, code_hash: &str) -> Result<bool>;
    async fn count_recovery_codes(&mut self, user_id: &str) -> Result<i64>;
    /// Turns two-factor off: the secret and the recovery codes go. `true` when there was one.
    async fn delete_two_factor(&mut self, user_id: &str) -> Result<bool>;
}

macro_rules! impl_two_factor {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::two_factor::TwoFactor for $tx {
            async fn two_factor(
                &mut self,
                user_id: &str,
            ) -> $crate::Result<Option<$crate::two_factor::TwoFactorRecord>> {
                Ok(sqlx::query_as("SELECT * FROM two_factor WHERE user_id = $1")
                    .bind(user_id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn begin_two_factor(
                &mut self,
                user_id: &str,
                secret: &str,
                now: i64,
            ) -> $crate::Result<()> {
                sqlx::query("DELETE FROM two_factor_recovery_codes WHERE user_id = $1")
                    .bind(user_id)
                    .execute(self.conn().await?)
                    .await?;
                sqlx::query(
                    "INSERT INTO two_factor (user_id, secret, enabled_at, last_step, created_at) \
                     VALUES ($1, $2, NULL, 0, $3) \
                     ON CONFLICT (user_id) DO UPDATE SET secret = $2, enabled_at = NULL, \
                     last_step = 0, created_at = $3",
                )
                .bind(user_id)
                .bind(secret)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn enable_two_factor(
                &mut self,
                user_id: &str,
                step: i64,
                recovery_code_hashes: &[String],
                now: i64,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE two_factor SET enabled_at = $2, last_step = $3 \
                     WHERE user_id = $1 AND enabled_at IS NULL",
                )
                .bind(user_id)
                .bind(now)
                .bind(step)
                .execute(self.conn().await?)
                .await?;
                if done.rows_affected() == 0 {
                    return Ok(false);
                }
                for hash in recovery_code_hashes {
                    sqlx::query(
                        "INSERT INTO two_factor_recovery_codes (user_id, code_hash) VALUES ($1, $2)",
                    )
                    .bind(user_id)
                    .bind(hash)
                    .execute(self.conn().await?)
                    .await?;
                }
                Ok(true)
            }

            async fn claim_two_factor_step(
                &mut self,
                user_id: &str,
                step: i64,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE two_factor SET last_step = $2 \
                     WHERE user_id = $1 AND enabled_at IS NOT NULL AND last_step < $2",
                )
                .bind(user_id)
                .bind(step)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn take_recovery_code(
                &mut self,
                user_id: &str,
                code_hash: &str,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "DELETE FROM two_factor_recovery_codes WHERE user_id = $1 AND code_hash = $2",
                )
                .bind(user_id)
                .bind(code_hash)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn count_recovery_codes(&mut self, user_id: &str) -> $crate::Result<i64> {
                Ok(sqlx::query_scalar(
                    "SELECT COUNT(*) FROM two_factor_recovery_codes WHERE user_id = $1",
                )
                .bind(user_id)
                .fetch_one(self.conn().await?)
                .await?)
            }

            async fn delete_two_factor(&mut self, user_id: &str) -> $crate::Result<bool> {
                sqlx::query("DELETE FROM two_factor_recovery_codes WHERE user_id = $1")
                    .bind(user_id)
                    .execute(self.conn().await?)
                    .await?;
                let done = sqlx::query("DELETE FROM two_factor WHERE user_id = $1")
                    .bind(user_id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() == 1)
            }
        }
    };
}
pub(crate) use impl_two_factor;
