//! `/api/instance-settings`: the sign-up policy, for instance super admins (CONTRACT.md
//! sections 9 and 12). The body is flat: `inviteOnly`, `requireEmailVerification`,
//! `firstAdmin`, `firstAdminEmails`.

use axum::extract::State;
use axum::response::IntoResponse;
use axum::{Router, routing};
use serde_json::Value;

use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiJson, Authed};
use crate::routes::ok;

pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/api/instance-settings",
        routing::get(get_settings).patch(update_settings),
    )
}

async fn get_settings(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<impl IntoResponse> {
    let policy = state.cms.instance_settings().get(&actor).await?;
    Ok(ok(policy.to_json()))
}

async fn update_settings(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<impl IntoResponse> {
    let policy = state.cms.instance_settings().update(&actor, &body).await?;
    Ok(ok(policy.to_json()))
}
