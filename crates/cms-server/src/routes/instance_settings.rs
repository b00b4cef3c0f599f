//! `/api/instance-settings`: the sign-up policy, for instance super admins (CONTRACT.md
//! sections 9 and 12). The body is flat: `inviteOnly`, `requireEmailVerification`,
//! `firstAdmin`, `firstAdminEmails`.

use axum::Json;
use axum::extract::State;
use cms_core::FirstAdmin;
use cms_service::SignUpPolicyView;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiJson, Authed};
use crate::routes::{Data, ok};

const TAG: &str = "instance-settings";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_settings, update_settings))
}

/// The settings to change; the others keep their value. The service reads the body as a JSON
/// object key by key (this type only describes it), so an unknown key or a wrong type is a 400
/// naming it (with `issues`).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct InstanceSettingsPatch {
    first_admin: Option<FirstAdmin>,
    /// E-mail addresses.
    first_admin_emails: Option<Vec<String>>,
    invite_only: Option<bool>,
    require_email_verification: Option<bool>,
}

/// The effective sign-up policy (instance super admins, with a session).
#[utoipa::path(get, path = "/api/instance-settings", tag = TAG,
    responses((status = 200, description = "The sign-up policy", body = Data<SignUpPolicyView>)))]
async fn get_settings(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<SignUpPolicyView>>> {
    let policy = state.cms.instance_settings().get(&actor).await?;
    Ok(ok(policy.view()))
}

/// Saves some of the sign-up policy and answers the effective whole (instance super admins,
/// with a session).
#[utoipa::path(patch, path = "/api/instance-settings", tag = TAG, request_body = InstanceSettingsPatch,
    responses((status = 200, description = "The sign-up policy now", body = Data<SignUpPolicyView>)))]
async fn update_settings(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<Data<SignUpPolicyView>>> {
    let policy = state.cms.instance_settings().update(&actor, &body).await?;
    Ok(ok(policy.view()))
}
