//! Document versions: an immutable snapshot of every draft save and publish.

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct VersionRecord {
    pub id: String,
    pub document_id: String,
    pub organization_id: String,
    /// Per document, increasing from 1.
    pub version_number: i64,
    /// `draft` or `publish`.
    pub event_type: String,
    pub data: Json<Value>,
    pub created_by: Option<String>,
    /// The author's name, resolved when read; ignored on insert.
    #[sqlx(default)]
    pub created_by_name: Option<String>,
    pub created_at: i64,
}

#[async_trait]
pub trait Versions {
    /// Appends a version numbered one past the document's last, and returns that number.
    async fn append_version(&mut self, version: &VersionRecord) -> Result<i64>;
    /// Newest first.
    async fn versions(
        &mut self,
        document_id: &str,
        limit: i64,
        offset: i64,
    ) -> Result<Vec<VersionRecord>>;
    async fn count_versions(&mut self, document_id: &str) -> Result<i64>;
    async fn version(&mut self, document_id: &str, number: i64) -> Result<Option<VersionRecord>>;
    /// Deletes all but the newest `keep` versions of a document; returns how many went.
    async fn prune_versions(&mut self, document_id: &str, keep: i64) -> Result<u64>;
}

/// [`Versions::append_version`]: id, document, organization, event type, data, by, at; the
/// number is the document's next one.
pub(crate) const APPEND_VERSION_SQL: &str = "INSERT INTO document_versions (id, document_id, \
     organization_id, version_number, event_type, data, created_by, created_at) \
     SELECT $1, $2, $3, COALESCE(MAX(version_number), 0) + 1, $4, $5, $6, $7 \
     FROM document_versions WHERE document_id = $2 RETURNING version_number";

/// One version whose number is known (a new document's first ones), in column order.
pub(crate) const INSERT_VERSION_SQL: &str = "INSERT INTO document_versions (id, document_id, \
     organization_id, version_number, event_type, data, created_by, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// [`Versions::prune_versions`]: document, how many to keep.
pub(crate) const PRUNE_VERSIONS_SQL: &str = "DELETE FROM document_versions WHERE document_id = $1 \
     AND version_number <= (SELECT MAX(version_number) FROM document_versions WHERE document_id = $1) - $2";

macro_rules! impl_versions {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::versions::Versions for $tx {
            async fn append_version(&mut self, v: &$crate::versions::VersionRecord) -> $crate::Result<i64> {
                // Numbered inside the write transaction, which holds the document's row (or, on
                // SQLite, the whole database), so two writers cannot take the same number.
                if let Some(direct) = self.direct().await? {
                    return direct.append_version(v);
                }
                Ok(sqlx::query_scalar($crate::versions::APPEND_VERSION_SQL)
                .bind(&v.id)
                .bind(&v.document_id)
                .bind(&v.organization_id)
                .bind(&v.event_type)
                .bind(&v.data)
                .bind(&v.created_by)
                .bind(v.created_at)
                .fetch_one(self.conn().await?)
                .await?)
            }

            async fn versions(
                &mut self,
                document_id: &str,
                limit: i64,
                offset: i64,
            ) -> $crate::Result<Vec<$crate::versions::VersionRecord>> {
                Ok(sqlx::query_as(
                    "SELECT v.*, u.name AS created_by_name FROM document_versions v \
                     LEFT JOIN users u ON u.id = v.created_by \
                     WHERE v.document_id = $1 ORDER BY v.version_number DESC LIMIT $2 OFFSET $3",
                )
                .bind(document_id)
                .bind(limit)
                .bind(offset)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn count_versions(&mut self, document_id: &str) -> $crate::Result<i64> {
                Ok(sqlx::query_scalar("SELECT COUNT(*) FROM document_versions WHERE document_id = $1")
                    .bind(document_id)
                    .fetch_one(self.conn().await?)
                    .await?)
            }

            async fn version(
                &mut self,
                document_id: &str,
                number: i64,
            ) -> $crate::Result<Option<$crate::versions::VersionRecord>> {
                Ok(sqlx::query_as(
                    "SELECT v.*, u.name AS created_by_name FROM document_versions v \
                     LEFT JOIN users u ON u.id = v.created_by \
                     WHERE v.document_id = $1 AND v.version_number = $2",
                )
                .bind(document_id)
                .bind(number)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn prune_versions(&mut self, document_id: &str, keep: i64) -> $crate::Result<u64> {
                if let Some(direct) = self.direct().await? {
                    return direct.prune_versions(document_id, keep);
                }
                let done = sqlx::query($crate::versions::PRUNE_VERSIONS_SQL)
                .bind(document_id)
                .bind(keep)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected())
            }
        }
    };
}
pub(crate) use impl_versions;
