//! Extractors: JSON bodies and query strings with errors in our envelope, and the
//! authenticated actor.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use cms_service::{Actor, ClientInfo, Error};
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::middleware;

/// The token of an `Authorization: Bearer <token>` header, for the endpoints that take a
/// configured secret rather than a credential (the worker endpoint, /metrics); the service
/// compares it.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

/// `axum::Json`, with its rejections (malformed JSON 400, wrong content type 415, body over
/// the limit 413) rendered in the handler-layer envelope.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(value) = axum::Json::<serde_json::Value>::from_request(req, state).await?;
        if let Some(path) = nul_path(&value, String::new()) {
            return Err(ApiError::Service(Error::invalid(vec![
                cms_core::Issue::new(
                    path,
                    "invalid",
                    "holds a NUL character (\\u0000), which no value can hold",
                ),
            ])));
        }
        serde_path_to_error::deserialize(value)
            .map(ApiJson)
            .map_err(|e| refusal(e, "the body", "the body at"))
    }
}

/// A body that may be left out: `None` when the request has no `Content-Type` (an empty POST),
/// else exactly as [`ApiJson`] reads it.
impl<T: DeserializeOwned, S: Send + Sync> axum::extract::OptionalFromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        if !req.headers().contains_key(axum::http::header::CONTENT_TYPE) {
            return Ok(None);
        }
        <ApiJson<T> as FromRequest<S>>::from_request(req, state)
            .await
            .map(Some)
    }
}

/// Where in `value` a key or string holds a NUL character, as an issue path (`data.tags[2]`).
/// PostgreSQL can store none in text or jsonb, so like a NUL in the URL
/// (`middleware::refuse_nul`) it is refused at the door, the same on every store, rather than
/// failing deep inside a query.
fn nul_path(value: &serde_json::Value, path: String) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::String(s) => s.contains('\0').then_some(path),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_path(item, format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            if key.contains('\0') {
                return Some(path.clone());
            }
            let child = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            nul_path(item, child)
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// The query string decoded into `T` (repeated keys into a `Vec`, `page=` as absent), with a
/// failure (invalid percent-encoding, a parameter of the wrong type, a scalar parameter given
/// twice) rendered as a 400 that names the parameter, in the handler-layer envelope.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let deserializer = serde_html_form::Deserializer::from_bytes(query.as_bytes());
        serde_path_to_error::deserialize(deserializer)
            .map(ApiQuery)
            .map_err(|e| refusal(e, "the query string", "the query parameter"))
    }
}

/// A 400 naming where the input failed to decode: `{whole} is not valid: ...` at the top, or
/// `{part} `x.y` is not valid: ...` at a path.
fn refusal<E: std::fmt::Display>(
    e: serde_path_to_error::Error<E>,
    whole: &str,
    part: &str,
) -> ApiError {
    let path = e.path().to_string();
    let message = if path == "." {
        format!("{whole} is not valid: {}", e.inner())
    } else {
        format!("{part} `{path}` is not valid: {}", e.inner())
    };
    ApiError::Service(Error::bad_request(message))
}

/// The authenticated actor; a request without valid credentials is refused with 401 before the
/// handler runs.
pub struct Authed(pub Actor);

impl<S: Send + Sync> FromRequestParts<S> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Actor>()
            .cloned()
            .map(Authed)
            .ok_or(ApiError::Service(Error::Unauthorized))
    }
}

/// The actor when there is one; for endpoints that also answer the signed-out (the session,
/// the admin's pages, the API reference, `/media`). An anonymous `public` reader counts as
/// signed out there: it is nobody, and those endpoints decide by who is asking.
pub struct MaybeAuthed(pub Option<Actor>);

impl<S: Send + Sync> FromRequestParts<S> for MaybeAuthed {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(MaybeAuthed(
            parts
                .extensions
                .get::<Actor>()
                .filter(|a| !a.is_public())
                .cloned(),
        ))
    }
}

/// The client's address and user agent: recorded on new sessions, and what rate limits count
/// (`cms.rate_limits().hit(route, client.ip_address, email)`). The address is the one
/// [`middleware::resolve_actor`] resolved (the socket peer, or what trusted proxies forwarded),
/// so plugin handlers, whose state is not the door's, read the same address.
pub struct Client(pub ClientInfo);

impl<S: Send + Sync> FromRequestParts<S> for Client {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let address = parts.extensions.get::<middleware::ClientAddress>();
        Ok(Client(ClientInfo {
            ip_address: address.and_then(|a| a.0).map(|ip| ip.to_string()),
            user_agent: parts
                .headers
                .get(axum::http::header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map(String::from),
        }))
    }
}
