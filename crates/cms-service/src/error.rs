//! The service layer's one error type, and its one classification: [`Error::kind`] says what
//! sort of failure it is and [`Error::public_message`] what a client may read of it. Each door
//! (HTTP, GraphQL, the assistant) maps the kind once to its own vocabulary and adds its own
//! extras (a revision, the blocking references, `Retry-After`).

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
    /// The second step of a two-factor sign-in failed: a wrong or used code, or a challenge
    /// that is unknown, expired or spent. The message says which, for the person.
    #[error("{0}")]
    SecondFactorRefused(String),
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
    /// The organization holds as many open event streams on this instance as it may
    /// (`events.maxStreams`); a new one may open once one of them ends.
    #[error(
        "this organization has as many open event streams on this instance as it may: try again in {retry_after_secs} seconds"
    )]
    TooManyStreams { retry_after_secs: u64 },
    /// Something the request needs outside the service is down (the mail server); retrying
    /// later may work. Nothing was changed.
    #[error("{0}")]
    Unavailable(String),
    /// As many image transforms run and wait as the instance allows; the same request may
    /// succeed after `retry_after_secs` (CONTRACT.md section 18).
    #[error("the server is busy transforming images: try again in {retry_after_secs} seconds")]
    TransformsBusy { retry_after_secs: u64 },
    /// A feature configured only half way (the assistant's backend without a model): the
    /// operator, not the caller, has to act.
    #[error("{0}")]
    NotImplemented(String),
    /// Anything the caller cannot fix. Logged with detail, answered without it.
    #[error("internal error: {0}")]
    Internal(String),
}

/// What sort of failure an [`Error`] is: exactly the distinctions the doors answer differently
/// (an HTTP status, a GraphQL `extensions.code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// No valid credentials, or wrong ones at sign-in.
    Unauthenticated,
    /// An access refusal or a business rule's no.
    Forbidden,
    BadRequest,
    NotFound,
    /// The data is not in the state the request expects: a unique value taken, a revision
    /// moved on, a delete still referenced.
    Conflict,
    Unprocessable,
    PayloadTooLarge,
    TooManyRequests,
    Unavailable,
    NotImplemented,
    /// The caller cannot fix it; its detail is for the log only.
    Internal,
}

impl Error {
    /// The sort of failure, which each door maps to its own answer.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Unauthorized | Error::InvalidCredentials | Error::SecondFactorRefused(_) => {
                ErrorKind::Unauthenticated
            }
            Error::Forbidden | Error::NotPermitted(_) => ErrorKind::Forbidden,
            Error::BadRequest { .. } => ErrorKind::BadRequest,
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Conflict(_)
            | Error::RevisionConflict { .. }
            | Error::AssetsReferenced { .. }
            | Error::DocumentReferenced { .. } => ErrorKind::Conflict,
            Error::Unprocessable(_) => ErrorKind::Unprocessable,
            Error::PayloadTooLarge(_) => ErrorKind::PayloadTooLarge,
            Error::TooManyRequests { .. } | Error::TooManyStreams { .. } => {
                ErrorKind::TooManyRequests
            }
            Error::Unavailable(_) | Error::TransformsBusy { .. } => ErrorKind::Unavailable,
            Error::NotImplemented(_) => ErrorKind::NotImplemented,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }

    /// The message a client may read: the error's own text, except that an internal error's
    /// detail is never public (the door logs it) and an access refusal says only that it is one.
    pub fn public_message(&self) -> String {
        match self {
            Error::Internal(_) => "internal error".to_string(),
            other => other.to_string(),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_internal_detail_is_never_public() {
        let e = Error::Internal("connection refused at 10.0.0.7".into());
        assert_eq!(e.kind(), ErrorKind::Internal);
        assert_eq!(e.public_message(), "internal error");
    }

    #[test]
    fn access_refusals_say_only_that() {
        assert_eq!(Error::Forbidden.public_message(), "access denied");
        assert_eq!(
            Error::Unauthorized.public_message(),
            "authentication required"
        );
        assert_eq!(Error::Forbidden.kind(), ErrorKind::Forbidden);
        assert_eq!(Error::InvalidCredentials.kind(), ErrorKind::Unauthenticated);
    }

    #[test]
    fn the_blocked_writes_are_conflicts() {
        for e in [
            Error::Conflict("taken".into()),
            Error::RevisionConflict {
                expected: 1,
                current: 2,
            },
            Error::AssetsReferenced {
                ids: vec!["a".into()],
            },
            Error::DocumentReferenced {
                count: 1,
                referrers: Vec::new(),
            },
        ] {
            assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
        }
    }
}
