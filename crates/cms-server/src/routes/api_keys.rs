//! `/api/settings/api-keys`: create (secret shown once), list (no secrets), delete.

use axum::extract::{Path, State};
use axum::response::IntoResponse;
use axum::{Router, routing};
use cms_service::NewApiKey;
use serde::Deserialize;
use serde_json::json;

use super::{created, ok};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiJson, Authed};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/settings/api-keys", routing::get(list).post(create))
        .route("/api/settings/api-keys/{id}", routing::delete(delete))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateBody {
    name: Option<String>,
    permissions: Option<Vec<String>>,
    capabilities: Option<Vec<String>>,
    expires_in_days: Option<i64>,
}

async fn create(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<CreateBody>,
) -> ApiResult<impl IntoResponse> {
    let input = NewApiKey {
        name: body.name,
        permissions: body.permissions,
        capabilities: body.capabilities,
        expires_in_days: body.expires_in_days,
    };
    Ok(created(state.cms.api_keys().create(&actor, input).await?))
}

async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.api_keys().list(&actor).await?))
}

async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    state.cms.api_keys().delete(&actor, &id).await?;
    Ok(ok(json!({ "id": id, "deleted": true })))
}
