//! Configuration (CONTRACT.md section 1): defaults, then `cms.toml` (or `--config PATH`, or
//! `CMS_CONFIG`), then environment variables, then command-line flags.
//!
//! Every key can be set from the environment as `CMS_` plus the upper snake case of its dotted
//! name (`health.timeoutMs` is `CMS_HEALTH_TIMEOUT_MS`). The list of keys below is the single
//! source of that mapping and of the unknown-key warnings.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Table, Value};

/// How an environment value is read.
#[derive(Clone, Copy)]
enum Kind {
    Str,
    Int,
    Bool,
    /// Comma-separated, or a TOML array (`["a", "b"]`).
    List,
}

/// Every configuration key, with its kind.
const KEYS: &[(&str, Kind)] = &[
    ("dataDir", Kind::Str),
    ("server.host", Kind::Str),
    ("server.port", Kind::Int),
    ("server.publicUrl", Kind::Str),
    ("server.maxJsonBytes", Kind::Int),
    ("server.trustedProxies", Kind::List),
    ("graphql.path", Kind::Str),
    ("openapi.docsUi", Kind::Bool),
    ("database.url", Kind::Str),
    ("database.migrationUrl", Kind::Str),
    ("storage.kind", Kind::Str),
    ("storage.path", Kind::Str),
    ("storage.bucket", Kind::Str),
    ("storage.endpoint", Kind::Str),
    ("storage.region", Kind::Str),
    ("storage.accessKeyId", Kind::Str),
    ("storage.secretAccessKey", Kind::Str),
    ("storage.forcePathStyle", Kind::Bool),
    ("storage.directUpload", Kind::Bool),
    ("assets.maxUploadBytes", Kind::Int),
    ("assets.private", Kind::Bool),
    ("assets.signingSecret", Kind::Str),
    ("auth.secret", Kind::Str),
    ("auth.inviteOnly", Kind::Bool),
    ("auth.requireEmailVerification", Kind::Bool),
    ("auth.firstAdmin", Kind::Str),
    ("auth.firstAdminEmails", Kind::List),
    ("auth.sessionLifetimeDays", Kind::Int),
    ("auth.rateLimit.windowSeconds", Kind::Int),
    ("auth.rateLimit.perEmail", Kind::Int),
    ("auth.rateLimit.perAddress", Kind::Int),
    ("health.timeoutMs", Kind::Int),
    ("health.storageHealthCheck", Kind::Bool),
    ("log.format", Kind::Str),
    ("schemas.paths", Kind::List),
    ("versioning.maxVersions", Kind::Int),
    ("jobs.batchSize", Kind::Int),
    ("jobs.relayBatchSize", Kind::Int),
    ("jobs.leaseSeconds", Kind::Int),
    ("jobs.handlerTimeoutSeconds", Kind::Int),
    ("jobs.workerSecret", Kind::Str),
    ("jobs.embeddedWorker", Kind::Bool),
    ("jobs.tickMs", Kind::Int),
    ("email.transport", Kind::Str),
    ("email.from", Kind::Str),
    ("email.smtp.host", Kind::Str),
    ("email.smtp.port", Kind::Int),
    ("email.smtp.security", Kind::Str),
    ("email.smtp.username", Kind::Str),
    ("email.smtp.password", Kind::Str),
    ("email.smtp.timeoutMs", Kind::Int),
    ("plugins.forms", Kind::Bool),
    ("plugins.formsSubmissionsPerMinute", Kind::Int),
    ("plugins.webhooks", Kind::Bool),
    ("plugins.webhooksDenyPrivateTargets", Kind::Bool),
    ("plugins.webhooksTimeoutMs", Kind::Int),
    ("plugins.secretEncryptionKey", Kind::Str),
    ("agent.baseUrl", Kind::Str),
    ("agent.model", Kind::Str),
    ("agent.apiKey", Kind::Str),
    ("agent.maxRounds", Kind::Int),
    ("agent.timeoutMs", Kind::Int),
    ("agent.turnsPerMinute", Kind::Int),
];

/// Short environment names that SPEC.md and CONTRACT.md use beside the systematic ones.
const ALIASES: &[(&str, &str)] = &[
    ("CMS_HOST", "server.host"),
    ("CMS_PORT", "server.port"),
    ("CMS_WORKER_SECRET", "jobs.workerSecret"),
    ("CMS_SECRET_ENCRYPTION_KEY", "plugins.secretEncryptionKey"),
    ("CMS_EMBEDDED_WORKER", "jobs.embeddedWorker"),
    ("CMS_ASSET_SIGNING_SECRET", "assets.signingSecret"),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Config {
    /// Where the SQLite database, local assets and the generated auth secret live.
    pub data_dir: PathBuf,
    pub server: ServerConfig,
    pub graphql: GraphqlConfig,
    pub openapi: OpenapiConfig,
    pub database: DatabaseConfig,
    pub storage: StorageConfig,
    pub assets: AssetsConfig,
    pub auth: AuthConfig,
    pub health: HealthConfig,
    pub log: LogConfig,
    pub schemas: SchemasConfig,
    pub versioning: VersioningConfig,
    pub jobs: JobsConfig,
    pub email: EmailConfig,
    pub plugins: PluginsConfig,
    pub agent: AgentConfig,
}

/// The AI assistant's model backend (CONTRACT.md section 8).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentConfig {
    /// An OpenAI-compatible chat-completions endpoint (`https://host/v1`); unset, the
    /// assistant answers 404.
    pub base_url: Option<String>,
    /// The model id; unset with a base URL, the assistant answers 501.
    pub model: Option<String>,
    pub api_key: Option<String>,
    /// Model rounds in one turn before it ends with `max_rounds`.
    pub max_rounds: u32,
    /// The longest wait for the backend's next piece of an answer.
    pub timeout_ms: u64,
    /// Turns one user may start per minute (all instances together); 0: no limit.
    pub turns_per_minute: u32,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            base_url: None,
            model: None,
            api_key: None,
            max_rounds: 10,
            timeout_ms: 60_000,
            turns_per_minute: 20,
        }
    }
}

/// The first-party plugins and plugin settings (CONTRACT.md sections 9, 11 and 12).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PluginsConfig {
    /// The `forms` plugin.
    pub forms: bool,
    /// Form submissions one client address may send per minute, all instances together
    /// (CONTRACT.md section 13); 0: no limit.
    pub forms_submissions_per_minute: u32,
    /// The `webhooks` plugin.
    pub webhooks: bool,
    /// Webhooks refuse loopback and private targets (after resolving the name).
    pub webhooks_deny_private_targets: bool,
    /// The bound on one webhook delivery attempt, connection included, in milliseconds
    /// (10 000 by default); a target that has not answered by then fails the attempt.
    pub webhooks_timeout_ms: u64,
    /// The string the key of secret plugin settings is derived from
    /// (CMS_SECRET_ENCRYPTION_KEY): 32 or more characters. Unset, saving a secret is refused.
    pub secret_encryption_key: Option<String>,
}

impl Default for PluginsConfig {
    fn default() -> Self {
        PluginsConfig {
            forms: true,
            forms_submissions_per_minute: 30,
            webhooks: true,
            webhooks_deny_private_targets: false,
            webhooks_timeout_ms: 10_000,
            secret_encryption_key: None,
        }
    }
}

impl PluginsConfig {
    /// The encryption key, when one is set (an empty value counts as unset).
    pub fn encryption_key(&self) -> Option<&str> {
        self.secret_encryption_key
            .as_deref()
            .filter(|key| !key.is_empty())
    }
}

/// How e-mail (invitations, verification and reset links) leaves the service.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EmailConfig {
    /// `log` (default: messages and their links go to the log) or `smtp`.
    pub transport: String,
    /// The sender of every message.
    pub from: String,
    pub smtp: SmtpConfig,
}

impl Default for EmailConfig {
    fn default() -> Self {
        EmailConfig {
            transport: "log".into(),
            from: "CMS <cms@localhost>".into(),
            smtp: SmtpConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SmtpConfig {
    pub host: Option<String>,
    /// Unset: 587 for `starttls`, 465 for `tls`, 25 for `none`.
    pub port: Option<u16>,
    /// `starttls` (default), `tls` or `none`.
    pub security: String,
    pub username: Option<String>,
    pub password: Option<String>,
    /// Bound on each SMTP command.
    pub timeout_ms: u64,
}

impl Default for SmtpConfig {
    fn default() -> Self {
        SmtpConfig {
            host: None,
            port: None,
            security: "starttls".into(),
            username: None,
            password: None,
            timeout_ms: 10_000,
        }
    }
}

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

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SchemasConfig {
    /// JSON files, each one schema or an array of schemas; `*` matches within a file name
    /// (`schemas/*.json`). None configured: the demo schemas.
    pub paths: Vec<String>,
}

/// Uploads and delivery (CONTRACT.md section 6).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AssetsConfig {
    /// Larger uploads are refused with 413.
    pub max_upload_bytes: u64,
    /// /media needs a session or a signed link.
    pub private: bool,
    /// Signs /media links (CMS_ASSET_SIGNING_SECRET); unset, no signature verifies.
    pub signing_secret: Option<String>,
}

impl Default for AssetsConfig {
    fn default() -> Self {
        AssetsConfig {
            max_upload_bytes: 50 * 1024 * 1024,
            private: false,
            signing_secret: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VersioningConfig {
    /// Versions kept per document; 0 keeps all.
    pub max_versions: i64,
}

impl Default for VersioningConfig {
    fn default() -> Self {
        VersioningConfig { max_versions: 25 }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerConfig {
    pub host: String,
    pub port: u16,
    pub public_url: Option<String>,
    pub max_json_bytes: usize,
    /// Proxies (addresses or CIDR blocks) whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<String>,
}

/// The GraphQL endpoint.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GraphqlConfig {
    /// Where `POST` GraphQL requests are served; `/api/graphql` by default.
    pub path: String,
}

impl Default for GraphqlConfig {
    fn default() -> Self {
        GraphqlConfig {
            path: cms_server::DEFAULT_GRAPHQL_PATH.into(),
        }
    }
}

/// The self-description: `/api/openapi.json` is always served; `/api/docs` when `docsUi`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OpenapiConfig {
    /// Serve the rendered reference at `/api/docs` (default true).
    pub docs_ui: bool,
}

impl Default for OpenapiConfig {
    fn default() -> Self {
        OpenapiConfig { docs_ui: true }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DatabaseConfig {
    /// `sqlite://PATH` or `postgres://...`; `sqlite://{dataDir}/cms.db` when unset.
    pub url: Option<String>,
    /// PostgreSQL: the login that owns the tables, for migrations and index creation, when
    /// `url`'s login is a separate one that must not (docs/CONFIGURATION.md). Unset: `url`.
    pub migration_url: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StorageConfig {
    /// `local` (default) or `s3`.
    pub kind: String,
    /// Local asset directory; `{dataDir}/media` when unset.
    pub path: Option<PathBuf>,
    /// S3: the bucket (required with `kind = "s3"`).
    pub bucket: Option<String>,
    /// S3: an S3-compatible server (`http://127.0.0.1:9000`); unset for AWS.
    pub endpoint: Option<String>,
    /// S3: the region (`us-east-1` by default).
    pub region: String,
    /// S3: credentials; unset, the usual `AWS_*` environment variables or the instance role.
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    /// S3: bucket in the path rather than the host name (MinIO and most compatible servers).
    pub force_path_style: bool,
    /// Clients may upload straight to storage (upload-url/confirm); needs `kind = "s3"`.
    pub direct_upload: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AuthConfig {
    pub secret: Option<String>,
    pub invite_only: bool,
    pub require_email_verification: bool,
    pub first_admin: String,
    pub first_admin_emails: Vec<String>,
    pub session_lifetime_days: i64,
    pub rate_limit: RateLimitConfig,
}

/// `auth.rateLimit.*`: fixed windows per route, per client address and per e-mail.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RateLimitConfig {
    pub window_seconds: u64,
    /// Attempts per window for one e-mail address (0: no limit).
    pub per_email: u32,
    /// Attempts per window from one client address (0: no limit).
    pub per_address: u32,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        RateLimitConfig {
            window_seconds: 60,
            per_email: 10,
            per_address: 30,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HealthConfig {
    pub timeout_ms: u64,
    pub storage_health_check: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LogConfig {
    /// `text` (default) or `json`.
    pub format: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: PathBuf::from("./cms-data"),
            server: ServerConfig::default(),
            graphql: GraphqlConfig::default(),
            openapi: OpenapiConfig::default(),
            database: DatabaseConfig::default(),
            storage: StorageConfig::default(),
            assets: AssetsConfig::default(),
            auth: AuthConfig::default(),
            health: HealthConfig::default(),
            log: LogConfig::default(),
            schemas: SchemasConfig::default(),
            versioning: VersioningConfig::default(),
            jobs: JobsConfig::default(),
            email: EmailConfig::default(),
            plugins: PluginsConfig::default(),
            agent: AgentConfig::default(),
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            host: "127.0.0.1".into(),
            port: 3000,
            public_url: None,
            max_json_bytes: 10 * 1024 * 1024,
            trusted_proxies: Vec::new(),
        }
    }
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            kind: "local".into(),
            path: None,
            bucket: None,
            endpoint: None,
            region: "us-east-1".into(),
            access_key_id: None,
            secret_access_key: None,
            force_path_style: false,
            direct_upload: false,
        }
    }
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            secret: None,
            invite_only: true,
            require_email_verification: false,
            first_admin: "open".into(),
            first_admin_emails: Vec::new(),
            session_lifetime_days: 7,
            rate_limit: RateLimitConfig::default(),
        }
    }
}

impl Default for HealthConfig {
    fn default() -> Self {
        HealthConfig {
            timeout_ms: 5000,
            storage_health_check: false,
        }
    }
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            format: "text".into(),
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
    /// Loads defaults, the file, then `env` (pass `std::env::vars()`). `path` is `--config`.
    pub fn load(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Loaded, ConfigError> {
        let env: std::collections::HashMap<String, String> = env.into_iter().collect();
        let explicit = path
            .map(Path::to_path_buf)
            .or_else(|| env.get("CMS_CONFIG").map(PathBuf::from));
        let mut table = match &explicit {
            Some(p) => read_file(p)?,
            None if Path::new("cms.toml").exists() => read_file(Path::new("cms.toml"))?,
            None => Table::new(),
        };
        let mut warnings: Vec<String> = leaf_keys(&table, "")
            .into_iter()
            .filter(|k| !KEYS.iter().any(|(known, _)| known == k))
            .map(|k| format!("unknown configuration key `{k}` is ignored"))
            .collect();

        let overrides = KEYS
            .iter()
            .map(|(key, kind)| (env_name(key), *key, *kind))
            .chain(ALIASES.iter().map(|(name, key)| {
                let kind = KEYS
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, kind)| *kind)
                    .unwrap_or(Kind::Str);
                (name.to_string(), *key, kind)
            }));
        for (name, key, kind) in overrides {
            if let Some(raw) = env.get(&name) {
                let value =
                    parse_env(raw, kind).map_err(|why| ConfigError(format!("{name}: {why}")))?;
                set_path(&mut table, key, value);
            }
        }
        let config =
            Config::deserialize(Value::Table(table)).map_err(|e| ConfigError(e.to_string()))?;
        config.check(&mut warnings)?;
        Ok(Loaded { config, warnings })
    }

    /// Refuses settings whose feature this build does not have, rather than ignoring them.
    fn check(&self, warnings: &mut Vec<String>) -> Result<(), ConfigError> {
        self.sign_up_policy()?;
        self.rate_limit()?;
        self.trusted_proxies()?;
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
        if self.auth.secret.as_ref().is_some_and(|s| s.len() < 32) {
            warnings.push(
                "auth.secret is shorter than 32 characters: use a longer random value".into(),
            );
        }
        Ok(())
    }

    /// The sign-up policy configuration gives (instance settings saved by a super admin
    /// override it at run time).
    pub fn sign_up_policy(&self) -> Result<cms_service::SignUpPolicy, ConfigError> {
        let auth = &self.auth;
        let first_admin = cms_core::FirstAdmin::parse(&auth.first_admin).ok_or_else(|| {
            ConfigError(format!(
                "auth.firstAdmin = \"{}\": expected \"open\", \"claimCode\", \"allowlist\" or \"none\"",
                auth.first_admin
            ))
        })?;
        let first_admin_emails = auth
            .first_admin_emails
            .iter()
            .map(|raw| {
                cms_core::Email::parse(raw).ok_or_else(|| {
                    ConfigError(format!(
                        "auth.firstAdminEmails: `{raw}` is not an e-mail address"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let policy = cms_service::SignUpPolicy {
            invite_only: auth.invite_only,
            require_email_verification: auth.require_email_verification,
            first_admin,
            first_admin_emails,
        };
        policy
            .check()
            .map_err(|why| ConfigError(format!("auth.firstAdmin: {why}")))?;
        Ok(policy)
    }

    pub fn rate_limit(&self) -> Result<cms_service::RateLimitSettings, ConfigError> {
        let limits = &self.auth.rate_limit;
        if limits.window_seconds == 0 {
            return Err(ConfigError(
                "auth.rateLimit.windowSeconds must be 1 or more".into(),
            ));
        }
        Ok(cms_service::RateLimitSettings {
            window: std::time::Duration::from_secs(limits.window_seconds),
            per_email: limits.per_email,
            per_address: limits.per_address,
        })
    }

    pub fn trusted_proxies(&self) -> Result<Vec<cms_server::TrustedProxy>, ConfigError> {
        self.server
            .trusted_proxies
            .iter()
            .map(|p| {
                cms_server::TrustedProxy::parse(p)
                    .map_err(|why| ConfigError(format!("server.trustedProxies: {why}")))
            })
            .collect()
    }

    fn check_storage(&self) -> Result<(), ConfigError> {
        let storage = &self.storage;
        match storage.kind.as_str() {
            "local" => {
                if storage.direct_upload {
                    return Err(ConfigError(
                        "storage.directUpload = true needs storage.kind = \"s3\": local disk has no presigned uploads".into(),
                    ));
                }
                Ok(())
            }
            "s3" => {
                if storage
                    .bucket
                    .as_deref()
                    .is_none_or(|b| b.trim().is_empty())
                {
                    return Err(ConfigError(
                        "storage.kind = \"s3\" needs storage.bucket".into(),
                    ));
                }
                if let Some(endpoint) = storage.endpoint.as_deref().filter(|e| !e.is_empty())
                    && !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
                {
                    return Err(ConfigError(format!(
                        "storage.endpoint `{endpoint}` must start with http:// or https://"
                    )));
                }
                if storage.region.trim().is_empty() {
                    return Err(ConfigError("storage.region must not be empty".into()));
                }
                let given = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
                if given(&storage.access_key_id) != given(&storage.secret_access_key) {
                    return Err(ConfigError(
                        "storage.accessKeyId and storage.secretAccessKey go together: set both or neither".into(),
                    ));
                }
                Ok(())
            }
            other => Err(ConfigError(format!(
                "storage.kind = \"{other}\" is not known: use \"local\" or \"s3\""
            ))),
        }
    }

    /// Where the S3 bucket is, from `storage.*` (meaningful with `storage.kind = "s3"`).
    pub fn s3_settings(&self) -> cms_service::S3Settings {
        let storage = &self.storage;
        let set = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
        cms_service::S3Settings {
            bucket: storage.bucket.clone().unwrap_or_default(),
            endpoint: set(&storage.endpoint),
            region: storage.region.clone(),
            access_key_id: set(&storage.access_key_id),
            secret_access_key: set(&storage.secret_access_key),
            force_path_style: storage.force_path_style,
        }
    }

    fn check_email(&self) -> Result<(), ConfigError> {
        match self.email.transport.as_str() {
            "log" => Ok(()),
            "smtp" => {
                if self
                    .email
                    .smtp
                    .host
                    .as_deref()
                    .is_none_or(|h| h.trim().is_empty())
                {
                    return Err(ConfigError(
                        "email.transport = \"smtp\" needs email.smtp.host".into(),
                    ));
                }
                if !matches!(
                    self.email.smtp.security.as_str(),
                    "starttls" | "tls" | "none"
                ) {
                    return Err(ConfigError(
                        "email.smtp.security is \"starttls\", \"tls\" or \"none\"".into(),
                    ));
                }
                if self.email.smtp.timeout_ms == 0 {
                    return Err(ConfigError("email.smtp.timeoutMs must be positive".into()));
                }
                Ok(())
            }
            other => Err(ConfigError(format!(
                "email.transport = \"{other}\" is not known: use \"log\" or \"smtp\""
            ))),
        }
    }

    /// The address people reach the instance at, without a trailing slash: `server.publicUrl`,
    /// else the listen address. Links in e-mails start with it.
    pub fn public_base_url(&self) -> String {
        match self
            .server
            .public_url
            .as_deref()
            .map(|u| u.trim_end_matches('/'))
        {
            Some(url) if !url.is_empty() => url.to_string(),
            _ => format!("http://{}:{}", self.server.host, self.server.port),
        }
    }

    pub fn database_url(&self) -> String {
        self.database
            .url
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}", self.data_dir.join("cms.db").display()))
    }

    /// The login migrations and index creation run as, when it is not `database.url`'s.
    pub fn database_migration_url(&self) -> Option<String> {
        self.database
            .migration_url
            .clone()
            .filter(|url| !url.is_empty())
    }

    pub fn storage_path(&self) -> PathBuf {
        self.storage
            .path
            .clone()
            .unwrap_or_else(|| self.data_dir.join("media"))
    }
}

/// `CMS_` + upper snake case of a dotted camelCase key.
fn env_name(key: &str) -> String {
    let mut name = String::from("CMS_");
    for c in key.chars() {
        match c {
            '.' => name.push('_'),
            c if c.is_ascii_uppercase() => {
                name.push('_');
                name.push(c);
            }
            c => name.push(c.to_ascii_uppercase()),
        }
    }
    name
}

fn read_file(path: &Path) -> Result<Table, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("cannot read {}: {e}", path.display())))?;
    text.parse::<Table>()
        .map_err(|e| ConfigError(format!("{}: {e}", path.display())))
}

fn leaf_keys(table: &Table, prefix: &str) -> Vec<String> {
    table
        .iter()
        .flat_map(|(k, v)| {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                Value::Table(t) => leaf_keys(t, &key),
                _ => vec![key],
            }
        })
        .collect()
}

fn parse_env(raw: &str, kind: Kind) -> Result<Value, String> {
    match kind {
        Kind::Str => Ok(Value::String(raw.to_string())),
        Kind::Int => raw
            .trim()
            .parse::<i64>()
            .map(Value::Integer)
            .map_err(|_| format!("`{raw}` is not an integer")),
        Kind::Bool => match raw.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(Value::Boolean(true)),
            "false" | "0" | "no" | "off" => Ok(Value::Boolean(false)),
            _ => Err(format!("`{raw}` is not a boolean")),
        },
        Kind::List if raw.trim_start().starts_with('[') => {
            let doc = format!("v = {raw}")
                .parse::<Table>()
                .map_err(|e| e.to_string())?;
            Ok(doc["v"].clone())
        }
        Kind::List => Ok(Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.into()))
                .collect(),
        )),
    }
}

fn set_path(table: &mut Table, dotted: &str, value: Value) {
    let mut parts = dotted.split('.').peekable();
    let mut current = table;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            current.insert(part.to_string(), value);
            return;
        }
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        current = entry.as_table_mut().expect("just made a table");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn env_names_are_upper_snake_case_of_the_dotted_key() {
        assert_eq!(env_name("jobs.workerSecret"), "CMS_JOBS_WORKER_SECRET");
        assert_eq!(env_name("health.timeoutMs"), "CMS_HEALTH_TIMEOUT_MS");
        assert_eq!(env_name("database.url"), "CMS_DATABASE_URL");
        assert_eq!(
            env_name("database.migrationUrl"),
            "CMS_DATABASE_MIGRATION_URL"
        );
    }

    #[test]
    fn the_migration_login_is_configurable_apart_from_the_serving_one() {
        let loaded = Config::load(
            None,
            env(&[
                ("CMS_DATABASE_URL", "postgres://cms_serve@db/cms"),
                ("CMS_DATABASE_MIGRATION_URL", "postgres://cms_owner@db/cms"),
            ]),
        )
        .unwrap()
        .config;
        assert_eq!(loaded.database_url(), "postgres://cms_serve@db/cms");
        assert_eq!(
            loaded.database_migration_url().as_deref(),
            Some("postgres://cms_owner@db/cms")
        );
    }

    #[test]
    fn defaults_need_no_configuration() {
        let loaded = Config::load(None, env(&[])).unwrap();
        let c = loaded.config;
        assert_eq!((c.server.host.as_str(), c.server.port), ("127.0.0.1", 3000));
        assert_eq!(c.database_url(), "sqlite://./cms-data/cms.db");
        assert_eq!(c.database_migration_url(), None);
        assert_eq!(c.storage_path(), PathBuf::from("./cms-data/media"));
        assert!(c.auth.invite_only);
        assert_eq!(c.health.timeout_ms, 5000);
    }

    #[test]
    fn the_graphql_path_is_configurable_and_checked() {
        let default = Config::load(None, env(&[])).unwrap().config;
        assert_eq!(default.graphql.path, "/api/graphql");
        let moved = Config::load(None, env(&[("CMS_GRAPHQL_PATH", "/graph/ql")])).unwrap();
        assert_eq!(moved.config.graphql.path, "/graph/ql");
        for bad in ["graphql", "/", "/api/{x}", "/a b"] {
            assert!(
                Config::load(None, env(&[("CMS_GRAPHQL_PATH", bad)])).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_docs_ui_is_on_unless_turned_off() {
        let default = Config::load(None, env(&[])).unwrap().config;
        assert!(default.openapi.docs_ui);
        let off = Config::load(None, env(&[("CMS_OPENAPI_DOCS_UI", "false")])).unwrap();
        assert!(!off.config.openapi.docs_ui);
    }

    #[test]
    fn the_file_then_the_environment_decide() {
        let dir = std::env::temp_dir().join(format!("cms-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("cms.toml");
        std::fs::write(
            &file,
            "[server]\nport = 4000\nhost = \"0.0.0.0\"\n[health]\ntimeoutMs = 100\n[surprise]\nkey = 1\n",
        )
        .unwrap();
        let loaded = Config::load(
            Some(&file),
            env(&[
                ("CMS_PORT", "5000"),
                ("CMS_AUTH_INVITE_ONLY", "false"),
                ("CMS_AUTH_FIRST_ADMIN_EMAILS", "a@x.io, b@x.io"),
            ]),
        )
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let c = loaded.config;
        assert_eq!((c.server.host.as_str(), c.server.port), ("0.0.0.0", 5000));
        assert_eq!(c.health.timeout_ms, 100);
        assert!(!c.auth.invite_only);
        assert_eq!(c.auth.first_admin_emails, vec!["a@x.io", "b@x.io"]);
        assert_eq!(
            loaded.warnings,
            vec!["unknown configuration key `surprise.key` is ignored"]
        );
    }

    #[test]
    fn first_admin_policies_and_limits_load() {
        let loaded = Config::load(
            None,
            env(&[
                ("CMS_AUTH_FIRST_ADMIN", "allowlist"),
                ("CMS_AUTH_FIRST_ADMIN_EMAILS", "Boss@Example.com"),
                ("CMS_AUTH_RATE_LIMIT_PER_EMAIL", "3"),
                ("CMS_SERVER_TRUSTED_PROXIES", "10.0.0.0/8, ::1"),
            ]),
        )
        .unwrap();
        let policy = loaded.config.sign_up_policy().unwrap();
        assert_eq!(policy.first_admin, cms_core::FirstAdmin::Allowlist);
        assert_eq!(policy.first_admin_emails[0].as_str(), "boss@example.com");
        let limits = loaded.config.rate_limit().unwrap();
        assert_eq!((limits.per_email, limits.per_address), (3, 30));
        assert_eq!(loaded.config.trusted_proxies().unwrap().len(), 2);
        for policy in ["open", "claimCode", "none"] {
            let c = Config::load(None, env(&[("CMS_AUTH_FIRST_ADMIN", policy)])).unwrap();
            assert_eq!(
                c.config.sign_up_policy().unwrap().first_admin.as_str(),
                policy
            );
        }
    }

    #[test]
    fn bad_values_are_refused_with_the_key_named() {
        let err = Config::load(None, env(&[("CMS_PORT", "lots")]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("CMS_PORT"), "{err}");
        let err = Config::load(None, env(&[("CMS_AUTH_FIRST_ADMIN", "claimcode")]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("auth.firstAdmin"), "{err}");
        let err = Config::load(None, env(&[("CMS_AUTH_FIRST_ADMIN", "allowlist")]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("firstAdminEmails"), "{err}");
        let err = Config::load(
            None,
            env(&[("CMS_AUTH_FIRST_ADMIN_EMAILS", "not-an-address")]),
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("auth.firstAdminEmails"), "{err}");
        let err = Config::load(None, env(&[("CMS_SERVER_TRUSTED_PROXIES", "10.0.0.0/99")]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("server.trustedProxies"), "{err}");
        let err = Config::load(None, env(&[("CMS_AUTH_RATE_LIMIT_WINDOW_SECONDS", "0")]))
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("auth.rateLimit.windowSeconds"),
            "{err}"
        );
        assert!(Config::load(Some(Path::new("/nonexistent/cms.toml")), env(&[])).is_err());
    }

    #[test]
    fn plugins_are_on_and_secrets_need_a_long_enough_key() {
        let c = Config::load(None, env(&[])).unwrap().config;
        assert!(c.plugins.forms && c.plugins.webhooks);
        assert!(!c.plugins.webhooks_deny_private_targets);
        assert_eq!(c.plugins.webhooks_timeout_ms, 10_000);
        assert_eq!(c.plugins.forms_submissions_per_minute, 30);
        assert_eq!(c.plugins.encryption_key(), None);

        let key = "k".repeat(32);
        let loaded = Config::load(
            None,
            env(&[
                ("CMS_PLUGINS_FORMS", "false"),
                ("CMS_PLUGINS_WEBHOOKS", "off"),
                ("CMS_PLUGINS_WEBHOOKS_DENY_PRIVATE_TARGETS", "true"),
                ("CMS_PLUGINS_WEBHOOKS_TIMEOUT_MS", "300"),
                ("CMS_PLUGINS_FORMS_SUBMISSIONS_PER_MINUTE", "0"),
                ("CMS_SECRET_ENCRYPTION_KEY", &key),
            ]),
        )
        .unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let c = loaded.config;
        assert!(!c.plugins.forms && !c.plugins.webhooks);
        assert!(c.plugins.webhooks_deny_private_targets);
        assert_eq!(c.plugins.webhooks_timeout_ms, 300);
        assert_eq!(c.plugins.forms_submissions_per_minute, 0);
        assert_eq!(c.plugins.encryption_key(), Some(key.as_str()));

        // The file's camelCase keys; the systematic environment name works too.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cms.toml");
        std::fs::write(
            &file,
            "[plugins]\nforms = false\nwebhooksDenyPrivateTargets = true\nwebhooksTimeoutMs = 2500\n",
        )
        .unwrap();
        let loaded = Config::load(
            Some(&file),
            env(&[("CMS_PLUGINS_SECRET_ENCRYPTION_KEY", &key)]),
        )
        .unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let c = loaded.config;
        assert!(!c.plugins.forms && c.plugins.webhooks);
        assert!(c.plugins.webhooks_deny_private_targets);
        assert_eq!(c.plugins.webhooks_timeout_ms, 2500);
        assert_eq!(c.plugins.encryption_key(), Some(key.as_str()));

        // Too short is refused, counted in characters; empty means unset.
        let short = "é".repeat(31);
        let err = Config::load(None, env(&[("CMS_SECRET_ENCRYPTION_KEY", &short)]))
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("CMS_SECRET_ENCRYPTION_KEY"),
            "{err}"
        );
        assert!(err.to_string().contains("32 characters"), "{err}");
        let c = Config::load(None, env(&[("CMS_SECRET_ENCRYPTION_KEY", "")]))
            .unwrap()
            .config;
        assert_eq!(c.plugins.encryption_key(), None);
        let err = Config::load(None, env(&[("CMS_PLUGINS_WEBHOOKS_TIMEOUT_MS", "0")]))
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("plugins.webhooksTimeoutMs"),
            "{err}"
        );
        let err = Config::load(None, env(&[("CMS_PLUGINS_FORMS", "maybe")]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("CMS_PLUGINS_FORMS"), "{err}");
    }

    #[test]
    fn storage_defaults_to_local_disk() {
        let c = Config::load(None, env(&[])).unwrap().config;
        assert_eq!(c.storage.kind, "local");
        assert!(!c.storage.direct_upload);
        assert_eq!(c.storage.region, "us-east-1");
        assert!(!c.storage.force_path_style);
        assert_eq!(c.storage.bucket, None);
    }

    #[test]
    fn s3_storage_from_the_file_and_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cms.toml");
        std::fs::write(
            &file,
            "[storage]\nkind = \"s3\"\nbucket = \"assets\"\nendpoint = \"http://127.0.0.1:9000\"\n\
             accessKeyId = \"AKID\"\nsecretAccessKey = \"SECRET\"\nforcePathStyle = true\n\
             directUpload = true\n",
        )
        .unwrap();
        let loaded = Config::load(Some(&file), env(&[])).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let c = loaded.config;
        assert!(c.storage.direct_upload);
        let s3 = c.s3_settings();
        assert_eq!(s3.bucket, "assets");
        assert_eq!(s3.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(s3.region, "us-east-1");
        assert_eq!(
            (s3.access_key_id.as_deref(), s3.secret_access_key.as_deref()),
            (Some("AKID"), Some("SECRET"))
        );
        assert!(s3.force_path_style);

        // Every storage key can come from the environment, over the file.
        let c = Config::load(
            Some(&file),
            env(&[
                ("CMS_STORAGE_BUCKET", "other"),
                ("CMS_STORAGE_ENDPOINT", "https://s3.example.com"),
                ("CMS_STORAGE_REGION", "eu-west-3"),
                ("CMS_STORAGE_ACCESS_KEY_ID", "K2"),
                ("CMS_STORAGE_SECRET_ACCESS_KEY", "S2"),
                ("CMS_STORAGE_FORCE_PATH_STYLE", "false"),
                ("CMS_STORAGE_DIRECT_UPLOAD", "false"),
            ]),
        )
        .unwrap()
        .config;
        let s3 = c.s3_settings();
        assert_eq!(
            (
                s3.bucket.as_str(),
                s3.endpoint.as_deref(),
                s3.region.as_str()
            ),
            ("other", Some("https://s3.example.com"), "eu-west-3")
        );
        assert_eq!(
            (s3.access_key_id.as_deref(), s3.secret_access_key.as_deref()),
            (Some("K2"), Some("S2"))
        );
        assert!(!s3.force_path_style);
        assert!(!c.storage.direct_upload);

        let c = Config::load(
            None,
            env(&[("CMS_STORAGE_KIND", "s3"), ("CMS_STORAGE_BUCKET", "b")]),
        )
        .unwrap()
        .config;
        let s3 = c.s3_settings();
        assert_eq!((s3.endpoint, s3.access_key_id), (None, None));
    }

    #[test]
    fn storage_settings_that_cannot_work_are_refused() {
        for (bad, says) in [
            (vec![("CMS_STORAGE_KIND", "s3")], "storage.bucket"),
            (
                vec![("CMS_STORAGE_KIND", "s3"), ("CMS_STORAGE_BUCKET", " ")],
                "storage.bucket",
            ),
            (
                vec![("CMS_STORAGE_DIRECT_UPLOAD", "true")],
                "storage.kind = \"s3\"",
            ),
            (vec![("CMS_STORAGE_KIND", "azure")], "storage.kind"),
            (
                vec![
                    ("CMS_STORAGE_KIND", "s3"),
                    ("CMS_STORAGE_BUCKET", "b"),
                    ("CMS_STORAGE_ENDPOINT", "127.0.0.1:9000"),
                ],
                "storage.endpoint",
            ),
            (
                vec![
                    ("CMS_STORAGE_KIND", "s3"),
                    ("CMS_STORAGE_BUCKET", "b"),
                    ("CMS_STORAGE_ACCESS_KEY_ID", "k"),
                ],
                "storage.secretAccessKey",
            ),
        ] {
            let err = Config::load(None, env(&bad)).err().unwrap();
            assert!(err.to_string().contains(says), "{bad:?}: {err}");
        }
        let err = Config::load(None, env(&[("CMS_STORAGE_DIRECT_UPLOAD", "true")]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("storage.directUpload"), "{err}");
    }

    #[test]
    fn email_settings_are_checked_and_links_have_a_base() {
        let loaded = Config::load(
            None,
            env(&[
                ("CMS_AUTH_REQUIRE_EMAIL_VERIFICATION", "true"),
                ("CMS_EMAIL_TRANSPORT", "smtp"),
                ("CMS_EMAIL_SMTP_HOST", "mail.example.com"),
                ("CMS_EMAIL_SMTP_PORT", "2525"),
            ]),
        )
        .unwrap();
        let c = loaded.config;
        assert!(c.auth.require_email_verification);
        assert_eq!(c.email.smtp.host.as_deref(), Some("mail.example.com"));
        assert_eq!(
            (c.email.smtp.port, c.email.smtp.security.as_str()),
            (Some(2525), "starttls")
        );
        assert_eq!(c.public_base_url(), "http://127.0.0.1:3000");

        for (bad, key) in [
            (vec![("CMS_EMAIL_TRANSPORT", "smtp")], "email.smtp.host"),
            (vec![("CMS_EMAIL_TRANSPORT", "pigeon")], "email.transport"),
            (
                vec![
                    ("CMS_EMAIL_TRANSPORT", "smtp"),
                    ("CMS_EMAIL_SMTP_HOST", "h"),
                    ("CMS_EMAIL_SMTP_SECURITY", "ssl"),
                ],
                "email.smtp.security",
            ),
        ] {
            let err = Config::load(None, env(&bad)).err().unwrap();
            assert!(err.to_string().contains(key), "{err}");
        }

        let c = Config::load(
            None,
            env(&[("CMS_SERVER_PUBLIC_URL", "https://cms.example.com/")]),
        )
        .unwrap()
        .config;
        assert_eq!(c.public_base_url(), "https://cms.example.com");
    }
}
