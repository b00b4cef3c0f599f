//! The OpenAPI 3.1 document of this instance.
//!
//! Paths, parameters, bodies and response schemas come from the handlers' own annotations and
//! types (utoipa-axum collects them as the routes are mounted), so a route cannot exist without
//! its description and a described type is the type the handler serializes. What is added here
//! is what no single handler knows: the instance's title and security schemes, the error
//! answers every operation shares, a schema per registered document type, and the events of
//! the log per type (`events.rs`).

mod data;
mod delivery;
mod events;
mod graphql;

use cms_core::schema::Schemas;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ContentBuilder, InfoBuilder, OpenApi, Ref, RefOr, Response, ResponseBuilder,
};
use utoipa::{PartialSchema, ToSchema};

use crate::error::{AccessRefusal, ErrorBody};

/// "Any JSON value" as utoipa's model reads it back: `type: null` is its typeless schema, which
/// it serializes as `{}`.
fn any_value() -> serde_json::Value {
    serde_json::json!({ "type": null })
}

/// The security scheme of API keys (`x-api-key` header).
pub(crate) const API_KEY: &str = "apiKey";
/// The security scheme of browser sessions (the session cookie).
pub(crate) const SESSION: &str = "session";

/// Completes the document the router collected.
pub(crate) fn finish(mut doc: OpenApi, schemas: &Schemas, graphql_path: &str) -> OpenApi {
    doc.info = InfoBuilder::new()
        .title("cms")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(format!(
            "The HTTP API of this instance. Authenticate with an API key in the `x-api-key` \
             header or with the session cookie of a signed-in user. GraphQL is served at \
             `{graphql_path}`; the schemas `<Type>Data` describe each document type's data as \
             publishing requires it (a localized field as its plain value in one locale, or as \
             an object keyed by locale tag with `locale=*`)."
        )))
        .build();
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        API_KEY,
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            "x-api-key",
            "An API key of an organization (`cms_...`).",
        ))),
    );
    components.add_security_scheme(
        SESSION,
        SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
            crate::session_cookie::NAME,
            "The session cookie set by sign-in.",
        ))),
    );
    for (name, schema) in [
        (ErrorBody::name(), ErrorBody::schema()),
        (AccessRefusal::name(), AccessRefusal::schema()),
    ] {
        components.schemas.insert(name.into_owned(), schema);
    }
    for (name, schema) in data::document_schemas(schemas) {
        components.schemas.entry(name).or_insert(schema);
    }
    events::describe(components);
    let types: Vec<String> = schemas.documents().map(|s| s.name.clone()).collect();
    for body in ["CreateBody", "QueryBody"] {
        if let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(body)
            && let Some(RefOr::T(Schema::Object(property))) = object.properties.get_mut("type")
        {
            property.enum_values = Some(types.iter().map(|t| t.as_str().into()).collect());
        }
    }
    doc.security = Some(vec![
        SecurityRequirement::new(API_KEY, Vec::<String>::new()),
        SecurityRequirement::new(SESSION, Vec::<String>::new()),
    ]);
    for item in doc.paths.paths.values_mut() {
        operations(item).for_each(qualify_operation_id);
    }
    if let Some(list) = doc
        .paths
        .paths
        .get_mut("/api/documents")
        .and_then(|item| item.get.as_mut())
    {
        name_the_types(list, &types);
    }
    if let Some(item) = graphql::path_item() {
        doc.paths.paths.insert(graphql_path.to_string(), item);
    }
    delivery::describe(&mut doc, graphql_path);
    for item in doc.paths.paths.values_mut() {
        operations(item).for_each(add_shared_errors);
    }
    doc
}

fn operations(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        item.get.as_mut(),
        item.put.as_mut(),
        item.post.as_mut(),
        item.delete.as_mut(),
        item.patch.as_mut(),
        item.head.as_mut(),
        item.options.as_mut(),
    ]
    .into_iter()
    .flatten()
}

/// The `type` query parameter of the document list names a registered document type: this
/// instance's are listed.
fn name_the_types(operation: &mut Operation, types: &[String]) {
    let parameter = operation
        .parameters
        .iter_mut()
        .flatten()
        .find_map(|p| match p {
            RefOr::T(parameter) if parameter.name == "type" => Some(parameter),
            _ => None,
        });
    if let Some(RefOr::T(Schema::Object(schema))) = parameter.and_then(|p| p.schema.as_mut()) {
        schema.enum_values = Some(types.iter().map(|t| t.as_str().into()).collect());
    }
}

/// Handlers are named for what they do within their module (`list`, `create`): the tag makes
/// the id unique in the document (`documents_list`).
fn qualify_operation_id(operation: &mut Operation) {
    let tag = operation.tags.as_ref().and_then(|t| t.first()).cloned();
    if let (Some(tag), Some(id)) = (tag, operation.operation_id.as_mut()) {
        *id = format!("{tag}_{id}");
    }
}

/// The error answers any operation can give besides its own (CONTRACT.md section 10): bad
/// input, a missing or refused credential, an absent resource, an oversized or mistyped body, a
/// rate limit. An operation's own description of one of them wins.
fn add_shared_errors(operation: &mut Operation) {
    let public = operation
        .security
        .as_ref()
        .is_some_and(|requirements| requirements.iter().all(is_empty_requirement));
    let mut shared = vec![
        ("400", "The input is not valid", ErrorBody::name()),
        (
            "404",
            "No such resource, or not visible to the caller",
            ErrorBody::name(),
        ),
        ("413", "The request body is too large", ErrorBody::name()),
        (
            "415",
            "The body's content type is not accepted",
            ErrorBody::name(),
        ),
        (
            "429",
            "Too many requests; `Retry-After` says when to retry",
            ErrorBody::name(),
        ),
    ];
    if !public {
        shared.push(("401", "No valid credential", AccessRefusal::name()));
        shared.push((
            "403",
            "The credential lacks a capability this operation needs",
            AccessRefusal::name(),
        ));
    }
    for (status, description, schema) in shared {
        operation
            .responses
            .responses
            .entry(status.to_string())
            .or_insert_with(|| error_response(description, &schema));
    }
}

/// `security(())`: the operation is open to anyone.
fn is_empty_requirement(requirement: &SecurityRequirement) -> bool {
    *requirement == SecurityRequirement::default()
}

fn error_response(description: &str, schema: &str) -> RefOr<Response> {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name(schema)))
                .build(),
        )
        .build()
        .into()
}
