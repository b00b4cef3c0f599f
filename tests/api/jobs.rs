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

use crate::support::{Session, TestApp, config_for};

/// A consumer that records what it receives and fails while told to.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<EventView>>,
    failing: std::sync::atomic::AtomicBool,
}

#[async_trait]
impl EventHandler for Recorder {
    async fn handle(&self, _: &HandlerContext, event: &EventView) -> Result<(), HandlerError> {
        if self.failing.load(std::sync::atomic::Ordering::SeqCst) {
            return Err("the search index is down".into());
        }
        self.seen.lock().unwrap().push(event.clone());
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

    // The log has one event per publish, newest first, carrying identifiers only.
    let res = app.get("/api/events").cookie(&ada).send().await;
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

    let res = app.get("/api/jobs/health").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["outboxBacklog"], 3, "{}", res.body);

    // One tick relays the three events and delivers them.
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
    let mut tx = store.write().await.unwrap();
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
    let mut tx = store.read().await.unwrap();
    let done = tx.job(&job.id).await.unwrap().unwrap();
    assert_eq!((done.status.as_str(), done.attempts), ("completed", 2));
    drop(tx);
    app.stop().await;
}

cms_store::both_engines!(
    every_publish_path_emits_one_event_delivered_to_its_consumer,
    a_failing_consumer_is_retried_with_backoff_then_dead_lettered,
    an_expired_lease_makes_a_crashed_job_reclaimable,
);
