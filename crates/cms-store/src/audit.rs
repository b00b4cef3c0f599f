//! The audit log (CONTRACT.md section 19): entries appended in the unit of the action they
//! record, listed newest first with filters, and removed past their retention.
//!
//! On PostgreSQL the table is behind the row-level-security wall: a unit acting for an
//! organization appends and reads that organization's entries; sign-ins, instance settings,
//! a super admin's instance-wide list and retention act for the whole instance.

use async_trait::async_trait;

use crate::Result;

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct AuditRecord {
    pub id: String,
    /// `None` for what belongs to no organization (instance settings, a failed sign-in).
    pub organization_id: Option<String>,
    pub action: String,
    /// `user`, `apiKey` or `system`.
    pub actor_type: String,
    /// The user's or the API key's id; `None` for the system.
    pub actor_id: Option<String>,
    pub target_type: Option<String>,
    pub target_id: Option<String>,
    pub ip_address: Option<String>,
    pub summary: String,
    pub created_at: i64,
}

/// Which entries a list reads. `organization: None` reads the whole instance.
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    pub organization: Option<String>,
    pub action: Option<String>,
    pub actor_id: Option<String>,
    /// Entries at or after this time (ms).
    pub from: Option<i64>,
    /// Entries at or before this time (ms).
    pub to: Option<i64>,
    pub limit: i64,
    pub offset: i64,
}

#[async_trait]
pub trait Audit {
    async fn append_audit(&mut self, entries: &[AuditRecord]) -> Result<()>;
    /// A page of entries, newest first, and how many match.
    async fn audit_entries(&mut self, query: &AuditQuery) -> Result<(Vec<AuditRecord>, i64)>;
    /// Removes up to `limit` entries older than `before` (ms), oldest first. How many.
    async fn prune_audit(&mut self, before: i64, limit: i64) -> Result<u64>;
}

/// [`Audit::append_audit`] of one entry: the ten columns in their order.
pub(crate) const APPEND_AUDIT_SQL: &str = "INSERT INTO audit_log (id, organization_id, action, \
     actor_type, actor_id, target_type, target_id, ip_address, summary, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

macro_rules! impl_audit {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::audit::Audit for $tx {
            async fn append_audit(
                &mut self,
                entries: &[$crate::audit::AuditRecord],
            ) -> $crate::Result<()> {
                // A SQLite write unit that runs its document statements on the calling thread
                // writes its entries there too: no hop to sqlx's connection thread per publish.
                if let Some(direct) = self.direct().await? {
                    return entries.iter().try_for_each(|e| direct.append_audit(e));
                }
                // Ten parameters a row keeps every statement below both engines' limits.
                for chunk in entries.chunks(500) {
                    let mut sql = sqlx::QueryBuilder::new(
                        "INSERT INTO audit_log (id, organization_id, action, actor_type, actor_id, \
                         target_type, target_id, ip_address, summary, created_at) ",
                    );
                    sql.push_values(chunk, |mut row, e| {
                        row.push_bind(&e.id)
                            .push_bind(&e.organization_id)
                            .push_bind(&e.action)
                            .push_bind(&e.actor_type)
                            .push_bind(&e.actor_id)
                            .push_bind(&e.target_type)
                            .push_bind(&e.target_id)
                            .push_bind(&e.ip_address)
                            .push_bind(&e.summary)
                            .push_bind(e.created_at);
                    });
                    sql.build().execute(self.conn().await?).await?;
                }
                Ok(())
            }

            async fn audit_entries(
                &mut self,
                q: &$crate::audit::AuditQuery,
            ) -> $crate::Result<(Vec<$crate::audit::AuditRecord>, i64)> {
                let filter = |select: &str| {
                    let mut sql = sqlx::QueryBuilder::new(select);
                    sql.push(" WHERE 1 = 1");
                    if let Some(org) = &q.organization {
                        sql.push(" AND organization_id = ").push_bind(org.clone());
                    }
                    if let Some(action) = &q.action {
                        sql.push(" AND action = ").push_bind(action.clone());
                    }
                    if let Some(actor) = &q.actor_id {
                        sql.push(" AND actor_id = ").push_bind(actor.clone());
                    }
                    if let Some(from) = q.from {
                        sql.push(" AND created_at >= ").push_bind(from);
                    }
                    if let Some(to) = q.to {
                        sql.push(" AND created_at <= ").push_bind(to);
                    }
                    sql
                };
                let total: i64 = filter("SELECT COUNT(*) FROM audit_log")
                    .build_query_scalar()
                    .fetch_one(self.conn().await?)
                    .await?;
                let mut page = filter("SELECT * FROM audit_log");
                page.push(" ORDER BY created_at DESC, id DESC LIMIT ")
                    .push_bind(q.limit)
                    .push(" OFFSET ")
                    .push_bind(q.offset);
                let rows = page.build_query_as().fetch_all(self.conn().await?).await?;
                Ok((rows, total))
            }

            async fn prune_audit(&mut self, before: i64, limit: i64) -> $crate::Result<u64> {
                let done = sqlx::query(
                    "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log \
                     WHERE created_at < $1 ORDER BY created_at, id LIMIT $2)",
                )
                .bind(before)
                .bind(limit)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected())
            }
        }
    };
}
pub(crate) use impl_audit;
