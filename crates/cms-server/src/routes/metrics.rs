//! `GET /metrics` (CONTRACT.md section 19; docs/METRICS.md): the instance's metrics in the
//! Prometheus text format. Outside `/api`, where scrapers look for it. The service decides who
//! may read it (`metrics.enabled`, `metrics.token`); the handler hands it the Bearer token.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ComponentsBuilder, OpenApiBuilder};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{AccessRefusal, ApiResult, ErrorBody};
use crate::extract::bearer_token;

const TAG: &str = "metrics";

/// The media type of the Prometheus text exposition format.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

pub fn routes() -> OpenApiRouter<AppState> {
    // The scheme is declared here, with the one route that uses it.
    let token = SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(
                "The metrics token (config `metrics.token`, CMS_METRICS_TOKEN) as \
                 `Authorization: Bearer <token>`; only GET /metrics takes it, and only when it \
                 is set.",
            ))
            .build(),
    );
    let doc = OpenApiBuilder::new()
        .components(Some(
            ComponentsBuilder::new()
                .security_scheme("metricsToken", token)
                .build(),
        ))
        .build();
    OpenApiRouter::with_openapi(doc).routes(routes!(metrics))
}

/// The instance's metrics in the Prometheus text format (every metric: docs/METRICS.md). Open
/// by default; with `metrics.token` set, only a caller presenting it as a Bearer token may read
/// them (sessions and API keys are not accepted). With `metrics.enabled = false` the endpoint
/// does not exist (404).
#[utoipa::path(get, path = "/metrics", tag = TAG,
    security((), ("metricsToken" = [])),
    responses(
        (status = 200, description = "The metrics, in the Prometheus text format", content_type = "text/plain", body = String),
        (status = 401, description = "`metrics.token` is set and the request does not present it", body = AccessRefusal),
        (status = 404, description = "Metrics are turned off (`metrics.enabled = false`)", body = ErrorBody),
    ))]
async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> ApiResult<Response> {
    let text = state.cms.metrics().render(bearer_token(&headers)).await?;
    let mut response = text.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(PROMETHEUS_TEXT),
    );
    // A reading of now: no cache should answer the next scrape with it.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
