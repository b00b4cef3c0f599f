//! API keys: programmatic credentials bound to one organization.

use async_trait::async_trait;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ApiKeyRecord {
    pub id: String,
    pub organization_id: String,
    pub name: String,
    /// HMAC-SHA-256 of the key under the auth secret; the key itself is never stored.
    pub key_hash: String,
    /// The first characters of the key, so a person can tell keys apart in a list.
    pub start: String,
    pub permissions: Json<Vec<String>>,
    /// The allowlist; `None` when only `permissions` were given.
    pub capabilities: Option<Json<Vec<String>>>,
    pub created_by: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

/// Everything needed to authenticate a request by API key, read in one query on the hot path:
/// the key, its creator, and the creator's current role in the key's organization.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct KeyGrantRecord {
    pub key_id: String,
    pub organization_id: String,
    pub permissions: Json<Vec<String>>,
    pub capabilities: Option<Json<Vec<String>>>,
    pub expires_at: Option<i64>,
    /// The key's creator.
    #[sqlx(flatten)]
    pub user: crate::users::UserRecord,
    /// The creator's role in the key's organization; `None` once they left it.
    pub member_role: Option<String>,
    pub role_capabilities: Option<Json<Vec<String>>>,
}

pub(crate) const KEY_GRANT_SQL: &str = "SELECT k.id AS key_id, k.organization_id, k.permissions, \
     k.capabilities, k.expires_at, u.*, m.role AS member_role, r.capabilities AS role_capabilities \
     FROM api_keys k JOIN users u ON u.id = k.created_by \
     LEFT JOIN members m ON m.organization_id = k.organization_id AND m.user_id = k.created_by \
     LEFT JOIN roles r ON r.organization_id = m.organization_id AND r.name = m.role \
     WHERE k.key_hash = $1";

#[async_trait]
pub trait ApiKeys {
    /// The key with this hash, its creator and the creator's current grant.
    async fn key_grant(&mut self, key_hash: &str) -> Result<Option<KeyGrantRecord>>;
    async fn insert_api_key(&mut self, key: &ApiKeyRecord) -> Result<()>;
    /// The keys of an organization, newest first.
    async fn api_keys(&mut self, organization_id: &str) -> Result<Vec<ApiKeyRecord>>;
    /// `true` when the key existed in that organization and is gone.
    async fn delete_api_key(&mut self, organization_id: &str, id: &str) -> Result<bool>;
    /// Deletes the keys a user created in an organization. How many there were.
    async fn delete_api_keys_of_member(
        &mut self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<u64>;
}

macro_rules! impl_api_keys {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::api_keys::ApiKeys for $tx {
            async fn insert_api_key(&mut self, k: &$crate::api_keys::ApiKeyRecord) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO api_keys (id, organization_id, name, key_hash, start, permissions, \
                     capabilities, created_by, created_at, expires_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(&k.id)
                .bind(&k.organization_id)
                .bind(&k.name)
                .bind(&k.key_hash)
                .bind(&k.start)
                .bind(&k.permissions)
                .bind(&k.capabilities)
                .bind(&k.created_by)
                .bind(k.created_at)
                .bind(k.expires_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn key_grant(
                &mut self,
                key_hash: &str,
            ) -> $crate::Result<Option<$crate::api_keys::KeyGrantRecord>> {
                if let Some(points) = self.point_reads() {
                    return points.key_grant(key_hash);
                }
                Ok(sqlx::query_as($crate::api_keys::KEY_GRANT_SQL)
                .bind(key_hash)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn api_keys(
                &mut self,
                organization_id: &str,
            ) -> $crate::Result<Vec<$crate::api_keys::ApiKeyRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM api_keys WHERE organization_id = $1 ORDER BY created_at DESC, id DESC",
                )
                .bind(organization_id)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn delete_api_key(&mut self, organization_id: &str, id: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM api_keys WHERE organization_id = $1 AND id = $2")
                    .bind(organization_id)
                    .bind(id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn delete_api_keys_of_member(
                &mut self,
                organization_id: &str,
                user_id: &str,
            ) -> $crate::Result<u64> {
                let done = sqlx::query("DELETE FROM api_keys WHERE organization_id = $1 AND created_by = $2")
                    .bind(organization_id)
                    .bind(user_id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected())
            }
        }
    };
}
pub(crate) use impl_api_keys;
