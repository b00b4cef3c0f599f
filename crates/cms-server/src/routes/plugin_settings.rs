//! `/api/plugin-settings`: the declared plugins' settings in the active organization (sessions
//! with `org.settings` only; the service refuses keys).

use axum::Json;
use axum::extract::{Path, State};
use cms_service::PluginSettingsView;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, ok};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiJson, Authed};

const TAG: &str = "plugin-settings";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(save))
}

/// One plugin's settings to save. They replace the saved ones: a field left out becomes unset.
#[derive(Deserialize, ToSchema)]
struct PluginSettingsSaveBody {
    /// Field names to values of their declared type, or `null` to unset. A secret sent as
    /// `"********"` keeps the stored one.
    #[schema(value_type = Object)]
    values: Value,
}

/// The settings of every declared plugin in the active organization; a set secret reads
/// `"********"`, an unset field `null`. Needs `org.settings`; API keys are refused.
#[utoipa::path(get, path = "/api/plugin-settings", tag = TAG,
    responses((status = 200, description = "Every declared plugin with its values", body = Data<Vec<PluginSettingsView>>)))]
async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
) -> ApiResult<Json<Data<Vec<PluginSettingsView>>>> {
    Ok(ok(state.cms.plugin_settings().list(&actor).await?))
}

/// Saves one plugin's settings in the active organization. Secrets are stored encrypted only:
/// without CMS_SECRET_ENCRYPTION_KEY a new secret is refused (422) and nothing is saved. Needs
/// `org.settings`; API keys are refused.
#[utoipa::path(put, path = "/api/plugin-settings/{plugin}", tag = TAG,
    request_body = PluginSettingsSaveBody,
    params(("plugin" = String, Path, description = "The plugin's id")),
    responses(
        (status = 200, description = "The saved settings, secrets redacted", body = Data<PluginSettingsView>),
        (status = 404, description = "No plugin with this id declares settings", body = ErrorBody),
        (status = 422, description = "A secret was sent while no encryption key is configured", body = ErrorBody),
    ))]
async fn save(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(plugin): Path<String>,
    ApiJson(body): ApiJson<PluginSettingsSaveBody>,
) -> ApiResult<Json<Data<PluginSettingsView>>> {
    Ok(ok(state
        .cms
        .plugin_settings()
        .save(&actor, &plugin, body.values)
        .await?))
}
