//! The audit log (CONTRACT.md section 19): who did what, newest first.

use axum::Json;
use axum::extract::State;
use cms_core::Timestamp;
use cms_service::{AuditAction, AuditEntry, AuditListRequest};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::params::{bad, page, scope, text};
use super::{Paged, paged};
use crate::AppState;
use crate::error::ApiResult;
use crate::extract::{ApiQuery, Authed};

const TAG: &str = "audit";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct AuditQuery {
    /// Only entries of this action (`document.published`, `auth.signIn`, ...).
    #[serde(default, deserialize_with = "text")]
    action: Option<String>,
    /// Only entries of this actor (a user's or an API key's id).
    #[serde(default, deserialize_with = "text")]
    actor_id: Option<String>,
    /// Only entries at or after this time (RFC 3339).
    #[serde(default, deserialize_with = "text")]
    #[param(format = DateTime)]
    from: Option<String>,
    /// Only entries at or before this time (RFC 3339).
    #[serde(default, deserialize_with = "text")]
    #[param(format = DateTime)]
    to: Option<String>,
    /// The page, from 1.
    #[param(value_type = Option<i64>, minimum = 1)]
    page: Option<String>,
    /// Entries per page, 1 to 100 (default 20).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    page_size: Option<String>,
    /// `all`: the whole instance (instance super admins only); absent: the active organization.
    #[serde(default, deserialize_with = "text")]
    #[param(pattern = "^all$")]
    scope: Option<String>,
}

fn time(name: &str, raw: Option<String>) -> ApiResult<Option<Timestamp>> {
    match raw.as_deref() {
        None | Some("") => Ok(None),
        Some(raw) => Timestamp::parse_rfc3339(raw)
            .map(Some)
            .ok_or_else(|| bad(format!("`{name}` is an RFC 3339 date-time"))),
    }
}

/// The audit log of the active organization (or the instance), newest first; needs
/// `org.settings` (`scope=all`: a signed-in instance super admin).
#[utoipa::path(get, path = "/api/audit", tag = TAG, params(AuditQuery),
    responses((status = 200, description = "A page of audit entries", body = Paged<AuditEntry>)))]
async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(query): ApiQuery<AuditQuery>,
) -> ApiResult<Json<Paged<AuditEntry>>> {
    let (page, page_size) = page(query.page.as_deref(), query.page_size.as_deref())?;
    let scope = scope(query.scope.as_deref())?;
    let action = match query.action.as_deref() {
        None | Some("") => None,
        Some(name) => Some(AuditAction::parse(name).ok_or_else(|| {
            let names: Vec<&str> = AuditAction::ALL.iter().map(|a| a.as_str()).collect();
            bad(format!("`action` is one of {}", names.join(", ")))
        })?),
    };
    let request = AuditListRequest {
        action,
        actor_id: query.actor_id.filter(|a| !a.is_empty()),
        from: time("from", query.from)?,
        to: time("to", query.to)?,
        page,
        page_size,
        scope,
    };
    let (entries, pagination) = state.cms.audit().list(&actor, request).await?;
    Ok(paged(entries, pagination))
}
