//! Health: is the database answering, is the asset storage usable. Every check is bounded by
//! the configured timeout, and a check that hangs or panics reports unhealthy rather than
//! hanging or failing the health endpoint itself.

use std::future::Future;
use std::time::Instant;

use serde::Serialize;

use crate::Inner;

/// `healthy`, `degraded` (storage failing, database answering) or `unhealthy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = HealthStatus)]
pub enum Status {
    Healthy,
    Degraded,
    Unhealthy,
}

/// The outcome of one adapter check.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    pub status: Status,
    pub latency_ms: u64,
    /// Why the check failed, in operator terms (never a secret or a connection string).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl CheckReport {
    pub fn healthy(&self) -> bool {
        self.status == Status::Healthy
    }
}

/// The report of /api/cms-health.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct HealthReport {
    pub status: Status,
    pub database: CheckReport,
    /// Present only when the storage check is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage: Option<CheckReport>,
    /// The field indexes built beside the service (CONTRACT.md section 14): informative, they
    /// never change the status (queries answer the same without them, only slower).
    pub indexes: crate::IndexingReport,
}

pub struct HealthService<'a> {
    inner: &'a Inner,
}

impl<'a> HealthService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        HealthService { inner }
    }

    /// Database and storage, both always probed (for /healthz).
    pub async fn liveness(&self) -> (CheckReport, CheckReport) {
        tokio::join!(self.database(), self.storage())
    }

    /// The report of /api/cms-health: the database decides healthy or unhealthy; a failing
    /// storage, probed only when enabled, makes it degraded.
    pub async fn report(&self) -> HealthReport {
        let (database, storage) = if self.inner.settings.storage_health_check {
            let (d, s) = self.liveness().await;
            (d, Some(s))
        } else {
            (self.database().await, None)
        };
        let status = match (&database, &storage) {
            (d, _) if !d.healthy() => Status::Unhealthy,
            (_, Some(s)) if !s.healthy() => Status::Degraded,
            _ => Status::Healthy,
        };
        HealthReport {
            status,
            database,
            storage,
            indexes: self.inner.field_indexing.report(),
        }
    }

    async fn database(&self) -> CheckReport {
        let store = self.inner.store.clone();
        self.bounded(async move {
            store.ping().await.map_err(|e| {
                tracing::warn!(error = %e, "database ping failed");
                "the database did not answer".to_string()
            })
        })
        .await
    }

    async fn storage(&self) -> CheckReport {
        let storage = self.inner.storage.clone();
        self.bounded(async move { storage.health().await }).await
    }

    async fn bounded<F>(&self, check: F) -> CheckReport
    where
        F: Future<Output = Result<(), String>> + Send + 'static,
    {
        let started = Instant::now();
        // A task of its own, so a panicking adapter is caught as a failed check.
        let task = tokio::spawn(check);
        let abort = task.abort_handle();
        let outcome = match tokio::time::timeout(self.inner.settings.health_timeout, task).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(e),
            Ok(Err(_panicked)) => Err("the check failed unexpectedly".to_string()),
            Err(_elapsed) => {
                abort.abort();
                Err(format!(
                    "no answer within {} ms",
                    self.inner.settings.health_timeout.as_millis()
                ))
            }
        };
        let latency_ms = started.elapsed().as_millis() as u64;
        match outcome {
            Ok(()) => CheckReport {
                status: Status::Healthy,
                latency_ms,
                error: None,
            },
            Err(e) => {
                tracing::warn!(error = %e, "health check failed");
                CheckReport {
                    status: Status::Unhealthy,
                    latency_ms,
                    error: Some(e),
                }
            }
        }
    }
}
