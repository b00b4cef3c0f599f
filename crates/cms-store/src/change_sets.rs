//! Assistant change sets (SPEC.md "Agent change set"): one row per assistant turn that changed
//! something, with the turn's operations as a JSON array the service layer writes and reads.
//!
//! The table is behind the row-level-security wall on PostgreSQL: use a unit that acts for the
//! organization (`Store::read_for` / `write_for`).

use async_trait::async_trait;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ChangeSetRecord {
    pub id: String,
    pub organization_id: String,
    pub user_id: String,
    pub created_at: i64,
    /// The operations in the order they ran (the service layer's shape).
    pub operations: Json<serde_json::Value>,
    pub undone_at: Option<i64>,
    /// The door the writes came through: `assistant` or `mcp`.
    pub source: String,
}

#[async_trait]
pub trait ChangeSets {
    async fn insert_change_set(&mut self, record: &ChangeSetRecord) -> Result<()>;
    /// Replaces the operations of a change set of the organization; `false` when there is none.
    async fn set_change_set_operations(
        &mut self,
        organization_id: &str,
        id: &str,
        operations: &Json<serde_json::Value>,
    ) -> Result<bool>;
    /// The organization's change sets, newest first, with their total.
    async fn change_sets(
        &mut self,
        organization_id: &str,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<ChangeSetRecord>, i64)>;
    async fn change_set(
        &mut self,
        organization_id: &str,
        id: &str,
    ) -> Result<Option<ChangeSetRecord>>;
    /// Marks a change set undone at `at`, once: `false` when it was undone already (or does
    /// not exist), so two concurrent undos cannot both proceed.
    async fn mark_change_set_undone(
        &mut self,
        organization_id: &str,
        id: &str,
        at: i64,
    ) -> Result<bool>;
}

macro_rules! impl_change_sets {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::change_sets::ChangeSets for $tx {
            async fn insert_change_set(
                &mut self,
                r: &$crate::change_sets::ChangeSetRecord,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO agent_change_sets \
                     (id, organization_id, user_id, created_at, operations, undone_at, source) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(&r.id)
                .bind(&r.organization_id)
                .bind(&r.user_id)
                .bind(r.created_at)
                .bind(&r.operations)
                .bind(r.undone_at)
                .bind(&r.source)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn set_change_set_operations(
                &mut self,
                organization_id: &str,
                id: &str,
                operations: &sqlx::types::Json<serde_json::Value>,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE agent_change_sets SET operations = $3 \
                     WHERE organization_id = $1 AND id = $2",
                )
                .bind(organization_id)
                .bind(id)
                .bind(operations)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn change_sets(
                &mut self,
                organization_id: &str,
                limit: i64,
                offset: i64,
            ) -> $crate::Result<(Vec<$crate::change_sets::ChangeSetRecord>, i64)> {
                let rows = sqlx::query_as(
                    "SELECT id, organization_id, user_id, created_at, operations, undone_at, source \
                     FROM agent_change_sets WHERE organization_id = $1 \
                     ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3",
                )
                .bind(organization_id)
                .bind(limit)
                .bind(offset)
                .fetch_all(self.conn().await?)
                .await?;
                let total: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM agent_change_sets WHERE organization_id = $1",
                )
                .bind(organization_id)
                .fetch_one(self.conn().await?)
                .await?;
                Ok((rows, total))
            }

            async fn change_set(
                &mut self,
                organization_id: &str,
                id: &str,
            ) -> $crate::Result<Option<$crate::change_sets::ChangeSetRecord>> {
                Ok(sqlx::query_as(
                    "SELECT id, organization_id, user_id, created_at, operations, undone_at, source \
                     FROM agent_change_sets WHERE organization_id = $1 AND id = $2",
                )
                .bind(organization_id)
                .bind(id)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn mark_change_set_undone(
                &mut self,
                organization_id: &str,
                id: &str,
                at: i64,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE agent_change_sets SET undone_at = $3 \
                     WHERE organization_id = $1 AND id = $2 AND undone_at IS NULL",
                )
                .bind(organization_id)
                .bind(id)
                .bind(at)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() == 1)
            }
        }
    };
}
pub(crate) use impl_change_sets;
