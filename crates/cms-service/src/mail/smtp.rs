//! SMTP delivery through lettre, over rustls (no OpenSSL).

use std::time::Duration;

use async_trait::async_trait;
use lettre::message::{Mailbox, header::ContentType};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::{MailError, MailMessage, Mailer};

/// How the connection to the SMTP server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpSecurity {
    /// Plain connection upgraded with STARTTLS, which is required (port 587 by default).
    StartTls,
    /// TLS from the first byte (port 465 by default).
    Tls,
    /// No encryption at all (port 25 by default): only for a relay on the same machine or a
    /// trusted network.
    None,
}

impl SmtpSecurity {
    pub fn parse(raw: &str) -> Option<SmtpSecurity> {
        match raw {
            "starttls" => Some(SmtpSecurity::StartTls),
            "tls" => Some(SmtpSecurity::Tls),
            "none" => Some(SmtpSecurity::None),
            _ => None,
        }
    }

    fn default_port(self) -> u16 {
        match self {
            SmtpSecurity::StartTls => 587,
            SmtpSecurity::Tls => 465,
            SmtpSecurity::None => 25,
        }
    }
}

/// Where and how to deliver.
#[derive(Clone)]
pub struct SmtpSettings {
    pub host: String,
    /// `None`: the usual port of `security`.
    pub port: Option<u16>,
    pub security: SmtpSecurity,
    /// Both or neither.
    pub username: Option<String>,
    pub password: Option<String>,
    /// The sender, e.g. `CMS <cms@example.com>`.
    pub from: String,
    /// Bounds each SMTP command, so a dead server cannot hold a request for long.
    pub timeout: Duration,
}

/// Never prints the password.
impl std::fmt::Debug for SmtpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("security", &self.security)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| ".."))
            .field("from", &self.from)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Sends through one SMTP server, reusing connections (lettre's pool).
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl SmtpMailer {
    /// Checks the settings; connects only when the first message is sent. Call it inside a
    /// Tokio runtime: the connection pool runs a task of its own.
    pub fn new(settings: &SmtpSettings) -> Result<SmtpMailer, MailError> {
        let from: Mailbox = settings
            .from
            .parse()
            .map_err(|e| MailError(format!("`{}` is not a sender address: {e}", settings.from)))?;
        if settings.host.trim().is_empty() {
            return Err(MailError("the SMTP host is empty".into()));
        }
        let builder = match settings.security {
            SmtpSecurity::StartTls => {
                AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&settings.host)
            }
            SmtpSecurity::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&settings.host),
            SmtpSecurity::None => Ok(AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(
                settings.host.clone(),
            )),
        }
        .map_err(|e| MailError(format!("SMTP host `{}`: {e}", settings.host)))?;
        let mut builder = builder
            .port(settings.port.unwrap_or(settings.security.default_port()))
            .timeout(Some(settings.timeout));
        match (&settings.username, &settings.password) {
            (Some(user), Some(password)) => {
                builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
            }
            (None, None) => {}
            _ => {
                return Err(MailError(
                    "SMTP username and password are set together or not at all".into(),
                ));
            }
        }
        Ok(SmtpMailer {
            transport: builder.build(),
            from,
        })
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, message: &MailMessage) -> Result<(), MailError> {
        let to: Mailbox = message
            .to
            .parse()
            .map_err(|e| MailError(format!("`{}` is not a recipient address: {e}", message.to)))?;
        let email = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(message.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(message.text.clone())
            .map_err(|e| MailError(format!("the message could not be built: {e}")))?;
        self.transport
            .send(email)
            .await
            .map(|_| ())
            .map_err(|e| MailError(format!("SMTP delivery failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> SmtpSettings {
        SmtpSettings {
            host: "127.0.0.1".into(),
            port: Some(2525),
            security: SmtpSecurity::None,
            username: None,
            password: None,
            from: "CMS <cms@localhost>".into(),
            timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn settings_are_checked_before_any_connection() {
        assert!(SmtpMailer::new(&settings()).is_ok());
        let bad_from = SmtpSettings {
            from: "not an address".into(),
            ..settings()
        };
        assert!(SmtpMailer::new(&bad_from).is_err());
        let half_credentials = SmtpSettings {
            username: Some("u".into()),
            ..settings()
        };
        assert!(SmtpMailer::new(&half_credentials).is_err());
        assert_eq!(
            SmtpSecurity::parse("starttls"),
            Some(SmtpSecurity::StartTls)
        );
        assert_eq!(SmtpSecurity::parse("ssl"), None);
        let with_password = SmtpSettings {
            username: Some("u".into()),
            password: Some("hunter2".into()),
            ..settings()
        };
        assert!(!format!("{with_password:?}").contains("hunter2"));
    }
}
