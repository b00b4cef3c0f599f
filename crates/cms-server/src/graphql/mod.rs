//! `POST /api/graphql` (the path is `graphql.path`): the GraphQL door. The schema is built
//! once, when the router is, from the registered document types; every resolver calls the
//! service layer with the request's actor (see `resolve.rs`).
//!
//! HTTP: a request without credentials is 401 `{ error }` like every other endpoint; a
//! malformed body is 400 in the handler-layer envelope; a mutation by an API key that may
//! write no document (a `read` key) is 403 `{ error }` before it runs (SPEC.md
//! "Authentication" point 4; the service decides, `Actor::require_mutation_scope`).
//! Everything else, errors of resolvers
//! (with `extensions.code`) and refused queries (too deep, too complex, invalid) included,
//! answers 200 with `{ data, errors? }`, as the GraphQL-over-HTTP convention for
//! `application/json` says.
//!
//! The modules, each using only those before it: `errors` (service errors as GraphQL errors),
//! `names` (the names of the dynamic schema), `shape` (how a stored value is exposed),
//! `loaders` (the request's context and its DataLoaders), `resolve` (the resolvers), `fields`
//! (the field builders), `schema` (the schema, built from the field builders).

mod errors;
mod fields;
mod loaders;
mod names;
mod resolve;
mod schema;
mod shape;

use std::sync::Arc;

use async_graphql::parser::types::{DocumentOperations, OperationType};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing};
use cms_service::Error;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, Authed};

pub use loaders::CALL_TARGET;
pub(crate) use names::pascal;
pub use schema::{MAX_COMPLEXITY, MAX_DEPTH};

/// The schema, or why it could not be built (the endpoint then answers 500).
pub(crate) type Built = Arc<Result<async_graphql::dynamic::Schema, String>>;

/// Builds the schema of `schemas`, once.
pub(crate) fn build(schemas: &cms_core::schema::Schemas) -> Built {
    Arc::new(schema::build(schemas).map_err(|e| {
        tracing::error!(error = %e, "the GraphQL schema could not be built: /api/graphql answers 500");
        e.to_string()
    }))
}

pub(crate) fn routes(path: &str) -> Router<AppState> {
    Router::new().route(path, routing::post(execute))
}

async fn execute(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(mut request): ApiJson<async_graphql::Request>,
) -> Response {
    let schema = match state.graphql.as_ref() {
        Ok(schema) => schema,
        Err(why) => return ApiError::Service(Error::Internal(why.clone())).into_response(),
    };
    if operation_type(&mut request) == Some(OperationType::Mutation)
        && let Err(refused) = actor.require_mutation_scope()
    {
        return ApiError::Service(refused).into_response();
    }
    let ctx = loaders::RequestCtx::new(state.cms.clone(), actor);
    Json(schema.execute(request.data(ctx)).await).into_response()
}

/// The type of the operation `request` would run, read before it runs (the parse is kept for
/// the execution). `None` when the document does not parse or does not single out one
/// operation: execution then answers with the error itself, running nothing.
fn operation_type(request: &mut async_graphql::Request) -> Option<OperationType> {
    let name = request.operation_name.clone();
    let document = request.parsed_query().ok()?;
    let operation = match (&document.operations, name) {
        (DocumentOperations::Single(operation), _) => operation,
        (DocumentOperations::Multiple(operations), Some(name)) => operations.get(name.as_str())?,
        (DocumentOperations::Multiple(operations), None) if operations.len() == 1 => {
            operations.values().next()?
        }
        (DocumentOperations::Multiple(_), None) => return None,
    };
    Some(operation.node.ty)
}
