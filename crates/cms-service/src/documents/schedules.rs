//! Scheduled publish and unpublish (SPEC.md Endpoints: Documents; CONTRACT.md sections 5 and
//! 12): one pending schedule per document, carried out by a `document.schedule` job when it is
//! due. The schedule follows its job: cancelling the job cancels it, a job that fails or runs
//! out of attempts fails it, and however many workers run the job, it is carried out once.

use cms_core::schema::Operation;
use cms_core::{CoreCapability, Timestamp, new_id};
use cms_store::Tx;
use cms_store::audit::AuditRecord;
use cms_store::jobs::JobRecord;
use cms_store::schedules::ScheduleRecord;
use serde::Serialize;
use serde_json::json;

use super::DocumentService;
use crate::actor::Actor;
use crate::audit::{AuditAction, AuditTarget, Who};
use crate::error::{Error, Result};
use crate::queue::{DEFAULT_MAX_ATTEMPTS, DOCUMENT_SCHEDULE, is_schedule_job, new_job};

/// What a schedule does: `publish` or `unpublish`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum ScheduleAction {
    Publish,
    Unpublish,
}

impl ScheduleAction {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "publish" => Some(ScheduleAction::Publish),
            "unpublish" => Some(ScheduleAction::Unpublish),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            ScheduleAction::Publish => "publish",
            ScheduleAction::Unpublish => "unpublish",
        }
    }

    /// The schema operation a schedule of this action carries out.
    fn operation(self) -> Operation {
        match self {
            ScheduleAction::Publish => Operation::Publish,
            ScheduleAction::Unpublish => Operation::Unpublish,
        }
    }
}

/// A status a schedule takes from its job, when the job did not carry it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScheduleStatus {
    /// Its job was cancelled.
    Cancelled,
    /// Its job failed for good (no retry left, or not retryable).
    Failed,
}

impl ScheduleStatus {
    fn as_str(self) -> &'static str {
        match self {
            ScheduleStatus::Cancelled => "cancelled",
            ScheduleStatus::Failed => "failed",
        }
    }
}

/// Moves the schedule a job carries out to `status`, inside the caller's unit of work, when the
/// job is a schedule job and its schedule is still pending; any other job is left alone.
pub(crate) async fn schedule_follows_job(
    tx: &mut dyn Tx,
    job: &JobRecord,
    status: ScheduleStatus,
    now: i64,
) -> Result<()> {
    if !is_schedule_job(&job.job_type) {
        return Ok(());
    }
    let Some(schedule_id) = job.payload.0.get("scheduleId").and_then(|v| v.as_str()) else {
        return Ok(());
    };
    if let Some(org) = &job.organization_id {
        tx.act_for(org).await?;
    }
    tx.settle_schedule(schedule_id, status.as_str(), now)
        .await?;
    Ok(())
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleView {
    pub id: String,
    pub document_id: String,
    pub action: String,
    pub run_at: Timestamp,
    /// `pending`, `completed`, `cancelled` or `failed`.
    pub status: String,
    pub created_by: Option<String>,
}

impl From<ScheduleRecord> for ScheduleView {
    fn from(s: ScheduleRecord) -> Self {
        ScheduleView {
            id: s.id,
            document_id: s.document_id,
            action: s.action,
            run_at: s.run_at.into(),
            status: s.status,
            created_by: s.created_by,
        }
    }
}

impl DocumentService<'_> {
    /// Schedules a publish or unpublish; a pending schedule of the document is cancelled (with
    /// its job) in the same transaction. The permission is checked now; the run re-validates.
    pub async fn schedule(
        &self,
        actor: &Actor,
        id: &str,
        action: ScheduleAction,
        run_at: Timestamp,
    ) -> Result<ScheduleView> {
        let org = actor.require(CoreCapability::DocumentPublish)?.to_string();
        let now = self.inner.clock.now();
        if run_at <= now {
            return Err(Error::bad_request("runAt must be in the future"));
        }
        let mut tx = self.inner.store.write_for(&org).await?;
        let document = self.owned(&mut *tx, &org, id).await?;
        // The schema rule is checked when the schedule is made; the run acts for its author.
        self.gate(actor).check(action.operation(), &document)?;
        let who = Who::of(actor);
        if let Some(earlier) = tx.pending_schedule(id).await? {
            tx.settle_schedule(&earlier.id, "cancelled", now.millis())
                .await?;
            tx.cancel_job(&earlier.job_id, now.millis()).await?;
            let summary = format!("{} (replaced)", schedule_summary(&earlier));
            tx.append_audit(&[schedule_entry(
                &who,
                &earlier,
                AuditAction::ScheduleCancelled,
                summary,
                now,
            )])
            .await?;
        }
        let schedule_id = new_id();
        let job = new_job(
            Some(&org),
            DOCUMENT_SCHEDULE,
            json!({ "scheduleId": schedule_id, "documentId": id, "action": action.as_str() }),
            DEFAULT_MAX_ATTEMPTS,
            run_at.millis(),
            Some(format!("schedule:{schedule_id}")),
            now.millis(),
        );
        tx.enqueue_job(&job).await?;
        let record = ScheduleRecord {
            id: schedule_id,
            document_id: id.to_string(),
            organization_id: org,
            action: action.as_str().to_string(),
            run_at: run_at.millis(),
            status: "pending".into(),
            job_id: job.id,
            created_by: Some(actor.user.id.clone()),
            created_at: now.millis(),
            updated_at: now.millis(),
        };
        tx.insert_schedule(&record).await?;
        let summary = schedule_summary(&record);
        tx.append_audit(&[schedule_entry(
            &who,
            &record,
            AuditAction::ScheduleCreated,
            summary,
            now,
        )])
        .await?;
        tx.commit().await?;
        Ok(record.into())
    }

    /// The document's pending schedule, if any.
    pub async fn pending_schedule(&self, actor: &Actor, id: &str) -> Result<Option<ScheduleView>> {
        let org = actor.require(CoreCapability::DocumentRead)?.to_string();
        let mut tx = self.inner.store.read_for(&org).await?;
        let document = self.owned(&mut *tx, &org, id).await?;
        self.gate(actor).check(Operation::Read, &document)?;
        Ok(tx.pending_schedule(id).await?.map(Into::into))
    }

    /// Cancels the pending schedule and its job; 404 when nothing is pending.
    pub async fn cancel_schedule(&self, actor: &Actor, id: &str) -> Result<ScheduleView> {
        let org = actor.require(CoreCapability::DocumentPublish)?.to_string();
        let now = self.inner.clock.now().millis();
        let mut tx = self.inner.store.write_for(&org).await?;
        let document = self.owned(&mut *tx, &org, id).await?;
        let pending = tx
            .pending_schedule(id)
            .await?
            .ok_or_else(|| Error::not_found("pending schedule"))?;
        // Cancelling takes the same right as scheduling that action.
        let action = ScheduleAction::parse(&pending.action).unwrap_or(ScheduleAction::Publish);
        self.gate(actor).check(action.operation(), &document)?;
        tx.settle_schedule(&pending.id, "cancelled", now).await?;
        tx.cancel_job(&pending.job_id, now).await?;
        tx.append_audit(&[schedule_entry(
            &Who::of(actor),
            &pending,
            AuditAction::ScheduleCancelled,
            schedule_summary(&pending),
            Timestamp::from_millis(now),
        )])
        .await?;
        let cancelled = tx
            .schedule(&pending.id)
            .await?
            .ok_or_else(|| Error::not_found("schedule"))?;
        tx.commit().await?;
        Ok(cancelled.into())
    }

    /// Carries out a due schedule (the worker's `document.schedule` jobs). A schedule that is
    /// no longer pending (carried out already, cancelled, or its document deleted) does
    /// nothing. A publish whose draft no longer validates marks the schedule `failed` and
    /// publishes nothing. The schedule is held from the first read to the commit, so two
    /// workers running it at once publish once: the second finds it settled.
    pub(crate) async fn run_schedule(&self, schedule_id: &str) -> Result<()> {
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let Some(schedule) = tx.lock_pending_schedule(schedule_id).await? else {
            return Ok(());
        };
        let org = schedule.organization_id.clone();
        // The schedule names the organization; the document rows are behind its wall.
        tx.act_for(&org).await?;
        let current = self.owned(&mut *tx, &org, &schedule.document_id).await?;
        let by = schedule.created_by.as_deref();
        let status = match ScheduleAction::parse(&schedule.action) {
            Some(ScheduleAction::Publish) => {
                let (validation, _) = self
                    .publish_if_valid(&mut *tx, &current, by, &Who::system(), now)
                    .await?;
                if validation.is_valid {
                    "completed"
                } else {
                    tracing::warn!(schedule = %schedule.id, document = %current.id,
                        "scheduled publish skipped: the draft does not validate");
                    "failed"
                }
            }
            Some(ScheduleAction::Unpublish) => {
                self.clear_published(&mut *tx, &current, by, &Who::system(), now)
                    .await?;
                "completed"
            }
            None => "failed",
        };
        tx.settle_schedule(&schedule.id, status, now.millis())
            .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// What a schedule does, and when: `publish at 2026-12-01T09:00:00.000Z`.
fn schedule_summary(schedule: &ScheduleRecord) -> String {
    let at = Timestamp::from_millis(schedule.run_at).to_rfc3339();
    format!("{} at {at}", schedule.action)
}

fn schedule_entry(
    who: &Who,
    schedule: &ScheduleRecord,
    action: AuditAction,
    summary: String,
    now: Timestamp,
) -> AuditRecord {
    who.entry(
        Some(&schedule.organization_id),
        action,
        Some(AuditTarget::new("schedule", &schedule.id)),
        summary,
        now.millis(),
    )
}
