//! The service layer's one error type. The HTTP door maps it to responses in one place.

use cms_core::Issue;
use cms_store::StoreError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No valid credentials. Rendered by the door as the auth layer's `{ error }`.
    #[error("authentication required")]
    Unauthorized,
    /// An access refusal: a capability, key scope, schema or field rule said no. Rendered as the
    /// auth layer's `{ error }` with no message, so a refusal tells nothing about the data.
    #[error("access denied")]
    Forbidden,
    /// A business rule refused the request (sign-up closed, a built-in role edit, ...). Unlike
    /// [`Error::Forbidden`] it carries a message for the person.
    #[error("{0}")]
    NotPermitted(String),
    /// Wrong e-mail or password at sign-in.
    #[error("invalid email or password")]
    InvalidCredentials,
    #[error("{message}")]
    BadRequest { message: String, issues: Vec<Issue> },
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// A write guarded by `expectedRevision` found the document at another revision: nothing
    /// was written (SPEC.md Errors rule 2).
    #[error("expected revision {expected}, but the document is at revision {current}")]
    RevisionConflict { expected: i64, current: i64 },
    #[error("{0}")]
    Unprocessable(String),
    /// An upload past the configured limit.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// A bulk delete named assets that documents still reference: nothing was deleted
    /// (SPEC.md Errors rule 3).
    #[error("{} {} still referenced", ids.len(), if ids.len() == 1 { "asset is" } else { "assets are" })]
    AssetsReferenced { ids: Vec<String> },
    /// A delete of a document other documents of its organization still reference: nothing
    /// was deleted. `referrers` lists those the caller may read (at most
    /// the documents' `MAX_LISTED_REFERRERS`); `count` is all of them.
    #[error("{count} {} still {} this document", if *count == 1 { "document" } else { "documents" }, if *count == 1 { "references" } else { "reference" })]
    DocumentReferenced { count: i64, referrers: Vec<String> },
    /// A rate limit was reached; the same request may succeed after `retry_after_secs`.
    #[error("too many attempts: try again in {retry_after_secs} seconds")]
    TooManyRequests { retry_after_secs: u64 },
    /// Something the request needs outside the service is down (the mail server); retrying
    /// later may work. Nothing was changed.
    #[error("{0}")]
    Unavailable(String),
    /// A feature configured only half way (the assistant's backend without a model): the
    /// operator, not the caller, has to act.
    #[error("{0}")]
    NotImplemented(String),
    /// Anything the caller cannot fix. Logged with detail, answered without it.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    pub fn bad_request(message: impl Into<String>) -> Self {
        Error::BadRequest {
            message: message.into(),
            issues: Vec::new(),
        }
    }

    pub fn invalid(issues: Vec<Issue>) -> Self {
        let message = match issues.as_slice() {
            [one] => format!("{}: {}", one.path, one.message),
            _ => format!("{} fields are invalid", issues.len()),
        };
        Error::BadRequest { message, issues }
    }

    pub fn not_found(what: &str) -> Self {
        Error::NotFound(format!("{what} not found"))
    }
}

impl From<StoreError> for Error {
    /// Constraint violations the caller could have avoided become 409; the code that knows a
    /// more precise answer (an e-mail already taken is 422) maps the error itself first.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unique(_) => {
                Error::Conflict("a record with this value already exists".into())
            }
            StoreError::ForeignKey(_) => Error::Conflict(
                "the record is still referenced, or refers to something missing".into(),
            ),
            other => Error::Internal(other.to_string()),
        }
    }
}
