//! `/api/documents/{id}/preview`: preview links (CONTRACT.md section 15). Reading with a
//! token is GET /api/documents/{id}; `middleware::resolve_actor` turns the token into its
//! actor and keeps it to that one read.

use axum::extract::{Path, State};
use axum::response::IntoResponse;
use cms_service::documents::{PreviewLink, RevokedPreviews};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, created, ok};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::Authed;

const TAG: &str = "documents";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(create_preview, revoke_previews))
}

/// Makes a preview link: a token that reads this document's draft (references in the draft
/// perspective, as you see it) for `delivery.previewMinutes`, sent as the `x-cms-preview`
/// header or the `preview` query parameter of GET /api/documents/{id}, and the type's
/// `previewUrl` filled in. Needs `document.update`.
#[utoipa::path(post, path = "/api/documents/{id}/preview", tag = TAG,
    params(("id" = String, Path, description = "The document id")),
    responses((status = 201, description = "The link; the token is shown this once", body = Data<PreviewLink>)))]
async fn create_preview(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(created(
        state.cms.documents().create_preview(&actor, &id).await?,
    ))
}

/// Revokes every preview link of the document at once. Needs `document.update`.
#[utoipa::path(delete, path = "/api/documents/{id}/preview", tag = TAG,
    params(("id" = String, Path, description = "The document id")),
    responses((status = 200, description = "How many links stopped working", body = Data<RevokedPreviews>)))]
async fn revoke_previews(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state
        .cms
        .documents()
        .revoke_previews(&actor, &id)
        .await?))
}
