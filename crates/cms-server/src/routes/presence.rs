//! `/api/documents/{id}/presence`: who else has a document open in the admin (issue 30). The
//! edit page announces itself with PUT every few seconds and leaves with DELETE; the service
//! decides who may (`DocumentService::touch_presence`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use cms_service::documents::PresentPerson;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, ok};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::Authed;

const TAG: &str = "documents";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(touch_presence, presence, leave_presence))
}

/// Says the caller has this document open now (the admin's edit page sends it every 10
/// seconds) and lists the other people seen on it in the last 30 seconds, by name; the caller
/// is never listed. Only a signed-in person announces presence: an API key is refused (403).
/// Needs `document.read` and the type's read rule, as GET /api/documents/{id}.
#[utoipa::path(put, path = "/api/documents/{id}/presence", tag = TAG,
    params(("id" = String, Path, description = "The document id")),
    responses(
        (status = 200, description = "The other people with the document open", body = Data<Vec<PresentPerson>>),
        (status = 403, description = "No read access, or an API key (presence is a person's)", body = crate::error::ErrorBody),
        (status = 404, description = "No such document in the active organization", body = crate::error::ErrorBody),
    ))]
async fn touch_presence(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state
        .cms
        .documents()
        .touch_presence(&actor, &id)
        .await?))
}

/// The other people seen on this document in the last 30 seconds, without announcing the
/// caller. As PUT for who may ask.
#[utoipa::path(get, path = "/api/documents/{id}/presence", tag = TAG,
    params(("id" = String, Path, description = "The document id")),
    responses(
        (status = 200, description = "The other people with the document open", body = Data<Vec<PresentPerson>>),
        (status = 403, description = "No read access, or an API key (presence is a person's)", body = crate::error::ErrorBody),
        (status = 404, description = "No such document in the active organization", body = crate::error::ErrorBody),
    ))]
async fn presence(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.documents().presence(&actor, &id).await?))
}

/// Says the caller closed this document: others stop listing them at once rather than after
/// 30 seconds. As PUT for who may ask.
#[utoipa::path(delete, path = "/api/documents/{id}/presence", tag = TAG,
    params(("id" = String, Path, description = "The document id")),
    responses(
        (status = 204, description = "The caller is no longer listed"),
        (status = 403, description = "No read access, or an API key (presence is a person's)", body = crate::error::ErrorBody),
        (status = 404, description = "No such document in the active organization", body = crate::error::ErrorBody),
    ))]
async fn leave_presence(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    state.cms.documents().leave_presence(&actor, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
