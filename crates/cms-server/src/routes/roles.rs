//! `/api/roles`: the organization's roles (sessions only; the service refuses keys).

use axum::extract::{Path, State};
use axum::response::IntoResponse;
use axum::{Router, routing};
use cms_service::{NewRole, RoleEdit};
use serde::Deserialize;
use serde_json::json;

use super::{created, ok};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiJson, Authed};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/roles", routing::get(list).post(create))
        .route("/api/roles/{name}", routing::patch(update).delete(delete))
}

#[derive(Deserialize)]
struct CreateBody {
    name: Option<String>,
    description: Option<String>,
    capabilities: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct EditBody {
    description: Option<String>,
    capabilities: Option<Vec<String>>,
}

async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.roles().list(&actor).await?))
}

async fn create(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<CreateBody>,
) -> ApiResult<impl IntoResponse> {
    let input = NewRole {
        name: body.name,
        description: body.description,
        capabilities: body.capabilities,
    };
    Ok(created(state.cms.roles().create(&actor, input).await?))
}

async fn update(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<EditBody>,
) -> ApiResult<impl IntoResponse> {
    let edit = RoleEdit {
        description: body.description,
        capabilities: body.capabilities,
    };
    Ok(ok(state.cms.roles().update(&actor, &name, edit).await?))
}

async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(name): Path<String>,
) -> ApiResult<impl IntoResponse> {
    let role = state.cms.roles().delete(&actor, &name).await?;
    Ok(ok(
        json!({ "id": role.id, "name": role.name, "deleted": true }),
    ))
}
