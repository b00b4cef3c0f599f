//! `health.*`, `log.*`, `metrics.*` and `audit.*`: the health check, the log format, GET
//! /metrics and the audit log's retention.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HealthConfig {
    pub timeout_ms: u64,
    pub storage_health_check: bool,
}

impl Default for HealthConfig {
    fn default() -> Self {
        HealthConfig {
            timeout_ms: 5000,
            storage_health_check: false,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LogConfig {
    /// `text` (default) or `json`.
    pub format: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            format: "text".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AuditConfig {
    /// Days an audit entry is kept (CONTRACT.md section 19).
    pub retention_days: u32,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            retention_days: 365,
        }
    }
}

/// GET /metrics (CONTRACT.md section 19; docs/METRICS.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MetricsConfig {
    /// Off: nothing is recorded and /metrics answers 404.
    pub enabled: bool,
    /// The Bearer token a scrape must present (`CMS_METRICS_TOKEN`); unset or empty: open.
    pub token: Option<String>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: true,
            token: None,
        }
    }
}

impl MetricsConfig {
    /// The token, when one is set (an empty value sets none).
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref().filter(|t| !t.is_empty())
    }
}
