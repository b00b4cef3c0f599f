//! CORS (CONTRACT.md section 15): the origins of `cors.origins` may call the API from a browser,
//! with credentials; `["*"]` lets any origin read without credentials; any other origin gets
//! no CORS header at all, so its browser keeps the answer from it.
//!
//! tower-http's `CorsLayer` writes the headers, but answers a preflight from any origin with
//! the allowed methods and headers. So a gate in front decides first: only a request from an
//! admitted origin goes through the `CorsLayer`; every other request passes by it untouched.
//! The gate stands outside the resolution of the caller, so a preflight (which carries no
//! credentials) never reaches authentication, the CSRF check or a rate limit.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use tower::{Layer, ServiceExt};
use tower_http::cors::{AllowOrigin, Any, CorsLayer};

use crate::csrf::{self, Origin};

/// `cors.origins` as the router takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorsOrigins {
    /// These origins (`scheme://host[:port]`), with credentials; none at all by default.
    Listed(Vec<String>),
    /// `["*"]`: any origin, never with credentials.
    Any,
}

/// `cors.*`.
#[derive(Debug, Clone)]
pub struct CorsSettings {
    pub origins: CorsOrigins,
    /// How long a browser may keep a preflight's answer (`cors.maxAgeSeconds`).
    pub max_age_seconds: u64,
}

impl Default for CorsSettings {
    fn default() -> Self {
        CorsSettings {
            origins: CorsOrigins::Listed(Vec::new()),
            max_age_seconds: 600,
        }
    }
}

/// The request headers a page on an admitted origin may send.
const ALLOWED_HEADERS: [HeaderName; 6] = [
    header::CONTENT_TYPE,
    HeaderName::from_static("x-api-key"),
    header::AUTHORIZATION,
    header::IF_NONE_MATCH,
    HeaderName::from_static("x-cms-organization"),
    HeaderName::from_static("x-cms-preview"),
];

/// The response headers such a page may read besides the always-safe ones.
const EXPOSED_HEADERS: [HeaderName; 2] = [header::ETAG, HeaderName::from_static("x-request-id")];

/// Who is admitted, and the layer that writes their headers.
#[derive(Clone)]
pub(crate) struct CorsPolicy {
    admitted: Admitted,
    layer: CorsLayer,
}

#[derive(Clone)]
enum Admitted {
    Listed(Arc<[Origin]>),
    Any,
}

impl CorsPolicy {
    pub(crate) fn new(settings: &CorsSettings) -> Self {
        let layer = CorsLayer::new()
            .allow_methods([
                Method::GET,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
                Method::OPTIONS,
            ])
            .allow_headers(ALLOWED_HEADERS)
            .expose_headers(EXPOSED_HEADERS)
            .max_age(Duration::from_secs(settings.max_age_seconds));
        match &settings.origins {
            CorsOrigins::Any => CorsPolicy {
                admitted: Admitted::Any,
                layer: layer.allow_origin(Any),
            },
            CorsOrigins::Listed(origins) => CorsPolicy {
                admitted: Admitted::Listed(
                    origins.iter().filter_map(|o| Origin::of_url(o)).collect(),
                ),
                // The gate has admitted the origin already: echoing it is the list's answer.
                layer: layer
                    .allow_origin(AllowOrigin::mirror_request())
                    .allow_credentials(true),
            },
        }
    }

    /// Whether the request's `Origin` is admitted.
    fn admits(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return false;
        };
        match &self.admitted {
            Admitted::Any => true,
            Admitted::Listed(listed) => origin
                .to_str()
                .ok()
                .and_then(Origin::of_url)
                .is_some_and(|origin| listed.contains(&origin)),
        }
    }

    /// Whether a cookie-authenticated write comes from a listed origin, which the CSRF check
    /// lets pass like the instance's own (CONTRACT.md section 15). `["*"]` lists nobody: it
    /// never carries credentials.
    pub(crate) fn lets_write(&self, headers: &HeaderMap) -> bool {
        match &self.admitted {
            Admitted::Any => false,
            Admitted::Listed(listed) => {
                csrf::claimed_origin(headers).is_some_and(|origin| listed.contains(&origin))
            }
        }
    }
}

/// The gate: an admitted origin's request goes through the `CorsLayer` (a preflight is
/// answered there, 204); any other passes by it.
pub(crate) async fn gate(State(policy): State<CorsPolicy>, req: Request, next: Next) -> Response {
    if !policy.admits(req.headers()) {
        return next.run(req).await;
    }
    let preflight = req.method() == Method::OPTIONS;
    let result: Result<Response, Infallible> = policy.layer.layer(next).oneshot(req).await;
    let Ok(mut response) = result;
    // The CorsLayer answers a preflight 200 with no body; there is no content, so 204.
    if preflight && response.status() == StatusCode::OK {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}
