//! Jobs and events (SPEC.md "Jobs and events", CONTRACT.md section 7) and the worker endpoint
//! (SPEC.md Authentication point 9).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use cms_core::JobStatus;
use cms_service::Error;
use cms_service::TickReport;
use cms_service::jobs::{EventListRequest, EventView, JobListRequest, JobView, QueueHealth};
use serde::{Deserialize, Serialize};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ComponentsBuilder, OpenApiBuilder};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::params::{page, scope, text};
use super::{Data, Paged, ok, paged};
use crate::AppState;
use crate::error::{AccessRefusal, ApiError, ApiResult};
use crate::extract::{ApiQuery, Authed, bearer_token};

const TAG: &str = "jobs";

/// The security scheme of the worker endpoint: the configured worker secret as a Bearer token.
const WORKER_SECRET: &str = "workerSecret";

pub fn routes() -> OpenApiRouter<AppState> {
    // The worker endpoint's scheme is declared here, with the one route that uses it.
    let worker_secret = SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(
                "The worker secret (config `jobs.workerSecret`, CMS_WORKER_SECRET) as \
                 `Authorization: Bearer <secret>`; only POST /api/internal/workers/run takes it.",
            ))
            .build(),
    );
    let doc = OpenApiBuilder::new()
        .components(Some(
            ComponentsBuilder::new()
                .security_scheme(WORKER_SECRET, worker_secret)
                .build(),
        ))
        .build();
    OpenApiRouter::with_openapi(doc)
        .routes(routes!(list))
        .routes(routes!(health))
        .routes(routes!(retry))
        .routes(routes!(cancel))
        .routes(routes!(events))
        .routes(routes!(run_worker))
}

/// Whose jobs or events are read.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ScopeQuery {
    /// `all`: the whole instance (instance super admins only); absent: the active organization.
    #[serde(default, deserialize_with = "text")]
    #[param(pattern = "^all$")]
    scope: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct JobsQuery {
    /// Only jobs in this status.
    #[serde(default, deserialize_with = "text")]
    #[param(value_type = Option<JobStatus>)]
    status: Option<String>,
    /// Only jobs of this type.
    #[serde(rename = "type", default, deserialize_with = "text")]
    kind: Option<String>,
    /// The page, from 1.
    #[param(value_type = Option<i64>, minimum = 1)]
    page: Option<String>,
    /// Jobs per page, 1 to 100 (default 20).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    page_size: Option<String>,
    /// `all`: the whole instance (instance super admins only); absent: the active organization.
    #[serde(default, deserialize_with = "text")]
    #[param(pattern = "^all$")]
    scope: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct EventsQuery {
    /// Only events of this type.
    #[serde(rename = "type", default, deserialize_with = "text")]
    kind: Option<String>,
    /// An event id: only newer events, oldest first (newest first otherwise).
    #[serde(default, deserialize_with = "text")]
    after: Option<String>,
    /// The page, from 1.
    #[param(value_type = Option<i64>, minimum = 1)]
    page: Option<String>,
    /// Events per page, 1 to 100 (default 20).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    page_size: Option<String>,
    /// `all`: the whole instance (instance super admins only); absent: the active organization.
    #[serde(default, deserialize_with = "text")]
    #[param(pattern = "^all$")]
    scope: Option<String>,
}

/// The jobs of the active organization (or the instance), newest first; needs `document.read`.
#[utoipa::path(get, path = "/api/jobs", tag = TAG, params(JobsQuery),
    responses((status = 200, description = "A page of jobs", body = Paged<JobView>)))]
async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(query): ApiQuery<JobsQuery>,
) -> ApiResult<Json<Paged<JobView>>> {
    let (page, page_size) = page(query.page.as_deref(), query.page_size.as_deref())?;
    let status = match query.status {
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
        job_type: query.kind,
        page,
        page_size,
    };
    let (jobs, pagination) = state.cms.jobs().list(&actor, request).await?;
    Ok(paged(jobs, pagination))
}

/// Job counts per status, the oldest due pending job's wait and the outbox backlog; needs
/// `document.read`.
#[utoipa::path(get, path = "/api/jobs/health", tag = TAG, params(ScopeQuery),
    responses((status = 200, description = "The queue's health", body = Data<QueueHealth>)))]
async fn health(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(query): ApiQuery<ScopeQuery>,
) -> ApiResult<Json<Data<QueueHealth>>> {
    let scope = scope(query.scope.as_deref())?;
    Ok(ok(state.cms.jobs().health(&actor, scope).await?))
}

/// Requeues a `failed` or `dead_letter` job with its attempts reset; needs `document.publish`
/// (instance-wide jobs: instance super admins).
#[utoipa::path(post, path = "/api/jobs/{id}/retry", tag = TAG,
    params(("id" = String, Path, description = "The job id")),
    responses(
        (status = 200, description = "The requeued job", body = Data<JobView>),
        (status = 409, description = "The job is neither failed nor dead-lettered", body = crate::error::ErrorBody),
    ))]
async fn retry(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<JobView>>> {
    Ok(ok(state.cms.jobs().retry(&actor, &id).await?))
}

/// Cancels a `pending` job; needs `document.publish` (instance-wide jobs: instance super
/// admins).
#[utoipa::path(post, path = "/api/jobs/{id}/cancel", tag = TAG,
    params(("id" = String, Path, description = "The job id")),
    responses(
        (status = 200, description = "The cancelled job", body = Data<JobView>),
        (status = 409, description = "The job is not pending", body = crate::error::ErrorBody),
    ))]
async fn cancel(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<JobView>>> {
    Ok(ok(state.cms.jobs().cancel(&actor, &id).await?))
}

/// The event log of the active organization (or the instance); needs `document.read`.
#[utoipa::path(get, path = "/api/events", tag = TAG, params(EventsQuery),
    responses((status = 200, description = "A page of events", body = Paged<EventView>)))]
async fn events(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> ApiResult<Json<Paged<EventView>>> {
    let (page, page_size) = page(query.page.as_deref(), query.page_size.as_deref())?;
    let request = EventListRequest {
        scope: scope(query.scope.as_deref())?,
        event_type: query.kind,
        after: query.after,
        page,
        page_size,
    };
    let (events, pagination) = state.cms.jobs().events(&actor, request).await?;
    Ok(paged(events, pagination))
}

/// What one worker tick did.
#[derive(Debug, Serialize, ToSchema)]
struct WorkerRun {
    /// Always `true`.
    success: bool,
    result: TickReport,
}

/// Runs one worker tick (the relay, then one batch of due jobs) for an external driver. Only
/// a caller presenting the worker secret as a Bearer token may: sessions and API keys are not
/// accepted. While no worker secret is configured the endpoint does not exist (404).
#[utoipa::path(post, path = "/api/internal/workers/run", tag = TAG,
    security(("workerSecret" = [])),
    responses(
        (status = 200, description = "What the tick did", body = WorkerRun),
        (status = 401, description = "The worker secret is missing or wrong", body = AccessRefusal),
        (status = 404, description = "No worker secret is configured", body = crate::error::ErrorBody),
    ))]
async fn run_worker(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> ApiResult<Json<WorkerRun>> {
    let report = state.cms.worker().tick_for(bearer_token(&headers)).await?;
    Ok(Json(WorkerRun {
        success: true,
        result: report,
    }))
}
