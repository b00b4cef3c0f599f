//! `cms`: the content service as a library (the "Local API" for Rust host applications) and
//! the facade the `cms` binary is built on.
//!
//! ```no_run
//! # async fn run() -> Result<(), cms::StartError> {
//! let config = cms::Config::load(None, std::env::vars())?.config;
//! let app = cms::Builder::new(config).build().await?;
//! // app.cms is the service layer; app.router the HTTP API.
//! # Ok(()) }
//! ```
//!
//! Reacting to events and running jobs of your own: register consumers and handlers, then
//! drive the queue (here in process; `cms worker` and the worker endpoint drive the same tick).
//!
//! ```no_run
//! use std::sync::Arc;
//! use cms::service::jobs::{Consumer, EventHandler, EventView, HandlerContext, HandlerError};
//!
//! struct Reindex;
//!
//! #[async_trait::async_trait]
//! impl EventHandler for Reindex {
//!     async fn handle(&self, ctx: &HandlerContext, event: &EventView) -> Result<(), HandlerError> {
//!         // At least once: the same event may come again; `event.id` dedupes.
//!         tracing::info!(parent: &ctx.log, document = %event.payload["documentId"], "reindex");
//!         Ok(())
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = cms::service::Registry::default().consumer(Consumer {
//!     id: "search".into(),
//!     events: vec!["document.published".into()],
//!     max_attempts: Some(8),
//!     handler: Arc::new(Reindex),
//!     settings: serde_json::json!({ "index": "posts" }),
//!     plugin: None,
//! })?;
//! let config = cms::Config::load(None, std::env::vars())?.config;
//! let app = cms::Builder::new(config).registry(registry).build().await?;
//! let report = app.cms.worker().tick().await?;
//! println!("{} jobs completed", report.completed);
//! # Ok(()) }
//! ```

pub mod config;
pub mod plugin;
pub mod plugins;
mod schemas;
pub mod transfer;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use cms_agent as agent;
pub use cms_core as core;
pub use cms_server as server;
pub use cms_server::ServerSettings;
pub use cms_service as service;
pub use cms_service::{AuthSecret, BlobStore, Clock, Cms, Mailer};
pub use config::{Config, ConfigError};
pub use plugin::{Plugin, PluginError, PluginParts};
pub use transfer::{ExportOptions, TransferSummary, export, import};

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("database: {0}")]
    Store(#[from] cms_store::StoreError),
    #[error("service: {0}")]
    Service(#[from] cms_service::Error),
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error("{0}")]
    Io(String),
}

/// A started service: the service layer and the HTTP API in front of it.
pub struct App {
    pub cms: Cms,
    /// The assistant the router serves; `agent::AgentService::new(&app.cms, &app.agent)` runs
    /// its turns from Rust.
    pub agent: Arc<cms_agent::Agent>,
    pub router: cms_server::Router,
    /// The router's open MCP sessions: `mcp_sessions.end_all()` as the server shuts down.
    pub mcp_sessions: cms_mcp::Sessions,
    openapi: utoipa::openapi::OpenApi,
}

impl App {
    /// The OpenAPI document this instance serves at `/api/openapi.json` (`cms openapi`).
    pub fn openapi_document(&self) -> Vec<u8> {
        cms_server::openapi_pretty(&self.openapi)
    }
}

/// Assembles the service from a configuration. A host application may replace the asset
/// storage, the clock or the mailer.
pub struct Builder {
    config: Config,
    storage: Option<Arc<dyn BlobStore>>,
    clock: Option<Arc<dyn Clock>>,
    mailer: Option<Arc<dyn Mailer>>,
    schemas: Option<Vec<cms_core::schema::Schema>>,
    registry: cms_service::Registry,
    event_types: Vec<cms_service::EventDeclaration>,
    plugin_capabilities: Vec<cms_core::Capability>,
    policies: cms_service::AccessPolicies,
    plugins: Vec<Arc<dyn Plugin>>,
    plugin_settings: Vec<cms_core::plugin_settings::SettingsDeclaration>,
    tune: Option<Tune>,
}

/// What [`Builder::tune`] does to the service settings.
type Tune = Box<dyn FnOnce(&mut cms_service::Settings) + Send>;

impl Builder {
    pub fn new(config: Config) -> Self {
        Builder {
            config,
            storage: None,
            clock: None,
            mailer: None,
            schemas: None,
            registry: cms_service::Registry::default(),
            event_types: Vec::new(),
            plugin_capabilities: Vec::new(),
            policies: cms_service::AccessPolicies::default(),
            plugins: Vec::new(),
            plugin_settings: Vec::new(),
            tune: None,
        }
    }

    /// Adjusts the service settings the configuration gave, just before the service starts:
    /// for what has no configuration key (the event stream's keep-alive interval and poll),
    /// in a host application or a test.
    pub fn tune(mut self, tune: impl FnOnce(&mut cms_service::Settings) + Send + 'static) -> Self {
        self.tune = Some(Box::new(tune));
        self
    }

    /// Registers a plugin (see [`plugin`]). Plugins register in this order, after the
    /// first-party `forms` plugin and before the first-party `webhooks` plugin.
    pub fn plugin(mut self, plugin: impl Plugin) -> Self {
        self.plugins.push(Arc::new(plugin));
        self
    }

    /// Declares a plugin's settings: people with `org.settings` set them per organization
    /// (`/api/plugin-settings`), and the plugin's consumers and job handlers receive them
    /// (`Consumer::plugin`, `Registry::plugin_job_handler`). Secret fields need
    /// `plugins.secretEncryptionKey` (CMS_SECRET_ENCRYPTION_KEY) to be saved. An invalid
    /// declaration, or a plugin declared twice, stops the start.
    pub fn plugin_settings(
        mut self,
        declaration: cms_core::plugin_settings::SettingsDeclaration,
    ) -> Self {
        self.plugin_settings.push(declaration);
        self
    }

    /// Declares capabilities beyond the core ones (namespaced, `forms.export`): they can be
    /// granted to roles and keys, and the `owner` role holds them from the next start on.
    pub fn capabilities(mut self, plugin: impl IntoIterator<Item = cms_core::Capability>) -> Self {
        self.plugin_capabilities.extend(plugin);
        self
    }

    /// Rules a schema operation by a Rust function of the caller and the document (on create,
    /// the incoming data), instead of a role list: `true` allows. The capability check still
    /// runs first; instance administrators bypass it. A policy for an undeclared document
    /// type, or for an operation the schema already rules with a role list, stops the start.
    ///
    /// ```no_run
    /// use cms::core::schema::Operation;
    /// # fn f(config: cms::Config) -> cms::Builder {
    /// cms::Builder::new(config).access_policy("post", Operation::Publish, |auth, doc| {
    ///     // Authors publish their own posts; editors publish any.
    ///     doc.created_by == Some(auth.user.id.as_str()) || auth.role.name() == Some("editor")
    /// })
    /// # }
    /// ```
    pub fn access_policy(
        mut self,
        doc_type: &str,
        operation: cms_core::schema::Operation,
        policy: impl Fn(&cms_service::PolicyAuth<'_>, &cms_service::PolicyDocument<'_>) -> bool
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.policies = self.policies.policy(doc_type, operation, policy);
        self
    }

    /// Event consumers and job handlers (see [`cms_service::jobs::Registry`]).
    pub fn registry(mut self, registry: cms_service::Registry) -> Self {
        self.registry = registry;
        self
    }

    /// Declares a custom event type with its payload schema (see [`cms_service::events`]):
    /// emitted with `cms.events().emit(..)` or `cms.documents().create_emitting(..)`, and
    /// subscribable by consumers. A bad name, a built-in name, a second declaration, an
    /// invalid payload schema, or a consumer subscribed to a type nobody declared stops the
    /// start with an error naming the event.
    ///
    /// ```no_run
    /// # fn f(config: cms::Config) -> Result<cms::Builder, Box<dyn std::error::Error>> {
    /// let submitted = cms::service::EventDeclaration::from_json(
    ///     "forms.submission.created",
    ///     &serde_json::json!([
    ///         { "name": "submissionId", "type": "string", "required": true },
    ///         { "name": "formId", "type": "string", "required": true }
    ///     ]),
    /// )?;
    /// Ok(cms::Builder::new(config).event_type(submitted))
    /// # }
    /// ```
    pub fn event_type(mut self, declaration: cms_service::EventDeclaration) -> Self {
        self.event_types.push(declaration);
        self
    }

    /// Registers these schemas instead of the configured files (or the demo schemas).
    pub fn schemas(mut self, schemas: Vec<cms_core::schema::Schema>) -> Self {
        self.schemas = Some(schemas);
        self
    }

    pub fn storage(mut self, storage: Arc<dyn BlobStore>) -> Self {
        self.storage = Some(storage);
        self
    }

    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Delivers e-mail through `mailer` instead of the configured transport (`email.*`).
    pub fn mailer(mut self, mailer: Arc<dyn Mailer>) -> Self {
        self.mailer = Some(mailer);
        self
    }

    /// Connects, migrates, reconciles and builds the router.
    pub async fn build(self) -> Result<App, StartError> {
        let config = self.config;
        // Schemas first: a broken schema file stops the start before anything is touched.
        let mut schemas = match self.schemas {
            Some(schemas) => schemas,
            None => schemas::load(&config.schemas.paths)?,
        };
        // Plugins next: their schemas join the host's, and a bad declaration stops the start
        // just as early.
        let host_types: Vec<String> = schemas.iter().map(|s| s.name.clone()).collect();
        let mut event_types = self.event_types;
        let (before, after) = plugins::first_party(&config);
        let every_plugin: Vec<Arc<dyn Plugin>> = before
            .into_iter()
            .chain(self.plugins)
            .chain(after)
            .collect();
        let plugins = plugin::collect(
            &every_plugin,
            &host_types,
            &self.plugin_capabilities,
            &event_types,
        )?;
        event_types.extend(plugins.event_types.iter().cloned());
        schemas.extend(plugins.schemas.iter().cloned());
        let mut registry = self.registry;
        for consumer in plugins.consumers.iter().cloned() {
            registry = registry
                .consumer(consumer)
                .map_err(|e| ConfigError(format!("plugins: {e}")))?;
        }
        for (plugin, job_type, handler) in &plugins.job_handlers {
            registry = registry
                .plugin_job_handler(plugin, job_type, handler.clone())
                .map_err(|e| ConfigError(format!("plugins: {e}")))?;
        }
        let schemas = cms_core::schema::Schemas::new(schemas)
            .map_err(|e| ConfigError(e.to_string()))?
            .with_locales(config.locales()?);
        self.policies
            .validate(&schemas)
            .map_err(|e| ConfigError(e.to_string()))?;
        let mailer = match self.mailer {
            Some(mailer) => mailer,
            None => mailer_from(&config)?,
        };
        let store = cms_store::connect_with_migration_url(
            &config.database_url(),
            config.database_migration_url().as_deref(),
        )
        .await?;
        store.migrate().await?;
        let storage = match self.storage {
            Some(s) => s,
            None => storage_from(&config)?,
        };
        let agent = Arc::new(cms_agent::Agent::new(
            &cms_agent::AgentSettings {
                base_url: config.agent.base_url.clone(),
                model: config.agent.model.clone(),
                api_key: config.agent.api_key.clone(),
                max_rounds: config.agent.max_rounds,
                timeout: Duration::from_millis(config.agent.timeout_ms),
                turns_per_minute: config.agent.turns_per_minute,
            },
            plugins.agent_tools.clone(),
        )?);
        let mut settings = service_settings(&config)?;
        if let Some(tune) = self.tune {
            tune(&mut settings);
        }
        let cms = Cms::start(cms_service::Parts {
            store,
            storage,
            secret: auth_secret(&config)?,
            settings,
            clock: self
                .clock
                .unwrap_or_else(|| Arc::new(cms_service::SystemClock)),
            capabilities: capability_registry(self.plugin_capabilities, &plugins),
            schemas: Arc::new(schemas),
            registry,
            event_types,
            policies: self.policies,
            mailer,
            plugin_settings: self
                .plugin_settings
                .into_iter()
                .chain(plugins.settings.iter().cloned())
                .collect(),
        })
        .await?;
        let settings = ServerSettings {
            max_json_bytes: config.server.max_json_bytes,
            public_url: config.server.public_url.clone(),
            trusted_proxies: config.trusted_proxies()?,
            graphql_path: config.graphql.path.clone(),
            docs_ui: config.openapi.docs_ui,
            cors: cms_server::CorsSettings {
                origins: match config.cors_origins()? {
                    origins if origins.iter().any(|o| o == "*") => cms_server::CorsOrigins::Any,
                    origins => cms_server::CorsOrigins::Listed(origins),
                },
                max_age_seconds: config.cors.max_age_seconds,
            },
            caching: cms_server::CacheSettings {
                public_max_age_seconds: config.delivery.public_max_age_seconds,
                stale_while_revalidate_seconds: config.delivery.stale_while_revalidate_seconds,
            },
            mcp: config.mcp.enabled.then(|| cms_mcp::SessionLimits {
                idle: std::time::Duration::from_secs(config.mcp.session_idle_seconds.max(1)),
                max: config.mcp.max_sessions.max(1) as usize,
            }),
        };
        // The router refuses (by panicking) a configured path that another route already
        // serves, such as `graphql.path = "/api/documents"`: a start-up error, not a crash.
        let extensions = plugins.extensions;
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            cms_server::build(cms.clone(), agent.clone(), settings.clone(), extensions)
        }))
        .map_err(|_| {
            ConfigError(format!(
                "graphql.path `{}` is already an endpoint of the service, or a plugin route overlaps one: choose another path",
                config.graphql.path
            ))
        })?
        .map_err(|e| {
            StartError::Plugin(PluginError {
                plugin: e.plugin,
                message: e.message,
            })
        })?;
        Ok(App {
            cms,
            agent,
            router: built.router,
            mcp_sessions: built.mcp_sessions,
            openapi: built.openapi,
        })
    }
}

/// The core capabilities, those the host declared by name, and those plugins declared with
/// their catalog entries.
fn capability_registry(
    host: Vec<cms_core::Capability>,
    plugins: &plugin::Collected,
) -> cms_service::CapabilityRegistry {
    let host = host.into_iter().map(|name| cms_core::CapabilityInfo {
        title: name.to_string(),
        description: String::new(),
        group: "plugins".into(),
        plugin: None,
        name,
    });
    cms_service::CapabilityRegistry::with_catalog(host.chain(plugins.capabilities.iter().cloned()))
}

/// The configured asset storage: local disk (default) or an S3 bucket.
fn storage_from(config: &Config) -> Result<Arc<dyn BlobStore>, StartError> {
    if config.storage.kind == "s3" {
        let s3 = cms_service::ObjectStorage::s3(&config.s3_settings())
            .map_err(|e| ConfigError(format!("storage: {e}")))?;
        return Ok(Arc::new(s3));
    }
    let path = config.storage_path();
    let local = cms_service::ObjectStorage::local(&path)
        .map_err(|e| StartError::Io(format!("asset storage {}: {e}", path.display())))?;
    Ok(Arc::new(local))
}

/// The configured e-mail transport: the log (default) or SMTP.
fn mailer_from(config: &Config) -> Result<Arc<dyn Mailer>, StartError> {
    use cms_service::mail::{SmtpMailer, SmtpSecurity, SmtpSettings};
    if config.email.transport != "smtp" {
        return Ok(Arc::new(cms_service::LogMailer));
    }
    let smtp = &config.email.smtp;
    let settings = SmtpSettings {
        host: smtp.host.clone().unwrap_or_default(),
        port: smtp.port,
        security: SmtpSecurity::parse(&smtp.security).unwrap_or(SmtpSecurity::StartTls),
        username: smtp.username.clone().filter(|u| !u.is_empty()),
        password: smtp.password.clone().filter(|p| !p.is_empty()),
        from: config.email.from.clone(),
        timeout: Duration::from_millis(smtp.timeout_ms),
    };
    let mailer = SmtpMailer::new(&settings).map_err(|e| ConfigError(format!("email: {e}")))?;
    Ok(Arc::new(mailer))
}

/// The service layer's settings, from the configuration.
fn service_settings(config: &Config) -> Result<cms_service::Settings, StartError> {
    Ok(cms_service::Settings {
        sign_up: config.sign_up_policy()?,
        rate_limit: config.rate_limit()?,
        public_url: config.public_base_url(),
        session_lifetime_days: config.auth.session_lifetime_days,
        preview_minutes: i64::from(config.delivery.preview_minutes),
        health_timeout: Duration::from_millis(config.health.timeout_ms),
        storage_health_check: config.health.storage_health_check,
        max_versions: config.versioning.max_versions,
        jobs: job_settings(config)?,
        assets: cms_service::AssetSettings {
            max_upload_bytes: config.assets.max_upload_bytes,
            private: config.assets.private,
            signing_secret: config
                .assets
                .signing_secret
                .clone()
                .filter(|s| !s.is_empty()),
            transform_signing: config.assets.transform_signing,
            direct_upload: config.storage.direct_upload,
        },
        secret_encryption_key: config.plugins.encryption_key().map(str::to_string),
        public_reads_per_minute: config.delivery.public_reads_per_minute,
        events: cms_service::EventStreamSettings {
            max_streams: config.events.max_streams as usize,
            ..cms_service::EventStreamSettings::default()
        },
        oidc: config.oidc_providers()?,
        audit_retention_days: i64::from(config.audit.retention_days),
        metrics: cms_service::MetricsSettings {
            enabled: config.metrics.enabled,
            token: config.metrics.token().map(str::to_string),
        },
    })
}

fn job_settings(config: &Config) -> Result<cms_service::JobSettings, StartError> {
    let jobs = &config.jobs;
    let positive = |key: &str, value: i64| match value {
        1.. => Ok(value),
        _ => Err(ConfigError(format!("jobs.{key} must be 1 or more"))),
    };
    let lease = Duration::from_secs(positive("leaseSeconds", jobs.lease_seconds as i64)? as u64);
    Ok(cms_service::JobSettings {
        batch_size: positive("batchSize", jobs.batch_size)?,
        relay_batch_size: positive("relayBatchSize", jobs.relay_batch_size)?,
        lease,
        handler_timeout: handler_timeout(jobs.handler_timeout_seconds, lease)?,
        worker_secret: jobs.worker_secret.clone().filter(|s| !s.is_empty()),
    })
}

/// A handler's deadline: shorter than the lease, or a job still running could be reclaimed
/// and run twice. Unset, five sixths of the lease.
fn handler_timeout(seconds: Option<u64>, lease: Duration) -> Result<Duration, StartError> {
    match seconds {
        None => Ok(lease * 5 / 6),
        Some(s) if s >= 1 && Duration::from_secs(s) < lease => Ok(Duration::from_secs(s)),
        Some(_) => Err(ConfigError(format!(
            "jobs.handlerTimeoutSeconds must be 1 or more and less than jobs.leaseSeconds ({})",
            lease.as_secs()
        ))
        .into()),
    }
}

/// Runs the migrations of the configured database and nothing else.
pub async fn migrate(config: &Config) -> Result<(), StartError> {
    migrated_store(config).await?.close().await;
    Ok(())
}

/// The configured database, migrated, without the service started on it.
async fn migrated_store(config: &Config) -> Result<Arc<dyn cms_store::Store>, StartError> {
    let store = cms_store::connect_with_migration_url(
        &config.database_url(),
        config.database_migration_url().as_deref(),
    )
    .await?;
    store.migrate().await?;
    Ok(store)
}

/// `cms backup PATH`: a consistent copy of the configured SQLite database, taken while the
/// service runs (CONTRACT.md section 19); on PostgreSQL, the refusal naming pg_dump.
pub async fn backup(config: &Config, target: &std::path::Path) -> Result<(), StartError> {
    Ok(cms_store::backup(&config.database_url(), target).await?)
}

/// The configured auth secret, or the one generated on first start and kept in the data
/// directory (mode 0600), so sessions and keys survive restarts.
fn auth_secret(config: &Config) -> Result<AuthSecret, StartError> {
    if let Some(secret) = &config.auth.secret {
        return Ok(AuthSecret::new(secret));
    }
    let path = config.data_dir.join("auth-secret");
    if let Ok(existing) = std::fs::read_to_string(&path) {
        return Ok(AuthSecret::new(existing.trim()));
    }
    let secret = AuthSecret::generate();
    write_private(&path, &secret)
        .map_err(|e| StartError::Io(format!("cannot store {}: {e}", path.display())))?;
    tracing::warn!(
        path = %path.display(),
        "no auth.secret configured (CMS_AUTH_SECRET): generated one and stored it; set your own in production"
    );
    Ok(AuthSecret::new(secret))
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(contents.as_bytes())
}
