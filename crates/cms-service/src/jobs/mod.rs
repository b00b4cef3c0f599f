//! Durable reactions: the job queue and what drives it (SPEC.md "Events", "States and
//! transitions: Job", CONTRACT.md section 7), above the event log ([`crate::events`]), the
//! queue's records (`queue`) and the documents whose schedules its jobs carry out.
//!
//! A worker tick runs the relay (outbox rows to one delivery job per subscribed consumer,
//! deduplicated by `evt:<eventId>:<consumerId>`) and then the due jobs, each under a lease.

pub mod registry;
mod worker;

use cms_core::{CoreCapability, JobStatus, Timestamp};
use cms_store::Tx;
use cms_store::jobs::{JobQuery, JobRecord};
use serde::Serialize;
use serde_json::{Value, json};

use crate::documents::ScheduleStatus;
use crate::paging::{Pagination, page_or_default, page_window};
use crate::scope::reading_scope;
use crate::{Actor, Error, Inner, Result};

pub use crate::events::{EventListRequest, EventStream, EventStreamRequest, EventView};
pub use crate::scope::Scope;
pub use registry::{
    Consumer, EventHandler, HandlerContext, HandlerError, JobHandler, Registry, RegistryError,
};
pub use worker::{TickReport, Worker};

/// A job of the queue.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    pub id: String,
    /// `null` for an instance-wide job.
    pub organization_id: Option<String>,
    #[serde(rename = "type")]
    pub job_type: String,
    #[schema(value_type = JobStatus)]
    pub status: String,
    /// What the job's handler receives (any JSON value).
    pub payload: Value,
    pub attempts: i64,
    pub max_attempts: i64,
    pub run_at: Timestamp,
    pub locked_until: Option<Timestamp>,
    pub last_error: Option<String>,
    pub idempotency_key: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub completed_at: Option<Timestamp>,
}

impl From<JobRecord> for JobView {
    fn from(j: JobRecord) -> Self {
        JobView {
            id: j.id,
            organization_id: j.organization_id,
            job_type: j.job_type,
            status: j.status,
            payload: j.payload.0,
            attempts: j.attempts,
            max_attempts: j.max_attempts,
            run_at: j.run_at.into(),
            locked_until: j.locked_until.map(Into::into),
            last_error: j.last_error,
            idempotency_key: j.idempotency_key,
            created_at: j.created_at.into(),
            updated_at: j.updated_at.into(),
            completed_at: j.completed_at.map(Into::into),
        }
    }
}

/// GET /api/jobs/health.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueHealth {
    /// The number of jobs in each status, every status present (zero included).
    #[schema(value_type = std::collections::BTreeMap<String, i64>)]
    pub counts: serde_json::Map<String, Value>,
    /// How long the oldest due pending job has waited; 0 when none waits.
    pub oldest_pending_seconds: i64,
    /// Outbox rows the relay has not processed yet (instance-wide: events are relayed together).
    pub outbox_backlog: i64,
}

#[derive(Debug, Clone, Default)]
pub struct JobListRequest {
    pub status: Option<JobStatus>,
    pub job_type: Option<String>,
    /// From 1; the first page when absent.
    pub page: Option<i64>,
    /// 1 to `MAX_PAGE_SIZE`; `DEFAULT_PAGE_SIZE` when absent.
    pub page_size: Option<i64>,
    pub scope: Scope,
}

/// Reads and management of the queue and the log, for people and keys.
pub struct JobService<'a> {
    inner: &'a Inner,
}

impl<'a> JobService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        JobService { inner }
    }

    pub async fn list(
        &self,
        actor: &Actor,
        request: JobListRequest,
    ) -> Result<(Vec<JobView>, Pagination)> {
        let organization = reading_scope(actor, request.scope)?;
        let (page, page_size) = page_or_default(request.page, request.page_size);
        let (limit, offset) = page_window(page, page_size)?;
        let mut tx = self.inner.store.read_instance_wide().await?;
        let (jobs, total) = tx
            .jobs(&JobQuery {
                organization,
                status: request.status.map(|s| s.as_str().to_string()),
                job_type: request.job_type,
                limit,
                offset,
            })
            .await?;
        Ok((
            jobs.into_iter().map(Into::into).collect(),
            Pagination::new(total, page, page_size),
        ))
    }

    pub async fn health(&self, actor: &Actor, scope: Scope) -> Result<QueueHealth> {
        let organization = reading_scope(actor, scope)?;
        let now = self.inner.clock.now().millis();
        let mut tx = self.inner.store.read_instance_wide().await?;
        let (found, oldest) = tx.job_counts(organization.as_deref(), now).await?;
        let backlog = tx.outbox_backlog().await?;
        let mut counts = serde_json::Map::new();
        for status in JobStatus::ALL.map(JobStatus::as_str) {
            let n = found
                .iter()
                .find(|(s, _)| s == status)
                .map_or(0, |(_, n)| *n);
            counts.insert(status.to_string(), json!(n));
        }
        Ok(QueueHealth {
            counts,
            oldest_pending_seconds: oldest.map_or(0, |t| ((now - t) / 1000).max(0)),
            outbox_backlog: backlog,
        })
    }

    /// Requeues a `failed` or `dead_letter` job with its attempts reset; 409 from any other
    /// state.
    pub async fn retry(&self, actor: &Actor, id: &str) -> Result<JobView> {
        let now = self.inner.clock.now().millis();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let job = managed_job(&mut *tx, actor, id).await?;
        if !tx
            .requeue_job(id, &[JobStatus::Failed, JobStatus::DeadLetter], true, now)
            .await?
        {
            return Err(Error::Conflict(format!(
                "only failed or dead-lettered jobs can be retried; this one is {}",
                job.status
            )));
        }
        let job = tx.job(id).await?.ok_or_else(|| Error::not_found("job"))?;
        tx.commit().await?;
        Ok(job.into())
    }

    /// Cancels a `pending` job (and the schedule it carries out, for a schedule job); 409 from
    /// any other state.
    pub async fn cancel(&self, actor: &Actor, id: &str) -> Result<JobView> {
        let now = self.inner.clock.now().millis();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let job = managed_job(&mut *tx, actor, id).await?;
        if !tx.cancel_job(id, now).await? {
            return Err(Error::Conflict(format!(
                "only pending jobs can be cancelled; this one is {}",
                job.status
            )));
        }
        crate::documents::schedule_follows_job(&mut *tx, &job, ScheduleStatus::Cancelled, now)
            .await?;
        let job = tx.job(id).await?.ok_or_else(|| Error::not_found("job"))?;
        tx.commit().await?;
        Ok(job.into())
    }

    /// GET /api/events: the log, read only ([`crate::events`] reads it), each event shown as
    /// [`crate::events::visible`] decides from the documents' access rules: events of a type
    /// the reader may not read are left out, the digest of a `document.published` event is left
    /// out for a reader who may not read every field of its type.
    pub async fn events(
        &self,
        actor: &Actor,
        request: EventListRequest,
    ) -> Result<(Vec<EventView>, Pagination)> {
        let inner = self.inner;
        crate::events::list_events(inner, actor, request, |doc_type| {
            crate::documents::type_visibility(inner, actor, doc_type)
        })
        .await
    }

    /// GET /api/events/stream, `cms events tail`: the new events of the actor's organization
    /// as they commit, after the replay of those following `request.after`; needs
    /// `document.read`. Events about a document type the actor may not read are left out, and
    /// the digest where it may not read every field, as the documents' access rules decide when
    /// the stream opens. 400 for an `after` that is no event id or an unknown type; 429 past
    /// `events.maxStreams` open streams of the organization on this instance.
    pub async fn event_stream(
        &self,
        actor: &Actor,
        request: EventStreamRequest,
    ) -> Result<EventStream> {
        let inner = self.inner;
        crate::events::open_stream(inner, actor, request, |doc_type| {
            crate::documents::type_visibility(inner, actor, doc_type)
        })
        .await
    }
}

/// Retry and cancel act on jobs of the active organization and need document.publish there
/// (jobs carry deliveries and scheduled publishes); a signed-in instance super admin manages
/// any job. A job of another organization is 404, before any capability is looked at, so a
/// key learns nothing of jobs beyond its organization.
async fn managed_job(tx: &mut dyn Tx, actor: &Actor, id: &str) -> Result<JobRecord> {
    let job = tx.job(id).await?.ok_or_else(|| Error::not_found("job"))?;
    if actor.instance_super_admin_session() {
        return Ok(job);
    }
    if job.organization_id.is_none() || job.organization_id != actor.organization_id {
        return Err(Error::not_found("job"));
    }
    actor.require(CoreCapability::DocumentPublish)?;
    Ok(job)
}
