//! Errors as GraphQL errors: a service error with its `extensions.code`, and a bad argument.

use async_graphql::{ErrorExtensions, Value as GqlValue};
use cms_service::{Error, ErrorKind};
use serde_json::Value;

/// A service error as a GraphQL error with `extensions.code` and the error's public message.
pub fn gql_error(e: Error) -> async_graphql::Error {
    if let Error::Internal(detail) = &e {
        tracing::error!(error = %detail, "GraphQL resolver failed");
    }
    let message = match e.kind() {
        // No resolver signs in: whatever refused the credentials, the answer is that they are
        // needed.
        ErrorKind::Unauthenticated => "authentication required".to_string(),
        _ => e.public_message(),
    };
    async_graphql::Error::new(message).extend_with(|_, ext| {
        ext.set("code", code(e.kind()));
        match &e {
            Error::BadRequest { issues, .. } if !issues.is_empty() => {
                let issues = serde_json::to_value(issues).unwrap_or(Value::Null);
                if let Ok(v) = GqlValue::from_json(issues) {
                    ext.set("issues", v);
                }
            }
            Error::RevisionConflict { current, .. } => ext.set("currentRevision", *current),
            Error::DocumentReferenced { referrers, .. } => {
                let ids: Vec<GqlValue> = referrers
                    .iter()
                    .map(|id| GqlValue::from(id.as_str()))
                    .collect();
                ext.set("referencedBy", GqlValue::List(ids))
            }
            _ => {}
        }
    })
}

/// The `extensions.code` of each kind of service error: a value refused as unprocessable and a
/// body too large are a `BAD_REQUEST` like any other bad input.
fn code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Unauthenticated => "UNAUTHENTICATED",
        ErrorKind::Forbidden => "FORBIDDEN",
        ErrorKind::BadRequest | ErrorKind::Unprocessable | ErrorKind::PayloadTooLarge => {
            "BAD_REQUEST"
        }
        ErrorKind::NotFound => "NOT_FOUND",
        ErrorKind::Conflict => "CONFLICT",
        ErrorKind::TooManyRequests => "TOO_MANY_REQUESTS",
        ErrorKind::Unavailable => "UNAVAILABLE",
        ErrorKind::NotImplemented => "NOT_IMPLEMENTED",
        ErrorKind::Internal => "INTERNAL",
    }
}

/// A bad argument (or a limit reached): `BAD_REQUEST` with `message`.
pub(super) fn bad(message: &str) -> async_graphql::Error {
    gql_error(Error::bad_request(message))
}
