//! `/api/settings/api-keys`: create (secret shown once), list (no secrets), delete.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use cms_service::{ApiKey, CreatedApiKey, NewApiKey};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, created, ok};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiJson, Authed};

const TAG: &str = "api-keys";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(delete))
}

/// A new key: `permissions` (coarse) or `capabilities` (an allowlist that alone decides),
/// within what its creator may do.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct NewApiKeyBody {
    name: Option<String>,
    /// `read` and/or `write`.
    permissions: Option<Vec<String>>,
    /// Capability names.
    capabilities: Option<Vec<String>>,
    /// Days until the key expires; absent for a key that does not expire.
    expires_in_days: Option<i64>,
}

/// Creates a key of the active organization; the secret is in this answer only.
#[utoipa::path(post, path = "/api/settings/api-keys", tag = TAG, request_body = NewApiKeyBody,
    responses((status = 201, description = "The new key with its secret", body = Data<CreatedApiKey>)))]
async fn create(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<NewApiKeyBody>,
) -> ApiResult<(StatusCode, Json<Data<CreatedApiKey>>)> {
    let input = NewApiKey {
        name: body.name,
        permissions: body.permissions,
        capabilities: body.capabilities,
        expires_in_days: body.expires_in_days,
    };
    Ok(created(state.cms.api_keys().create(&actor, input).await?))
}

/// The keys of the active organization, without their secrets.
#[utoipa::path(get, path = "/api/settings/api-keys", tag = TAG,
    responses((status = 200, description = "The keys", body = Data<Vec<ApiKey>>)))]
async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Vec<ApiKey>>>> {
    Ok(ok(state.cms.api_keys().list(&actor).await?))
}

/// What a delete reports.
#[derive(Debug, Serialize, ToSchema)]
struct ApiKeyDeleted {
    /// Always `true`.
    deleted: bool,
    id: String,
}

/// Deletes (revokes) a key.
#[utoipa::path(delete, path = "/api/settings/api-keys/{id}", tag = TAG,
    params(("id" = String, Path, description = "The key id")),
    responses((status = 200, description = "The key is gone", body = Data<ApiKeyDeleted>)))]
async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<ApiKeyDeleted>>> {
    state.cms.api_keys().delete(&actor, &id).await?;
    Ok(ok(ApiKeyDeleted { deleted: true, id }))
}
