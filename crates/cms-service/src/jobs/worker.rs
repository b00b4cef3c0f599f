//! The worker: one tick runs the relay, then the due jobs (SPEC.md Events, Delivery rules 2-4).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use cms_store::jobs::{JobOutcome, JobRecord};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::{HandlerContext, JobView};
use crate::documents::{ScheduleStatus, schedule_follows_job};
use crate::events::EventView;
use crate::queue::{DEFAULT_MAX_ATTEMPTS, DELIVER, is_schedule_job, new_job};
use crate::secret::same_secret;
use crate::{Cms, Error, Result};

/// What one tick did: the body of POST /api/internal/workers/run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct TickReport {
    pub claimed: u64,
    pub completed: u64,
    pub retried: u64,
    pub failed: u64,
}

/// Drives the queue. Every way of driving it (the embedded loop, the HTTP endpoint, `cms
/// worker`) runs the same [`Worker::tick`].
#[derive(Clone)]
pub struct Worker {
    cms: Cms,
}

/// The `lastError` of a job dead-lettered because the worker running its last attempt stopped.
const ABANDONED: &str =
    "the worker running the last attempt stopped before it finished (its lease expired)";

/// A job this worker claimed, with the lease that proves it holds it.
struct Claim {
    job: JobRecord,
    lease: i64,
}

/// Why a claimed job did not complete.
enum Failure {
    /// Nothing can run it: not retried (`failed`).
    NoHandler(String),
    /// The handler failed (or panicked): retried, then dead-lettered.
    Handler(String),
}

impl Worker {
    pub(crate) fn new(cms: Cms) -> Self {
        Worker { cms }
    }

    /// The relay, then one batch of due jobs.
    pub async fn tick(&self) -> Result<TickReport> {
        Ok(self.tick_counting_relayed().await?.1)
    }

    /// A tick, and how many outbox rows its relay took.
    async fn tick_counting_relayed(&self) -> Result<(usize, TickReport)> {
        self.cms.audit().prune_daily().await;
        let relayed = self.relay().await?;
        Ok((relayed, self.run_due().await?))
    }

    /// One tick for an external driver presenting `secret` (SPEC.md Authentication point 9):
    /// 404 while no worker secret is configured, 401 for a missing or wrong one.
    pub async fn tick_for(&self, secret: Option<&str>) -> Result<TickReport> {
        let Some(expected) = self.settings().worker_secret.as_deref() else {
            return Err(Error::NotFound("no such endpoint".into()));
        };
        if !secret.is_some_and(|given| same_secret(given, expected)) {
            return Err(Error::Unauthorized);
        }
        self.tick().await
    }

    /// Ticks until `shutdown` resolves: at once again after a full batch (of jobs or of outbox
    /// rows), otherwise after `interval`.
    pub async fn run_until(&self, interval: Duration, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            let busy = match self.tick_counting_relayed().await {
                Ok((relayed, report)) => {
                    report.claimed >= self.settings().batch_size as u64
                        || relayed >= self.settings().relay_batch_size as usize
                }
                Err(e) => {
                    tracing::error!(error = %e, "worker tick failed");
                    false
                }
            };
            if busy {
                tokio::task::yield_now().await;
                continue;
            }
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    }

    /// Enqueues a job of a registered type for a host application. `idempotency_key` absorbs
    /// duplicates: `None` returned when a job with that key exists.
    pub async fn enqueue(
        &self,
        organization: Option<&str>,
        job_type: &str,
        payload: Value,
        max_attempts: Option<i64>,
        idempotency_key: Option<String>,
    ) -> Result<Option<JobView>> {
        if self.cms.0.registry.handler(job_type).is_none() {
            return Err(Error::bad_request(format!(
                "no handler is registered for job type `{job_type}`"
            )));
        }
        let now = self.cms.0.clock.now().millis();
        let job = new_job(
            organization,
            job_type,
            payload,
            max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS).max(1),
            now,
            idempotency_key,
            now,
        );
        let mut tx = self.cms.0.store.write_instance_wide().await?;
        let inserted = tx.enqueue_job(&job).await?;
        tx.commit().await?;
        Ok(inserted.then(|| job.into()))
    }

    fn settings(&self) -> &crate::JobSettings {
        &self.cms.0.settings.jobs
    }

    /// Unprocessed outbox rows become one delivery job per subscribed consumer, and one per
    /// webhook endpoint that wants the event; the rows are marked processed in the same
    /// transaction. A duplicate enqueue (a relay that ran twice) is absorbed by the idempotency
    /// key.
    async fn relay(&self) -> Result<usize> {
        let inner = &self.cms.0;
        // Looking first, on a reader, keeps an idle relay off the single writer (SQLite).
        if inner
            .store
            .read_instance_wide()
            .await?
            .outbox_backlog()
            .await?
            == 0
        {
            return Ok(0);
        }
        let now = inner.clock.now().millis();
        let mut tx = inner.store.write_instance_wide().await?;
        let events = tx.claim_outbox(self.settings().relay_batch_size).await?;
        if events.is_empty() {
            return Ok(0);
        }
        let mut deliveries: Vec<_> = events
            .iter()
            .flat_map(|event| {
                inner
                    .registry
                    .subscribers(&event.event_type)
                    .map(move |consumer| {
                        new_job(
                            event.organization_id.as_deref(),
                            DELIVER,
                            json!({ "eventId": event.id, "consumerId": consumer.id }),
                            consumer.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
                            now,
                            Some(format!("evt:{}:{}", event.id, consumer.id)),
                            now,
                        )
                    })
            })
            .collect();
        // Webhooks fan out in the same unit: the jobs of the endpoints (and of the settings
        // form) that want each event, and the delivery-log rows of those of endpoints.
        let hooks = crate::webhooks::fan_out(inner, &mut *tx, &events, now).await?;
        deliveries.extend(hooks.jobs);
        tx.enqueue_jobs(&deliveries).await?;
        tx.insert_webhook_deliveries(&hooks.deliveries).await?;
        let ids: Vec<String> = events.iter().map(|e| e.id.clone()).collect();
        tx.mark_processed(&ids, now).await?;
        tx.commit().await?;
        Ok(events.len())
    }

    /// Dead-letters what crashed workers left at their last attempt, then runs due jobs one at
    /// a time, up to a batch. Each job is claimed right before its handler starts, so its lease
    /// covers its own run: a slow job never lets the lease of a job behind it run out (another
    /// worker would then run that one too).
    async fn run_due(&self) -> Result<TickReport> {
        let mut report = TickReport::default();
        let mut first = true;
        while report.claimed < self.settings().batch_size as u64 {
            let Some(claim) = self
                .claim_next(std::mem::take(&mut first), &mut report)
                .await?
            else {
                break;
            };
            report.claimed += 1;
            let result = self.run_one(&claim.job).await;
            self.record(claim, result, &mut report).await?;
        }
        Ok(report)
    }

    /// Claims the next due job under a fresh lease. With `reap`, first dead-letters the jobs
    /// abandoned at their last attempt (running, lease expired, attempts exhausted: the crashed
    /// run counted), failing the schedules they carried out; they count as `failed`.
    async fn claim_next(&self, reap: bool, report: &mut TickReport) -> Result<Option<Claim>> {
        let inner = &self.cms.0;
        let now = inner.clock.now().millis();
        let lease = now + self.settings().lease.as_millis() as i64;
        let mut tx = inner.store.write_instance_wide().await?;
        let abandoned = match reap {
            true => tx.dead_letter_abandoned(now, ABANDONED).await?,
            false => Vec::new(),
        };
        let job = tx.claim_jobs(now, lease, 1).await?.pop();
        // Last in the unit: a schedule is settled acting for its organization.
        for job in &abandoned {
            tracing::warn!(job = %job.id, job_type = %job.job_type, "job dead-lettered: {ABANDONED}");
            schedule_follows_job(&mut *tx, job, ScheduleStatus::Failed, now).await?;
        }
        tx.commit().await?;
        report.failed += abandoned.len() as u64;
        Ok(job.map(|job| Claim { job, lease }))
    }

    /// Ends a claimed job as its run turned out, unless its lease was lost meanwhile (then the
    /// claim that holds it ends it). A schedule job that ends failed fails its schedule.
    async fn record(
        &self,
        claim: Claim,
        result: Result<(), Failure>,
        report: &mut TickReport,
    ) -> Result<()> {
        let inner = &self.cms.0;
        let job = &claim.job;
        let outcome = match result {
            Ok(()) => JobOutcome::Completed,
            Err(Failure::NoHandler(error)) => JobOutcome::Failed { error },
            Err(Failure::Handler(error)) if job.attempts >= job.max_attempts => {
                tracing::warn!(job = %job.id, job_type = %job.job_type, %error, "job dead-lettered");
                JobOutcome::DeadLettered { error }
            }
            Err(Failure::Handler(error)) => {
                let run_at = inner.clock.now().millis() + backoff_ms(job.attempts);
                JobOutcome::Retry { run_at, error }
            }
        };
        let now = inner.clock.now().millis();
        let mut tx = inner.store.write_instance_wide().await?;
        if !tx.finish_job(&job.id, claim.lease, &outcome, now).await? {
            tracing::warn!(job = %job.id, "the job's lease was lost before it finished");
            return Ok(());
        }
        let counter = match outcome {
            JobOutcome::Completed => &mut report.completed,
            JobOutcome::Retry { .. } => &mut report.retried,
            JobOutcome::Failed { .. } | JobOutcome::DeadLettered { .. } => {
                schedule_follows_job(&mut *tx, job, ScheduleStatus::Failed, now).await?;
                &mut report.failed
            }
        };
        tx.commit().await?;
        *counter += 1;
        Ok(())
    }

    /// Runs one job's handler on a task of its own, so a panicking handler fails its job and
    /// not the tick.
    async fn run_one(&self, job: &JobRecord) -> Result<(), Failure> {
        let span = tracing::info_span!("job", id = %job.id, job_type = %job.job_type, attempt = job.attempts);
        let ctx = HandlerContext {
            cms: self.cms.clone(),
            job_id: job.id.clone(),
            log: span.clone(),
            settings: Value::Object(Default::default()),
        };
        let view = JobView::from(job.clone());
        let run: std::pin::Pin<Box<dyn Future<Output = Result<(), Failure>> + Send>> =
            match job.job_type.as_str() {
                DELIVER => Box::pin(deliver(ctx, view)),
                t if is_schedule_job(t) => Box::pin(scheduled(ctx, view)),
                other => match self.cms.0.registry.handler(other) {
                    Some(entry) => {
                        let handler = Arc::clone(&entry.handler);
                        let plugin = entry.plugin.clone();
                        let fallback = entry.settings.clone();
                        let organization = view.organization_id.clone();
                        Box::pin(async move {
                            let settings = handler_settings(
                                &ctx.cms,
                                plugin.as_deref(),
                                organization.as_deref(),
                                fallback,
                            )
                            .await?;
                            let ctx = HandlerContext { settings, ..ctx };
                            handler
                                .run(&ctx, &view)
                                .await
                                .map_err(|e| Failure::Handler(e.to_string()))
                        })
                    }
                    None => {
                        return Err(Failure::NoHandler(format!(
                            "no handler is registered for job type `{other}`"
                        )));
                    }
                },
            };
        self.within_deadline(tokio::spawn(run.instrument(span)))
            .await
    }

    /// Waits for a handler's task until its deadline, which is shorter than the job's lease:
    /// past it the task is stopped and the attempt fails (retried with backoff as usual), so no
    /// handler is still running when another worker may reclaim its job.
    async fn within_deadline(
        &self,
        mut task: JoinHandle<Result<(), Failure>>,
    ) -> Result<(), Failure> {
        let deadline = self.settings().handler_timeout;
        match tokio::time::timeout(deadline, &mut task).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => Err(Failure::Handler(format!("the handler panicked: {e}"))),
            Err(_) => {
                task.abort();
                Err(Failure::Handler(format!(
                    "the handler did not finish within its deadline of {} ms and was stopped",
                    deadline.as_millis()
                )))
            }
        }
    }
}

/// `cms.event.deliver`: hands the event to its consumer.
async fn deliver(ctx: HandlerContext, job: JobView) -> Result<(), Failure> {
    let field = |name: &str| {
        job.payload
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (Some(event_id), Some(consumer_id)) = (field("eventId"), field("consumerId")) else {
        return Err(Failure::NoHandler(
            "a delivery job without eventId and consumerId".into(),
        ));
    };
    let Some(consumer) = ctx.cms.0.registry.consumer_by_id(&consumer_id).cloned() else {
        return Err(Failure::NoHandler(format!(
            "no consumer `{consumer_id}` is registered"
        )));
    };
    let settings = handler_settings(
        &ctx.cms,
        consumer.plugin.as_deref(),
        job.organization_id.as_deref(),
        consumer.settings.clone(),
    )
    .await?;
    let ctx = HandlerContext { settings, ..ctx };
    let event = {
        let mut tx = ctx
            .cms
            .0
            .store
            .read_instance_wide()
            .await
            .map_err(handler_error)?;
        tx.event(&event_id).await.map_err(handler_error)?
    };
    let Some(event) = event else {
        return Err(Failure::NoHandler(format!(
            "event {event_id} does not exist"
        )));
    };
    consumer
        .handler
        .handle(&ctx, &EventView::from(event))
        .await
        .map_err(|e| Failure::Handler(e.to_string()))
}

/// A handler's settings: for a plugin that declared settings, its values in the organization
/// of the event or job (secrets decrypted); otherwise (no plugin, no declaration, or an
/// instance-wide event or job) the settings registered with the handler. Settings that cannot
/// be read (a secret that does not decrypt) fail the attempt, which is retried.
async fn handler_settings(
    cms: &Cms,
    plugin: Option<&str>,
    organization: Option<&str>,
    registered: Value,
) -> Result<Value, Failure> {
    let settings = cms.plugin_settings();
    match (plugin, organization) {
        (Some(plugin), Some(organization)) if settings.is_declared(plugin) => settings
            .values_for(organization, plugin)
            .await
            .map_err(|e| Failure::Handler(format!("the settings of plugin `{plugin}`: {e}"))),
        _ => Ok(registered),
    }
}

/// `document.schedule` (and the types schedule jobs had before it).
async fn scheduled(ctx: HandlerContext, job: JobView) -> Result<(), Failure> {
    let Some(schedule_id) = job.payload.get("scheduleId").and_then(Value::as_str) else {
        return Err(Failure::NoHandler(
            "a schedule job without scheduleId".into(),
        ));
    };
    ctx.cms
        .documents()
        .run_schedule(schedule_id)
        .await
        .map_err(|e| Failure::Handler(e.to_string()))
}

fn handler_error(e: impl std::fmt::Display) -> Failure {
    Failure::Handler(e.to_string())
}

/// Exponential backoff from one second, capped at an hour, plus up to half again of jitter so
/// that jobs failing together do not retry together.
fn backoff_ms(attempt: i64) -> i64 {
    let exponent = attempt.clamp(1, 13) - 1;
    let base = (1000_i64 << exponent).min(3_600_000);
    let mut random = [0u8; 4];
    let jitter = match getrandom::fill(&mut random) {
        Ok(()) => i64::from(u32::from_le_bytes(random)) % (base / 2 + 1),
        Err(_) => 0,
    };
    base + jitter
}

#[cfg(test)]
mod tests {
    use super::backoff_ms;

    #[test]
    fn backoff_grows_exponentially_with_bounded_jitter() {
        for (attempt, base) in [(1, 1000), (2, 2000), (3, 4000), (40, 3_600_000)] {
            for _ in 0..50 {
                let delay = backoff_ms(attempt);
                assert!(
                    (base..=base + base / 2).contains(&delay),
                    "{attempt}: {delay}"
                );
            }
        }
    }
}
