//! Resources: `cms://schemas/{type}` (a document type's schema, listed for the types the caller
//! may read) and `cms://documents/{id}` (a document as `get_document` returns it, read as the
//! caller; a template, since documents are too many to list).

use cms_service::documents::ReadOptions;
use cms_service::{Actor, Cms, Error};
use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::Value;

const SCHEMAS: &str = "cms://schemas/";
const DOCUMENTS: &str = "cms://documents/";
const JSON: &str = "application/json";

pub(crate) fn list(cms: &Cms, actor: &Actor) -> Vec<Resource> {
    cms.documents()
        .readable_types(actor)
        .into_iter()
        .filter_map(|name| cms.schemas().get(&name))
        .map(|schema| {
            Resource::new(format!("{SCHEMAS}{}", schema.name), schema.name.clone())
                .with_title(schema.title.clone().unwrap_or_else(|| schema.name.clone()))
                .with_description(format!("The schema of the document type `{}`", schema.name))
                .with_mime_type(JSON)
        })
        .collect()
}

pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{SCHEMAS}{{type}}"), "schema")
            .with_description("The schema of a document type")
            .with_mime_type(JSON),
        ResourceTemplate::new(format!("{DOCUMENTS}{{id}}"), "document")
            .with_description(
                "A document by id: its draft and published copies and `_meta`, as the caller may read it",
            )
            .with_mime_type(JSON),
    ]
}

/// The resource at `uri`, read as `actor`. One that does not exist, or that the caller may not
/// read, is the same "resource not found" (`-32002`): no existence oracle.
pub(crate) async fn read(
    cms: &Cms,
    actor: &Actor,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let value = if let Some(name) = uri.strip_prefix(SCHEMAS) {
        schema(cms, actor, name)?
    } else if let Some(id) = uri.strip_prefix(DOCUMENTS) {
        document(cms, actor, id).await?
    } else {
        return Err(not_found(uri));
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(value.to_string(), uri).with_mime_type(JSON),
    ]))
}

fn schema(cms: &Cms, actor: &Actor, name: &str) -> Result<Value, ErrorData> {
    let uri = format!("{SCHEMAS}{name}");
    if !cms
        .documents()
        .readable_types(actor)
        .iter()
        .any(|t| t == name)
    {
        return Err(not_found(&uri));
    }
    let schema = cms.schemas().get(name).ok_or_else(|| not_found(&uri))?;
    serde_json::to_value(schema).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

async fn document(cms: &Cms, actor: &Actor, id: &str) -> Result<Value, ErrorData> {
    let uri = format!("{DOCUMENTS}{id}");
    match cms.documents().get(actor, id, ReadOptions::default()).await {
        Ok(document) => serde_json::to_value(document)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
        Err(Error::NotFound(_) | Error::Forbidden) => Err(not_found(&uri)),
        Err(Error::Internal(detail)) => {
            tracing::error!(error = %detail, "MCP resource read failed");
            Err(ErrorData::internal_error(
                "an internal error occurred",
                None,
            ))
        }
        Err(e) => Err(ErrorData::invalid_request(e.public_message(), None)),
    }
}

fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(format!("no resource `{uri}`"), None)
}
