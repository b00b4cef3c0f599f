//! Which account a single sign-on provider's person is (CONTRACT.md section 20): a provider's
//! stable subject, linked to one user.

use async_trait::async_trait;

use crate::Result;
use crate::users::UserRecord;

#[async_trait]
pub trait UserIdentities {
    /// The user `provider` knows as `subject`, when linked.
    async fn user_by_identity(
        &mut self,
        provider: &str,
        subject: &str,
    ) -> Result<Option<UserRecord>>;
    /// Links `provider`'s `subject` to `user_id`. Fails with [`crate::StoreError::Unique`]
    /// when the subject is linked already.
    async fn link_identity(
        &mut self,
        provider: &str,
        subject: &str,
        user_id: &str,
        now: i64,
    ) -> Result<()>;
}

macro_rules! impl_user_identities {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::identities::UserIdentities for $tx {
            async fn user_by_identity(
                &mut self,
                provider: &str,
                subject: &str,
            ) -> $crate::Result<Option<$crate::users::UserRecord>> {
                Ok(sqlx::query_as(
                    "SELECT u.* FROM user_identities i JOIN users u ON u.id = i.user_id \
                     WHERE i.provider = $1 AND i.subject = $2",
                )
                .bind(provider)
                .bind(subject)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn link_identity(
                &mut self,
                provider: &str,
                subject: &str,
                user_id: &str,
                now: i64,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO user_identities (provider, subject, user_id, created_at) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(provider)
                .bind(subject)
                .bind(user_id)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }
        }
    };
}
pub(crate) use impl_user_identities;
