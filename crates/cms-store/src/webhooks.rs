//! Webhook endpoints and their delivery log (CONTRACT.md section 16). Secrets arrive here
//! already sealed by the service layer; this module stores what it is given.
//!
//! Both tables are behind the row-level-security wall on PostgreSQL: the endpoints' reads and
//! writes act for their organization; the relay, acting for the whole instance, reads the
//! enabled endpoints of its batch and writes delivery rows with the jobs it enqueues.

use async_trait::async_trait;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct WebhookEndpointRecord {
    pub id: String,
    pub organization_id: String,
    pub url: String,
    /// `["*"]`, or the event types the endpoint receives.
    pub events: Json<Vec<String>>,
    pub description: String,
    pub enabled: bool,
    /// The signing secret, sealed (never the plaintext).
    pub secret: String,
    pub created_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A delivery of an endpoint: its job, the event it carries, and the HTTP status of the job's
/// last attempt.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct WebhookDeliveryRecord {
    /// The delivery job's id, which is also the delivery's id (`webhook-id`).
    pub job_id: String,
    pub endpoint_id: String,
    pub organization_id: String,
    pub event_id: String,
    pub event_type: String,
    /// What the receiver answered on the last attempt; `None` before any answer.
    pub response_status: Option<i32>,
    pub created_at: i64,
}

/// A delivery as its log lists it: the delivery row and the state of its job.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct WebhookDeliveryEntry {
    #[sqlx(flatten)]
    pub delivery: WebhookDeliveryRecord,
    /// The job's status (`pending`, `running`, `completed`, `dead_letter`, ...).
    pub status: String,
    pub attempts: i64,
    pub max_attempts: i64,
    pub last_error: Option<String>,
    pub updated_at: i64,
    pub completed_at: Option<i64>,
}

#[async_trait]
pub trait Webhooks {
    async fn insert_webhook_endpoint(&mut self, endpoint: &WebhookEndpointRecord) -> Result<()>;
    /// The organization's endpoints, oldest first.
    async fn webhook_endpoints(
        &mut self,
        organization_id: &str,
    ) -> Result<Vec<WebhookEndpointRecord>>;
    /// One endpoint of the organization; `None` for an unknown id or another organization's.
    async fn webhook_endpoint(
        &mut self,
        organization_id: &str,
        id: &str,
    ) -> Result<Option<WebhookEndpointRecord>>;
    /// Writes url, events, description, enabled, secret and updated_at of the endpoint with
    /// the record's id in the record's organization. `false` when there is none.
    async fn update_webhook_endpoint(&mut self, endpoint: &WebhookEndpointRecord) -> Result<bool>;
    /// Deletes an endpoint of the organization with its delivery rows. `false` when there is
    /// none.
    async fn delete_webhook_endpoint(&mut self, organization_id: &str, id: &str) -> Result<bool>;
    /// The enabled endpoints of these organizations, in one query (the relay's batch).
    async fn enabled_webhook_endpoints(
        &mut self,
        organization_ids: &[String],
    ) -> Result<Vec<WebhookEndpointRecord>>;
    /// Delivery rows, written with their jobs.
    async fn insert_webhook_deliveries(
        &mut self,
        deliveries: &[WebhookDeliveryRecord],
    ) -> Result<()>;
    /// Records what the receiver answered on the latest attempt of a delivery (`None`: no
    /// answer). Nothing happens for a job that is no endpoint's delivery.
    async fn set_webhook_response_status(
        &mut self,
        job_id: &str,
        status: Option<i32>,
    ) -> Result<()>;
    /// A page of an endpoint's deliveries, newest first, and how many it has.
    async fn webhook_deliveries(
        &mut self,
        endpoint_id: &str,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<WebhookDeliveryEntry>, i64)>;
    /// The newest delivery of each endpoint of the organization that has one.
    async fn latest_webhook_deliveries(
        &mut self,
        organization_id: &str,
    ) -> Result<Vec<WebhookDeliveryEntry>>;
    /// Cancels the endpoint's deliveries that wait for their turn (`pending` jobs). How many.
    async fn cancel_webhook_deliveries(&mut self, endpoint_id: &str, now: i64) -> Result<u64>;
}

/// The columns of a delivery entry: the delivery row `d` and its job `j`.
pub(crate) const DELIVERY_ENTRY_COLUMNS: &str = "d.job_id, d.endpoint_id, d.organization_id, \
     d.event_id, d.event_type, d.response_status, d.created_at, j.status, j.attempts, \
     j.max_attempts, j.last_error, j.updated_at, j.completed_at";

macro_rules! impl_webhooks {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::webhooks::Webhooks for $tx {
            async fn insert_webhook_endpoint(
                &mut self,
                e: &$crate::webhooks::WebhookEndpointRecord,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO webhook_endpoints (id, organization_id, url, events, description, \
                     enabled, secret, created_by, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(&e.id)
                .bind(&e.organization_id)
                .bind(&e.url)
                .bind(&e.events)
                .bind(&e.description)
                .bind(e.enabled)
                .bind(&e.secret)
                .bind(&e.created_by)
                .bind(e.created_at)
                .bind(e.updated_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn webhook_endpoints(
                &mut self,
                organization_id: &str,
            ) -> $crate::Result<Vec<$crate::webhooks::WebhookEndpointRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM webhook_endpoints WHERE organization_id = $1 \
                     ORDER BY created_at, id",
                )
                .bind(organization_id)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn webhook_endpoint(
                &mut self,
                organization_id: &str,
                id: &str,
            ) -> $crate::Result<Option<$crate::webhooks::WebhookEndpointRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM webhook_endpoints WHERE organization_id = $1 AND id = $2",
                )
                .bind(organization_id)
                .bind(id)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn update_webhook_endpoint(
                &mut self,
                e: &$crate::webhooks::WebhookEndpointRecord,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE webhook_endpoints SET url = $3, events = $4, description = $5, \
                     enabled = $6, secret = $7, updated_at = $8 \
                     WHERE organization_id = $1 AND id = $2",
                )
                .bind(&e.organization_id)
                .bind(&e.id)
                .bind(&e.url)
                .bind(&e.events)
                .bind(&e.description)
                .bind(e.enabled)
                .bind(&e.secret)
                .bind(e.updated_at)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn delete_webhook_endpoint(
                &mut self,
                organization_id: &str,
                id: &str,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "DELETE FROM webhook_endpoints WHERE organization_id = $1 AND id = $2",
                )
                .bind(organization_id)
                .bind(id)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn enabled_webhook_endpoints(
                &mut self,
                organization_ids: &[String],
            ) -> $crate::Result<Vec<$crate::webhooks::WebhookEndpointRecord>> {
                let mut found = Vec::new();
                // A relay batch names at most `jobs.relayBatchSize` organizations; chunks keep
                // any batch below both engines' parameter limits.
                for chunk in organization_ids.chunks(500) {
                    let mut sql = sqlx::QueryBuilder::new(
                        "SELECT * FROM webhook_endpoints WHERE enabled AND organization_id IN (",
                    );
                    let mut list = sql.separated(", ");
                    for id in chunk {
                        list.push_bind(id.clone());
                    }
                    sql.push(") ORDER BY organization_id, created_at, id");
                    let rows: Vec<$crate::webhooks::WebhookEndpointRecord> =
                        sql.build_query_as().fetch_all(self.conn().await?).await?;
                    found.extend(rows);
                }
                Ok(found)
            }

            async fn insert_webhook_deliveries(
                &mut self,
                deliveries: &[$crate::webhooks::WebhookDeliveryRecord],
            ) -> $crate::Result<()> {
                for chunk in deliveries.chunks(500) {
                    let mut sql = sqlx::QueryBuilder::new(
                        "INSERT INTO webhook_deliveries (job_id, endpoint_id, organization_id, \
                         event_id, event_type, response_status, created_at) ",
                    );
                    sql.push_values(chunk, |mut row, d| {
                        row.push_bind(&d.job_id)
                            .push_bind(&d.endpoint_id)
                            .push_bind(&d.organization_id)
                            .push_bind(&d.event_id)
                            .push_bind(&d.event_type)
                            .push_bind(d.response_status)
                            .push_bind(d.created_at);
                    });
                    sql.push(" ON CONFLICT (job_id) DO NOTHING");
                    sql.build().execute(self.conn().await?).await?;
                }
                Ok(())
            }

            async fn set_webhook_response_status(
                &mut self,
                job_id: &str,
                status: Option<i32>,
            ) -> $crate::Result<()> {
                sqlx::query("UPDATE webhook_deliveries SET response_status = $2 WHERE job_id = $1")
                    .bind(job_id)
                    .bind(status)
                    .execute(self.conn().await?)
                    .await?;
                Ok(())
            }

            async fn webhook_deliveries(
                &mut self,
                endpoint_id: &str,
                limit: i64,
                offset: i64,
            ) -> $crate::Result<(Vec<$crate::webhooks::WebhookDeliveryEntry>, i64)> {
                let total: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM webhook_deliveries d JOIN jobs j ON j.id = d.job_id \
                     WHERE d.endpoint_id = $1",
                )
                .bind(endpoint_id)
                .fetch_one(self.conn().await?)
                .await?;
                let sql = format!(
                    "SELECT {} FROM webhook_deliveries d JOIN jobs j ON j.id = d.job_id \
                     WHERE d.endpoint_id = $1 ORDER BY d.created_at DESC, d.job_id DESC \
                     LIMIT $2 OFFSET $3",
                    $crate::webhooks::DELIVERY_ENTRY_COLUMNS
                );
                let rows = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(endpoint_id)
                    .bind(limit)
                    .bind(offset)
                    .fetch_all(self.conn().await?)
                    .await?;
                Ok((rows, total))
            }

            async fn latest_webhook_deliveries(
                &mut self,
                organization_id: &str,
            ) -> $crate::Result<Vec<$crate::webhooks::WebhookDeliveryEntry>> {
                // One index probe per endpoint (at most a handful), in one statement.
                let sql = format!(
                    "SELECT {} FROM webhook_deliveries d JOIN jobs j ON j.id = d.job_id \
                     WHERE d.job_id IN (SELECT (SELECT l.job_id FROM webhook_deliveries l \
                         JOIN jobs lj ON lj.id = l.job_id WHERE l.endpoint_id = e.id \
                         ORDER BY l.created_at DESC, l.job_id DESC LIMIT 1) \
                         FROM webhook_endpoints e WHERE e.organization_id = $1)",
                    $crate::webhooks::DELIVERY_ENTRY_COLUMNS
                );
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(organization_id)
                    .fetch_all(self.conn().await?)
                    .await?)
            }

            async fn cancel_webhook_deliveries(
                &mut self,
                endpoint_id: &str,
                now: i64,
            ) -> $crate::Result<u64> {
                let done = sqlx::query(
                    "UPDATE jobs SET status = 'cancelled', updated_at = $2 \
                     WHERE status = 'pending' AND id IN \
                         (SELECT job_id FROM webhook_deliveries WHERE endpoint_id = $1)",
                )
                .bind(endpoint_id)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected())
            }
        }
    };
}
pub(crate) use impl_webhooks;
