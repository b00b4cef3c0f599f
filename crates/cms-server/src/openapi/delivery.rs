//! What the reads serving published content add to their description (CONTRACT.md section
//! 15): a request without credentials may name an organization, by header or by query
//! parameter, and then reads as that organization's `public` role, within a per-address limit.

use utoipa::openapi::path::{Operation, Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, Required};

use super::ErrorBody;
use utoipa::ToSchema;

/// The reads an anonymous `public` reader may make, by path and method.
const DELIVERY_READS: [(&str, &str); 7] = [
    ("/api/documents", "get"),
    ("/api/documents/query", "post"),
    ("/api/documents/by-ids", "get"),
    ("/api/documents/{id}", "get"),
    ("/api/documents/{id}/back-references", "get"),
    ("/api/assets", "get"),
    ("/api/assets/{id}", "get"),
];

/// Adds the organization parameters and the anonymous-read limit to the delivery reads and
/// to GraphQL (whose queries a `public` reader may make too).
pub(super) fn describe(doc: &mut OpenApi, graphql_path: &str) {
    let reads = DELIVERY_READS
        .iter()
        .copied()
        .chain(std::iter::once((graphql_path, "post")));
    for (path, method) in reads {
        let Some(item) = doc.paths.paths.get_mut(path) else {
            continue;
        };
        let operation = match method {
            "get" => item.get.as_mut(),
            _ => item.post.as_mut(),
        };
        if let Some(operation) = operation {
            add_organization(operation);
        }
    }
}

fn add_organization(operation: &mut Operation) {
    let parameters = operation.parameters.get_or_insert_with(Vec::new);
    parameters.push(
        parameter(
            "x-cms-organization",
            ParameterIn::Header,
            "Without credentials: the slug of the organization whose published content to read, \
         as its `public` role (only what that role was granted; `published` perspective only). \
         Ignored beside a credential.",
        )
        .into(),
    );
    parameters.push(
        parameter(
            "organization",
            ParameterIn::Query,
            "The same as the `x-cms-organization` header, for clients that cannot send headers; \
         the header wins.",
        )
        .into(),
    );
    operation.responses.responses.insert(
        "429".to_string(),
        utoipa::openapi::ResponseBuilder::new()
            .description(
                "Too many anonymous reads from this address (`delivery.publicReadsPerMinute`); \
                 `Retry-After` says when to retry",
            )
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name(ErrorBody::name())))
                    .build(),
            )
            .build()
            .into(),
    );
}

fn parameter(name: &str, location: ParameterIn, description: &str) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(location)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(
            utoipa::openapi::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String),
        ))
        .build()
}
