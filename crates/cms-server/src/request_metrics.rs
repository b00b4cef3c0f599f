//! Counting and timing every HTTP request for GET /metrics (docs/METRICS.md), in one layer.
//!
//! The layer is added with `Router::layer`, which wraps each route (and the fallback) on its
//! own, after routing: the request then carries the template it matched (`MatchedPath`,
//! `/api/documents/{id}`), which is the `route` label. A request no route matched has none and
//! is counted under one fixed label (`unmatched`), so neither ids in paths nor a scanner's
//! random URLs can multiply the series. The time is to the response head: a streamed body (an
//! event stream, a large download) goes on after it.
//!
//! A tower service of its own rather than `middleware::from_fn`: that one clones the whole
//! stack inside it at every call, and this layer is outside all the others (docs/PERFORMANCE.md,
//! "Operations").

use std::convert::Infallible;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::response::Response;
use cms_service::Cms;
use futures_util::future::BoxFuture;
use tower::{Layer, Service};

/// Wraps a route in [`Recorded`].
#[derive(Clone)]
pub struct RecordLayer {
    cms: Cms,
}

impl RecordLayer {
    pub fn new(cms: Cms) -> Self {
        RecordLayer { cms }
    }
}

impl<S> Layer<S> for RecordLayer {
    type Service = Recorded<S>;

    fn layer(&self, inner: S) -> Recorded<S> {
        Recorded {
            inner,
            cms: self.cms.clone(),
        }
    }
}

/// A route whose requests are counted and timed.
#[derive(Clone)]
pub struct Recorded<S> {
    inner: S,
    cms: Cms,
}

impl<S> Service<Request> for Recorded<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        if !self.cms.metrics().enabled() {
            return Box::pin(self.inner.call(req));
        }
        let started = Instant::now();
        let method = req.method().clone();
        // The template is shared (`Arc<str>` inside): cloning it allocates nothing.
        let route = req.extensions().get::<MatchedPath>().cloned();
        let response = self.inner.call(req);
        let cms = self.cms.clone();
        Box::pin(async move {
            let response = response.await?;
            cms.metrics().record_request(
                method.as_str(),
                route.as_ref().map(MatchedPath::as_str),
                response.status().as_u16(),
                started.elapsed(),
            );
            Ok(response)
        })
    }
}
