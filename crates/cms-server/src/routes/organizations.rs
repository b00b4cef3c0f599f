//! `/api/organizations`: organizations, members and invitations (CONTRACT.md section 4).
//! Which credentials each endpoint accepts is decided in the service (see
//! `cms_service::OrganizationService`).

use axum::extract::{Path, State};
use axum::response::IntoResponse;
use axum::{Router, routing};
use cms_service::{NewOrganization, OrganizationUpdate};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{created, ok};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiJson, Authed};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/organizations", routing::get(list).post(create))
        .route("/api/organizations/switch", routing::post(switch))
        .route(
            "/api/organizations/members",
            routing::get(members)
                .patch(change_role)
                .delete(remove_member),
        )
        .route(
            "/api/organizations/invitations",
            routing::get(invitations)
                .post(invite)
                .delete(cancel_invitation),
        )
        .route(
            "/api/organizations/invitations/{id}/accept",
            routing::post(accept_invitation),
        )
        .route(
            "/api/organizations/{id}",
            routing::get(get).patch(update).delete(delete),
        )
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateBody {
    name: Option<String>,
    slug: Option<String>,
    metadata: Option<Value>,
    parent_id: Option<String>,
}

async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.organizations().list(&actor).await?))
}

async fn create(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<CreateBody>,
) -> ApiResult<impl IntoResponse> {
    let input = NewOrganization {
        name: body.name,
        slug: body.slug,
        metadata: body.metadata,
        parent_id: body.parent_id,
    };
    Ok(created(
        state.cms.organizations().create(&actor, input).await?,
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SwitchBody {
    organization_id: Option<String>,
}

async fn switch(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<SwitchBody>,
) -> ApiResult<impl IntoResponse> {
    let org = state
        .cms
        .organizations()
        .switch(&actor, body.organization_id.as_deref())
        .await?;
    Ok(ok(org))
}

async fn get(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.organizations().get(&actor, &id).await?))
}

/// `parentId` cannot be changed (one level, fixed at creation): an unknown field is a 400
/// rather than silently ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UpdateBody {
    name: Option<String>,
    slug: Option<String>,
    metadata: Option<Value>,
}

async fn update(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<UpdateBody>,
) -> ApiResult<impl IntoResponse> {
    let input = OrganizationUpdate {
        name: body.name,
        slug: body.slug,
        metadata: body.metadata,
    };
    Ok(ok(state
        .cms
        .organizations()
        .update(&actor, &id, input)
        .await?))
}

async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    state.cms.organizations().delete(&actor, &id).await?;
    Ok(ok(json!({ "id": id, "deleted": true })))
}

async fn members(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.members().list(&actor).await?))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MemberBody {
    user_id: Option<String>,
    role: Option<String>,
}

async fn change_role(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<MemberBody>,
) -> ApiResult<impl IntoResponse> {
    let member = state
        .cms
        .members()
        .change_role(&actor, body.user_id.as_deref(), body.role.as_deref())
        .await?;
    Ok(ok(member))
}

async fn remove_member(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<MemberBody>,
) -> ApiResult<impl IntoResponse> {
    state
        .cms
        .members()
        .remove(&actor, body.user_id.as_deref())
        .await?;
    Ok(ok(json!({ "userId": body.user_id, "removed": true })))
}

async fn invitations(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.invitations().list(&actor).await?))
}

#[derive(Deserialize)]
struct InviteBody {
    email: Option<String>,
    role: Option<String>,
}

async fn invite(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<InviteBody>,
) -> ApiResult<impl IntoResponse> {
    let invitation = state
        .cms
        .invitations()
        .create(&actor, body.email.as_deref(), body.role.as_deref())
        .await?;
    Ok(created(invitation))
}

#[derive(Deserialize)]
struct CancelBody {
    id: Option<String>,
}

async fn cancel_invitation(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<CancelBody>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state
        .cms
        .invitations()
        .cancel(&actor, body.id.as_deref())
        .await?))
}

async fn accept_invitation(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.invitations().accept(&actor, &id).await?))
}
