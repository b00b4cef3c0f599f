//! GET /metrics (CONTRACT.md section 19, docs/METRICS.md): the Prometheus text parses, names
//! every metric of the contract, and moves with traffic (route templates as labels, never a
//! raw path); the queue, pool and event stream gauges are read at scrape time; turned off it is
//! 404, and with a token it is 401 without it.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::http::StatusCode;
use cms::service::Registry;
use cms::service::jobs::{HandlerContext, HandlerError, JobHandler, JobView};
use prom_text_format_parser::{Metric, Scrape, Type, ValueType};
use serde_json::json;

use crate::assets::{png, uploaded};
use crate::support::{Reply, TestApp, config_for};

const METRICS: &str = "/metrics";
const TOKEN: &str = "the metrics token of this test, 32+ characters";
/// A job type only this module enqueues.
const JOB_TYPE: &str = "metrics.test";

/// Every metric family docs/METRICS.md lists, as the text names it.
const FAMILIES: [&str; 13] = [
    "cms_http_requests_total",
    "cms_http_request_duration_seconds",
    "cms_db_pool_connections_in_use",
    "cms_db_pool_connections_idle",
    "cms_db_pool_connections_max",
    "cms_metrics_database_up",
    "cms_jobs",
    "cms_jobs_oldest_pending_age_seconds",
    "cms_outbox_backlog",
    "cms_event_stream_clients",
    "cms_image_transforms_total",
    "cms_image_transform_duration_seconds",
    "cms_build_info",
];

/// A job handler that does nothing: jobs of its type may be enqueued.
struct Idle;

#[async_trait]
impl JobHandler for Idle {
    async fn run(&self, _: &HandlerContext, _: &JobView) -> Result<(), HandlerError> {
        Ok(())
    }
}

/// A real 8×6 PNG (`png` writes a header only): something to transform.
fn real_png() -> Vec<u8> {
    let image = image::RgbImage::from_pixel(8, 6, image::Rgb([10, 120, 200]));
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

async fn app_with(url: &str, customise: impl FnOnce(&mut cms::Config)) -> TestApp {
    let mut config = config_for(url);
    customise(&mut config);
    let registry = Registry::default()
        .job_handler(JOB_TYPE, Arc::new(Idle))
        .unwrap();
    TestApp::with_registry(config, registry).await
}

/// A scrape, parsed strictly: a line the parser does not understand, or samples it cannot
/// group into their families, fail the test.
struct Scraped {
    metrics: Vec<Metric>,
    text: String,
}

impl Scraped {
    fn of(res: &Reply) -> Scraped {
        assert_eq!(res.status, StatusCode::OK, "{}", res.text());
        assert_eq!(
            res.header("content-type"),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        let text = res.text();
        let scrape =
            Scrape::parse(&text).unwrap_or_else(|e| panic!("not Prometheus text: {e:?}\n{text}"));
        Scraped {
            metrics: scrape.metrics,
            text,
        }
    }

    fn family(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    /// The value of the one series of `name` with exactly `labels` (for a histogram, of its
    /// sample of `kind`: a bucket, `_sum` or `_count`).
    fn sample(&self, name: &str, kind: ValueType, labels: &[(&str, &str)]) -> Option<f64> {
        self.family(name)?
            .samples
            .iter()
            .filter(|s| s.value.value_type == kind)
            .find(|s| {
                s.labels.len() == labels.len()
                    && labels
                        .iter()
                        .all(|(k, v)| s.labels.iter().any(|l| l.key == *k && l.value == *v))
            })
            .map(|s| s.value.value.as_f64())
    }

    /// The value of a counter or gauge series.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        self.sample(name, ValueType::Sample, labels)
    }

    /// Every value label `key` takes among the series of `name`.
    fn label_values(&self, name: &str, key: &str) -> Vec<String> {
        let mut values: Vec<String> = self
            .family(name)
            .into_iter()
            .flat_map(|m| m.samples.iter())
            .flat_map(|s| s.labels.iter())
            .filter(|l| l.key == key)
            .map(|l| l.value.clone())
            .collect();
        values.sort();
        values.dedup();
        values
    }
}

async fn scrape(app: &TestApp) -> Scraped {
    Scraped::of(&app.get(METRICS).send().await)
}

async fn new_post(app: &TestApp, session: &crate::support::Session) -> String {
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Counted"}}),
        )
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn the_scrape_names_every_metric_and_moves_with_traffic(url: String) {
    let app = app_with(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = new_post(&app, &ada).await;
    let photo = uploaded(&app, &ada, "dot.png", &real_png()).await;
    let transform = format!("{}?w=4", photo["url"].as_str().unwrap());
    for _ in 0..2 {
        let res = app.get(&transform).send().await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.text());
    }
    // A PNG header with no picture behind it: refused, and counted as failed.
    let broken = uploaded(&app, &ada, "broken.png", &png(8, 6, 64)).await;
    let res = app
        .get(&format!("{}?w=4", broken["url"].as_str().unwrap()))
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Entity");
    app.app
        .cms
        .worker()
        .enqueue(None, JOB_TYPE, json!({}), None, None)
        .await
        .unwrap()
        .expect("enqueued");
    app.clock.advance_millis(90_000);

    let before = scrape(&app).await;
    for family in FAMILIES {
        let found = before.family(family);
        assert!(
            found.is_some_and(|m| !m.samples.is_empty() && m.help_desc.is_some()),
            "{family} missing or undescribed:\n{}",
            before.text
        );
    }
    let kind = |name| before.family(name).map(|m| m.kind);
    assert_eq!(
        kind("cms_http_request_duration_seconds"),
        Some(Type::Histogram)
    );
    assert_eq!(
        kind("cms_image_transform_duration_seconds"),
        Some(Type::Histogram)
    );
    assert_eq!(kind("cms_http_requests_total"), Some(Type::Counter));
    assert_eq!(kind("cms_jobs"), Some(Type::Gauge));
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        before.value("cms_build_info", &[("version", version)]),
        Some(1.0)
    );

    // Two reads of one document: +2 under the route's template; the id is in no label.
    let template = [
        ("method", "GET"),
        ("route", "/api/documents/{id}"),
        ("status", "200"),
    ];
    let counted = |s: &Scraped| s.value("cms_http_requests_total", &template).unwrap_or(0.0);
    for _ in 0..2 {
        let res = app
            .get(&format!("/api/documents/{doc}"))
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    }
    let lost = format!("/no/such/{}", uuid::Uuid::now_v7());
    let res = app.get(&lost).send().await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let after = scrape(&app).await;
    assert_eq!(counted(&after) - counted(&before), 2.0, "{}", after.text);
    let unmatched = [("method", "GET"), ("route", "unmatched"), ("status", "404")];
    let misses = |s: &Scraped| {
        s.value("cms_http_requests_total", &unmatched)
            .unwrap_or(0.0)
    };
    assert_eq!(misses(&after) - misses(&before), 1.0, "{}", after.text);
    assert!(!after.text.contains(&doc), "a document id in a label");
    assert!(!after.text.contains(&lost), "a raw path in a label");
    let timed = [("method", "GET"), ("route", "/api/documents/{id}")];
    let duration = "cms_http_request_duration_seconds";
    let reads = after.sample(duration, ValueType::Count, &timed).unwrap();
    let all = [timed[0], timed[1], ("le", "+Inf")];
    assert_eq!(
        after.value(duration, &all),
        Some(reads),
        "+Inf holds every read"
    );
    assert!(reads >= 2.0, "{}", after.text);
    assert!(after.sample(duration, ValueType::Sum, &timed).unwrap() > 0.0);
    // The scrapes themselves are counted too.
    assert!(
        after.value(
            "cms_http_requests_total",
            &[("method", "GET"), ("route", METRICS), ("status", "200")]
        ) >= Some(1.0)
    );

    // One render, then the same derivative read back from storage.
    let png_transforms = |result| {
        after.value(
            "cms_image_transforms_total",
            &[("format", "png"), ("result", result)],
        )
    };
    assert_eq!(png_transforms("rendered"), Some(1.0), "{}", after.text);
    assert_eq!(png_transforms("stored"), Some(1.0), "{}", after.text);
    assert_eq!(png_transforms("failed"), Some(1.0), "{}", after.text);
    // The render and the failed decode were both timed.
    let renders = after.sample(
        "cms_image_transform_duration_seconds",
        ValueType::Count,
        &[("format", "png")],
    );
    assert_eq!(renders, Some(2.0), "{}", after.text);

    // The queue, instance-wide, as the store holds it.
    let pending = [("status", "pending"), ("type", JOB_TYPE)];
    assert_eq!(after.value("cms_jobs", &pending), Some(1.0));
    assert_eq!(
        after.value("cms_jobs", &[("status", "completed"), ("type", JOB_TYPE)]),
        Some(0.0)
    );
    let age = after
        .value("cms_jobs_oldest_pending_age_seconds", &[])
        .unwrap();
    assert!((90.0..3600.0).contains(&age), "{age}");
    let backlog = app
        .app
        .cms
        .store()
        .read_instance_wide()
        .await
        .unwrap()
        .outbox_backlog()
        .await
        .unwrap();
    assert!(backlog > 0, "creating a document appends an event");
    assert_eq!(after.value("cms_outbox_backlog", &[]), Some(backlog as f64));
    assert_eq!(after.value("cms_metrics_database_up", &[]), Some(1.0));

    // Once the job ran, the series reads 0 rather than vanishing or keeping its count.
    app.app.cms.worker().tick().await.unwrap();
    let ran = scrape(&app).await;
    assert_eq!(ran.value("cms_jobs", &pending), Some(0.0), "{}", ran.text);
    assert_eq!(
        ran.value("cms_jobs", &[("status", "completed"), ("type", JOB_TYPE)]),
        Some(1.0)
    );
    assert_eq!(
        ran.value("cms_jobs_oldest_pending_age_seconds", &[]),
        Some(0.0)
    );

    // Every pool of the engine, its use within its size.
    let names = ran.label_values("cms_db_pool_connections_max", "pool");
    for pool in ["write", "read"] {
        assert!(names.iter().any(|n| n == pool), "{pool} in {names:?}");
    }
    for pool in names.iter().map(String::as_str) {
        let max = ran
            .value("cms_db_pool_connections_max", &[("pool", pool)])
            .unwrap();
        let in_use = ran
            .value("cms_db_pool_connections_in_use", &[("pool", pool)])
            .unwrap();
        let idle = ran
            .value("cms_db_pool_connections_idle", &[("pool", pool)])
            .unwrap();
        assert!(
            max >= 1.0 && in_use >= 0.0 && idle >= 0.0,
            "{pool}: {in_use}/{idle}/{max}"
        );
    }
    app.stop().await;
}

async fn event_stream_clients_are_counted_while_open(url: String) {
    let app = app_with(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let clients = |s: &Scraped| s.value("cms_event_stream_clients", &[]);
    assert_eq!(clients(&scrape(&app).await), Some(0.0));
    let (status, _, body) = app
        .get("/api/events/stream")
        .bearer(&ada.token)
        .open()
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(clients(&scrape(&app).await), Some(1.0));
    drop(body);
    let mut left = None;
    for _ in 0..50 {
        left = clients(&scrape(&app).await);
        if left == Some(0.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, Some(0.0), "the stream's client left");
    app.stop().await;
}

async fn metrics_turned_off_are_not_found(url: String) {
    let app = app_with(&url, |config| config.metrics.enabled = false).await;
    let res = app.get(METRICS).send().await;
    let message = res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    assert_eq!(message, "no such endpoint");
    // Even the token a scrape might bring changes nothing.
    let res = app.get(METRICS).bearer(TOKEN).send().await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    assert_eq!(app.get("/healthz").send().await.status, StatusCode::OK);
    app.stop().await;
}

async fn a_token_guards_the_scrape(url: String) {
    let app = app_with(&url, |config| config.metrics.token = Some(TOKEN.into())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read", "write"]}))
        .await;
    let same_length_wrong = "x".repeat(TOKEN.len());
    let refused = [
        ("no credential", app.get(METRICS)),
        ("a wrong token", app.get(METRICS).bearer("not the token")),
        (
            "a wrong token of its length",
            app.get(METRICS).bearer(&same_length_wrong),
        ),
        (
            "the token as Basic",
            app.get(METRICS)
                .header("authorization", &format!("Basic {TOKEN}")),
        ),
        ("the token as an API key", app.get(METRICS).key(TOKEN)),
        ("the super admin's session", app.get(METRICS).cookie(&ada)),
        ("an API key", app.get(METRICS).key(&key)),
        ("an API key as Bearer", app.get(METRICS).bearer(&key)),
    ];
    for (what, call) in refused {
        let res = call.send().await;
        assert_eq!(
            res.status,
            StatusCode::UNAUTHORIZED,
            "{what}: {}",
            res.text()
        );
        res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    let scraped = Scraped::of(&app.get(METRICS).bearer(TOKEN).send().await);
    // The refusals were counted, under the route's template.
    let refusals = [("method", "GET"), ("route", METRICS), ("status", "401")];
    assert_eq!(
        scraped.value("cms_http_requests_total", &refusals),
        Some(8.0)
    );
    app.stop().await;
}

cms_store::both_engines!(
    the_scrape_names_every_metric_and_moves_with_traffic,
    event_stream_clients_are_counted_while_open,
    metrics_turned_off_are_not_found,
    a_token_guards_the_scrape,
);
