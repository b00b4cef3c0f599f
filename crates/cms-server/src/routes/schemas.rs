//! `/api/schemas`: the registered document and object types.

use axum::Json;
use axum::extract::{Path, State};
use cms_core::schema::Schema;
use cms_service::Error;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, ok};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::Authed;

const TAG: &str = "schemas";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(one))
}

/// Every registered type, in registration order, as declared.
#[utoipa::path(get, path = "/api/schemas", tag = TAG,
    responses((status = 200, description = "The registered types", body = Data<Vec<Schema>>)))]
async fn list(
    State(state): State<AppState>,
    Authed(_actor): Authed,
) -> ApiResult<Json<Data<Vec<Schema>>>> {
    Ok(ok(state.cms.schemas().all().to_vec()))
}

/// One registered type, as declared.
#[utoipa::path(get, path = "/api/schemas/{name}", tag = TAG,
    params(("name" = String, Path, description = "The type's name")),
    responses((status = 200, description = "The type", body = Data<Schema>)))]
async fn one(
    State(state): State<AppState>,
    Authed(_actor): Authed,
    Path(name): Path<String>,
) -> ApiResult<Json<Data<Schema>>> {
    let schema = state
        .cms
        .schemas()
        .get(&name)
        .ok_or_else(|| Error::not_found("schema"))?;
    Ok(ok(schema.clone()))
}
