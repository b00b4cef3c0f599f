//! `auth.*`: sign-up and first-admin policies, sessions, the sign-in rate limits and single
//! sign-on providers.

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
    pub oidc: OidcConfig,
}

/// `auth.oidc`: single sign-on with OpenID Connect (CONTRACT.md section 20, docs/SSO.md).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OidcConfig {
    pub providers: Vec<OidcProviderConfig>,
}

/// One `[[auth.oidc.providers]]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OidcProviderConfig {
    pub id: String,
    pub name: Option<String>,
    pub issuer: String,
    pub client_id: String,
    /// Or `CMS_OIDC_<ID>_CLIENT_SECRET`, which wins.
    pub client_secret: Option<String>,
    pub scopes: Option<Vec<String>>,
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    pub organization: Option<String>,
    pub default_role: Option<String>,
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
            oidc: OidcConfig::default(),
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

    /// The single sign-on providers, checked: ids unique and URL-safe, issuers absolute URLs,
    /// a client id and secret each, a role name for new accounts.
    pub fn oidc_providers(&self) -> Result<Vec<cms_service::OidcProviderSettings>, ConfigError> {
        let mut seen = std::collections::HashSet::new();
        self.auth
            .oidc
            .providers
            .iter()
            .map(|p| {
                let fail = |why: &str| {
                    Err(ConfigError(format!(
                        "auth.oidc.providers `{}`: {why}",
                        p.id
                    )))
                };
                let id_ok = !p.id.is_empty()
                    && p.id.len() <= 40
                    && p.id
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
                if !id_ok {
                    return fail("`id` must be 1 to 40 lowercase letters, digits or -");
                }
                if !seen.insert(p.id.as_str()) {
                    return fail("`id` is used twice");
                }
                if !(p.issuer.starts_with("https://") || p.issuer.starts_with("http://")) {
                    return fail("`issuer` must be an http:// or https:// URL");
                }
                if p.client_id.is_empty() {
                    return fail("`clientId` is required");
                }
                let secret = p.client_secret.clone().unwrap_or_default();
                if secret.is_empty() {
                    return fail(&format!(
                        "`clientSecret` is required (or {})",
                        client_secret_env(&p.id)
                    ));
                }
                let default_role = p.default_role.clone().unwrap_or_else(|| "viewer".into());
                if default_role.parse::<cms_core::RoleName>().is_err() {
                    return fail("`defaultRole` is not a role name");
                }
                let mut scopes = p
                    .scopes
                    .clone()
                    .unwrap_or_else(|| vec!["openid".into(), "email".into(), "profile".into()]);
                if !scopes.iter().any(|s| s == "openid") {
                    scopes.insert(0, "openid".into());
                }
                Ok(cms_service::OidcProviderSettings {
                    id: p.id.clone(),
                    name: p.name.clone().unwrap_or_else(|| p.id.clone()),
                    // Exactly as the provider states it: the ID token's `iss` must match.
                    issuer: p.issuer.clone(),
                    client_id: p.client_id.clone(),
                    client_secret: secret,
                    scopes,
                    allowed_domains: p
                        .allowed_domains
                        .iter()
                        .map(|d| d.trim().trim_start_matches('@').to_lowercase())
                        .collect(),
                    organization: p.organization.clone(),
                    default_role,
                })
            })
            .collect()
    }

    /// Fills each provider's client secret from `CMS_OIDC_<ID>_CLIENT_SECRET` when set, so
    /// secrets can stay out of the file.
    pub(super) fn oidc_secrets_from(&mut self, env: &std::collections::HashMap<String, String>) {
        for provider in &mut self.auth.oidc.providers {
            if let Some(secret) = env.get(&client_secret_env(&provider.id)) {
                provider.client_secret = Some(secret.clone());
            }
        }
    }
}

/// `CMS_OIDC_<ID>_CLIENT_SECRET`, the id upper-cased with `-` as `_`.
fn client_secret_env(id: &str) -> String {
    format!(
        "CMS_OIDC_{}_CLIENT_SECRET",
        id.to_uppercase().replace('-', "_")
    )
}
