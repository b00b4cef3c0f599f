//! Durable reactions: the event log, the job queue and what drives it (SPEC.md "Events",
//! "States and transitions: Job", CONTRACT.md section 7).
//!
//! Events are appended in the transaction of the change that causes them; the database writes
//! each event's outbox row with it. A worker tick runs the relay (outbox rows to one delivery
//! job per subscribed consumer, deduplicated by `evt:<eventId>:<consumerId>`) and then the due
//! jobs, each under a lease.

pub mod registry;
mod worker;

use cms_core::{CoreCapability, JobStatus, Timestamp, new_id};
use cms_store::Tx;
use cms_store::events::{EventQuery, EventRecord};
use cms_store::jobs::{JobQuery, JobRecord};
use serde::Serialize;
use serde_json::{Value, json};

use crate::documents::ScheduleStatus;
use crate::paging::page_window;
use crate::{Actor, Error, Inner, Result};

pub use registry::{
    Consumer, EventHandler, HandlerContext, HandlerError, JobHandler, Registry, RegistryError,
};
pub use worker::{TickReport, Worker};

/// Built-in event types.
pub const DOCUMENT_PUBLISHED: &str = "document.published";
pub const USER_DELETED: &str = "user.deleted";

/// The job type that delivers one event to one consumer.
pub(crate) const DELIVER: &str = "cms.event.deliver";
/// The job type that carries out a document schedule (CONTRACT.md section 12), with payload
/// `{ scheduleId, documentId, action }`.
pub(crate) const DOCUMENT_SCHEDULE: &str = "document.schedule";
/// The types schedule jobs had before they took the contract's name: jobs enqueued under them
/// by an earlier version still run.
const LEGACY_SCHEDULE_TYPES: [&str; 2] = ["cms.schedule.publish", "cms.schedule.unpublish"];

/// Whether jobs of `job_type` carry out document schedules.
pub(crate) fn is_schedule_job(job_type: &str) -> bool {
    job_type == DOCUMENT_SCHEDULE || LEGACY_SCHEDULE_TYPES.contains(&job_type)
}

/// Job types only the service enqueues and runs: no host or plugin registers a handler for them.
pub(crate) fn is_reserved_job_type(job_type: &str) -> bool {
    job_type.starts_with("cms.") || job_type == DOCUMENT_SCHEDULE
}

/// Attempts a job gets unless it says otherwise.
pub(crate) const DEFAULT_MAX_ATTEMPTS: i64 = 5;

/// A domain event of the log.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    pub id: String,
    /// `null` for an instance-wide event.
    pub organization_id: Option<String>,
    #[serde(rename = "type")]
    pub event_type: String,
    /// What the event carries, as its type defines it (any JSON value).
    pub payload: Value,
    pub created_at: Timestamp,
}

impl From<EventRecord> for EventView {
    fn from(e: EventRecord) -> Self {
        EventView {
            id: e.id,
            organization_id: e.organization_id,
            event_type: e.event_type,
            payload: e.payload.0,
            created_at: e.created_at.into(),
        }
    }
}

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

/// Whose jobs and events a read covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The actor's active organization.
    #[default]
    Organization,
    /// The whole instance: super admins only.
    All,
}

#[derive(Debug, Clone, Default)]
pub struct JobListRequest {
    pub status: Option<JobStatus>,
    pub job_type: Option<String>,
    pub page: i64,
    pub page_size: i64,
    pub scope: Scope,
}

#[derive(Debug, Clone, Default)]
pub struct EventListRequest {
    pub event_type: Option<String>,
    pub after: Option<String>,
    pub page: i64,
    pub page_size: i64,
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
    ) -> Result<(Vec<JobView>, i64)> {
        let organization = reading_scope(actor, request.scope)?;
        let (limit, offset) = page_window(request.page, request.page_size)?;
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
        Ok((jobs.into_iter().map(Into::into).collect(), total))
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

    /// GET /api/events: the log, read only.
    pub async fn events(
        &self,
        actor: &Actor,
        request: EventListRequest,
    ) -> Result<(Vec<EventView>, i64)> {
        let organization = reading_scope(actor, request.scope)?;
        let (limit, offset) = page_window(request.page, request.page_size)?;
        let mut tx = self.inner.store.read_instance_wide().await?;
        let (events, total) = tx
            .events(&EventQuery {
                organization,
                event_type: request.event_type,
                after: request.after,
                limit,
                offset,
            })
            .await?;
        let views = events
            .into_iter()
            .map(|e| self.without_hidden_digest(actor, e.into()))
            .collect();
        Ok((views, total))
    }

    /// A `document.published` event's `publishedHash` digests the whole published copy: a
    /// reader who may not read every field of the type does not get it (it would confirm
    /// guesses of the hidden values), as document reads leave it out for them.
    fn without_hidden_digest(&self, actor: &Actor, mut event: EventView) -> EventView {
        if event.event_type == DOCUMENT_PUBLISHED {
            let hidden = event
                .payload
                .get("documentType")
                .and_then(Value::as_str)
                .is_some_and(|t| !crate::documents::sees_whole_type(self.inner, actor, t));
            if let (true, Some(payload)) = (hidden, event.payload.as_object_mut()) {
                payload.remove("publishedHash");
            }
        }
        event
    }
}

/// The organization a read covers (`None`: the whole instance). Reads need document.read in the
/// active organization; the whole instance needs a signed-in instance super admin (a key never
/// reads beyond its organization, whoever made it).
fn reading_scope(actor: &Actor, scope: Scope) -> Result<Option<String>> {
    match scope {
        Scope::All if actor.instance_super_admin_session() => Ok(None),
        Scope::All => Err(Error::Forbidden),
        Scope::Organization => Ok(Some(
            actor.require(CoreCapability::DocumentRead)?.to_string(),
        )),
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

/// A new domain event, for the caller to append inside the unit of work of the change that
/// causes it (the database adds its outbox row).
pub(crate) fn event_record(
    organization: Option<&str>,
    event_type: &str,
    payload: Value,
    now: Timestamp,
) -> EventRecord {
    EventRecord {
        id: new_id(),
        organization_id: organization.map(str::to_string),
        event_type: event_type.to_string(),
        payload: cms_store::Json(payload),
        created_at: now.millis(),
    }
}

/// A new pending job.
pub(crate) fn new_job(
    organization: Option<&str>,
    job_type: &str,
    payload: Value,
    max_attempts: i64,
    run_at: i64,
    idempotency_key: Option<String>,
    now: i64,
) -> JobRecord {
    JobRecord {
        organization_id: organization.map(str::to_string),
        run_at,
        idempotency_key,
        ..JobRecord::pending(new_id(), job_type, payload, max_attempts, now)
    }
}
