//! The one place where errors become HTTP responses.
//!
//! Two body shapes, as SPEC.md says: access refusals (401, 403) are the auth layer's
//! `{ "error" }`; everything else is the handler layer's `{ success: false, error, message,
//! issues? }`. The status is the service error's kind (`status_of`), the message its public
//! message; the extras of a few errors are added here. A 500 is logged with its detail and
//! answered without it.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cms_core::Issue;
use cms_service::{Error, ErrorKind};
use serde::Serialize;
use utoipa::ToSchema;

/// An error on its way to becoming a response.
#[derive(Debug)]
pub enum ApiError {
    Service(Error),
    /// A request the router or an extractor refused before any handler ran.
    Request {
        status: StatusCode,
        message: String,
    },
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError::Service(e)
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let status = match &rejection {
            JsonRejection::MissingJsonContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            // A body over the limit surfaces as a failed read with status 413.
            JsonRejection::BytesRejection(b) if b.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                StatusCode::PAYLOAD_TOO_LARGE
            }
            _ => StatusCode::BAD_REQUEST,
        };
        let message = match status {
            StatusCode::PAYLOAD_TOO_LARGE => "the request body is too large".to_string(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                "expected a body with `Content-Type: application/json`".to_string()
            }
            _ => rejection.body_text(),
        };
        ApiError::Request { status, message }
    }
}

/// The `error` string of a status (CONTRACT.md section 10).
pub fn error_name(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        // The MCP door's client that cannot take its answer's media type.
        406 => "Not Acceptable",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// The auth layer's body (401, 403): `{ "error" }`. A handler's own 401 or 403 carries the
/// handler-layer fields as well, which this shape admits.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccessRefusal {
    /// `Unauthorized` or `Forbidden`.
    pub error: String,
}

/// The handler layer's body: `{ success: false, error, message, issues? }`, plus
/// `currentRevision` on a revision conflict and `referencedIds` when referenced assets block a
/// delete.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// Always `false`.
    pub success: bool,
    /// The status name (`Bad Request`), or for `referencedIds` the count of blocking assets.
    pub error: String,
    pub message: String,
    /// Every problem found with the input, with its path.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<Issue>,
    /// The document's revision now, so the client can retry without another read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<i64>,
    /// The assets still referenced; nothing was deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referenced_ids: Option<Vec<String>>,
    /// The documents (those the caller may read, at most 100) that still reference the
    /// document a refused delete named; nothing was deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referenced_by: Option<Vec<String>>,
}

impl ErrorBody {
    fn new(status: StatusCode, message: &str) -> ErrorBody {
        ErrorBody {
            success: false,
            error: error_name(status).to_string(),
            message: message.to_string(),
            issues: Vec::new(),
            current_revision: None,
            referenced_ids: None,
            referenced_by: None,
        }
    }
}

/// The auth layer's body: `{ "error" }` only.
pub fn access_refusal(status: StatusCode) -> Response {
    let body = AccessRefusal {
        error: error_name(status).to_string(),
    };
    (status, Json(body)).into_response()
}

/// The answer for a path no endpoint serves (and for one that is turned off).
pub fn no_such_endpoint() -> Response {
    handler_error(StatusCode::NOT_FOUND, "no such endpoint", &[])
}

/// The handler layer's body.
pub fn handler_error(status: StatusCode, message: &str, issues: &[Issue]) -> Response {
    let body = ErrorBody {
        issues: issues.to_vec(),
        ..ErrorBody::new(status, message)
    };
    (status, Json(body)).into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let e = match self {
            ApiError::Request { status, message } => return handler_error(status, &message, &[]),
            ApiError::Service(e) => e,
        };
        let status = status_of(e.kind());
        match &e {
            Error::Unauthorized | Error::Forbidden => access_refusal(status),
            Error::BadRequest { issues, .. } => handler_error(status, &e.public_message(), issues),
            // The client needs the current revision to retry without another read.
            Error::RevisionConflict { current, .. } => {
                let body = ErrorBody {
                    current_revision: Some(*current),
                    ..ErrorBody::new(status, &e.public_message())
                };
                (status, Json(body)).into_response()
            }
            // SPEC.md Errors rule 3: `error` names the count, `referencedIds` lists them.
            Error::AssetsReferenced { ids } => {
                let body = ErrorBody {
                    error: e.public_message(),
                    referenced_ids: Some(ids.clone()),
                    ..ErrorBody::new(
                        status,
                        "nothing was deleted: remove the references to these assets first",
                    )
                };
                (status, Json(body)).into_response()
            }
            Error::DocumentReferenced { referrers, .. } => {
                let body = ErrorBody {
                    referenced_by: Some(referrers.clone()),
                    ..ErrorBody::new(status, &e.public_message())
                };
                (status, Json(body)).into_response()
            }
            Error::TooManyRequests { retry_after_secs }
            | Error::TooManyStreams { retry_after_secs }
            | Error::TransformsBusy { retry_after_secs } => {
                let mut response = handler_error(status, &e.public_message(), &[]);
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
                response
            }
            Error::Internal(detail) => {
                tracing::error!(error = %detail, "internal error");
                handler_error(status, "an internal error occurred", &[])
            }
            _ => handler_error(status, &e.public_message(), &[]),
        }
    }
}

/// The status of each kind of service error.
fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::Unauthenticated => StatusCode::UNAUTHORIZED,
        ErrorKind::Forbidden => StatusCode::FORBIDDEN,
        ErrorKind::BadRequest => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Unprocessable => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorKind::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorKind::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::NotImplemented => StatusCode::NOT_IMPLEMENTED,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_transforms_are_503_with_a_retry_hint() {
        let response = ApiError::Service(Error::TransformsBusy {
            retry_after_secs: 2,
        })
        .into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "2");
    }
}
