//! `plugins.*`: the first-party plugins and the key of secret plugin settings.

use serde::Deserialize;

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
