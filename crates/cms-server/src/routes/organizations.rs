//! `/api/organizations`: organizations, members and invitations (CONTRACT.md section 4).
//! Which credentials each endpoint accepts is decided in the service (see
//! `cms_service::OrganizationService`).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use cms_service::{
    Invitation, InvitationPreview, InvitationSent, Member, NewMember, NewOrganization,
    Organization, OrganizationUpdate,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::documents::Deleted;
use super::{Data, created, ok};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiQuery, Authed};

const TAG: &str = "organizations";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(switch))
        .routes(routes!(members, add_member, change_role, remove_member))
        .routes(routes!(invitations, invite, cancel_invitation))
        .routes(routes!(preview_invitation))
        .routes(routes!(accept_invitation))
        .routes(routes!(get, update, delete))
}

/// A new organization.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct OrganizationCreate {
    /// 1 to 100 characters.
    name: Option<String>,
    /// Lowercase letters and digits, words joined by single hyphens; at most 64 characters.
    slug: Option<String>,
    /// A JSON object (default `{}`).
    #[schema(value_type = Option<Object>)]
    metadata: Option<Value>,
    /// Makes it a child of this organization, where the caller must be owner or admin.
    parent_id: Option<String>,
}

/// The caller's organizations with their role in each (an API key: its own organization).
#[utoipa::path(get, path = "/api/organizations", tag = TAG,
    responses((status = 200, description = "The caller's organizations", body = Data<Vec<Organization>>)))]
async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Vec<Organization>>>> {
    Ok(ok(state.cms.organizations().list(&actor).await?))
}

/// Creates an organization owned by the caller (sessions only).
#[utoipa::path(post, path = "/api/organizations", tag = TAG, request_body = OrganizationCreate,
    responses(
        (status = 201, description = "The new organization", body = Data<Organization>),
        (status = 409, description = "The slug is taken", body = ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<OrganizationCreate>,
) -> ApiResult<(StatusCode, Json<Data<Organization>>)> {
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

/// The organization to make active.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SwitchOrganization {
    organization_id: Option<String>,
}

/// Makes an organization the active one of the caller's session (sessions only).
#[utoipa::path(post, path = "/api/organizations/switch", tag = TAG, request_body = SwitchOrganization,
    responses((status = 200, description = "The now active organization", body = Data<Organization>)))]
async fn switch(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<SwitchOrganization>,
) -> ApiResult<Json<Data<Organization>>> {
    let org = state
        .cms
        .organizations()
        .switch(&actor, body.organization_id.as_deref())
        .await?;
    Ok(ok(org))
}

/// Reads an organization the caller has standing in.
#[utoipa::path(get, path = "/api/organizations/{id}", tag = TAG,
    params(("id" = String, Path, description = "The organization id")),
    responses((status = 200, description = "The organization", body = Data<Organization>)))]
async fn get(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<Organization>>> {
    Ok(ok(state.cms.organizations().get(&actor, &id).await?))
}

/// `parentId` cannot be changed (one level, fixed at creation): an unknown field is a 400
/// rather than silently ignored.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OrganizationPatch {
    /// 1 to 100 characters.
    name: Option<String>,
    /// Lowercase letters and digits, words joined by single hyphens; at most 64 characters.
    slug: Option<String>,
    /// A JSON object; replaces the stored metadata as a whole.
    #[schema(value_type = Option<Object>)]
    metadata: Option<Value>,
    /// Narrows the instance's locales to these tags (the default locale must stay among
    /// them); `null` goes back to every locale (CONTRACT.md section 17).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<String>>, nullable)]
    locales: Option<Option<Vec<String>>>,
    /// Requires members to sign in with a second factor before they may act here (CONTRACT.md
    /// section 20). Turning it on needs the caller's own two-factor sign-in on (400 otherwise).
    require_two_factor: Option<bool>,
}

/// A field that may be sent as `null` (which then means something) or left out.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Updates name, slug, metadata, locales and/or the two-factor requirement (`org.settings` in
/// that organization).
#[utoipa::path(patch, path = "/api/organizations/{id}", tag = TAG, request_body = OrganizationPatch,
    params(("id" = String, Path, description = "The organization id")),
    responses(
        (status = 200, description = "The updated organization", body = Data<Organization>),
        (status = 409, description = "The slug is taken", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<OrganizationPatch>,
) -> ApiResult<Json<Data<Organization>>> {
    let input = OrganizationUpdate {
        name: body.name,
        slug: body.slug,
        metadata: body.metadata,
        locales: body.locales,
        require_two_factor: body.require_two_factor,
    };
    Ok(ok(state
        .cms
        .organizations()
        .update(&actor, &id, input)
        .await?))
}

/// Deletes an organization with everything in it (sessions only; an owner or an instance
/// super admin).
#[utoipa::path(delete, path = "/api/organizations/{id}", tag = TAG,
    params(("id" = String, Path, description = "The organization id")),
    responses(
        (status = 200, description = "The organization is gone", body = Data<Deleted>),
        (status = 409, description = "The organization has child organizations", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<Deleted>>> {
    state.cms.organizations().delete(&actor, &id).await?;
    Ok(ok(Deleted { id, deleted: true }))
}

/// The members of the active organization, oldest first.
#[utoipa::path(get, path = "/api/organizations/members", tag = TAG,
    responses((status = 200, description = "The members", body = Data<Vec<Member>>)))]
async fn members(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Vec<Member>>>> {
    Ok(ok(state.cms.members().list(&actor).await?))
}

/// A new account that joins the active organization at once.
#[derive(Deserialize, ToSchema)]
struct MemberCreate {
    /// The person's name.
    name: Option<String>,
    /// An address with no account yet.
    email: Option<String>,
    /// 8 to 128 characters, for the admin to hand over.
    password: Option<String>,
    /// A role of the organization.
    role: Option<String>,
}

/// Creates an account with a password as a member of the active organization, for instances
/// whose e-mail reaches nobody (`member.invite`, under the same role ceiling as an invitation).
/// The address counts as not verified.
#[utoipa::path(post, path = "/api/organizations/members", tag = TAG, request_body = MemberCreate,
    responses(
        (status = 201, description = "The new member", body = Data<Member>),
        (status = 403, description = "The role holds a capability the caller lacks (`{ error }`), or is `owner` and the caller is not one (handler-layer body)",
            body = crate::error::AccessRefusal),
        (status = 409, description = "The address has an account already: invite it instead", body = ErrorBody),
    ))]
async fn add_member(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<MemberCreate>,
) -> ApiResult<(StatusCode, Json<Data<Member>>)> {
    let input = NewMember {
        name: body.name,
        email: body.email,
        password: body.password,
        role: body.role,
    };
    Ok(created(state.cms.members().create(&actor, input).await?))
}

/// A member of the active organization, and for a role change the new role.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct MemberTarget {
    user_id: Option<String>,
    /// The new role (role changes only): a role of the organization.
    role: Option<String>,
}

/// Gives a member another role (`member.changeRole`), under the role ceiling: the caller
/// holds every capability of the new role and of the member's current one, only an owner
/// makes or changes an owner, and nobody changes their own role except an owner stepping down.
#[utoipa::path(patch, path = "/api/organizations/members", tag = TAG, request_body = MemberTarget,
    responses(
        (status = 200, description = "The member with the new role", body = Data<Member>),
        (status = 403, description = "Past the caller's ceiling, or the caller's own role (`{ error }`); an owner's role, by someone who is not one (handler-layer body)",
            body = crate::error::AccessRefusal),
        (status = 409, description = "The last owner cannot be demoted", body = ErrorBody),
    ))]
async fn change_role(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<MemberTarget>,
) -> ApiResult<Json<Data<Member>>> {
    let member = state
        .cms
        .members()
        .change_role(&actor, body.user_id.as_deref(), body.role.as_deref())
        .await?;
    Ok(ok(member))
}

/// What removing a member reports.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct MemberRemoved {
    /// The `userId` sent.
    user_id: Option<String>,
    /// Always `true`.
    removed: bool,
}

/// Removes a member (`member.remove`); their API keys there are deleted.
#[utoipa::path(delete, path = "/api/organizations/members", tag = TAG, request_body = MemberTarget,
    responses(
        (status = 200, description = "The member is gone", body = Data<MemberRemoved>),
        (status = 409, description = "The last owner cannot be removed", body = ErrorBody),
    ))]
async fn remove_member(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<MemberTarget>,
) -> ApiResult<Json<Data<MemberRemoved>>> {
    state
        .cms
        .members()
        .remove(&actor, body.user_id.as_deref())
        .await?;
    Ok(ok(MemberRemoved {
        user_id: body.user_id,
        removed: true,
    }))
}

/// The open invitations of the active organization, newest first (`member.invite`).
#[utoipa::path(get, path = "/api/organizations/invitations", tag = TAG,
    responses((status = 200, description = "Pending and expired invitations", body = Data<Vec<Invitation>>)))]
async fn invitations(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Vec<Invitation>>>> {
    Ok(ok(state.cms.invitations().list(&actor).await?))
}

/// An address to invite with a role.
#[derive(Deserialize, ToSchema)]
struct InvitationCreate {
    email: Option<String>,
    /// A role of the organization.
    role: Option<String>,
}

/// Invites an address to the active organization and e-mails it the accept link
/// (`member.invite`; the role must hold nothing the caller lacks, and only an owner invites an
/// owner). The answer's `acceptUrl` carries the invitation's secret, shown this once.
#[utoipa::path(post, path = "/api/organizations/invitations", tag = TAG, request_body = InvitationCreate,
    responses(
        (status = 201, description = "The pending invitation and its accept link", body = Data<InvitationSent>),
        (status = 403, description = "The role holds a capability the caller lacks (`{ error }`), or is `owner` and the caller is not one (handler-layer body)",
            body = crate::error::AccessRefusal),
        (status = 409, description = "The address is a member or has a pending invitation already", body = ErrorBody),
        (status = 503, description = "The e-mail could not be sent: the invitation was withdrawn", body = ErrorBody),
    ))]
async fn invite(
    State(state): State<AppState>,
    Authed(actor): Authed,
    headers: HeaderMap,
    ApiJson(body): ApiJson<InvitationCreate>,
) -> ApiResult<(StatusCode, Json<Data<InvitationSent>>)> {
    let origin = state.request_origin(&headers);
    let invitation = state
        .cms
        .invitations()
        .create(
            &actor,
            body.email.as_deref(),
            body.role.as_deref(),
            origin.as_deref(),
        )
        .await?;
    Ok(created(invitation))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct PreviewQuery {
    /// The `token` of the invitation's `acceptUrl`.
    #[param(required = true)]
    token: Option<String>,
}

/// The invitation an accept link stands for, so the page it opens can say what joining means
/// and which address to use. No credential: the secret is the credential, and any other token
/// is 404, whatever the reason.
#[utoipa::path(get, path = "/api/organizations/invitations/preview", tag = TAG, security(()),
    params(PreviewQuery),
    responses(
        (status = 200, description = "The pending invitation of this secret", body = Data<InvitationPreview>),
        (status = 404, description = "No pending invitation has this secret", body = ErrorBody),
    ))]
async fn preview_invitation(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<PreviewQuery>,
) -> ApiResult<Json<Data<InvitationPreview>>> {
    Ok(ok(state
        .cms
        .invitations()
        .preview(query.token.as_deref())
        .await?))
}

/// The invitation to cancel.
#[derive(Deserialize, ToSchema)]
struct InvitationCancel {
    /// The invitation id.
    id: Option<String>,
}

/// Cancels an invitation of the active organization (`member.invite`).
#[utoipa::path(delete, path = "/api/organizations/invitations", tag = TAG, request_body = InvitationCancel,
    responses(
        (status = 200, description = "The cancelled invitation", body = Data<Invitation>),
        (status = 409, description = "The invitation was accepted or cancelled already", body = ErrorBody),
    ))]
async fn cancel_invitation(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<InvitationCancel>,
) -> ApiResult<Json<Data<Invitation>>> {
    Ok(ok(state
        .cms
        .invitations()
        .cancel(&actor, body.id.as_deref())
        .await?))
}

/// Proof of the invited mailbox.
#[derive(Deserialize, ToSchema)]
struct InvitationProof {
    /// The `token` of the invitation's `acceptUrl`; may be left out when the caller's address
    /// is verified already.
    token: Option<String>,
}

/// Accepts an invitation as the signed-in person it was sent to (sessions only), with the
/// `token` of its accept link or a verified address: they join with the invited role, the
/// address counts as verified, and the organization becomes their active one.
#[utoipa::path(post, path = "/api/organizations/invitations/{id}/accept", tag = TAG,
    params(("id" = String, Path, description = "The invitation id")),
    request_body(content = Option<InvitationProof>, description = "Optional when the address is verified"),
    responses(
        (status = 200, description = "The organization joined", body = Data<Organization>),
        (status = 403, description = "Neither the right token nor a verified address (`{ error }`), or the invitation is for another address (handler-layer body)",
            body = crate::error::AccessRefusal),
        (status = 409, description = "The invitation is not pending, or the caller is a member already", body = ErrorBody),
    ))]
async fn accept_invitation(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    body: Option<ApiJson<InvitationProof>>,
) -> ApiResult<Json<Data<Organization>>> {
    let token = body.and_then(|ApiJson(b)| b.token);
    Ok(ok(state
        .cms
        .invitations()
        .accept(&actor, &id, token.as_deref())
        .await?))
}
