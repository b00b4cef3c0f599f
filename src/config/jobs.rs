//! `jobs.*`: the worker, its batches, leases and handler deadlines.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobsConfig {
    /// Jobs run per worker tick.
    pub batch_size: i64,
    /// Outbox rows relayed per worker tick.
    pub relay_batch_size: i64,
    /// How long a claimed job is leased before another worker may reclaim it.
    pub lease_seconds: u64,
    /// How long one handler may run before it is stopped and the attempt counts as failed;
    /// shorter than the lease, so no other worker reclaims a job still running. Unset: five
    /// sixths of the lease (50 s of the default 60).
    pub handler_timeout_seconds: Option<u64>,
    /// The Bearer secret of POST /api/internal/workers/run; unset, the endpoint is 404.
    pub worker_secret: Option<String>,
    /// Run the worker inside `cms serve` (one instance only).
    pub embedded_worker: bool,
    /// Pause between ticks of the embedded worker and of `cms worker` when idle.
    pub tick_ms: u64,
}

impl Default for JobsConfig {
    fn default() -> Self {
        JobsConfig {
            batch_size: 25,
            relay_batch_size: 100,
            lease_seconds: 60,
            handler_timeout_seconds: None,
            worker_secret: None,
            embedded_worker: false,
            tick_ms: 1000,
        }
    }
}
