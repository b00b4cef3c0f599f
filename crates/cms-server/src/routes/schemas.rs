//! `/api/schemas`: the registered document and object types.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::Response;
use cms_core::schema::Schema;
use cms_service::Error;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, ok};
use crate::AppState;
use crate::delivery::validators::{Conditional, IfNoneMatch, NotModified};
use crate::error::ApiResult;
use crate::extract::Authed;

const TAG: &str = "schemas";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(one))
}

/// Every registered type, in registration order, as declared.
#[utoipa::path(get, path = "/api/schemas", tag = TAG, params(IfNoneMatch),
    responses((status = 200, description = "The registered types", body = Data<Vec<Schema>>, headers(("ETag" = String, description = "Strong entity tag of the answer"), ("Cache-Control" = String, description = "`private, no-cache` for credentials"))), NotModified))]
async fn list(
    State(state): State<AppState>,
    Authed(_actor): Authed,
    conditional: Conditional,
) -> ApiResult<Response> {
    Ok(conditional.respond(&ok(state.cms.schemas().all()).0))
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
