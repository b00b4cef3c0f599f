//! The job queue's records and reserved names: what every module that enqueues a job needs
//! (document schedules, the worker's relay, a host's `Worker::enqueue`), kept below all of
//! them so that none has to import another for it (CONTRACT.md section 7).

use cms_core::new_id;
use cms_store::jobs::JobRecord;
use serde_json::Value;

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
