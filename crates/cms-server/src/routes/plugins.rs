//! `/api/plugins` and `/api/capabilities`: what this instance's plugins declared, for the admin
//! UI and for clients that discover plugin routes and capabilities.

use axum::Json;
use axum::extract::State;
use cms_core::CapabilityInfo;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, ok};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::Authed;
use crate::plugins::PluginManifest;

const TAG: &str = "plugins";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(capabilities))
}

/// Every registered plugin and what it contributes, by extension point, in registration order.
#[utoipa::path(get, path = "/api/plugins", tag = TAG,
    responses((status = 200, description = "The registered plugins", body = Data<Vec<PluginManifest>>)))]
async fn list(
    State(state): State<AppState>,
    Authed(_actor): Authed,
) -> ApiResult<Json<Data<Vec<PluginManifest>>>> {
    Ok(ok(state.plugins.to_vec()))
}

/// Every capability a role or key may hold: the core ones, then those plugins declared, each
/// with a title, description and group for a capability picker.
#[utoipa::path(get, path = "/api/capabilities", tag = TAG,
    responses((status = 200, description = "The declared capabilities", body = Data<Vec<CapabilityInfo>>)))]
async fn capabilities(
    State(state): State<AppState>,
    Authed(_actor): Authed,
) -> ApiResult<Json<Data<Vec<CapabilityInfo>>>> {
    Ok(ok(state.cms.capabilities().catalog().to_vec()))
}
