//! The configuration keys: the single list that maps each dotted key to its environment
//! variable and says how an environment value is read.

use toml::{Table, Value};

/// How an environment value is read.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Str,
    Int,
    Bool,
    /// Comma-separated, or a TOML array (`["a", "b"]`).
    List,
    /// A table whose keys are the user's (`locales.fallbacks`): comma-separated `key=value`
    /// pairs, or a TOML inline table (`{ "de-AT" = "de" }`).
    Map,
}

/// Every configuration key, with its kind.
pub(super) const KEYS: &[(&str, Kind)] = &[
    ("dataDir", Kind::Str),
    ("server.host", Kind::Str),
    ("server.port", Kind::Int),
    ("server.publicUrl", Kind::Str),
    ("server.maxJsonBytes", Kind::Int),
    ("server.trustedProxies", Kind::List),
    ("graphql.path", Kind::Str),
    ("openapi.docsUi", Kind::Bool),
    ("mcp.enabled", Kind::Bool),
    ("mcp.sessionIdleSeconds", Kind::Int),
    ("mcp.maxSessions", Kind::Int),
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
    ("assets.transformSigning", Kind::Bool),
    ("auth.secret", Kind::Str),
    ("auth.inviteOnly", Kind::Bool),
    ("auth.requireEmailVerification", Kind::Bool),
    ("auth.firstAdmin", Kind::Str),
    ("auth.firstAdminEmails", Kind::List),
    ("auth.sessionLifetimeDays", Kind::Int),
    ("auth.rateLimit.windowSeconds", Kind::Int),
    ("auth.rateLimit.perEmail", Kind::Int),
    ("auth.rateLimit.perAddress", Kind::Int),
    // An array of tables, given in the file only (each client secret may come from
    // CMS_OIDC_<ID>_CLIENT_SECRET instead).
    ("auth.oidc.providers", Kind::List),
    ("health.timeoutMs", Kind::Int),
    ("health.storageHealthCheck", Kind::Bool),
    ("log.format", Kind::Str),
    ("audit.retentionDays", Kind::Int),
    ("metrics.enabled", Kind::Bool),
    ("metrics.token", Kind::Str),
    ("schemas.paths", Kind::List),
    ("locales.available", Kind::List),
    ("locales.default", Kind::Str),
    ("locales.fallbacks", Kind::Map),
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
    ("cors.origins", Kind::List),
    ("cors.maxAgeSeconds", Kind::Int),
    ("delivery.publicReadsPerMinute", Kind::Int),
    ("delivery.publicMaxAgeSeconds", Kind::Int),
    ("delivery.staleWhileRevalidateSeconds", Kind::Int),
    ("delivery.previewMinutes", Kind::Int),
    ("events.maxStreams", Kind::Int),
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
pub(super) const ALIASES: &[(&str, &str)] = &[
    ("CMS_HOST", "server.host"),
    ("CMS_PORT", "server.port"),
    ("CMS_WORKER_SECRET", "jobs.workerSecret"),
    ("CMS_SECRET_ENCRYPTION_KEY", "plugins.secretEncryptionKey"),
    ("CMS_EMBEDDED_WORKER", "jobs.embeddedWorker"),
    ("CMS_ASSET_SIGNING_SECRET", "assets.signingSecret"),
];

/// `CMS_` + upper snake case of a dotted camelCase key.
pub(super) fn env_name(key: &str) -> String {
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

pub(super) fn parse_env(raw: &str, kind: Kind) -> Result<Value, String> {
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
        Kind::Map if raw.trim_start().starts_with('{') => {
            let doc = format!("v = {raw}")
                .parse::<Table>()
                .map_err(|e| e.to_string())?;
            Ok(doc["v"].clone())
        }
        Kind::Map => raw
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) => Ok((k.trim().to_string(), Value::String(v.trim().into()))),
                None => Err(format!("`{pair}` is not key=value")),
            })
            .collect::<Result<Table, String>>()
            .map(Value::Table),
        Kind::List => Ok(Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.into()))
                .collect(),
        )),
    }
}
