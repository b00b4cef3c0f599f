//! The caller's own account beside sign-in: `PATCH /api/user`, editor preferences, password
//! reset, and following an e-mail verification link (CONTRACT.md section 3).

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing};
use cms_service::{Error, ProfileUpdate};
use serde::Deserialize;
use serde_json::{Value, json};

use super::ok;
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiQuery, Authed, Client};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/user", routing::patch(update_profile))
        .route(
            "/api/user/cms-preference",
            routing::get(preferences).patch(update_preferences),
        )
        .route(
            "/api/user/request-password-reset",
            routing::post(request_password_reset),
        )
        .route("/api/user/reset-password", routing::post(reset_password))
        .route("/api/auth/verify-email", routing::get(verify_email))
}

#[derive(Deserialize)]
struct ProfileBody {
    name: Option<String>,
    email: Option<String>,
}

async fn update_profile(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<ProfileBody>,
) -> ApiResult<impl IntoResponse> {
    let input = ProfileUpdate {
        name: body.name,
        email: body.email,
    };
    Ok(ok(state
        .cms
        .account()
        .update_profile(&actor, input)
        .await?))
}

async fn preferences(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.account().preferences(&actor).await?))
}

async fn update_preferences(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state
        .cms
        .account()
        .update_preferences(&actor, body)
        .await?))
}

#[derive(Deserialize)]
struct ResetRequestBody {
    email: Option<String>,
}

async fn request_password_reset(
    State(state): State<AppState>,
    Client(client): Client,
    ApiJson(body): ApiJson<ResetRequestBody>,
) -> ApiResult<impl IntoResponse> {
    state
        .cms
        .account()
        .request_password_reset(body.email.as_deref(), &client)
        .await?;
    Ok(ok(json!({
        "message": "if an account uses this address, a reset link is on its way"
    })))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResetBody {
    token: Option<String>,
    new_password: Option<String>,
}

async fn reset_password(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ResetBody>,
) -> ApiResult<impl IntoResponse> {
    state
        .cms
        .account()
        .reset_password(body.token.as_deref(), body.new_password.as_deref())
        .await?;
    Ok(ok(json!({ "passwordReset": true })))
}

#[derive(Deserialize)]
struct VerifyQuery {
    token: Option<String>,
    #[serde(rename = "callbackURL")]
    callback_url: Option<String>,
}

/// 200, or 302 to the checked `callbackURL`.
async fn verify_email(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<VerifyQuery>,
) -> ApiResult<Response> {
    let verified = state
        .cms
        .account()
        .verify_email(query.token.as_deref(), query.callback_url.as_deref())
        .await?;
    let Some(target) = verified.redirect else {
        return Ok(ok(json!({ "emailVerified": true })).into_response());
    };
    let location = HeaderValue::from_str(&target)
        .map_err(|_| Error::bad_request("callbackURL is not a valid URL"))?;
    Ok((
        StatusCode::FOUND,
        [(header::LOCATION, location)],
        Json(json!({ "emailVerified": true })),
    )
        .into_response())
}
