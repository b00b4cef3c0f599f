//! `auth.*`: sign-up and first-admin policies, sessions and the sign-in rate limits.

use serde::Deserialize;

use super::{Config, ConfigError};

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

impl Config {
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
}
