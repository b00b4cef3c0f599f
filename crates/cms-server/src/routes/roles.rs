//! `/api/roles`: the organization's roles (sessions only; the service refuses keys).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use cms_service::{NewRole, Role, RoleEdit};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, created, ok};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, Authed};

const TAG: &str = "roles";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(update, delete))
}

/// A new custom role.
#[derive(Deserialize, ToSchema)]
struct NewRoleBody {
    /// The role's name, unique in the organization.
    name: Option<String>,
    description: Option<String>,
    /// Capability names.
    capabilities: Option<Vec<String>>,
}

/// A change to a custom role: the fields given are replaced.
#[derive(Deserialize, ToSchema)]
struct RoleEditBody {
    description: Option<String>,
    /// Capability names.
    capabilities: Option<Vec<String>>,
}

/// The roles of the active organization, built-in and custom.
#[utoipa::path(get, path = "/api/roles", tag = TAG,
    responses((status = 200, description = "The roles", body = Data<Vec<Role>>)))]
async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Vec<Role>>>> {
    Ok(ok(state.cms.roles().list(&actor).await?))
}

/// Creates a custom role.
#[utoipa::path(post, path = "/api/roles", tag = TAG, request_body = NewRoleBody,
    responses(
        (status = 201, description = "The new role", body = Data<Role>),
        (status = 409, description = "A role with this name exists, or the name is a built-in one", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<NewRoleBody>,
) -> ApiResult<(StatusCode, Json<Data<Role>>)> {
    let input = NewRole {
        name: body.name,
        description: body.description,
        capabilities: body.capabilities,
    };
    Ok(created(state.cms.roles().create(&actor, input).await?))
}

/// Changes a custom role (built-in roles cannot be changed: 403).
#[utoipa::path(patch, path = "/api/roles/{name}", tag = TAG, request_body = RoleEditBody,
    params(("name" = String, Path, description = "The role's name")),
    responses((status = 200, description = "The changed role", body = Data<Role>)))]
async fn update(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<RoleEditBody>,
) -> ApiResult<Json<Data<Role>>> {
    let edit = RoleEdit {
        description: body.description,
        capabilities: body.capabilities,
    };
    Ok(ok(state.cms.roles().update(&actor, &name, edit).await?))
}

/// What a delete reports.
#[derive(Debug, Serialize, ToSchema)]
struct RoleDeleted {
    /// Always `true`.
    deleted: bool,
    id: String,
    name: String,
}

/// Deletes a custom role that no member holds.
#[utoipa::path(delete, path = "/api/roles/{name}", tag = TAG,
    params(("name" = String, Path, description = "The role's name")),
    responses(
        (status = 200, description = "The role is gone", body = Data<RoleDeleted>),
        (status = 409, description = "Members or invitations still hold the role", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(name): Path<String>,
) -> ApiResult<Json<Data<RoleDeleted>>> {
    let role = state.cms.roles().delete(&actor, &name).await?;
    Ok(ok(RoleDeleted {
        deleted: true,
        id: role.id,
        name: role.name,
    }))
}
