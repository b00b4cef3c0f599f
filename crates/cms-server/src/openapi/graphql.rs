//! The GraphQL endpoint as an operation: its path is configuration (`graphql.path`), so it
//! cannot carry a static annotation like the other handlers.

use serde_json::json;
use utoipa::openapi::PathItem;

/// The operation of `POST {path}`.
pub(crate) fn path_item() -> Option<PathItem> {
    let item = json!({
        "post": {
            "tags": ["graphql"],
            "operationId": "graphql_execute",
            "summary": "Runs a GraphQL query or mutation.",
            "description": "The schema is built from the registered document types: per type \
                `all<Type>`, `<Type>`, and the mutations `create<Type>`, `update<Type>`, \
                `delete<Type>`, `publish<Type>`, `unpublish<Type>`; all but `delete<Type>` take \
                `locale`, one locale read and written per field (`locale=*` is REST's). \
                Introspection is open to \
                authenticated callers. Errors in the query are answered with 200 and `errors`.",
            "requestBody": {
                "required": true,
                "content": { "application/json": { "schema": {
                    "type": "object",
                    "required": ["query"],
                    "properties": {
                        "query": { "type": "string" },
                        "variables": { "type": ["object", "null"] },
                        "operationName": { "type": ["string", "null"] },
                    },
                } } },
            },
            "responses": {
                "200": {
                    "description": "The result: `data`, and `errors` when any field failed",
                    "content": { "application/json": { "schema": {
                        "type": "object",
                        "properties": {
                            "data": super::any_value(),
                            "errors": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["message"],
                                    "properties": {
                                        "message": { "type": "string" },
                                        "path": { "type": "array", "items": super::any_value() },
                                        "locations": { "type": "array", "items": { "type": "object" } },
                                        "extensions": { "type": "object" },
                                    },
                                },
                            },
                        },
                    } } },
                },
            },
        },
    });
    serde_json::from_value(item)
        .map_err(|e| tracing::error!(error = %e, "the GraphQL operation does not describe"))
        .ok()
}
