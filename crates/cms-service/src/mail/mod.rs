//! E-mail: the [`Mailer`] boundary the service sends through, and its two transports: the log
//! (the default, so a local install works without a mail server) and SMTP.
//!
//! The service composes every message itself ([`MailMessage`]); a transport only delivers it.
//! A Rust host application may supply its own mailer through `cms::Builder::mailer`.

mod smtp;

use std::fmt;

use async_trait::async_trait;
use serde::Serialize;

pub use smtp::{SmtpMailer, SmtpSecurity, SmtpSettings};

/// Why a message was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MailKind {
    /// An invitation to join an organization, with its accept link.
    Invitation,
    /// A link that proves the recipient controls the address.
    EmailVerification,
    /// A link to choose a new password.
    PasswordReset,
}

/// One plain-text message with the one link it exists to deliver.
#[derive(Debug, Clone)]
pub struct MailMessage {
    pub kind: MailKind,
    pub to: String,
    pub subject: String,
    /// The whole body; it contains `link`.
    pub text: String,
    pub link: String,
}

/// A message that could not be handed to the transport.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MailError(pub String);

/// Delivers messages. Implementations must be cheap to share across tasks.
#[async_trait]
pub trait Mailer: Send + Sync + 'static {
    async fn send(&self, message: &MailMessage) -> Result<(), MailError>;

    /// Whether a message reaches its recipient. `false` for a transport that only records
    /// messages (the log): the admin then offers what needs no mailbox, such as creating a
    /// member with a password.
    fn delivers(&self) -> bool {
        true
    }
}

/// Writes each message, link included, to the log instead of sending it. The default: a local
/// install works without a mail server. The log then holds live links (tokens), so production
/// installs configure SMTP.
#[derive(Debug, Default, Clone, Copy)]
pub struct LogMailer;

#[async_trait]
impl Mailer for LogMailer {
    async fn send(&self, message: &MailMessage) -> Result<(), MailError> {
        tracing::info!(
            to = %message.to,
            kind = ?message.kind,
            subject = %message.subject,
            link = %message.link,
            "e-mail (log transport, not sent):\n{}",
            message.text
        );
        Ok(())
    }

    fn delivers(&self) -> bool {
        false
    }
}

impl fmt::Display for MailKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MailKind::Invitation => "invitation",
            MailKind::EmailVerification => "e-mail verification",
            MailKind::PasswordReset => "password reset",
        })
    }
}
