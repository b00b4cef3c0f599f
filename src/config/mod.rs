//! Configuration (CONTRACT.md section 1): defaults, then `cms.toml` (or `--config PATH`, or
//! `CMS_CONFIG`), then environment variables, then command-line flags.
//!
//! Every key can be set from the environment as `CMS_` plus the upper snake case of its dotted
//! name (`health.timeoutMs` is `CMS_HEALTH_TIMEOUT_MS`). The list of keys in `keys.rs` is the
//! single source of that mapping and of the unknown-key warnings.
//!
//! One module per section of the file (`server`, `database`, `storage`, `auth`, `email`, `jobs`,
//! `agent`, `plugins`, ...), each with its settings, their defaults and the methods that read
//! them; `keys` and `load` read the file and the environment.

mod agent;
mod auth;
mod database;
mod delivery;
mod documents;
mod email;
mod events;
mod jobs;
mod keys;
mod load;
mod locales;
mod operations;
mod plugins;
mod server;
mod storage;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

use serde::Deserialize;

pub use agent::AgentConfig;
pub use auth::{AuthConfig, OidcConfig, OidcProviderConfig, RateLimitConfig};
pub use database::DatabaseConfig;
pub use delivery::{CorsConfig, DeliveryConfig};
pub use documents::{SchemasConfig, VersioningConfig};
pub use email::{EmailConfig, SmtpConfig};
pub use events::EventsConfig;
pub use jobs::JobsConfig;
pub use locales::LocalesConfig;
pub use operations::{AuditConfig, HealthConfig, LogConfig, MetricsConfig};
pub use plugins::PluginsConfig;
pub use server::{GraphqlConfig, McpConfig, OpenapiConfig, ServerConfig};
pub use storage::{AssetsConfig, StorageConfig};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Config {
    /// Where the SQLite database, local assets and the generated auth secret live.
    pub data_dir: PathBuf,
    pub server: ServerConfig,
    pub graphql: GraphqlConfig,
    pub openapi: OpenapiConfig,
    pub mcp: McpConfig,
    pub database: DatabaseConfig,
    pub storage: StorageConfig,
    pub assets: AssetsConfig,
    pub auth: AuthConfig,
    pub health: HealthConfig,
    pub log: LogConfig,
    pub audit: AuditConfig,
    pub metrics: MetricsConfig,
    pub schemas: SchemasConfig,
    pub locales: LocalesConfig,
    pub versioning: VersioningConfig,
    pub jobs: JobsConfig,
    pub email: EmailConfig,
    pub plugins: PluginsConfig,
    pub agent: AgentConfig,
    pub cors: CorsConfig,
    pub delivery: DeliveryConfig,
    pub events: EventsConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: PathBuf::from("./cms-data"),
            server: ServerConfig::default(),
            graphql: GraphqlConfig::default(),
            openapi: OpenapiConfig::default(),
            mcp: McpConfig::default(),
            database: DatabaseConfig::default(),
            storage: StorageConfig::default(),
            assets: AssetsConfig::default(),
            auth: AuthConfig::default(),
            health: HealthConfig::default(),
            log: LogConfig::default(),
            audit: AuditConfig::default(),
            metrics: MetricsConfig::default(),
            schemas: SchemasConfig::default(),
            locales: LocalesConfig::default(),
            versioning: VersioningConfig::default(),
            jobs: JobsConfig::default(),
            email: EmailConfig::default(),
            plugins: PluginsConfig::default(),
            agent: AgentConfig::default(),
            cors: CorsConfig::default(),
            delivery: DeliveryConfig::default(),
            events: EventsConfig::default(),
        }
    }
}

/// A configuration that could not be loaded, said in terms of the key or file at fault.
#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(pub String);

/// A loaded configuration and the warnings to log once logging is up.
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<String>,
}

impl Config {
    /// Refuses settings whose feature this build does not have, rather than ignoring them.
    fn check(&self, warnings: &mut Vec<String>) -> Result<(), ConfigError> {
        self.sign_up_policy()?;
        self.locales()?;
        self.rate_limit()?;
        self.oidc_providers()?;
        self.trusted_proxies()?;
        self.check_delivery()?;
        self.check_events()?;
        if let Some(url) = &self.server.public_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(ConfigError(format!(
                "server.publicUrl `{url}` must start with http:// or https://"
            )));
        }
        let path = &self.graphql.path;
        if !path.starts_with('/')
            || path.len() < 2
            || !path
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
        {
            return Err(ConfigError(format!(
                "graphql.path `{path}` must start with / and hold only letters, digits, /, -, _ and ."
            )));
        }
        self.check_email()?;
        self.check_storage()?;
        if !(1..=365).contains(&self.auth.session_lifetime_days) {
            return Err(ConfigError(
                "auth.sessionLifetimeDays must be 1 to 365".into(),
            ));
        }
        if self.versioning.max_versions < 0 {
            return Err(ConfigError(
                "versioning.maxVersions must be 0 (keep all) or more".into(),
            ));
        }
        if self.health.timeout_ms == 0 {
            return Err(ConfigError("health.timeoutMs must be positive".into()));
        }
        if self.audit.retention_days == 0 {
            return Err(ConfigError("audit.retentionDays must be 1 or more".into()));
        }
        if self.plugins.webhooks_timeout_ms == 0 {
            return Err(ConfigError(
                "plugins.webhooksTimeoutMs must be positive".into(),
            ));
        }
        if self.agent.max_rounds == 0 || self.agent.timeout_ms == 0 {
            return Err(ConfigError(
                "agent.maxRounds and agent.timeoutMs must be positive".into(),
            ));
        }
        if let Some(url) = self.agent.base_url.as_deref().filter(|u| !u.is_empty())
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(ConfigError(
                "agent.baseUrl must be an http:// or https:// URL".into(),
            ));
        }
        if !matches!(self.log.format.as_str(), "text" | "json") {
            return Err(ConfigError("log.format is \"text\" or \"json\"".into()));
        }
        if self.assets.max_upload_bytes == 0 {
            return Err(ConfigError("assets.maxUploadBytes must be positive".into()));
        }
        if self.assets.transform_signing
            && self
                .assets
                .signing_secret
                .as_deref()
                .is_none_or(str::is_empty)
        {
            return Err(ConfigError(
                "assets.transformSigning = true needs assets.signingSecret: without it no transform link could be signed".into(),
            ));
        }
        if self
            .assets
            .signing_secret
            .as_ref()
            .is_some_and(|s| !s.is_empty() && s.len() < 32)
        {
            warnings.push(
                "assets.signingSecret is shorter than 32 characters: use a longer random value"
                    .into(),
            );
        }
        // Unlike the signing secret (a weak one only weakens links), a short encryption key
        // would protect every stored secret poorly for as long as it is in use: refused.
        if self
            .plugins
            .encryption_key()
            .is_some_and(|key| key.chars().count() < 32)
        {
            return Err(ConfigError(
                "plugins.secretEncryptionKey (CMS_SECRET_ENCRYPTION_KEY) is shorter than 32 characters: use a longer random value".into(),
            ));
        }
        if self.metrics.token().is_some_and(|t| t.len() < 32) {
            warnings.push(
                "metrics.token is shorter than 32 characters: use a longer random value".into(),
            );
        }
        if self.auth.secret.as_ref().is_some_and(|s| s.len() < 32) {
            warnings.push(
                "auth.secret is shorter than 32 characters: use a longer random value".into(),
            );
        }
        Ok(())
    }
}
