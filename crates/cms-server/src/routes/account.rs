//! The caller's own account beside sign-in: `PATCH /api/user`, editor preferences, password
//! reset and change, the caller's sessions, and following an e-mail verification link
//! (CONTRACT.md sections 3 and 20).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cms_service::{Error, PasswordChange, ProfileUpdate, SessionSummary, User};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, ok};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiQuery, Authed, Client};

const TAG: &str = "account";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(update_profile))
        .routes(routes!(access))
        .routes(routes!(preferences, update_preferences))
        .routes(routes!(request_password_reset))
        .routes(routes!(reset_password))
        .routes(routes!(change_password))
        .routes(routes!(sessions))
        .routes(routes!(revoke_session))
        .routes(routes!(verify_email))
}

/// A profile change: at least one of `name`, `email`.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct ProfileChange {
    name: Option<String>,
    /// A new address: a link goes there, and the account moves to it only when the link is
    /// followed.
    email: Option<String>,
    /// The account's current password; required with `email`.
    current_password: Option<String>,
}

/// Changes the caller's name, and asks for an e-mail change (a session is required): with
/// `email` and the right `currentPassword`, a verification link goes to the new address and
/// the account keeps its e-mail until that link is followed (GET /api/auth/verify-email).
#[utoipa::path(patch, path = "/api/user", tag = TAG, request_body = ProfileChange,
    responses(
        (status = 200, description = "The user as now: the new name; the e-mail unchanged until its link is followed", body = Data<User>),
        (status = 400, description = "Bad input, or `email` without `currentPassword`", body = ErrorBody),
        (status = 403, description = "`currentPassword` is wrong, or the credential is not a session",
            body = crate::error::AccessRefusal),
        (status = 422, description = "Another account uses this e-mail address", body = ErrorBody),
    ))]
async fn update_profile(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<ProfileChange>,
) -> ApiResult<Json<Data<User>>> {
    let input = ProfileUpdate {
        name: body.name,
        email: body.email,
        current_password: body.current_password,
    };
    Ok(ok(state
        .cms
        .account()
        .update_profile(&actor, input)
        .await?))
}

/// A password change.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PasswordChangeBody {
    current_password: Option<String>,
    /// 8 to 128 characters.
    new_password: Option<String>,
    /// End every other session of the account (default `true`).
    revoke_other_sessions: Option<bool>,
}

/// What a password change did.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct PasswordChanged {
    /// How many other sessions ended with it.
    revoked_sessions: u64,
}

/// Changes the caller's password (a signed-in session only). Every other session ends with it
/// unless `revokeOtherSessions` is `false`; reset links sent before stop working.
#[utoipa::path(post, path = "/api/user/change-password", tag = TAG, request_body = PasswordChangeBody,
    responses(
        (status = 200, description = "The password is changed", body = Data<PasswordChanged>),
        (status = 400, description = "A field missing, or the new password not 8 to 128 characters", body = ErrorBody),
        (status = 403, description = "`currentPassword` is wrong, or the credential is not a session",
            body = crate::error::AccessRefusal),
        (status = 429, description = "Too many attempts; counted like sign-ins", body = ErrorBody),
    ))]
async fn change_password(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<PasswordChangeBody>,
) -> ApiResult<Json<Data<PasswordChanged>>> {
    let change = PasswordChange {
        current_password: body.current_password,
        new_password: body.new_password,
        revoke_other_sessions: body.revoke_other_sessions.unwrap_or(true),
    };
    let revoked_sessions = state.cms.account().change_password(&actor, change).await?;
    Ok(ok(PasswordChanged { revoked_sessions }))
}

/// The caller's live sessions, most recently renewed first; `current` marks this one (a
/// signed-in session only).
#[utoipa::path(get, path = "/api/user/sessions", tag = TAG,
    responses(
        (status = 200, description = "The sessions", body = Data<Vec<SessionSummary>>),
        (status = 403, description = "The credential is not a session", body = crate::error::AccessRefusal),
    ))]
async fn sessions(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Vec<SessionSummary>>>> {
    Ok(ok(state.cms.account().sessions(&actor).await?))
}

/// A revoked session.
#[derive(Serialize, ToSchema)]
struct SessionRevoked {
    id: String,
    revoked: bool,
}

/// Ends one of the caller's sessions; the current one too, which signs this client out.
#[utoipa::path(delete, path = "/api/user/sessions/{id}", tag = TAG,
    params(("id" = String, Path, description = "The session's id, from the list")),
    responses(
        (status = 200, description = "The session ended", body = Data<SessionRevoked>),
        (status = 403, description = "The credential is not a session", body = crate::error::AccessRefusal),
        (status = 404, description = "No session of the caller has this id", body = ErrorBody),
    ))]
async fn revoke_session(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<SessionRevoked>>> {
    state.cms.account().revoke_session(&actor, &id).await?;
    Ok(ok(SessionRevoked { id, revoked: true }))
}

/// What the caller may do in the active organization, so a client (the admin UI) can offer
/// only what will be allowed. The service still decides every request on its own.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Access {
    /// The active organization; `null` for a person who belongs to none yet.
    organization_id: Option<String>,
    /// The role schema and field rules are matched against (`owner` for instance admins);
    /// `null` without a role.
    role: Option<String>,
    /// The capabilities held there, core and plugin ones.
    #[schema(value_type = Vec<String>)]
    capabilities: cms_core::CapabilitySet,
    /// The assistant on this instance: `off` (no model backend), `noModel`, or `ready`.
    assistant: cms_agent::Availability,
    /// Whether the instance's e-mail reaches people; `false` with the log transport, where an
    /// invitation's link must be handed over by hand (or a member created with a password).
    mail_delivers: bool,
}

/// The caller's role and capabilities in the active organization, and whether the assistant
/// is available (an extension beside SPEC.md's endpoints; a session or an API key).
#[utoipa::path(get, path = "/api/user/access", tag = TAG,
    responses((status = 200, description = "The caller's role and capabilities", body = Data<Access>)))]
async fn access(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Access>>> {
    // An anonymous `public` reader is nobody: no access to describe (401, as signed out).
    actor.require_person()?;
    Ok(ok(Access {
        organization_id: actor.organization_id.clone(),
        role: actor.grant.role.name().map(str::to_string),
        capabilities: actor.grant.capabilities.clone(),
        assistant: state.agent().availability(),
        mail_delivers: state.cms.mail_delivers(),
    }))
}

/// The caller's editor preferences: a JSON object of the editor's own keys.
#[derive(Debug, Serialize, ToSchema)]
#[serde(transparent)]
#[schema(value_type = Object)]
struct Preferences(Value);

/// The caller's editor preferences, `{}` before the first save (a session is required).
#[utoipa::path(get, path = "/api/user/cms-preference", tag = TAG,
    responses((status = 200, description = "The stored preferences", body = Data<Preferences>)))]
async fn preferences(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Preferences>>> {
    Ok(ok(Preferences(
        state.cms.account().preferences(&actor).await?,
    )))
}

/// Merges the body into the caller's preferences key by key at the top level; a key sent as
/// `null` is removed (a session is required; 64 KiB at most).
#[utoipa::path(patch, path = "/api/user/cms-preference", tag = TAG,
    request_body(content = Object, description = "The keys to set; `null` removes a key"),
    responses((status = 200, description = "The whole merged preferences", body = Data<Preferences>)))]
async fn update_preferences(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<Data<Preferences>>> {
    Ok(ok(Preferences(
        state.cms.account().update_preferences(&actor, body).await?,
    )))
}

#[derive(Deserialize, ToSchema)]
struct PasswordResetRequest {
    /// The address of the account.
    email: Option<String>,
}

/// What a reset request answers, whether or not an account uses the address.
#[derive(Debug, Serialize, ToSchema)]
struct ResetRequested {
    message: String,
}

/// Sends a password-reset link when an account uses the address; the answer is the same
/// either way.
#[utoipa::path(post, path = "/api/user/request-password-reset", tag = TAG, security(()),
    request_body = PasswordResetRequest,
    responses(
        (status = 200, description = "The request is taken", body = Data<ResetRequested>),
        (status = 403, description = "A cookie-authenticated request failed the CSRF check",
            body = crate::error::AccessRefusal),
    ))]
async fn request_password_reset(
    State(state): State<AppState>,
    Client(client): Client,
    ApiJson(body): ApiJson<PasswordResetRequest>,
) -> ApiResult<Json<Data<ResetRequested>>> {
    state
        .cms
        .account()
        .request_password_reset(body.email.as_deref(), &client)
        .await?;
    Ok(ok(ResetRequested {
        message: "if an account uses this address, a reset link is on its way".into(),
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct PasswordResetBody {
    /// The token of the reset link.
    token: Option<String>,
    new_password: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct PasswordReset {
    /// Always `true`.
    password_reset: bool,
}

/// Sets a new password with the token of a reset link; every session of the account ends.
#[utoipa::path(post, path = "/api/user/reset-password", tag = TAG, security(()),
    request_body = PasswordResetBody,
    responses(
        (status = 200, description = "The password is changed", body = Data<PasswordReset>),
        (status = 403, description = "A cookie-authenticated request failed the CSRF check",
            body = crate::error::AccessRefusal),
    ))]
async fn reset_password(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<PasswordResetBody>,
) -> ApiResult<Json<Data<PasswordReset>>> {
    state
        .cms
        .account()
        .reset_password(body.token.as_deref(), body.new_password.as_deref())
        .await?;
    Ok(ok(PasswordReset {
        password_reset: true,
    }))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct VerifyQuery {
    /// The token of the verification link.
    #[param(required = true)]
    token: Option<String>,
    /// Where to redirect afterwards: a path on this instance (`/admin`; not `//`, no scheme,
    /// no whitespace, control characters or backslashes).
    #[serde(rename = "callbackURL")]
    callback_url: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct EmailVerified {
    /// Always `true`.
    email_verified: bool,
}

/// Follows an e-mail verification link (a sign-up's, or an e-mail change's, which moves the
/// account to the new address): 200, or 302 to the checked `callbackURL`.
#[utoipa::path(get, path = "/api/auth/verify-email", tag = TAG, security(()),
    params(VerifyQuery),
    responses(
        (status = 200, description = "The address is verified", body = Data<EmailVerified>),
        (status = 302, description = "The address is verified; on to `callbackURL` (the body is not enveloped)",
            body = EmailVerified,
            headers(("location" = String, description = "The `callbackURL`"))),
        (status = 400, description = "The link is invalid, used or expired", body = ErrorBody),
        (status = 422, description = "An e-mail change's new address was taken by another account meanwhile; nothing changed", body = ErrorBody),
    ))]
async fn verify_email(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<VerifyQuery>,
) -> ApiResult<Response> {
    let verified = state
        .cms
        .account()
        .verify_email(query.token.as_deref(), query.callback_url.as_deref())
        .await?;
    let body = EmailVerified {
        email_verified: true,
    };
    let Some(target) = verified.redirect else {
        return Ok(ok(body).into_response());
    };
    let location = HeaderValue::from_str(&target)
        .map_err(|_| Error::bad_request("callbackURL is not a valid URL"))?;
    Ok((
        StatusCode::FOUND,
        [(header::LOCATION, location)],
        Json(body),
    )
        .into_response())
}
