//! Jobs under slow handlers, crashes and racing workers (issue 21, Build point 5): a lease
//! covers the job being run, a handler runs under a deadline shorter than its lease, a job
//! abandoned at its last attempt is dead-lettered, and a schedule is carried out once and
//! follows its job when that job is cancelled or fails for good.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use axum::http::StatusCode;
use cms::service::jobs::{HandlerContext, HandlerError, JobHandler, JobView};
use cms::service::{Clock, OffsetClock, Registry, TickReport};
use cms_store::jobs::JobRecord;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::jobs::refuse_event_inserts;
use crate::support::{Session, TestApp};

const HOUR: i64 = 3_600_000;
/// The default lease (`jobs.leaseSeconds`), on the test's clock.
const LEASE_MS: i64 = 60_000;

fn config_for(url: &str) -> cms::Config {
    let mut config = crate::support::config_for(url);
    // Its consumer would add delivery jobs of its own to every publish.
    config.plugins.webhooks = false;
    config
}

async fn tick(app: &TestApp) -> TickReport {
    app.app.cms.worker().tick().await.expect("a tick")
}

fn report(claimed: u64, completed: u64, retried: u64, failed: u64) -> TickReport {
    TickReport {
        claimed,
        completed,
        retried,
        failed,
    }
}

async fn stored_job(app: &TestApp, id: &str) -> JobRecord {
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    tx.job(id).await.unwrap().expect("the job")
}

async fn schedule_status(app: &TestApp, id: &str) -> String {
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    tx.schedule(id).await.unwrap().expect("the schedule").status
}

// ---------------------------------------------------------------------------------------------
// A lease covers the job being run
// ---------------------------------------------------------------------------------------------

/// A handler whose jobs take time on the test's clock: `slow` takes over half a lease, `hold`
/// as much and then waits (on its first run) until the test lets it go. Counts every run.
#[derive(Default)]
struct Pacer {
    clock: OnceLock<Arc<OffsetClock>>,
    runs: Mutex<HashMap<String, u32>>,
    holding: Notify,
    release: Notify,
}

#[async_trait]
impl JobHandler for Pacer {
    async fn run(&self, _: &HandlerContext, job: &JobView) -> Result<(), HandlerError> {
        let first = {
            let mut runs = self.runs.lock().unwrap();
            let n = runs.entry(job.id.clone()).or_default();
            *n += 1;
            *n == 1
        };
        let clock = self.clock.get().expect("the clock");
        match job.payload["pace"].as_str() {
            Some("slow") => clock.advance_millis(LEASE_MS / 2 + 1_000),
            Some("hold") if first => {
                clock.advance_millis(LEASE_MS / 2 + 1_000);
                self.holding.notify_one();
                self.release.notified().await;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Five due jobs; the first two together outlast one lease. While the second runs, past the
/// lease a batch claimed at the start would have had, another worker ticks: it runs the jobs
/// still waiting, never one that is running or done.
async fn a_slow_job_does_not_let_the_next_jobs_lease_run_out(url: String) {
    let pacer = Arc::new(Pacer::default());
    let registry = Registry::default()
        .job_handler("test.pace", pacer.clone())
        .unwrap();
    let app = TestApp::with_registry(config_for(&url), registry).await;
    pacer.clock.set(app.clock.clone()).ok().unwrap();
    let now = app.clock.now().millis();
    let mut ids = Vec::new();
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    for (i, pace) in ["slow", "hold", "", "", ""].into_iter().enumerate() {
        let id = cms::core::new_id();
        let job = JobRecord::pending(
            id.clone(),
            "test.pace",
            json!({"pace": pace}),
            5,
            now - 10_000 + i as i64,
        );
        tx.enqueue_job(&job).await.unwrap();
        ids.push(id);
    }
    tx.commit().await.unwrap();

    let worker = app.app.cms.worker();
    let first = tokio::spawn(async move { worker.tick().await.unwrap() });
    pacer.holding.notified().await;
    let second = tick(&app).await;
    pacer.release.notify_one();
    let first = first.await.unwrap();

    let runs = pacer.runs.lock().unwrap().clone();
    for id in &ids {
        assert_eq!(runs.get(id), Some(&1), "job {id} ran once: {runs:?}");
    }
    assert_eq!(
        (
            first.claimed + second.claimed,
            first.completed + second.completed
        ),
        (5, 5),
        "{first:?} {second:?}"
    );
    assert_eq!(second, report(3, 3, 0, 0), "the waiting jobs only");
    for id in &ids {
        assert_eq!(stored_job(&app, id).await.status, "completed");
    }
    app.stop().await;
}

// ---------------------------------------------------------------------------------------------
// Every handler runs under a deadline
// ---------------------------------------------------------------------------------------------

/// A handler that never finishes; it notes when its task is dropped (stopped).
#[derive(Default)]
struct Stall {
    started: AtomicU64,
    stopped: Arc<AtomicBool>,
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

#[async_trait]
impl JobHandler for Stall {
    async fn run(&self, _: &HandlerContext, _: &JobView) -> Result<(), HandlerError> {
        self.started.fetch_add(1, SeqCst);
        let _guard = SetOnDrop(self.stopped.clone());
        std::future::pending::<()>().await;
        Ok(())
    }
}

async fn a_handler_past_its_deadline_is_a_failed_attempt(url: String) {
    // The deadline must be shorter than the lease: the service refuses to start otherwise.
    let mut config = config_for(&url);
    config.jobs.lease_seconds = 2;
    config.jobs.handler_timeout_seconds = Some(2);
    let refused = cms::Builder::new(config.clone()).build().await;
    let Err(error) = refused else {
        panic!("a deadline as long as the lease is refused")
    };
    assert!(
        error.to_string().contains("jobs.handlerTimeoutSeconds"),
        "{error}"
    );

    config.jobs.handler_timeout_seconds = Some(1);
    let stall = Arc::new(Stall::default());
    let registry = Registry::default()
        .job_handler("test.stall", stall.clone())
        .unwrap();
    let app = TestApp::with_registry(config, registry).await;
    let job = app
        .app
        .cms
        .worker()
        .enqueue(None, "test.stall", json!({}), Some(2), None)
        .await
        .unwrap()
        .expect("enqueued");

    assert_eq!(
        tick(&app).await,
        report(1, 0, 1, 0),
        "a failed attempt, retried"
    );
    let stored = stored_job(&app, &job.id).await;
    assert_eq!((stored.status.as_str(), stored.attempts), ("pending", 1));
    let error = stored.last_error.unwrap_or_default();
    assert!(error.contains("deadline of 1000 ms"), "{error}");
    assert!(
        stored.run_at > app.clock.now().millis(),
        "retried with backoff"
    );
    // The handler's task was stopped, not left running beside its retry.
    for _ in 0..200 {
        if stall.stopped.load(SeqCst) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(stall.stopped.load(SeqCst), "the handler was stopped");

    app.clock.advance_millis(10_000);
    assert_eq!(tick(&app).await, report(1, 0, 0, 1), "the last attempt");
    let stored = stored_job(&app, &job.id).await;
    assert_eq!(
        (stored.status.as_str(), stored.attempts),
        ("dead_letter", 2)
    );
    assert_eq!(stall.started.load(SeqCst), 2);
    app.stop().await;
}

// ---------------------------------------------------------------------------------------------
// A job abandoned at its last attempt is dead-lettered
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Counter(AtomicU64);

#[async_trait]
impl JobHandler for Counter {
    async fn run(&self, _: &HandlerContext, _: &JobView) -> Result<(), HandlerError> {
        self.0.fetch_add(1, SeqCst);
        Ok(())
    }
}

/// A worker claims a job with one attempt (attempts 0 = maxAttempts - 1) and dies: the crashed
/// run was that attempt, so once its lease expires the job is dead-lettered, not run again.
async fn a_job_abandoned_at_its_last_attempt_is_dead_lettered(url: String) {
    let counter = Arc::new(Counter::default());
    let registry = Registry::default()
        .job_handler("test.count", counter.clone())
        .unwrap();
    let app = TestApp::with_registry(config_for(&url), registry).await;
    let worker = app.app.cms.worker();
    let last = worker
        .enqueue(None, "test.count", json!({}), Some(1), None)
        .await
        .unwrap()
        .expect("enqueued");
    let spare = worker
        .enqueue(None, "test.count", json!({}), Some(2), None)
        .await
        .unwrap()
        .expect("enqueued");
    let now = app.clock.now().millis();
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    assert_eq!(
        tx.claim_jobs(now, now + LEASE_MS, 10).await.unwrap().len(),
        2
    );
    tx.commit().await.unwrap();
    assert_eq!(tick(&app).await, report(0, 0, 0, 0), "still leased");

    app.clock.advance_millis(LEASE_MS + 1_000);
    assert_eq!(
        tick(&app).await,
        report(1, 1, 0, 1),
        "the one with an attempt left runs; the other is dead-lettered"
    );
    assert_eq!(counter.0.load(SeqCst), 1);
    let dead = stored_job(&app, &last.id).await;
    assert_eq!((dead.status.as_str(), dead.attempts), ("dead_letter", 1));
    let error = dead.last_error.unwrap_or_default();
    assert!(error.contains("stopped before it finished"), "{error}");
    let done = stored_job(&app, &spare.id).await;
    assert_eq!((done.status.as_str(), done.attempts), ("completed", 2));
    assert_eq!(tick(&app).await, report(0, 0, 0, 0), "nothing left");
    app.stop().await;
}

// ---------------------------------------------------------------------------------------------
// Schedules: carried out once, and following their job
// ---------------------------------------------------------------------------------------------

/// A draft document of Ada's with a publish scheduled in an hour: (document id, schedule id,
/// job id).
async fn scheduled_publish(app: &TestApp, ada: &Session) -> (String, String, String) {
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Later"}}),
        )
        .cookie(ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let doc = res.body["data"]["id"].as_str().unwrap().to_string();
    let run_at = app.clock.now().plus_millis(HOUR).to_rfc3339();
    let res = app
        .post(
            &format!("/api/documents/{doc}/schedule"),
            json!({"action": "publish", "runAt": run_at}),
        )
        .cookie(ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let schedule = res.body["data"]["id"].as_str().unwrap().to_string();
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let job = tx.schedule(&schedule).await.unwrap().unwrap().job_id;
    (doc, schedule, job)
}

async fn pending_schedule(app: &TestApp, ada: &Session, doc: &str) -> Value {
    let res = app
        .get(&format!("/api/documents/{doc}/schedule"))
        .cookie(ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].clone()
}

async fn publish_count(app: &TestApp, ada: &Session, doc: &str) -> (usize, Value) {
    let res = app
        .get(&format!("/api/documents/{doc}/versions"))
        .cookie(ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let publishes = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["eventType"] == "publish")
        .count();
    let res = app
        .get("/api/events?type=document.published")
        .cookie(ada)
        .send()
        .await;
    (publishes, res.body["pagination"]["total"].clone())
}

/// Two jobs carry out the same due schedule (a duplicate, as a reclaimed lease would make) and
/// two ticks run them at once: the document is published once, with one event.
async fn two_workers_racing_over_one_schedule_publish_once(url: String) {
    let app = TestApp::with(config_for(&url), None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (doc, schedule, job) = scheduled_publish(&app, &ada).await;
    let original = stored_job(&app, &job).await;
    assert_eq!(original.job_type, "document.schedule");
    assert_eq!(
        original.payload.0,
        json!({"scheduleId": schedule, "documentId": doc, "action": "publish"})
    );
    let twin = JobRecord {
        id: cms::core::new_id(),
        idempotency_key: None,
        ..original
    };
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    assert!(tx.enqueue_job(&twin).await.unwrap());
    tx.commit().await.unwrap();

    app.clock.advance_millis(2 * HOUR);
    let (one, two) = tokio::join!(tick(&app), tick(&app));
    assert_eq!(
        (one.claimed + two.claimed, one.completed + two.completed),
        (2, 2),
        "{one:?} {two:?}"
    );
    assert_eq!(
        publish_count(&app, &ada, &doc).await,
        (1, json!(1)),
        "one publish version, one document.published event"
    );
    assert_eq!(schedule_status(&app, &schedule).await, "completed");
    app.stop().await;
}

/// POST /api/jobs/{id}/cancel on a schedule's job cancels the schedule with it.
async fn cancelling_a_schedule_job_cancels_the_schedule(url: String) {
    let app = TestApp::with(config_for(&url), None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (doc, schedule, job) = scheduled_publish(&app, &ada).await;
    let res = app
        .get("/api/jobs?type=document.schedule")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"][0]["id"], json!(job), "{}", res.body);
    assert_eq!(
        res.body["data"][0]["payload"],
        json!({"scheduleId": schedule, "documentId": doc, "action": "publish"})
    );
    assert_eq!(
        pending_schedule(&app, &ada, &doc).await["id"],
        json!(schedule)
    );

    let res = app
        .post(&format!("/api/jobs/{job}/cancel"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["status"], "cancelled");
    assert_eq!(pending_schedule(&app, &ada, &doc).await, Value::Null);
    assert_eq!(schedule_status(&app, &schedule).await, "cancelled");
    app.clock.advance_millis(2 * HOUR);
    assert_eq!(tick(&app).await.claimed, 0);
    assert_eq!(publish_count(&app, &ada, &doc).await, (0, json!(0)));
    app.stop().await;
}

/// A schedule job that runs out of attempts, by failing or by crashing, fails its schedule.
async fn a_dead_lettered_schedule_job_fails_its_schedule(url: String) {
    let app = TestApp::with(config_for(&url), None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;

    // Crashed: every attempt's worker died (claimed under a lease already past).
    let (doc, schedule, job) = scheduled_publish(&app, &ada).await;
    app.clock.advance_millis(2 * HOUR);
    let now = app.clock.now().millis();
    let max_attempts = stored_job(&app, &job).await.max_attempts;
    for _ in 0..max_attempts {
        let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
        assert_eq!(tx.claim_jobs(now, now - 1, 10).await.unwrap().len(), 1);
        tx.commit().await.unwrap();
    }
    assert_eq!(tick(&app).await, report(0, 0, 0, 1));
    assert_eq!(stored_job(&app, &job).await.status, "dead_letter");
    assert_eq!(schedule_status(&app, &schedule).await, "failed");
    assert_eq!(pending_schedule(&app, &ada, &doc).await, Value::Null);
    assert_eq!(publish_count(&app, &ada, &doc).await, (0, json!(0)));

    // Failing: the publish cannot be written (the database refuses its event), every attempt.
    let (doc, schedule, job) = scheduled_publish(&app, &ada).await;
    refuse_event_inserts(&url).await;
    for attempt in 1..max_attempts {
        app.clock.advance_millis(2 * HOUR);
        assert_eq!(tick(&app).await, report(1, 0, 1, 0), "attempt {attempt}");
        assert_eq!(schedule_status(&app, &schedule).await, "pending");
    }
    app.clock.advance_millis(2 * HOUR);
    assert_eq!(tick(&app).await, report(1, 0, 0, 1), "the last attempt");
    assert_eq!(stored_job(&app, &job).await.status, "dead_letter");
    assert_eq!(schedule_status(&app, &schedule).await, "failed");
    assert_eq!(pending_schedule(&app, &ada, &doc).await, Value::Null);
    app.stop().await;
}

cms_store::both_engines!(
    a_slow_job_does_not_let_the_next_jobs_lease_run_out,
    a_handler_past_its_deadline_is_a_failed_attempt,
    a_job_abandoned_at_its_last_attempt_is_dead_lettered,
    two_workers_racing_over_one_schedule_publish_once,
    cancelling_a_schedule_job_cancels_the_schedule,
    a_dead_lettered_schedule_job_fails_its_schedule,
);
