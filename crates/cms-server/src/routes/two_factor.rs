//! Two-factor sign-in (CONTRACT.md section 20): the caller enrols an authenticator app under
//! `/api/user/two-factor/*` (a signed-in session only), and a sign-in answered with a challenge
//! is completed at `POST /api/auth/two-factor`.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use cms_service::{SecondFactor, TwoFactorEnrolment, TwoFactorStatus};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::auth::{SetCookie, SignedIn, signed_in};
use super::{Data, ok};
use crate::AppState;
use crate::error::{AccessRefusal, ApiResult, ErrorBody};
use crate::extract::{ApiJson, Authed, Client};

const TAG: &str = "account";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(enroll))
        .routes(routes!(confirm))
        .routes(routes!(disable))
        .routes(routes!(complete_sign_in))
}

/// Whether the caller signs in with a second factor (a signed-in session only).
#[utoipa::path(get, path = "/api/user/two-factor", tag = TAG,
    responses(
        (status = 200, description = "Where the caller's two-factor sign-in stands", body = Data<TwoFactorStatus>),
        (status = 403, description = "The credential is not a session", body = AccessRefusal),
    ))]
async fn status(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<TwoFactorStatus>>> {
    Ok(ok(state.cms.auth().two_factor_status(&actor).await?))
}

/// Starts enrolling an authenticator app: a new secret, its `otpauth://` URL and that URL as a
/// QR code. Nothing changes at sign-in until a first code confirms it.
#[utoipa::path(post, path = "/api/user/two-factor/enroll", tag = TAG,
    responses(
        (status = 200, description = "The secret to add to an authenticator app", body = Data<TwoFactorEnrolment>),
        (status = 403, description = "The credential is not a session", body = AccessRefusal),
        (status = 409, description = "Two-factor sign-in is already on", body = ErrorBody),
    ))]
async fn enroll(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<TwoFactorEnrolment>>> {
    Ok(ok(state.cms.auth().enroll_two_factor(&actor).await?))
}

/// A code from the authenticator app.
#[derive(Deserialize, ToSchema)]
struct CodeBody {
    /// Six digits.
    code: Option<String>,
}

/// The recovery codes of a confirmed enrolment.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct RecoveryCodes {
    /// Ten codes, each usable once in place of an app code. Shown this once.
    recovery_codes: Vec<String>,
}

/// Turns two-factor sign-in on with a first code from the app; answers the recovery codes.
#[utoipa::path(post, path = "/api/user/two-factor/confirm", tag = TAG, request_body = CodeBody,
    responses(
        (status = 200, description = "Two-factor sign-in is on", body = Data<RecoveryCodes>),
        (status = 400, description = "The code is missing or does not match", body = ErrorBody),
        (status = 403, description = "The credential is not a session", body = AccessRefusal),
        (status = 409, description = "No enrolment is waiting for a code", body = ErrorBody),
        (status = 429, description = "Too many codes; counted like sign-ins", body = ErrorBody),
    ))]
async fn confirm(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<CodeBody>,
) -> ApiResult<Json<Data<RecoveryCodes>>> {
    let recovery_codes = state
        .cms
        .auth()
        .confirm_two_factor(&actor, body.code.as_deref())
        .await?;
    Ok(ok(RecoveryCodes { recovery_codes }))
}

/// The current password, confirming a sensitive change.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct PasswordBody {
    current_password: Option<String>,
}

/// `{ "disabled": true }`.
#[derive(Serialize, ToSchema)]
struct Disabled {
    disabled: bool,
}

/// Turns two-factor sign-in off (the secret and the recovery codes are deleted).
#[utoipa::path(post, path = "/api/user/two-factor/disable", tag = TAG, request_body = PasswordBody,
    responses(
        (status = 200, description = "Two-factor sign-in is off", body = Data<Disabled>),
        (status = 400, description = "`currentPassword` is missing", body = ErrorBody),
        (status = 403, description = "`currentPassword` is wrong, or the credential is not a session", body = AccessRefusal),
        (status = 409, description = "Two-factor sign-in is not on", body = ErrorBody),
        (status = 429, description = "Too many attempts; counted like sign-ins", body = ErrorBody),
    ))]
async fn disable(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<PasswordBody>,
) -> ApiResult<Json<Data<Disabled>>> {
    state
        .cms
        .auth()
        .disable_two_factor(&actor, body.current_password.as_deref())
        .await?;
    Ok(ok(Disabled { disabled: true }))
}

/// The second step of a sign-in.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SecondFactorBody {
    /// The `challenge` the sign-in answered.
    challenge: Option<String>,
    /// Six digits from the authenticator app; or else
    code: Option<String>,
    /// one of the recovery codes.
    recovery_code: Option<String>,
}

/// Completes a sign-in that answered `twoFactorRequired`: with a code (or a recovery code) it
/// answers like a sign-in and sets the session cookie. A challenge lasts 5 minutes and
/// survives 5 wrong codes.
#[utoipa::path(post, path = "/api/auth/two-factor", tag = "auth", security(()),
    request_body = SecondFactorBody,
    responses(
        (status = 200, description = "Signed in", body = SignedIn,
            headers(("set-cookie" = String, description = "The session cookie"))),
        (status = 400, description = "The challenge or the code is missing", body = ErrorBody),
        (status = 401, description = "The code is wrong or used, or the challenge expired", body = ErrorBody),
        (status = 429, description = "Too many codes; counted like sign-ins", body = ErrorBody),
    ))]
async fn complete_sign_in(
    State(state): State<AppState>,
    Client(client): Client,
    headers: HeaderMap,
    ApiJson(body): ApiJson<SecondFactorBody>,
) -> ApiResult<(SetCookie, Json<SignedIn>)> {
    let auth = state
        .cms
        .auth()
        .complete_two_factor(SecondFactor {
            challenge: body.challenge,
            code: body.code,
            recovery_code: body.recovery_code,
            client,
        })
        .await?;
    Ok(signed_in(&state, &headers, auth))
}
