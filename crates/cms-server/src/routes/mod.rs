//! The routes of the HTTP door, one module per concept. Handlers parse, call the service with
//! the actor, and render; they decide nothing.

pub mod account;
pub mod api_keys;
pub mod assets;
pub mod auth;
pub mod documents;
pub mod health;
pub mod instance_settings;
pub mod jobs;
pub mod media;
pub mod organizations;
mod params;
pub mod roles;
pub mod schemas;

use axum::Json;
use axum::http::StatusCode;
use serde::Serialize;
use serde_json::{Value, json};

/// `200 { success: true, data }`.
pub fn ok<T: Serialize>(data: T) -> Json<Value> {
    Json(json!({ "success": true, "data": data }))
}

/// `201 { success: true, data }`.
pub fn created<T: Serialize>(data: T) -> (StatusCode, Json<Value>) {
    (StatusCode::CREATED, ok(data))
}
