//! `/api/schemas`: the registered document and object types.

use axum::extract::{Path, State};
use axum::response::IntoResponse;
use axum::{Router, routing};
use cms_service::Error;

use super::ok;
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::Authed;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/schemas", routing::get(list))
        .route("/api/schemas/{name}", routing::get(one))
}

async fn list(
    State(state): State<AppState>,
    Authed(_actor): Authed,
) -> ApiResult<impl IntoResponse> {
    let schemas: Vec<_> = state
        .cms
        .schemas()
        .all()
        .iter()
        .map(|s| s.to_json())
        .collect();
    Ok(ok(schemas))
}

async fn one(
    State(state): State<AppState>,
    Authed(_actor): Authed,
    Path(name): Path<String>,
) -> ApiResult<impl IntoResponse> {
    let schema = state
        .cms
        .schemas()
        .get(&name)
        .ok_or_else(|| Error::not_found("schema"))?;
    Ok(ok(schema.to_json()))
}
