//! Health endpoints, unauthenticated: `/healthz` for load balancers, `/api/cms-health` for
//! operators.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use cms_service::{HealthReport, Status};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;

const TAG: &str = "health";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(cms_health))
}

/// Whether the database and the asset storage answer.
#[derive(Debug, Serialize, ToSchema)]
struct Liveness {
    /// `db && storage`.
    ok: bool,
    db: bool,
    storage: bool,
}

/// `{ ok, db, storage }`: 200 when both answer, 503 otherwise.
#[utoipa::path(get, path = "/healthz", tag = TAG, security(()),
    responses(
        (status = 200, description = "The database and the storage answer", body = Liveness),
        (status = 503, description = "The database or the storage does not answer", body = Liveness),
    ))]
async fn healthz(State(state): State<AppState>) -> (StatusCode, Json<Liveness>) {
    let (db, storage) = state.cms.health().liveness().await;
    let ok = db.healthy() && storage.healthy();
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        Json(Liveness {
            ok,
            db: db.healthy(),
            storage: storage.healthy(),
        }),
    )
}

/// `{ status, database, storage? }`: 503 only when the database does not answer.
#[utoipa::path(get, path = "/api/cms-health", tag = TAG, security(()),
    responses(
        (status = 200, description = "`healthy`, or `degraded` when the storage check fails", body = HealthReport),
        (status = 503, description = "`unhealthy`: the database does not answer", body = HealthReport),
    ))]
async fn cms_health(State(state): State<AppState>) -> (StatusCode, Json<HealthReport>) {
    let report = state.cms.health().report().await;
    let status = if report.status == Status::Unhealthy {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (status, Json(report))
}
