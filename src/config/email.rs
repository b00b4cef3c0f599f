//! `email.*`: how e-mail leaves the service (the log or SMTP).

use serde::Deserialize;

use super::{Config, ConfigError};

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

impl Config {
    pub(super) fn check_email(&self) -> Result<(), ConfigError> {
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
}
