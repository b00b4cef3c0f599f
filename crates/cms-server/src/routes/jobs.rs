//! Jobs and events (SPEC.md "Jobs and events", CONTRACT.md section 7) and the worker endpoint
//! (SPEC.md Authentication point 9).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing};
use cms_core::JobStatus;
use cms_service::Error;
use cms_service::documents::Pagination;
use cms_service::jobs::{EventListRequest, JobListRequest, Scope};
use serde::Deserialize;
use serde_json::json;

use super::ok;
use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiQuery, Authed};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/jobs", routing::get(list))
        .route("/api/jobs/health", routing::get(health))
        .route("/api/jobs/{id}/retry", routing::post(retry))
        .route("/api/jobs/{id}/cancel", routing::post(cancel))
        .route("/api/events", routing::get(events))
        .route("/api/internal/workers/run", routing::post(run_worker))
}

const DEFAULT_PAGE_SIZE: i64 = 20;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    status: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    after: Option<String>,
    page: Option<String>,
    page_size: Option<String>,
    scope: Option<String>,
}

impl ListQuery {
    fn page(&self) -> ApiResult<(i64, i64)> {
        Ok((
            integer("page", self.page.as_deref(), 1)?,
            integer("pageSize", self.page_size.as_deref(), DEFAULT_PAGE_SIZE)?,
        ))
    }
}

fn integer(name: &str, raw: Option<&str>, default: i64) -> ApiResult<i64> {
    match raw {
        None | Some("") => Ok(default),
        Some(v) => v.parse().map_err(|_| {
            ApiError::Service(Error::bad_request(format!("`{name}` must be an integer")))
        }),
    }
}

fn scope(raw: Option<&str>) -> ApiResult<Scope> {
    match raw {
        None | Some("") => Ok(Scope::Organization),
        Some("all") => Ok(Scope::All),
        Some(_) => Err(ApiError::Service(Error::bad_request(
            "`scope` is `all` or absent",
        ))),
    }
}

fn empty_is_none(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<impl IntoResponse> {
    let (page, page_size) = query.page()?;
    let status = match empty_is_none(query.status) {
        None => None,
        Some(raw) => Some(JobStatus::parse(&raw).ok_or_else(|| {
            let names: Vec<&str> = JobStatus::ALL.map(JobStatus::as_str).to_vec();
            ApiError::Service(Error::bad_request(format!(
                "`status` is one of {}",
                names.join(", ")
            )))
        })?),
    };
    let request = JobListRequest {
        scope: scope(query.scope.as_deref())?,
        status,
        job_type: empty_is_none(query.kind),
        page,
        page_size,
    };
    let (jobs, total) = state.cms.jobs().list(&actor, request).await?;
    let pagination = Pagination::new(total, page, page_size);
    Ok(Json(
        json!({ "success": true, "data": jobs, "pagination": pagination }),
    ))
}

async fn health(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<impl IntoResponse> {
    let scope = scope(query.scope.as_deref())?;
    Ok(ok(state.cms.jobs().health(&actor, scope).await?))
}

async fn retry(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.jobs().retry(&actor, &id).await?))
}

async fn cancel(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.jobs().cancel(&actor, &id).await?))
}

async fn events(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<impl IntoResponse> {
    let (page, page_size) = query.page()?;
    let request = EventListRequest {
        scope: scope(query.scope.as_deref())?,
        event_type: empty_is_none(query.kind),
        after: empty_is_none(query.after),
        page,
        page_size,
    };
    let (events, total) = state.cms.jobs().events(&actor, request).await?;
    let pagination = Pagination::new(total, page, page_size);
    Ok(Json(
        json!({ "success": true, "data": events, "pagination": pagination }),
    ))
}

/// One worker tick for an external driver; the service checks the Bearer secret.
async fn run_worker(State(state): State<AppState>, headers: HeaderMap) -> ApiResult<Response> {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let report = state.cms.worker().tick_for(given).await?;
    Ok(Json(json!({ "success": true, "result": report })).into_response())
}
