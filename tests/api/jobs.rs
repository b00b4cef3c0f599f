//! Events, the outbox, the job queue, the worker and schedules through HTTP and the worker API
//! (SPEC.md "Events", "States and transitions: Job", "Jobs and events"; CONTRACT.md section 7).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::http::{Method, StatusCode};
use cms::service::Clock;
use cms::service::jobs::{
    Consumer, EventHandler, EventView, HandlerContext, HandlerError, JobHandler, JobView,
};
use cms::service::{Registry, TickReport};
use serde_json::{Value, json};

use crate::support::{Session, TestApp};

/// The configuration of these tests: the first-party `webhooks` plugin is off, since its
/// consumer would add a delivery job of its own to every event and these tests count the jobs
/// of their own consumers (tests/api/webhooks.rs covers it).
fn config_for(url: &str) -> cms::Config {
    let mut config = crate::support::config_for(url);
    config.plugins.webhooks = false;
    config
}

/// A consumer that records what it receives and fails while told to.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<EventView>>,
    failing: std::sync::atomic::AtomicBool,
    /// Records the next event, then fails as if the process died before acknowledging it.
    fail_after_recording_once: std::sync::atomic::AtomicBool,
}

#[async_trait]
impl EventHandler for Recorder {
    async fn handle(&self, ctx: &HandlerContext, event: &EventView) -> Result<(), HandlerError> {
        use std::sync::atomic::Ordering::SeqCst;
        if ctx.settings != json!({"index": "posts"}) {
            return Err(format!("unexpected settings {}", ctx.settings).into());
        }
        if self.failing.load(SeqCst) {
            return Err("the search index is down".into());
        }
        self.seen.lock().unwrap().push(event.clone());
        if self.fail_after_recording_once.swap(false, SeqCst) {
            return Err("lost the acknowledgement".into());
        }
        Ok(())
    }
}

impl Recorder {
    fn seen(&self) -> Vec<EventView> {
        self.seen.lock().unwrap().clone()
    }
}

fn registry(recorder: &Arc<Recorder>, max_attempts: Option<i64>) -> Registry {
    Registry::default()
        .consumer(Consumer {
            id: "search".into(),
            events: vec!["document.published".into()],
            max_attempts,
            handler: recorder.clone(),
            settings: json!({"index": "posts"}),
            plugin: None,
        })
        .unwrap()
}

async fn start(url: &str, recorder: &Arc<Recorder>, max_attempts: Option<i64>) -> TestApp {
    TestApp::with_registry(config_for(url), registry(recorder, max_attempts)).await
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

async fn create(app: &TestApp, s: &Session, data: Value, publish: bool) -> Value {
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": data, "publish": publish}),
        )
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"].clone()
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_string()
}

async fn every_publish_path_emits_one_event_delivered_to_its_consumer(url: String) {
    let recorder = Arc::new(Recorder::default());
    let app = start(&url, &recorder, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let first = create(&app, &ada, json!({"title": "First"}), true).await;
    let second = create(&app, &ada, json!({"title": "Second"}), false).await;
    let draft_only = create(&app, &ada, json!({"title": "Draft"}), false).await;
    let res = app
        .post(
            &format!("/api/documents/{}/publish", id(&second)),
            json!({}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .req(Method::PUT, &format!("/api/documents/{}", id(&first)))
        .json(json!({"data": {"title": "First, again"}, "publish": true}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let republished = res.body["data"].clone();

    // The log has one `document.published` per publish, newest first, carrying identifiers
    // only.
    let res = app
        .get("/api/events?type=document.published")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["pagination"]["total"], 3);
    let newest = &res.body["data"][0];
    assert_eq!(newest["type"], "document.published");
    assert_eq!(
        newest["payload"],
        json!({
            "documentId": id(&first),
            "documentType": "post",
            "publishedHash": republished["publishedHash"],
        })
    );
    assert_eq!(newest["organizationId"], first["organizationId"]);
    let oldest = res.body["data"][2]["id"].as_str().unwrap().to_string();
    let res = app
        .get(&format!(
            "/api/events?after={oldest}&type=document.published"
        ))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 2, "{}", res.body);
    assert_eq!(
        res.body["data"][1]["id"], newest["id"],
        "after: oldest first"
    );

    // Every change's event waits for the relay: the owner's membership, three creates, an
    // update and the three publishes.
    let res = app.get("/api/jobs/health").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["outboxBacklog"], 8, "{}", res.body);

    // One tick relays the events and delivers the three its consumer subscribes to.
    assert_eq!(tick(&app).await, report(3, 3, 0, 0));
    let delivered: Vec<String> = recorder
        .seen()
        .iter()
        .map(|e| e.payload["documentId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(delivered, vec![id(&first), id(&second), id(&first)]);
    assert!(!delivered.contains(&id(&draft_only)));
    assert_eq!(tick(&app).await, report(0, 0, 0, 0), "nothing twice");

    let res = app
        .get("/api/jobs?status=completed")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 3);
    let job = &res.body["data"][0];
    assert_eq!(job["type"], "cms.event.deliver");
    assert!(job["idempotencyKey"].as_str().unwrap().starts_with("evt:"));
    assert!(job["idempotencyKey"].as_str().unwrap().ends_with(":search"));
    let res = app.get("/api/jobs/health").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["counts"]["completed"], 3);
    assert_eq!(res.body["data"]["counts"]["pending"], 0);
    assert_eq!(res.body["data"]["outboxBacklog"], 0);
    app.stop().await;
}

async fn a_failing_consumer_is_retried_with_backoff_then_dead_lettered(url: String) {
    let recorder = Arc::new(Recorder::default());
    recorder
        .failing
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let app = start(&url, &recorder, Some(3)).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    create(&app, &ada, json!({"title": "Hello"}), true).await;

    assert_eq!(tick(&app).await, report(1, 0, 1, 0));
    let res = app
        .get("/api/jobs?status=pending")
        .cookie(&ada)
        .send()
        .await;
    let job = res.body["data"][0].clone();
    assert_eq!(
        (job["attempts"].clone(), job["lastError"].clone()),
        (json!(1), json!("the search index is down"))
    );
    assert_eq!(tick(&app).await, report(0, 0, 0, 0), "backing off");
    app.clock.advance_millis(1_600);
    assert_eq!(tick(&app).await, report(1, 0, 1, 0), "second attempt");
    app.clock.advance_millis(1_000);
    assert_eq!(
        tick(&app).await,
        report(0, 0, 0, 0),
        "the second backoff is longer"
    );
    app.clock.advance_millis(2_100);
    assert_eq!(
        tick(&app).await,
        report(1, 0, 0, 1),
        "third attempt: dead-lettered"
    );
    let job_path = |action: &str| format!("/api/jobs/{}/{action}", job["id"].as_str().unwrap());
    let res = app
        .get("/api/jobs?status=dead_letter")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"][0]["attempts"], 3, "{}", res.body);

    // Cancel only pending; retry only failed or dead-lettered.
    let res = app
        .post(&job_path("cancel"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    let res = app
        .post(&job_path("retry"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        (
            res.body["data"]["status"].clone(),
            res.body["data"]["attempts"].clone()
        ),
        (json!("pending"), json!(0))
    );
    let res = app
        .post(&job_path("retry"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    // The consumer recovered: the retried job delivers.
    recorder
        .failing
        .store(false, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    assert_eq!(recorder.seen().len(), 1);
    let res = app
        .post(&job_path("cancel"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    let res = app
        .post("/api/jobs/no-such-job/retry", json!({}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

/// A job handler that counts its runs.
#[derive(Default)]
struct Counter(std::sync::atomic::AtomicU64);

#[async_trait]
impl JobHandler for Counter {
    async fn run(&self, _: &HandlerContext, _: &JobView) -> Result<(), HandlerError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

async fn an_expired_lease_makes_a_crashed_job_reclaimable(url: String) {
    let counter = Arc::new(Counter::default());
    let registry = Registry::default()
        .job_handler("test.count", counter.clone())
        .unwrap();
    let app = TestApp::with_registry(config_for(&url), registry).await;
    let worker = app.app.cms.worker();
    let job = worker
        .enqueue(None, "test.count", json!({}), None, Some("once".into()))
        .await
        .unwrap()
        .expect("enqueued");
    assert!(
        worker
            .enqueue(None, "test.count", json!({}), None, Some("once".into()))
            .await
            .unwrap()
            .is_none(),
        "the same idempotency key is absorbed"
    );
    let err = worker
        .enqueue(None, "test.unknown", json!({}), None, None)
        .await;
    assert!(err.is_err(), "no handler, no job");

    // A worker claims the job under a 60-second lease and dies without finishing it.
    let now = app.clock.now().millis();
    let store = app.app.cms.store().clone();
    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.claim_jobs(now, now + 60_000, 10).await.unwrap().len(), 1);
    tx.commit().await.unwrap();
    assert_eq!(tick(&app).await, report(0, 0, 0, 0), "still leased");
    app.clock.advance_millis(61_000);
    assert_eq!(
        tick(&app).await,
        report(1, 1, 0, 0),
        "reclaimed after the lease"
    );
    assert_eq!(counter.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    let mut tx = store.read_instance_wide().await.unwrap();
    let done = tx.job(&job.id).await.unwrap().unwrap();
    assert_eq!((done.status.as_str(), done.attempts), ("completed", 2));
    drop(tx);
    app.stop().await;
}

fn iso_in(app: &TestApp, ms: i64) -> String {
    app.clock.now().plus_millis(ms).to_rfc3339()
}

/// Schedules `action` on the document at `path` to run in `ms`; asserts 201.
async fn schedule(
    app: &TestApp,
    s: &Session,
    path: &str,
    action: &str,
    ms: i64,
) -> crate::support::Reply {
    let res = app
        .post(path, json!({"action": action, "runAt": iso_in(app, ms)}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res
}

async fn schedules_publish_and_unpublish_on_ticks(url: String) {
    let recorder = Arc::new(Recorder::default());
    let app = start(&url, &recorder, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = create(&app, &ada, json!({"title": "Later"}), false).await;
    let path = format!("/api/documents/{}/schedule", id(&doc));
    const HOUR: i64 = 3_600_000;

    let res = app.get(&path).cookie(&ada).send().await;
    assert_eq!(
        (res.status, res.body["data"].clone()),
        (StatusCode::OK, Value::Null)
    );
    for (body, what) in [
        (
            json!({"action": "publish", "runAt": iso_in(&app, -HOUR)}),
            "runAt",
        ),
        (
            json!({"action": "archive", "runAt": iso_in(&app, HOUR)}),
            "action",
        ),
        (json!({"action": "publish", "runAt": "tomorrow"}), "runAt"),
    ] {
        let res = app.post(&path, body).cookie(&ada).send().await;
        let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert!(message.contains(what), "{message}");
    }
    let res = app.req(Method::DELETE, &path).cookie(&ada).send().await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    let res = schedule(&app, &ada, &path, "publish", HOUR).await;
    let first = res.body["data"].clone();
    assert_eq!(
        (
            first["action"].clone(),
            first["status"].clone(),
            first["documentId"].clone(),
            first["createdBy"].clone()
        ),
        (
            json!("publish"),
            json!("pending"),
            json!(id(&doc)),
            ada.user["id"].clone()
        )
    );
    // A new schedule replaces the pending one.
    let res = schedule(&app, &ada, &path, "publish", 2 * HOUR).await;
    let second = res.body["data"].clone();
    let res = app.get(&path).cookie(&ada).send().await;
    assert_eq!(res.body["data"]["id"], second["id"]);
    let res = app
        .get("/api/jobs?status=cancelled")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["pagination"]["total"], 1,
        "the first schedule's job"
    );

    assert_eq!(tick(&app).await, report(0, 0, 0, 0), "not due yet");
    app.clock.advance_millis(3 * HOUR);
    let done = tick(&app).await;
    assert_eq!((done.claimed, done.completed), (1, 1));
    let res = app
        .get(&format!("/api/documents/{}", id(&doc)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["data"]["publishedData"],
        json!({"title": "Later"}),
        "{}",
        res.body
    );
    let res = app.get(&path).cookie(&ada).send().await;
    assert_eq!(
        res.body["data"],
        Value::Null,
        "nothing pending after the run"
    );
    // The scheduled publish emitted its event; the next tick delivers it.
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    assert_eq!(recorder.seen()[0].payload["documentId"], json!(id(&doc)));

    // Unpublish, and a cancelled schedule that never fires.
    schedule(&app, &ada, &path, "unpublish", HOUR).await;
    app.clock.advance_millis(2 * HOUR);
    tick(&app).await;
    let res = app
        .get(&format!("/api/documents/{}", id(&doc)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["data"]["publishedData"],
        Value::Null,
        "{}",
        res.body
    );
    schedule(&app, &ada, &path, "publish", HOUR).await;
    let res = app.req(Method::DELETE, &path).cookie(&ada).send().await;
    assert_eq!(
        (res.status, res.body["data"]["status"].clone()),
        (StatusCode::OK, json!("cancelled"))
    );
    app.clock.advance_millis(2 * HOUR);
    assert_eq!(tick(&app).await.claimed, 0);
    let res = app
        .get(&format!("/api/documents/{}", id(&doc)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["publishedData"], Value::Null);

    // Scheduling needs document.publish: a read-only key is refused.
    let key = app
        .create_key(&ada, json!({"name": "ro", "permissions": ["read"]}))
        .await;
    let res = app
        .post(
            &path,
            json!({"action": "publish", "runAt": iso_in(&app, HOUR)}),
        )
        .key(&key)
        .send()
        .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = app.get(&path).key(&key).send().await;
    assert_eq!(res.status, StatusCode::OK);
    app.stop().await;
}

async fn a_scheduled_publish_revalidates_at_run_time(url: String) {
    let recorder = Arc::new(Recorder::default());
    let app = start(&url, &recorder, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    // No title: the draft does not validate for publishing.
    let doc = create(&app, &ada, json!({"excerpt": "untitled"}), false).await;
    let path = format!("/api/documents/{}/schedule", id(&doc));
    let res = schedule(&app, &ada, &path, "publish", 60_000).await;
    let schedule_id = res.body["data"]["id"].as_str().unwrap().to_string();
    app.clock.advance_millis(120_000);
    tick(&app).await;
    let res = app
        .get(&format!("/api/documents/{}", id(&doc)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["publishedData"], Value::Null);
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    assert_eq!(
        tx.schedule(&schedule_id).await.unwrap().unwrap().status,
        "failed"
    );
    drop(tx);
    let res = app
        .get("/api/events?type=document.published")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["pagination"]["total"], 0,
        "no publish event without a publish"
    );
    app.stop().await;
}

async fn the_worker_endpoint_needs_its_secret(url: String) {
    let app = TestApp::with(config_for(&url), None).await;
    let res = app
        .post("/api/internal/workers/run", json!({}))
        .bearer("anything")
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;

    let mut config = config_for(&url);
    config.jobs.worker_secret = Some("the worker secret".into());
    let app = TestApp::with(config, None).await;
    let res = app
        .post("/api/internal/workers/run", json!({}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    let res = app
        .post("/api/internal/workers/run", json!({}))
        .bearer("the wrong secret!")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    let ada = app.sign_up("Ada", "ada@example.com").await;
    create(&app, &ada, json!({"title": "Hello"}), true).await;
    let res = app
        .post("/api/internal/workers/run", json!({}))
        .bearer("the worker secret")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body,
        json!({"success": true, "result": {"claimed": 0, "completed": 0, "retried": 0, "failed": 0}}),
        "no consumer subscribed: the relay marks the event processed and enqueues nothing"
    );
    let res = app.get("/api/jobs/health").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["outboxBacklog"], 0);
    app.stop().await;
}

async fn job_and_event_reads_are_scoped(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    create(&app, &ada, json!({"title": "Hello"}), true).await;
    for path in ["/api/jobs", "/api/events", "/api/jobs/health"] {
        let res = app.get(path).send().await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{path}");
        // Bob belongs to no organization: no document.read anywhere.
        let res = app.get(path).cookie(&bob).send().await;
        res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
        let res = app
            .get(&format!("{path}?scope=all"))
            .cookie(&bob)
            .send()
            .await;
        res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
        // Ada is the instance super admin.
        let res = app
            .get(&format!("{path}?scope=all"))
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
    }
    let res = app
        .get("/api/events?scope=all&type=document.published")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 1);
    for bad in [
        "/api/jobs?status=sleeping",
        "/api/jobs?pageSize=0",
        "/api/events?page=x",
        "/api/events?scope=everything",
        "/api/jobs?status=pending&status=failed",
    ] {
        let res = app.get(bad).cookie(&ada).send().await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    // Read only: the log has no write path.
    let res = app
        .post("/api/events", json!({"type": "x.y"}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::METHOD_NOT_ALLOWED);
    app.stop().await;
}

/// A failure after the data write rolls back the publish, its event and its outbox row
/// together: the database is made to refuse the event insert.
async fn a_publish_that_fails_after_its_data_write_leaves_nothing(url: String) {
    let app = TestApp::with(config_for(&url), None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = create(&app, &ada, json!({"title": "Hello"}), false).await;
    // The owner's membership and the create wait for the relay already.
    let res = app.get("/api/jobs/health").cookie(&ada).send().await;
    let backlog = res.body["data"]["outboxBacklog"].clone();
    assert_eq!(backlog, 2, "{}", res.body);
    refuse_event_inserts(&url).await;
    let res = app
        .post(&format!("/api/documents/{}/publish", id(&doc)), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        res.body
    );
    let res = app
        .get(&format!("/api/documents/{}", id(&doc)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["publishedData"], Value::Null);
    assert_eq!(res.body["data"]["_meta"]["revision"], 1);
    let res = app
        .get("/api/events?type=document.published")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 0);
    let res = app.get("/api/jobs/health").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["outboxBacklog"], backlog);
    let res = app
        .get(&format!("/api/documents/{}/versions", id(&doc)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["total"], 1, "no publish version either");
    app.stop().await;
}

/// Installs a trigger that makes every event insert fail, through a connection of its own.
pub(crate) async fn refuse_event_inserts(url: &str) {
    use sqlx::Connection;
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query("CREATE TRIGGER refuse_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'forced'); END")
            .execute(&mut conn)
            .await
            .unwrap();
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::raw_sql(
            "CREATE FUNCTION refuse_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'forced'; END $$; \
             CREATE TRIGGER refuse_events BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_events();",
        )
        .execute(&mut conn)
        .await
        .unwrap();
    }
}

/// Delivery is at least once: a consumer whose acknowledgement was lost gets the same event
/// again, with the same id to dedupe by.
async fn a_delivery_whose_acknowledgement_is_lost_comes_again_with_the_same_id(url: String) {
    let recorder = Arc::new(Recorder::default());
    recorder
        .fail_after_recording_once
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let app = start(&url, &recorder, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    create(&app, &ada, json!({"title": "Hello"}), true).await;
    assert_eq!(tick(&app).await, report(1, 0, 1, 0));
    app.clock.advance_millis(1_600);
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    let seen = recorder.seen();
    assert_eq!(seen.len(), 2, "delivered twice");
    assert_eq!(seen[0].id, seen[1].id, "the same event id both times");
    let unique: std::collections::HashSet<&str> = seen.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(unique.len(), 1);
    app.stop().await;
}

cms_store::both_engines!(
    a_delivery_whose_acknowledgement_is_lost_comes_again_with_the_same_id,
    schedules_publish_and_unpublish_on_ticks,
    a_scheduled_publish_revalidates_at_run_time,
    the_worker_endpoint_needs_its_secret,
    job_and_event_reads_are_scoped,
    a_publish_that_fails_after_its_data_write_leaves_nothing,
    every_publish_path_emits_one_event_delivered_to_its_consumer,
    a_failing_consumer_is_retried_with_backoff_then_dead_lettered,
    an_expired_lease_makes_a_crashed_job_reclaimable,
);

/// A child process that is killed when the test ends, however it ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `cms serve` is killed with SIGKILL in the middle of a publish loop. Restarted (here, in
/// process, with a consumer) and drained, every publish that committed, acknowledged or not,
/// has its event delivered.
async fn every_committed_publish_is_delivered_after_a_crash(url: String) {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let config = config_for(&url);
    std::fs::create_dir_all(&config.data_dir).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_cms"))
            .args(["serve", "--port", &port.to_string()])
            .current_dir(&config.data_dir)
            .env("CMS_DATABASE_URL", &url)
            .env("CMS_AUTH_SECRET", config.auth.secret.as_deref().unwrap())
            .env_remove("CMS_CONFIG")
            .env_remove("CMS_EMBEDDED_WORKER")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cms serve starts"),
    );
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !client
        .get(format!("{base}/healthz"))
        .send()
        .await
        .is_ok_and(|r| r.status() == 200)
    {
        assert!(
            Instant::now() < deadline,
            "cms serve did not become healthy"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let res = client
        .post(format!("{base}/api/auth/sign-up/email"))
        .json(&json!({"name": "Ada", "email": "ada@example.com", "password": crate::support::PASSWORD}))
        .send()
        .await
        .unwrap();
    let token = res.json::<Value>().await.unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();

    // Eight writers publish until the process dies under them.
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (client, base, token, acknowledged) =
                (client.clone(), base.clone(), token.clone(), acknowledged.clone());
            tokio::spawn(async move {
                for n in 0.. {
                    let body = json!({"type": "post", "publish": true, "data": {"title": format!("w{w} n{n}")}});
                    let Ok(res) = client
                        .post(format!("{base}/api/documents"))
                        .bearer_auth(&token)
                        .json(&body)
                        .send()
                        .await
                    else {
                        return;
                    };
                    if res.status() != 201 {
                        return;
                    }
                    let Ok(doc) = res.json::<Value>().await else { return };
                    acknowledged.lock().unwrap().push(id(&doc["data"]));
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while acknowledged.lock().unwrap().len() < 150 {
        assert!(Instant::now() < deadline, "the writers stalled");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.0.kill().expect("SIGKILL");
    child.0.wait().unwrap();
    for writer in writers {
        let _ = writer.await;
    }
    let acknowledged = acknowledged.lock().unwrap().clone();

    // Restart with a consumer and drain.
    let recorder = Arc::new(Recorder::default());
    let app = TestApp::with_registry(config, registry(&recorder, None)).await;
    for _ in 0..1000 {
        let done = tick(&app).await;
        let res = app
            .app
            .cms
            .store()
            .read_instance_wide()
            .await
            .unwrap()
            .outbox_backlog()
            .await
            .unwrap();
        if done.claimed == 0 && res == 0 {
            break;
        }
    }
    let delivered: std::collections::HashSet<String> = recorder
        .seen()
        .iter()
        .map(|e| e.payload["documentId"].as_str().unwrap().to_string())
        .collect();
    let res = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com", "password": crate::support::PASSWORD}),
        )
        .send()
        .await;
    let ada = Session::from(&res);
    let mut published = Vec::new();
    for page in 1.. {
        let res = app
            .get(&format!(
                "/api/documents?type=post&status=published&pageSize=100&page={page}"
            ))
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        let data = res.body["data"].as_array().unwrap().clone();
        if data.is_empty() {
            break;
        }
        published.extend(data.iter().map(id));
    }
    assert!(
        published.len() >= acknowledged.len(),
        "{} < {}",
        published.len(),
        acknowledged.len()
    );
    for doc in &acknowledged {
        assert!(published.contains(doc), "acknowledged {doc} is published");
    }
    for doc in &published {
        assert!(
            delivered.contains(doc),
            "committed publish {doc} was delivered"
        );
    }
    app.stop().await;
}

cms_store::both_engines!(every_committed_publish_is_delivered_after_a_crash);

async fn deleting_an_account_emits_user_deleted_once_per_organization(url: String) {
    use cms_store::organizations::{MemberRecord, OrganizationRecord};
    use cms_store::roles::RoleRecord;

    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    let session = app.get("/api/auth/get-session").cookie(&ada).send().await;
    let default_org = session.body["session"]["activeOrganizationId"]
        .as_str()
        .unwrap()
        .to_string();
    let bob_id = bob.user["id"].as_str().unwrap().to_string();
    // Bob is an editor of Default and of a second organization (membership endpoints come with
    // the tenancy work; the rows are written directly here).
    let store = app.app.cms.store().clone();
    let mut tx = store.write_instance_wide().await.unwrap();
    let now = app.clock.now().millis();
    tx.insert_organization(&OrganizationRecord {
        id: "second-org".into(),
        name: "Second".into(),
        slug: "second".into(),
        metadata: cms_store::Json(json!({})),
        parent_id: None,
        locales: None,
        require_two_factor: false,
        created_at: now,
        updated_at: now,
    })
    .await
    .unwrap();
    tx.insert_role(&RoleRecord {
        id: "second-editor".into(),
        organization_id: "second-org".into(),
        name: "editor".into(),
        description: String::new(),
        capabilities: cms_store::Json(vec!["document.read".into()]),
        is_built_in: true,
        created_at: now,
        updated_at: now,
    })
    .await
    .unwrap();
    for org in [default_org.as_str(), "second-org"] {
        tx.insert_member(&MemberRecord {
            organization_id: org.into(),
            user_id: bob_id.clone(),
            role: "editor".into(),
            created_at: now,
        })
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();

    let res = app
        .req(Method::DELETE, "/api/user")
        .json(json!({}))
        .cookie(&bob)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .req(Method::DELETE, "/api/user")
        .json(json!({"password": "not the password"}))
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.body);
    let res = app
        .req(Method::DELETE, "/api/user")
        .json(json!({"password": crate::support::PASSWORD}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    // Ada is the last owner of Default.
    let res = app
        .req(Method::DELETE, "/api/user")
        .json(json!({"password": crate::support::PASSWORD}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    // A key cannot delete the person who made it.
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["write"]}))
        .await;
    let res = app
        .req(Method::DELETE, "/api/user")
        .json(json!({"password": crate::support::PASSWORD}))
        .key(&key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);

    let res = app
        .req(Method::DELETE, "/api/user")
        .json(json!({"password": crate::support::PASSWORD}))
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app.get("/api/auth/get-session").cookie(&bob).send().await;
    assert_eq!(res.body, Value::Null, "the session went with the account");
    let res = app
        .get("/api/events?scope=all&type=user.deleted")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 2, "{}", res.body);
    let mut orgs: Vec<String> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["organizationId"].as_str().unwrap().to_string())
        .collect();
    orgs.sort();
    let mut expected = vec![default_org.clone(), "second-org".to_string()];
    expected.sort();
    assert_eq!(orgs, expected);
    assert_eq!(
        res.body["data"][0]["payload"],
        json!({"userId": bob_id, "email": "bob@example.com", "image": null})
    );
    let res = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "bob@example.com", "password": crate::support::PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

cms_store::both_engines!(deleting_an_account_emits_user_deleted_once_per_organization);

/// Records which jobs it ran, and how often.
#[derive(Default)]
struct Ledger(Mutex<std::collections::HashMap<String, u32>>);

#[async_trait]
impl JobHandler for Ledger {
    async fn run(&self, ctx: &HandlerContext, job: &JobView) -> Result<(), HandlerError> {
        if ctx.settings != json!({"ledger": true}) {
            return Err("the registered settings did not arrive".into());
        }
        *self.0.lock().unwrap().entry(job.id.clone()).or_default() += 1;
        Ok(())
    }
}

/// Two services on two pools over one database tick concurrently through 1,000 jobs: every job
/// runs exactly once and none is lost.
async fn two_workers_on_two_pools_run_every_job_once(url: String) {
    let ledger = Arc::new(Ledger::default());
    let registry = || {
        Registry::default()
            .job_handler_with_settings("test.ledger", ledger.clone(), json!({"ledger": true}))
            .unwrap()
    };
    let one = TestApp::with_registry(config_for(&url), registry()).await;
    let two = TestApp::with_registry(config_for(&url), registry()).await;
    let store = one.app.cms.store().clone();
    let mut tx = store.write_instance_wide().await.unwrap();
    let now = one.clock.now().millis();
    let mut ids = Vec::new();
    for i in 0..1000 {
        let id = cms::core::new_id();
        tx.enqueue_job(&cms_store::jobs::JobRecord::pending(
            id.clone(),
            "test.ledger",
            json!({"n": i}),
            5,
            now,
        ))
        .await
        .unwrap();
        ids.push(id);
    }
    tx.commit().await.unwrap();
    let drive = |app: &TestApp| {
        let worker = app.app.cms.worker();
        async move {
            let mut completed = 0;
            loop {
                let report = worker.tick().await.unwrap();
                if report.claimed == 0 {
                    return completed;
                }
                completed += report.completed;
            }
        }
    };
    let (a, b) = tokio::join!(drive(&one), drive(&two));
    assert_eq!(a + b, 1000, "completions: {a} + {b}");
    let ledger = ledger.0.lock().unwrap().clone();
    assert_eq!(ledger.len(), 1000, "no job lost");
    assert!(ledger.values().all(|n| *n == 1), "no job ran twice");
    assert!(ids.iter().all(|id| ledger.contains_key(id)));
    two.stop().await;
    one.stop().await;
}

cms_store::both_engines!(two_workers_on_two_pools_run_every_job_once);

/// A job of `organization` written straight to the store with `status`, for the tests of who
/// may manage it; due in a day, so no tick of the test runs it.
pub(crate) async fn stored_job(app: &TestApp, organization: &str, status: &str) -> String {
    let now = app.clock.now().millis();
    let id = cms::core::new_id();
    let job = cms_store::jobs::JobRecord {
        organization_id: Some(organization.to_string()),
        status: status.to_string(),
        ..cms_store::jobs::JobRecord::pending(
            id.clone(),
            "test.nothing",
            json!({}),
            5,
            now + 86_400_000,
        )
    };
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    assert!(tx.enqueue_job(&job).await.unwrap());
    tx.commit().await.unwrap();
    id
}

pub(crate) async fn job_status(app: &TestApp, id: &str) -> String {
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    tx.job(id).await.unwrap().expect("the job").status
}

/// CONTRACT.md section 13: `scope=all` and other organizations' jobs are for a signed-in
/// instance super admin only. A key its super admin made acts inside its organization with its
/// listed scope: 403 for `scope=all`, 404 for another organization's job (left unchanged).
/// Retry and cancel need document.publish in the job's organization.
async fn instance_wide_job_powers_need_a_super_admin_session(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let ada_org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Bob's", "slug": "bobs"}),
        )
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let bob_org = id(&res.body["data"]);
    app.join(&bob, &bob_org, "owner").await;
    let carol = app.sign_up("Carol", "carol@example.com").await;
    app.join(&carol, &bob_org, "viewer").await;

    let pending = stored_job(&app, &bob_org, "pending").await;
    let failed = stored_job(&app, &bob_org, "failed").await;
    let own = stored_job(&app, &ada_org, "pending").await;
    let read_key = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    let write_key = app
        .create_key(&ada, json!({"name": "w", "permissions": ["write"]}))
        .await;

    for (what, key) in [("read key", &read_key), ("write key", &write_key)] {
        for path in ["/api/jobs", "/api/events", "/api/jobs/health"] {
            let res = app.get(&format!("{path}?scope=all")).key(key).send().await;
            res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
            let res = app.get(path).key(key).send().await;
            assert_eq!(res.status, StatusCode::OK, "{what} {path}: {}", res.body);
        }
        for (job, action) in [(&pending, "cancel"), (&failed, "retry")] {
            let res = app
                .post(&format!("/api/jobs/{job}/{action}"), json!({}))
                .key(key)
                .send()
                .await;
            res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
        }
        assert_eq!(job_status(&app, &pending).await, "pending", "{what}");
        assert_eq!(job_status(&app, &failed).await, "failed", "{what}");
    }
    // Inside its organization a key does what its scope holds: read has no document.publish.
    let res = app
        .post(&format!("/api/jobs/{own}/cancel"), json!({}))
        .key(&read_key)
        .send()
        .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .post(&format!("/api/jobs/{own}/cancel"), json!({}))
        .key(&write_key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["status"], "cancelled");

    // A member without document.publish manages no job of their own organization either.
    for (job, action) in [(&pending, "cancel"), (&failed, "retry")] {
        let res = app
            .post(&format!("/api/jobs/{job}/{action}"), json!({}))
            .cookie(&carol)
            .send()
            .await;
        res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    assert_eq!(job_status(&app, &pending).await, "pending");
    assert_eq!(job_status(&app, &failed).await, "failed");

    // The super admin's own session still holds the instance-wide powers.
    for path in ["/api/jobs", "/api/events", "/api/jobs/health"] {
        let res = app
            .get(&format!("{path}?scope=all"))
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
    }
    let res = app.get("/api/jobs?scope=all").cookie(&ada).send().await;
    assert_eq!(res.body["pagination"]["total"], 3, "{}", res.body);
    let res = app
        .post(&format!("/api/jobs/{pending}/cancel"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["status"], "cancelled");
    let res = app
        .post(&format!("/api/jobs/{failed}/retry"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["status"], "pending");
    app.stop().await;
}

cms_store::both_engines!(instance_wide_job_powers_need_a_super_admin_session);
