//! `/api/webhooks`: the active organization's webhook endpoints (CONTRACT.md section 16), for
//! callers holding `org.settings`. The secret is in the answers of create and rotate only.
//! While webhooks are off (`plugins.webhooks = false`) every route answers 404.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use cms_service::webhooks::{
    CreatedWebhookEndpoint, DeletedWebhookEndpoint, EndpointChange, NewEndpoint, WebhookDelivery,
    WebhookEndpoint, WebhookSecret,
};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::params::page;
use super::{Data, Paged, created, ok, paged};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiQuery, Authed};

const TAG: &str = "webhooks";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(rotate_secret))
        .routes(routes!(test))
        .routes(routes!(deliveries))
}

/// A new endpoint. Its signing secret is made by the service, never given.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WebhookCreateBody {
    /// An absolute `http` or `https` URL (at most 2000 characters).
    #[schema(value_type = String, required = true)]
    url: Option<String>,
    /// `["*"]` for every event type, or built-in and declared event types, each once.
    #[schema(value_type = Vec<String>, required = true)]
    events: Option<Vec<String>>,
    /// At most 500 characters.
    description: Option<String>,
    /// Whether it receives events (default `true`).
    enabled: Option<bool>,
}

/// The fields to change; the others are kept. The secret is not among them: rotate it.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WebhookUpdateBody {
    url: Option<String>,
    events: Option<Vec<String>>,
    description: Option<String>,
    /// `false` stops deliveries (those waiting are cancelled); `true` resumes with events
    /// committed from then on.
    enabled: Option<bool>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct DeliveriesQuery {
    /// The page, from 1.
    #[param(value_type = Option<i64>, minimum = 1)]
    page: Option<String>,
    /// Deliveries per page, 1 to 100 (default 20).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    page_size: Option<String>,
}

/// The active organization's endpoints, oldest first, each with its newest delivery; never a
/// secret. Needs `org.settings`.
#[utoipa::path(get, path = "/api/webhooks", tag = TAG,
    responses(
        (status = 200, description = "The endpoints", body = Data<Vec<WebhookEndpoint>>),
        (status = 404, description = "Webhooks are off (plugins.webhooks)", body = ErrorBody),
    ))]
async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Vec<WebhookEndpoint>>>> {
    Ok(ok(state.cms.webhooks().list(&actor).await?))
}

/// Creates an endpoint; its signing secret (`whsec_...`) is in this answer only. An
/// organization has at most 20 endpoints. Needs `org.settings`.
#[utoipa::path(post, path = "/api/webhooks", tag = TAG, request_body = WebhookCreateBody,
    responses(
        (status = 201, description = "The endpoint with its secret", body = Data<CreatedWebhookEndpoint>),
        (status = 404, description = "Webhooks are off (plugins.webhooks)", body = ErrorBody),
        (status = 409, description = "The organization has 20 endpoints already", body = ErrorBody),
        (status = 422, description = "No encryption key is configured to store the secret", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<WebhookCreateBody>,
) -> ApiResult<(StatusCode, Json<Data<CreatedWebhookEndpoint>>)> {
    let input = NewEndpoint {
        url: body.url,
        events: body.events,
        description: body.description,
        enabled: body.enabled,
    };
    Ok(created(state.cms.webhooks().create(&actor, input).await?))
}

/// One endpoint, without its secret. Needs `org.settings`.
#[utoipa::path(get, path = "/api/webhooks/{id}", tag = TAG,
    params(("id" = String, Path, description = "The endpoint id")),
    responses(
        (status = 200, description = "The endpoint", body = Data<WebhookEndpoint>),
        (status = 404, description = "No such endpoint in the organization", body = ErrorBody),
    ))]
async fn get(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<WebhookEndpoint>>> {
    Ok(ok(state.cms.webhooks().get(&actor, &id).await?))
}

/// Changes any field but the secret. Needs `org.settings`.
#[utoipa::path(patch, path = "/api/webhooks/{id}", tag = TAG, request_body = WebhookUpdateBody,
    params(("id" = String, Path, description = "The endpoint id")),
    responses(
        (status = 200, description = "The endpoint as changed", body = Data<WebhookEndpoint>),
        (status = 404, description = "No such endpoint in the organization", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<WebhookUpdateBody>,
) -> ApiResult<Json<Data<WebhookEndpoint>>> {
    let change = EndpointChange {
        url: body.url,
        events: body.events,
        description: body.description,
        enabled: body.enabled,
    };
    Ok(ok(state.cms.webhooks().update(&actor, &id, change).await?))
}

/// Deletes an endpoint and its delivery log; deliveries still waiting are cancelled. Needs
/// `org.settings`.
#[utoipa::path(delete, path = "/api/webhooks/{id}", tag = TAG,
    params(("id" = String, Path, description = "The endpoint id")),
    responses(
        (status = 200, description = "Deleted", body = Data<DeletedWebhookEndpoint>),
        (status = 404, description = "No such endpoint in the organization", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<DeletedWebhookEndpoint>>> {
    Ok(ok(state.cms.webhooks().delete(&actor, &id).await?))
}

/// Replaces the signing secret; the new one is in this answer only, and signs every attempt
/// from now on. Needs `org.settings`.
#[utoipa::path(post, path = "/api/webhooks/{id}/rotate-secret", tag = TAG,
    params(("id" = String, Path, description = "The endpoint id")),
    responses(
        (status = 200, description = "The new secret", body = Data<WebhookSecret>),
        (status = 404, description = "No such endpoint in the organization", body = ErrorBody),
        (status = 422, description = "No encryption key is configured to store the secret", body = ErrorBody),
    ))]
async fn rotate_secret(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<WebhookSecret>>> {
    Ok(ok(state.cms.webhooks().rotate_secret(&actor, &id).await?))
}

/// Enqueues a `webhook.test` delivery to this endpoint only (also while it is disabled). Needs
/// `org.settings`.
#[utoipa::path(post, path = "/api/webhooks/{id}/test", tag = TAG,
    params(("id" = String, Path, description = "The endpoint id")),
    responses(
        (status = 202, description = "The delivery, waiting for the worker", body = Data<WebhookDelivery>),
        (status = 404, description = "No such endpoint in the organization", body = ErrorBody),
    ))]
async fn test(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<Data<WebhookDelivery>>)> {
    let delivery = state.cms.webhooks().test(&actor, &id).await?;
    Ok((StatusCode::ACCEPTED, ok(delivery)))
}

/// The endpoint's deliveries, newest first: each one's job status, attempts, last error and
/// the HTTP status of its last attempt. Needs `org.settings`.
#[utoipa::path(get, path = "/api/webhooks/{id}/deliveries", tag = TAG,
    params(("id" = String, Path, description = "The endpoint id"), DeliveriesQuery),
    responses(
        (status = 200, description = "A page of deliveries", body = Paged<WebhookDelivery>),
        (status = 404, description = "No such endpoint in the organization", body = ErrorBody),
    ))]
async fn deliveries(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<DeliveriesQuery>,
) -> ApiResult<Json<Paged<WebhookDelivery>>> {
    let (page, page_size) = page(query.page.as_deref(), query.page_size.as_deref())?;
    let (data, pagination) = state
        .cms
        .webhooks()
        .deliveries(&actor, &id, page, page_size)
        .await?;
    Ok(paged(data, pagination))
}
