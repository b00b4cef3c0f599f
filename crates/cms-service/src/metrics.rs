//! `GET /metrics` (CONTRACT.md section 19; every metric is listed in docs/METRICS.md): what the
//! doors, the image transforms and the store report, in the Prometheus text format.
//!
//! Each service keeps a Prometheus recorder of its own, and everything it measures is recorded
//! into that recorder with `metrics::with_local_recorder`, never through a process-global one.
//! A process runs one service in production, so the two would answer the same; but a test
//! binary (and a host application) may start many services in one process, and with a global
//! recorder they would share every series: one app's scrape would show another's requests, and
//! the gauges set at scrape time (pools, jobs) would be overwritten by whichever app scraped
//! last. Kept per service, each instance's `/metrics` tells about that instance only.
//!
//! Counters and histograms are recorded as things happen (each HTTP request by the door's
//! middleware, each image transform here); gauges are read when scraped: the store's pools
//! from memory, the queue with two instance-wide reads, the event streams from the hub. The
//! exporter's HTTP listener is not used: the door's route renders [`MetricsService::render`].

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use ::metrics::{
    Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram,
    with_local_recorder,
};
use cms_core::JobStatus;
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

use crate::secret::same_secret;
use crate::{Error, Inner, Result};

/// `metrics.*`: whether `GET /metrics` exists, and the Bearer token it asks for.
#[derive(Debug, Clone)]
pub struct MetricsSettings {
    /// Off: nothing is recorded and the route answers 404.
    pub enabled: bool,
    /// When set, a scrape must present it as `Authorization: Bearer <token>` (401 otherwise).
    pub token: Option<String>,
}

impl Default for MetricsSettings {
    fn default() -> Self {
        MetricsSettings {
            enabled: true,
            token: None,
        }
    }
}

/// The `route` label of a request no route matched (the 404 fallback): one label for all of
/// them, so a scan of random paths cannot grow the series without bound.
pub const UNMATCHED_ROUTE: &str = "unmatched";

const HTTP_REQUESTS: &str = "cms_http_requests_total";
const HTTP_DURATION: &str = "cms_http_request_duration_seconds";
const POOL_IN_USE: &str = "cms_db_pool_connections_in_use";
const POOL_IDLE: &str = "cms_db_pool_connections_idle";
const POOL_MAX: &str = "cms_db_pool_connections_max";
const DATABASE_UP: &str = "cms_metrics_database_up";
const JOBS: &str = "cms_jobs";
const OLDEST_PENDING: &str = "cms_jobs_oldest_pending_age_seconds";
const OUTBOX_BACKLOG: &str = "cms_outbox_backlog";
const EVENT_STREAMS: &str = "cms_event_stream_clients";
const TRANSFORMS: &str = "cms_image_transforms_total";
const TRANSFORM_DURATION: &str = "cms_image_transform_duration_seconds";
const BUILD_INFO: &str = "cms_build_info";

/// Request durations, in seconds: Prometheus's default buckets, from 5 ms to 10 s.
const HTTP_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Transform durations, in seconds: a decode, resize and encode takes from milliseconds (a small
/// PNG) to many seconds (a large AVIF).
const TRANSFORM_BUCKETS: &[f64] = &[0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// How often recorded histogram samples are folded into their buckets between scrapes: the
/// recorder keeps each sample until then, so without it an instance nobody scrapes would grow.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The methods a `method` label names; any other is `other` (a client may send any token).
const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// A service's recorder and what it remembers between scrapes.
pub(crate) struct Recorder {
    prometheus: PrometheusRecorder,
    handle: PrometheusHandle,
    /// Every job type a scrape has seen: a type whose jobs are all gone reads 0 rather than
    /// keeping its last counts.
    job_types: Mutex<BTreeSet<String>>,
}

impl Recorder {
    /// The recorder of a service with metrics on; `None` when `metrics.enabled` is off.
    pub(crate) fn new(settings: &MetricsSettings) -> Option<Recorder> {
        if !settings.enabled {
            return None;
        }
        // Histograms rather than the exporter's default summaries: buckets add up across
        // instances, quantiles do not.
        let prometheus = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), HTTP_BUCKETS)
            .and_then(|b| {
                b.set_buckets_for_metric(
                    Matcher::Full(TRANSFORM_DURATION.into()),
                    TRANSFORM_BUCKETS,
                )
            })
            .expect("the bucket lists are not empty")
            .build_recorder();
        let handle = prometheus.handle();
        with_local_recorder(&prometheus, describe);
        Some(Recorder {
            prometheus,
            handle,
            job_types: Mutex::default(),
        })
    }
}

impl Recorder {
    /// See [`MetricsService::record_request`].
    fn record_request(&self, method: &str, route: Option<&str>, status: u16, took: Duration) {
        let method = METHODS
            .into_iter()
            .find(|known| *known == method)
            .unwrap_or("other");
        let route = route.unwrap_or(UNMATCHED_ROUTE).to_string();
        with_local_recorder(&self.prometheus, || {
            counter!(HTTP_REQUESTS, "method" => method, "route" => route.clone(), "status" => status.to_string())
                .increment(1);
            histogram!(HTTP_DURATION, "method" => method, "route" => route)
                .record(took.as_secs_f64());
        });
    }
}

/// The help text of every metric, and the build's one series.
fn describe() {
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by method, route template and status"
    );
    describe_histogram!(
        HTTP_DURATION,
        Unit::Seconds,
        "Time to answer an HTTP request (to the response head), by method and route template"
    );
    describe_gauge!(
        POOL_IN_USE,
        "Database connections lent to a unit of work, by pool"
    );
    describe_gauge!(
        POOL_IDLE,
        "Open database connections waiting for a unit of work, by pool"
    );
    describe_gauge!(POOL_MAX, "The most connections a pool opens, by pool");
    describe_gauge!(
        DATABASE_UP,
        "1 when this scrape's reads of the queue answered; 0 when they failed (the queue gauges keep their last values)"
    );
    describe_gauge!(JOBS, "Jobs of the whole instance, by status and type");
    describe_gauge!(
        OLDEST_PENDING,
        Unit::Seconds,
        "How long the oldest due pending job has waited; 0 when none waits"
    );
    describe_gauge!(
        OUTBOX_BACKLOG,
        "Events the relay has not turned into jobs yet"
    );
    describe_gauge!(
        EVENT_STREAMS,
        "Event streams (GET /api/events/stream) open on this instance"
    );
    describe_counter!(
        TRANSFORMS,
        "Image transforms asked of /media, by output format and result (rendered, stored, failed, busy)"
    );
    describe_histogram!(
        TRANSFORM_DURATION,
        Unit::Seconds,
        "Time to render a derivative (decode, resize, encode), by output format"
    );
    describe_gauge!(
        BUILD_INFO,
        "Always 1; the version of this build is its label"
    );
    gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
}

/// Folds histogram samples into their buckets every [`UPKEEP_EVERY`] while the service lives.
pub(crate) fn keep_up(inner: &Arc<Inner>) {
    if inner.metrics.is_none() {
        return;
    }
    let service: Weak<Inner> = Arc::downgrade(inner);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(UPKEEP_EVERY).await;
            let Some(inner) = service.upgrade() else {
                return;
            };
            if let Some(recorder) = &inner.metrics {
                recorder.handle.run_upkeep();
            }
        }
    });
}

/// What an image transform came to, for [`record_transform`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum TransformResult {
    /// Rendered now (and stored for the next request).
    Rendered,
    /// Read back from the storage, where an earlier request left it.
    Stored,
    /// Not rendered: the picture could not be decoded or encoded, or a `rect` lies outside it.
    Failed,
    /// Refused with 503: every slot was taken and the queue full.
    Busy,
}

impl TransformResult {
    fn label(self) -> &'static str {
        match self {
            TransformResult::Rendered => "rendered",
            TransformResult::Stored => "stored",
            TransformResult::Failed => "failed",
            TransformResult::Busy => "busy",
        }
    }
}

/// Counts a transform of `format` (`jpg`, `png`, `webp`, `avif`), with the time its rendering
/// took when it was rendered.
pub(crate) fn record_transform(
    inner: &Inner,
    format: &'static str,
    result: TransformResult,
    rendering: Option<Duration>,
) {
    let Some(recorder) = &inner.metrics else {
        return;
    };
    with_local_recorder(&recorder.prometheus, || {
        counter!(TRANSFORMS, "format" => format, "result" => result.label()).increment(1);
        if let Some(took) = rendering {
            histogram!(TRANSFORM_DURATION, "format" => format).record(took.as_secs_f64());
        }
    });
}

/// The metrics of the instance: rendering them for a scrape, and recording what the doors see.
pub struct MetricsService<'a> {
    inner: &'a Inner,
}

/// The queue as a scrape reads it.
struct Queue {
    by_type: Vec<(String, String, i64)>,
    oldest_pending_seconds: i64,
    outbox_backlog: i64,
}

impl<'a> MetricsService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        MetricsService { inner }
    }

    /// Whether metrics are recorded (`metrics.enabled`).
    pub fn enabled(&self) -> bool {
        self.inner.metrics.is_some()
    }

    /// The Prometheus text of a scrape presenting `token` (the Bearer token of its request):
    /// 404 while `metrics.enabled` is off, 401 when `metrics.token` is set and `token` is not
    /// it (compared in constant time). The gauges are read now; reading the queue is bounded by
    /// the health check's timeout, and when it fails the rest is answered all the same.
    pub async fn render(&self, token: Option<&str>) -> Result<String> {
        let Some(recorder) = &self.inner.metrics else {
            return Err(Error::NotFound("no such endpoint".into()));
        };
        if let Some(expected) = self.inner.settings.metrics.token.as_deref()
            && !token.is_some_and(|given| same_secret(given, expected))
        {
            return Err(Error::Unauthorized);
        }
        let queue = tokio::time::timeout(self.inner.settings.health_timeout, self.queue()).await;
        let queue = match queue {
            Ok(Ok(queue)) => Some(queue),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "metrics: the queue could not be read");
                None
            }
            Err(_) => {
                tracing::warn!("metrics: reading the queue timed out");
                None
            }
        };
        with_local_recorder(&recorder.prometheus, || self.set_gauges(recorder, queue));
        Ok(recorder.handle.render())
    }

    /// Counts one answered HTTP request and the time it took. `route` is the template the
    /// request matched (`/api/documents/{id}`), never its path; `None` for a request no route
    /// matched, counted under [`UNMATCHED_ROUTE`].
    pub fn record_request(&self, method: &str, route: Option<&str>, status: u16, took: Duration) {
        if let Some(recorder) = &self.inner.metrics {
            recorder.record_request(method, route, status, took);
        }
    }

    /// Jobs by status and type, the oldest due pending job and the outbox backlog, across the
    /// instance (the reads GET /api/jobs/health makes, not limited to one organization).
    async fn queue(&self) -> Result<Queue> {
        let now = self.inner.clock.now().millis();
        let mut tx = self.inner.store.read_instance_wide().await?;
        let (by_type, oldest) = tx.job_counts_by_type(now).await?;
        let outbox_backlog = tx.outbox_backlog().await?;
        Ok(Queue {
            by_type,
            oldest_pending_seconds: oldest.map_or(0, |t| ((now - t) / 1000).max(0)),
            outbox_backlog,
        })
    }

    /// Sets the gauges read at scrape time (inside the service's recorder).
    fn set_gauges(&self, recorder: &Recorder, queue: Option<Queue>) {
        for pool in self.inner.store.pool_use() {
            gauge!(POOL_IN_USE, "pool" => pool.pool).set(f64::from(pool.in_use));
            gauge!(POOL_IDLE, "pool" => pool.pool).set(f64::from(pool.idle));
            gauge!(POOL_MAX, "pool" => pool.pool).set(f64::from(pool.max));
        }
        gauge!(EVENT_STREAMS).set(self.inner.event_hub.open_streams() as f64);
        let Some(queue) = queue else {
            gauge!(DATABASE_UP).set(0.0);
            return;
        };
        gauge!(DATABASE_UP).set(1.0);
        gauge!(OLDEST_PENDING).set(queue.oldest_pending_seconds as f64);
        gauge!(OUTBOX_BACKLOG).set(queue.outbox_backlog as f64);
        // Every status of every type seen, zeros included: a series does not vanish (or keep
        // a stale count) when its last job completes or is deleted.
        let mut types = recorder.job_types.lock().unwrap_or_else(|e| e.into_inner());
        types.extend(
            queue
                .by_type
                .iter()
                .map(|(_, job_type, _)| job_type.clone()),
        );
        for job_type in types.iter() {
            for status in JobStatus::ALL.map(JobStatus::as_str) {
                let count = queue
                    .by_type
                    .iter()
                    .find(|(s, t, _)| s == status && t == job_type)
                    .map_or(0, |(_, _, n)| *n);
                gauge!(JOBS, "status" => status, "type" => job_type.clone()).set(count as f64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_counted_under_its_template_and_a_bounded_method() {
        let recorder = Recorder::new(&MetricsSettings::default()).expect("on by default");
        let took = Duration::from_millis(30);
        recorder.record_request("GET", Some("/api/documents/{id}"), 200, took);
        recorder.record_request("GET", Some("/api/documents/{id}"), 200, took);
        recorder.record_request("BREW", None, 404, took);
        let text = recorder.handle.render();
        for expected in [
            r#"cms_http_requests_total{method="GET",route="/api/documents/{id}",status="200"} 2"#,
            r#"cms_http_requests_total{method="other",route="unmatched",status="404"} 1"#,
            r#"cms_http_request_duration_seconds_bucket{method="GET",route="/api/documents/{id}",le="0.05"} 2"#,
            r#"cms_http_request_duration_seconds_bucket{method="GET",route="/api/documents/{id}",le="0.025"} 0"#,
            r#"cms_http_request_duration_seconds_count{method="other",route="unmatched"} 1"#,
            r#"cms_build_info{version=""#,
            "# TYPE cms_http_request_duration_seconds histogram",
        ] {
            assert!(text.contains(expected), "{expected} in {text}");
        }
    }

    #[test]
    fn metrics_off_records_nothing() {
        let off = MetricsSettings {
            enabled: false,
            token: None,
        };
        assert!(Recorder::new(&off).is_none());
    }
}
