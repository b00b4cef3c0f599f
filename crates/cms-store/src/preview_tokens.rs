//! Preview tokens: bearer secrets that read one document's draft as their creator sees it
//! (CONTRACT.md section 15). Only a keyed hash of each token is stored.

use async_trait::async_trait;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PreviewTokenRecord {
    pub id: String,
    pub organization_id: String,
    pub document_id: String,
    /// HMAC-SHA-256 of the token under the auth secret; the token itself is never stored.
    pub token_hash: String,
    pub created_by: String,
    pub created_at: i64,
    pub expires_at: i64,
}

/// Everything needed to authenticate a request by preview token, read in one query: the
/// token, its creator, and the creator's current role in the document's organization.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PreviewGrantRecord {
    pub token_id: String,
    pub organization_id: String,
    pub document_id: String,
    pub expires_at: i64,
    /// The token's creator.
    #[sqlx(flatten)]
    pub user: crate::users::UserRecord,
    /// The creator's role in the document's organization; `None` once they left it.
    pub member_role: Option<String>,
    pub role_capabilities: Option<Json<Vec<String>>>,
}

#[async_trait]
pub trait PreviewTokens {
    async fn insert_preview_token(&mut self, token: &PreviewTokenRecord) -> Result<()>;
    /// The token with this hash, its creator and the creator's current grant. Needs an
    /// instance-wide unit on PostgreSQL: no organization is known yet.
    async fn preview_grant(&mut self, token_hash: &str) -> Result<Option<PreviewGrantRecord>>;
    /// Deletes every token of a document of the organization. How many there were.
    async fn delete_preview_tokens(
        &mut self,
        organization_id: &str,
        document_id: &str,
    ) -> Result<u64>;
}

macro_rules! impl_preview_tokens {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::preview_tokens::PreviewTokens for $tx {
            async fn insert_preview_token(
                &mut self,
                t: &$crate::preview_tokens::PreviewTokenRecord,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO preview_tokens (id, organization_id, document_id, token_hash, \
                     created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(&t.id)
                .bind(&t.organization_id)
                .bind(&t.document_id)
                .bind(&t.token_hash)
                .bind(&t.created_by)
                .bind(t.created_at)
                .bind(t.expires_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn preview_grant(
                &mut self,
                token_hash: &str,
            ) -> $crate::Result<Option<$crate::preview_tokens::PreviewGrantRecord>> {
                Ok(sqlx::query_as(
                    "SELECT p.id AS token_id, p.organization_id, p.document_id, p.expires_at, \
                     u.*, m.role AS member_role, r.capabilities AS role_capabilities \
                     FROM preview_tokens p JOIN users u ON u.id = p.created_by \
                     LEFT JOIN members m ON m.organization_id = p.organization_id \
                         AND m.user_id = p.created_by \
                     LEFT JOIN roles r ON r.organization_id = m.organization_id AND r.name = m.role \
                     WHERE p.token_hash = $1",
                )
                .bind(token_hash)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn delete_preview_tokens(
                &mut self,
                organization_id: &str,
                document_id: &str,
            ) -> $crate::Result<u64> {
                let done = sqlx::query(
                    "DELETE FROM preview_tokens WHERE organization_id = $1 AND document_id = $2",
                )
                .bind(organization_id)
                .bind(document_id)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected())
            }
        }
    };
}
pub(crate) use impl_preview_tokens;
