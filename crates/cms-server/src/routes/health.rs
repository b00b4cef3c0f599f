//! Health endpoints, unauthenticated: `/healthz` for load balancers, `/api/cms-health` for
//! operators.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::{Json, Router, routing};
use cms_service::Status;
use serde_json::json;

use crate::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", routing::get(healthz))
        .route("/api/cms-health", routing::get(cms_health))
}

/// `{ ok, db, storage }`: 200 when both answer, 503 otherwise.
async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    let (db, storage) = state.cms.health().liveness().await;
    let ok = db.healthy() && storage.healthy();
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        Json(json!({ "ok": ok, "db": db.healthy(), "storage": storage.healthy() })),
    )
}

/// `{ status, database, storage? }`: 503 only when the database does not answer.
async fn cms_health(State(state): State<AppState>) -> impl IntoResponse {
    let report = state.cms.health().report().await;
    let status = if report.status == Status::Unhealthy {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (status, Json(report))
}
