//! The routes of the HTTP door, one module per concept. Handlers parse, call the service with
//! the actor, and render; they decide nothing.

pub mod account;
pub mod admin;
pub mod agent;
pub mod api_keys;
pub mod assets;
pub mod audit;
pub mod auth;
pub mod docs;
pub mod documents;
pub mod event_stream;
pub mod health;
pub mod instance_settings;
pub mod jobs;
pub mod locales;
pub mod mcp;
pub mod media;
pub mod metrics;
pub mod oidc;
pub mod organizations;
mod params;
pub mod plugin_settings;
pub mod plugins;
pub mod presence;
pub mod preview;
pub mod roles;
pub mod schemas;
pub mod two_factor;
pub mod webhooks;

use axum::Json;
use axum::http::StatusCode;
use cms_service::paging::Pagination;
use serde::Serialize;
use utoipa::ToSchema;

/// The success envelope: `{ success: true, data }`. Handlers answer with it and the OpenAPI
/// document describes it, so the two cannot drift apart.
#[derive(Debug, Serialize, ToSchema)]
pub struct Data<T> {
    /// Always `true`.
    pub success: bool,
    pub data: T,
}

/// A page of a list: `{ success: true, data: [...], pagination }`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Paged<T> {
    /// Always `true`.
    pub success: bool,
    pub data: Vec<T>,
    pub pagination: Pagination,
}

/// `200 { success: true, data }`.
pub fn ok<T: Serialize>(data: T) -> Json<Data<T>> {
    Json(Data {
        success: true,
        data,
    })
}

/// `201 { success: true, data }`.
pub fn created<T: Serialize>(data: T) -> (StatusCode, Json<Data<T>>) {
    (StatusCode::CREATED, ok(data))
}

/// `200 { success: true, data, pagination }`.
pub fn paged<T: Serialize>(data: Vec<T>, pagination: Pagination) -> Json<Paged<T>> {
    Json(Paged {
        success: true,
        data,
        pagination,
    })
}
