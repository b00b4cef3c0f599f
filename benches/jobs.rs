//! Job queue benchmark on SQLite (and PostgreSQL when CMS_BENCH_POSTGRES_URL is set):
//!
//! 1. trivial jobs drained per second by worker ticks, at the default batch size (25) and at
//!    500;
//! 2. events relayed and delivered to one consumer per second, at the same batch sizes (the
//!    relay batch is the larger of 100 and the job batch);
//! 3. event latency: from a publish returning to its consumer running, with the worker looping
//!    as the embedded worker does (a tick every second when idle).
//!
//! Run: `cargo bench --bench jobs`. Results go to stdout.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use cms::service::Credentials;
use cms::service::documents::NewDocument;
use cms::service::jobs::{
    Consumer, EventHandler, EventView, HandlerContext, HandlerError, JobHandler, JobView,
};
use cms::service::{Registry, SignUp};
use cms::{Builder, Config};
use serde_json::json;

struct Noop;

#[async_trait]
impl JobHandler for Noop {
    async fn run(&self, _: &HandlerContext, _: &JobView) -> Result<(), HandlerError> {
        Ok(())
    }
}

/// Records when each published document reached the consumer.
#[derive(Default)]
struct Arrivals(Mutex<Vec<(String, Instant)>>);

#[async_trait]
impl EventHandler for Arrivals {
    async fn handle(&self, _: &HandlerContext, event: &EventView) -> Result<(), HandlerError> {
        let id = event.payload["documentId"]
            .as_str()
            .unwrap_or("")
            .to_string();
        self.0.lock().unwrap().push((id, Instant::now()));
        Ok(())
    }
}

async fn app(url: &str, batch_size: i64, arrivals: Arc<Arrivals>) -> cms::App {
    let dir = std::env::temp_dir().join(format!("cms-bench-{}", std::process::id()));
    let mut config = Config {
        data_dir: dir,
        ..Config::default()
    };
    config.database.url = Some(url.to_string());
    config.auth.secret = Some("a bench secret of at least thirty-two characters".into());
    config.jobs.batch_size = batch_size;
    config.jobs.relay_batch_size = batch_size.max(100);
    // One consumer is measured: the first-party webhooks consumer would add a delivery job of
    // its own to every event.
    config.plugins.webhooks = false;
    let registry = Registry::default()
        .job_handler("bench.noop", Arc::new(Noop))
        .unwrap()
        .consumer(Consumer {
            id: "bench".into(),
            events: vec!["document.published".into()],
            max_attempts: None,
            handler: arrivals,
            settings: json!({}),
            plugin: None,
        })
        .unwrap();
    Builder::new(config)
        .registry(registry)
        .build()
        .await
        .expect("the app starts")
}

async fn drain(url: &str, batch_size: i64, jobs: usize) -> f64 {
    let app = app(url, batch_size, Arc::default()).await;
    let store = app.cms.store().clone();
    let mut tx = store.write_instance_wide().await.unwrap();
    for i in 0..jobs {
        let now = chrono_now();
        let job = cms_store::jobs::JobRecord::pending(
            cms::core::new_id(),
            "bench.noop",
            json!({"n": i}),
            5,
            now,
        );
        tx.enqueue_job(&job).await.unwrap();
    }
    tx.commit().await.unwrap();
    let worker = app.cms.worker();
    let started = Instant::now();
    let mut completed = 0;
    while completed < jobs as u64 {
        let report = worker.tick().await.unwrap();
        assert!(report.claimed > 0, "jobs left but none claimed");
        completed += report.completed;
    }
    let rate = jobs as f64 / started.elapsed().as_secs_f64();
    app.cms.close().await;
    rate
}

/// Events appended straight to the log, then relayed and delivered to one consumer by ticks.
async fn relay(url: &str, batch_size: i64, events: usize) -> f64 {
    let arrivals = Arc::new(Arrivals::default());
    let app = app(url, batch_size, arrivals.clone()).await;
    let store = app.cms.store().clone();
    let mut tx = store.write_instance_wide().await.unwrap();
    for i in 0..events {
        tx.append_event(&cms_store::events::EventRecord {
            id: cms::core::new_id(),
            organization_id: None,
            event_type: "document.published".into(),
            payload: cms_store::Json(json!({ "documentId": format!("d{i}") })),
            created_at: chrono_now(),
        })
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    let worker = app.cms.worker();
    let started = Instant::now();
    while arrivals.0.lock().unwrap().len() < events {
        worker.tick().await.unwrap();
    }
    let rate = events as f64 / started.elapsed().as_secs_f64();
    app.cms.close().await;
    rate
}

async fn latency(url: &str, publishes: usize) -> (Duration, Duration) {
    let arrivals = Arc::new(Arrivals::default());
    let app = app(url, 25, arrivals.clone()).await;
    let auth = app
        .cms
        .auth()
        .sign_up(SignUp {
            name: Some("Bench".into()),
            email: Some(format!("bench-{}@example.com", std::process::id())),
            password: Some("bench password".into()),
            client: Default::default(),
            claim_code: Default::default(),
            invitation_token: None,
        })
        .await
        .expect("sign-up")
        .signed_in()
        .expect("no e-mail verification here");
    let credentials = Credentials {
        bearer: Some(auth.token),
        ..Default::default()
    };
    let actor = app
        .cms
        .auth()
        .authenticate(&credentials)
        .await
        .unwrap()
        .unwrap()
        .actor;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = app.cms.worker();
    let looping = tokio::spawn(async move {
        worker
            .run_until(Duration::from_secs(1), async {
                let _ = stopped.await;
            })
            .await
    });
    let mut sent = Vec::new();
    for n in 0..publishes {
        // Spread over the tick so publishes land at every phase of it.
        tokio::time::sleep(Duration::from_millis(137 + (n as u64 * 211) % 900)).await;
        let input = NewDocument {
            doc_type: "post".into(),
            data: json!({"title": format!("latency {n}")}),
            publish: true,
            locale: None,
        };
        let (doc, _) = app.cms.documents().create(&actor, input).await.unwrap();
        sent.push((doc.id.clone(), Instant::now()));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while arrivals.0.lock().unwrap().len() < publishes && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = stop.send(());
    let _ = looping.await;
    let arrived = arrivals.0.lock().unwrap().clone();
    let mut delays: Vec<Duration> = sent
        .iter()
        .map(|(id, at)| {
            arrived
                .iter()
                .find(|(a, _)| a == id)
                .map_or(Duration::MAX, |(_, t)| t.duration_since(*at))
        })
        .collect();
    delays.sort();
    app.cms.close().await;
    (delays[delays.len() / 2], delays[delays.len() - 1])
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let mut engines = vec![(
            "sqlite",
            format!("sqlite://{}", dir.path().join("bench.db").display()),
        )];
        if let Ok(url) = std::env::var("CMS_BENCH_POSTGRES_URL") {
            engines.push(("postgres", url));
        }
        for (engine, url) in engines {
            for batch in [25, 500] {
                let rate = drain(&url, batch, 20_000).await;
                println!("{engine}: trivial jobs drained, batch {batch:>3}: {rate:>8.0} jobs/s");
            }
            for batch in [25, 500] {
                let rate = relay(&url, batch, 10_000).await;
                println!(
                    "{engine}: events relayed and delivered, batch {batch:>3}: {rate:>8.0} events/s"
                );
            }
            let (p50, max) = latency(&url, 20).await;
            println!(
                "{engine}: publish -> consumer with a 1 s idle tick: p50 {:.0} ms, max {:.0} ms",
                p50.as_secs_f64() * 1000.0,
                max.as_secs_f64() * 1000.0
            );
        }
    });
}
