//! `/api/locales`: the locales of the active organization (CONTRACT.md section 17).

use axum::Json;
use axum::extract::State;
use cms_service::LocalesView;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, ok};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::Authed;

const TAG: &str = "locales";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(locales))
}

/// The locales documents can be read and written in: `available`, the `default`, and the
/// `fallbacks` a missing value follows (the organization's narrowing applied).
#[utoipa::path(get, path = "/api/locales", tag = TAG,
    responses((status = 200, description = "The active organization's locales", body = Data<LocalesView>)))]
async fn locales(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<LocalesView>>> {
    Ok(ok(state.cms.locales().get(&actor).await?))
}
