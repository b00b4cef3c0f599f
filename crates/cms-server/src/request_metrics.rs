//! Counting and timing every HTTP request for GET /metrics (docs/METRICS.md), in one layer.
//!
//! The layer is added with `Router::layer`, which wraps each route (and the fallback) on its
//! own, after routing: the request then carries the template it matched (`MatchedPath`,
//! `/api/documents/{id}`), which is the `route` label. A request no route matched has none and
//! is counted under one fixed label (`unmatched`), so neither ids in paths nor a scanner's
//! random URLs can multiply the series. The time is to the response head: a streamed body (an
//! event stream, a large download) goes on after it.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use cms_service::Cms;

pub async fn record(State(cms): State<Cms>, req: Request, next: Next) -> Response {
    let metrics = cms.metrics();
    if !metrics.enabled() {
        return next.run(req).await;
    }
    let started = Instant::now();
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_string());
    let response = next.run(req).await;
    metrics.record_request(
        method.as_str(),
        route.as_deref(),
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}
