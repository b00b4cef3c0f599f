//! Scheduled publish and unpublish: at most one pending schedule per document, carried out by
//! a job.

use async_trait::async_trait;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ScheduleRecord {
    pub id: String,
    pub document_id: String,
    pub organization_id: String,
    /// `publish` or `unpublish`.
    pub action: String,
    pub run_at: i64,
    /// `pending`, `completed`, `cancelled` or `failed`.
    pub status: String,
    pub job_id: String,
    pub created_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[async_trait]
pub trait Schedules {
    /// Fails with [`crate::StoreError::Unique`] while the document has a pending schedule.
    async fn insert_schedule(&mut self, schedule: &ScheduleRecord) -> Result<()>;
    async fn pending_schedule(&mut self, document_id: &str) -> Result<Option<ScheduleRecord>>;
    async fn schedule(&mut self, id: &str) -> Result<Option<ScheduleRecord>>;
    /// The schedule while it is pending, held until the unit ends: on PostgreSQL its row is
    /// locked, so a second unit carrying out the same schedule waits and then finds it settled;
    /// SQLite's single writer already serializes them. `None` when it is not pending.
    async fn lock_pending_schedule(&mut self, id: &str) -> Result<Option<ScheduleRecord>>;
    /// Moves a pending schedule to `status`; `false` when it was not pending.
    async fn settle_schedule(&mut self, id: &str, status: &str, now: i64) -> Result<bool>;
}

macro_rules! impl_schedules {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::schedules::Schedules for $tx {
            async fn insert_schedule(&mut self, s: &$crate::schedules::ScheduleRecord) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO schedules (id, document_id, organization_id, action, run_at, status, job_id, \
                     created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(&s.id)
                .bind(&s.document_id)
                .bind(&s.organization_id)
                .bind(&s.action)
                .bind(s.run_at)
                .bind(&s.status)
                .bind(&s.job_id)
                .bind(&s.created_by)
                .bind(s.created_at)
                .bind(s.updated_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn pending_schedule(
                &mut self,
                document_id: &str,
            ) -> $crate::Result<Option<$crate::schedules::ScheduleRecord>> {
                Ok(sqlx::query_as("SELECT * FROM schedules WHERE document_id = $1 AND status = 'pending'")
                    .bind(document_id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn schedule(&mut self, id: &str) -> $crate::Result<Option<$crate::schedules::ScheduleRecord>> {
                Ok(sqlx::query_as("SELECT * FROM schedules WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn lock_pending_schedule(
                &mut self,
                id: &str,
            ) -> $crate::Result<Option<$crate::schedules::ScheduleRecord>> {
                let lock = match <$tx>::DIALECT {
                    $crate::Dialect::Postgres => " FOR UPDATE",
                    $crate::Dialect::Sqlite => "",
                };
                let sql = format!("SELECT * FROM schedules WHERE id = $1 AND status = 'pending'{lock}");
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn settle_schedule(&mut self, id: &str, status: &str, now: i64) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE schedules SET status = $2, updated_at = $3 WHERE id = $1 AND status = 'pending'",
                )
                .bind(id)
                .bind(status)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }
        }
    };
}
pub(crate) use impl_schedules;
