//! Users: the people who sign in.

use async_trait::async_trait;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UserRecord {
    pub id: String,
    /// Lowercased; unique.
    pub email: String,
    pub name: String,
    /// Argon2id PHC string; `None` for a user who cannot sign in with a password.
    pub password_hash: Option<String>,
    pub email_verified: bool,
    /// Instance role: `super_admin`, `admin`, `editor` or `viewer`.
    pub role: String,
    pub image: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[async_trait]
pub trait Users {
    /// Fails with [`crate::StoreError::Unique`] when the e-mail is taken.
    async fn insert_user(&mut self, user: &UserRecord) -> Result<()>;
    async fn user_by_id(&mut self, id: &str) -> Result<Option<UserRecord>>;
    async fn user_by_email(&mut self, email: &str) -> Result<Option<UserRecord>>;
    async fn count_users(&mut self) -> Result<i64>;
    /// Deletes the user with their sessions, memberships and API keys. `false` when absent.
    async fn delete_user(&mut self, id: &str) -> Result<bool>;
    /// Writes name, e-mail and whether the e-mail is verified. `false` when absent. Fails with
    /// [`crate::StoreError::Unique`] when the e-mail is taken.
    async fn update_user_profile(
        &mut self,
        id: &str,
        name: &str,
        email: &str,
        email_verified: bool,
        now: i64,
    ) -> Result<bool>;
    /// Marks the user's e-mail address verified. `false` when absent.
    async fn set_email_verified(&mut self, id: &str, now: i64) -> Result<bool>;
    /// Replaces the password hash. `false` when absent.
    async fn set_password_hash(&mut self, id: &str, password_hash: &str, now: i64) -> Result<bool>;
}

macro_rules! impl_users {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::users::Users for $tx {
            async fn insert_user(&mut self, u: &$crate::users::UserRecord) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO users (id, email, name, password_hash, email_verified, role, image, \
                     created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(&u.id)
                .bind(&u.email)
                .bind(&u.name)
                .bind(&u.password_hash)
                .bind(u.email_verified)
                .bind(&u.role)
                .bind(&u.image)
                .bind(u.created_at)
                .bind(u.updated_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn delete_user(&mut self, id: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM users WHERE id = $1")
                    .bind(id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn user_by_id(&mut self, id: &str) -> $crate::Result<Option<$crate::users::UserRecord>> {
                Ok(sqlx::query_as("SELECT * FROM users WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn user_by_email(
                &mut self,
                email: &str,
            ) -> $crate::Result<Option<$crate::users::UserRecord>> {
                Ok(sqlx::query_as("SELECT * FROM users WHERE email = $1")
                    .bind(email)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn count_users(&mut self) -> $crate::Result<i64> {
                Ok(sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(self.conn().await?).await?)
            }

            async fn update_user_profile(
                &mut self,
                id: &str,
                name: &str,
                email: &str,
                email_verified: bool,
                now: i64,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE users SET name = $2, email = $3, email_verified = $4, updated_at = $5 WHERE id = $1",
                )
                .bind(id)
                .bind(name)
                .bind(email)
                .bind(email_verified)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn set_email_verified(&mut self, id: &str, now: i64) -> $crate::Result<bool> {
                let done = sqlx::query("UPDATE users SET email_verified = $2, updated_at = $3 WHERE id = $1")
                    .bind(id)
                    .bind(true)
                    .bind(now)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn set_password_hash(
                &mut self,
                id: &str,
                password_hash: &str,
                now: i64,
            ) -> $crate::Result<bool> {
                let done = sqlx::query("UPDATE users SET password_hash = $2, updated_at = $3 WHERE id = $1")
                    .bind(id)
                    .bind(password_hash)
                    .bind(now)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }
        }
    };
}
pub(crate) use impl_users;
