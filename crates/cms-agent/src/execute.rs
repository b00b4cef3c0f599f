//! Running the core tools: each one is a call into the service layer as the caller, so every
//! capability, schema rule and field rule holds exactly as it does for REST.

use base64::Engine;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use cms_core::schema::Schema;
use cms_service::assets::{AssetQuery, UploadMetadata};
use cms_service::change_sets::Operation;
use cms_service::documents::{
    DraftUpdate, ListRequest, NewDocument, Perspective, ReadOptions, merge_fields,
};
use cms_service::{Actor, Cms, Error};

use super::tools::Core;
use crate::{locale, translate};

/// What a tool call gives back to its caller (the model, an MCP client): a result, or a
/// failure to reason about (`{ error, issues? }`).
pub type ToolResult = Result<Value, Value>;

/// A tool call's result, and the operation it performed when it changed something.
pub struct Outcome {
    pub result: ToolResult,
    pub operation: Option<Operation>,
}

impl Outcome {
    pub(crate) fn read(result: ToolResult) -> Outcome {
        Outcome {
            result,
            operation: None,
        }
    }
}

/// A failure the model reads: the message, and the `issues` of a validation failure. Access
/// refusals say only that; internals are logged, never returned.
pub(crate) fn failure(error: Error) -> Value {
    let message = error.public_message();
    match error {
        Error::BadRequest { issues, .. } if !issues.is_empty() => {
            json!({ "error": message, "issues": issues })
        }
        Error::Internal(detail) => {
            tracing::error!(error = %detail, "assistant tool failed");
            json!({ "error": message })
        }
        _ => json!({ "error": message }),
    }
}

pub(crate) fn message(text: impl Into<String>) -> Value {
    json!({ "error": text.into() })
}

pub(crate) fn arguments<T: for<'de> Deserialize<'de>>(args: Value) -> Result<T, Value> {
    serde_json::from_value(args).map_err(|e| message(format!("invalid arguments: {e}")))
}

fn perspective(p: Option<&str>) -> Result<Perspective, Value> {
    match p {
        None => Ok(Perspective::Draft),
        Some(s) => {
            Perspective::parse(s).ok_or_else(|| message("`perspective` is `draft` or `published`"))
        }
    }
}

pub(crate) fn to_value(v: impl serde::Serialize) -> ToolResult {
    serde_json::to_value(v).map_err(|e| failure(Error::Internal(e.to_string())))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Nothing {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Collection {
    collection: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Query {
    collection: String,
    #[serde(rename = "where", default)]
    where_: Value,
    #[serde(default)]
    sort: Option<Sort>,
    limit: Option<i64>,
    page: Option<i64>,
    perspective: Option<String>,
    locale: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Sort {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetDocument {
    collection: String,
    id: String,
    perspective: Option<String>,
    locale: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetSingleton {
    collection: String,
    locale: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateSingleton {
    collection: String,
    data: Map<String, Value>,
    locale: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    collection: String,
    data: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidateSchema {
    schema: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Create {
    collection: String,
    data: Map<String, Value>,
    #[serde(default)]
    publish: bool,
    locale: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Update {
    collection: String,
    id: String,
    data: Map<String, Value>,
    expected_revision: Option<i64>,
    locale: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Publish {
    collection: String,
    id: String,
    expected_revision: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ListAssets {
    search: Option<String>,
    asset_type: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Upload {
    filename: String,
    content_base64: String,
    title: Option<String>,
    alt: Option<String>,
}

/// `content_patch_fields` arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PatchFields {
    pub fields: Map<String, Value>,
}

/// `content_save_draft` arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SaveDraft {
    #[allow(dead_code)] // Read by the client that runs the save; checked for shape here.
    pub expected_revision: Option<i64>,
}

/// Checks a workspace tool call on the open document `open_id` before the turn pauses for the client: a structurally invalid
/// patch (an undeclared field, a value of the wrong type, a field the caller may not update)
/// goes back to the model as a failure instead.
pub(crate) async fn check_workspace_call(
    cms: &Cms,
    actor: &Actor,
    core: Core,
    args: Value,
    open_id: &str,
) -> Result<(), Value> {
    match core {
        Core::PatchFields => {
            let PatchFields { fields } = arguments(args)?;
            if fields.is_empty() {
                return Err(message("`fields` names no field"));
            }
            cms.documents()
                .check_patch(actor, open_id, &fields)
                .await
                .map(drop)
                .map_err(failure)
        }
        Core::SaveDraft => arguments::<SaveDraft>(args).map(drop),
        _ => Err(message("not a workspace tool")),
    }
}

/// Runs a core server tool as `actor`. `offered` is the turn's tool list (for describe_cms).
pub(crate) async fn run(
    cms: &Cms,
    actor: &Actor,
    core: Core,
    args: Value,
    offered: &[String],
) -> Outcome {
    match core {
        Core::DescribeCms => Outcome::read(describe(cms, actor, args, offered).await),
        Core::ListCollections => Outcome::read(list_collections(cms, args)),
        Core::GetSchema => Outcome::read(get_schema(cms, args)),
        Core::QueryDocuments => Outcome::read(query(cms, actor, args).await),
        Core::GetDocument => Outcome::read(get_document(cms, actor, args).await),
        Core::ValidateDocument => Outcome::read(validate_document(cms, actor, args).await),
        Core::ValidateSchema => Outcome::read(validate_schema(cms, args)),
        Core::GetSingleton => Outcome::read(get_singleton(cms, actor, args).await),
        Core::ListAssets => Outcome::read(list_assets(cms, actor, args).await),
        Core::CreateDocument => create(cms, actor, args).await,
        Core::UpdateDocument => update(cms, actor, args).await,
        Core::PublishDocument => publish(cms, actor, args).await,
        Core::UpdateSingleton => update_singleton(cms, actor, args).await,
        Core::UploadAsset => upload(cms, actor, args).await,
        Core::TranslateDocument => translate::run(cms, actor, args).await,
        Core::PatchFields | Core::SaveDraft => {
            Outcome::read(Err(message("a workspace tool runs in the editor")))
        }
    }
}

async fn describe(cms: &Cms, actor: &Actor, args: Value, offered: &[String]) -> ToolResult {
    arguments::<Nothing>(args)?;
    let organization = match &actor.organization_id {
        Some(id) => cms
            .organizations()
            .get(actor, id)
            .await
            .ok()
            .map(|o| json!({ "id": o.id, "name": o.name })),
        None => None,
    };
    Ok(json!({
        "service": "a headless content management service: typed documents with draft and published copies, versions, references and assets",
        "organization": organization,
        "user": { "id": actor.user.id, "name": actor.user.name },
        "collections": collections(cms),
        "locales": locale::describe(cms, actor).await,
        "tools": offered,
    }))
}

fn collections(cms: &Cms) -> Vec<Value> {
    cms.schemas()
        .documents()
        .map(|s| {
            let mut entry = json!({ "name": s.name, "title": s.title, "singleton": s.singleton });
            let localized = locale::localized_paths(cms.schemas(), &s.name);
            if !localized.is_empty() {
                entry["localizedFields"] = json!(localized);
            }
            entry
        })
        .collect()
}

fn list_collections(cms: &Cms, args: Value) -> ToolResult {
    arguments::<Nothing>(args)?;
    Ok(json!({ "collections": collections(cms) }))
}

pub(crate) fn document_schema<'c>(cms: &'c Cms, collection: &str) -> Result<&'c Schema, Value> {
    cms.schemas()
        .get(collection)
        .filter(|s| s.is_document())
        .ok_or_else(|| message(format!("`{collection}` is not a document type")))
}

/// The schema as registered; for a type with localized fields, also their paths, so the model
/// knows which fields take a `locale`.
fn get_schema(cms: &Cms, args: Value) -> ToolResult {
    let Collection { collection } = arguments(args)?;
    let mut schema = to_value(document_schema(cms, &collection)?)?;
    let localized = locale::localized_paths(cms.schemas(), &collection);
    if !localized.is_empty()
        && let Some(object) = schema.as_object_mut()
    {
        object.insert("localizedFields".into(), json!(localized));
    }
    Ok(schema)
}

async fn query(cms: &Cms, actor: &Actor, args: Value) -> ToolResult {
    let q: Query = arguments(args)?;
    let request = ListRequest {
        doc_type: q.collection,
        where_: q.where_,
        sort: match q.sort {
            None => Vec::new(),
            Some(Sort::One(s)) => vec![s],
            Some(Sort::Many(list)) => list,
        },
        published: None,
        page: q.page,
        page_size: q.limit,
        read: ReadOptions {
            perspective: perspective(q.perspective.as_deref())?,
            locale: q.locale,
            ..ReadOptions::default()
        },
        search: None,
    };
    let page = cms
        .documents()
        .list(actor, request)
        .await
        .map_err(failure)?;
    Ok(json!({
        "documents": to_value(page.data)?,
        "pagination": to_value(page.pagination)?,
    }))
}

/// The document `id` when it is of `collection`; another type's document is as absent as a
/// missing one.
pub(crate) async fn document_of(
    cms: &Cms,
    actor: &Actor,
    collection: &str,
    id: &str,
    read: ReadOptions,
) -> Result<cms_service::documents::DocumentView, Value> {
    let document = cms
        .documents()
        .get(actor, id, read)
        .await
        .map_err(failure)?;
    if document.doc_type != collection {
        return Err(failure(Error::not_found("document")));
    }
    Ok(document)
}

async fn get_document(cms: &Cms, actor: &Actor, args: Value) -> ToolResult {
    let a: GetDocument = arguments(args)?;
    let read = ReadOptions {
        perspective: perspective(a.perspective.as_deref())?,
        locale: a.locale,
        ..ReadOptions::default()
    };
    to_value(document_of(cms, actor, &a.collection, &a.id, read).await?)
}

async fn validate_document(cms: &Cms, actor: &Actor, args: Value) -> ToolResult {
    let Data { collection, data } = arguments(args)?;
    let validation = cms
        .documents()
        .validate(actor, &collection, &Value::Object(data))
        .await
        .map_err(failure)?;
    to_value(validation)
}

/// Parses a schema and checks it beside the registered ones (a schema of a registered name is
/// checked as its replacement), so references to object types resolve.
fn validate_schema(cms: &Cms, args: Value) -> ToolResult {
    let ValidateSchema { schema } = arguments(args)?;
    let checked = cms_core::schema::Schema::from_json(&schema).and_then(|parsed| {
        let mut all: Vec<Schema> = cms
            .schemas()
            .all()
            .iter()
            .filter(|s| s.name != parsed.name)
            .cloned()
            .collect();
        all.push(parsed);
        cms_core::schema::Schemas::new(all)
    });
    Ok(match checked {
        Ok(_) => json!({ "isValid": true, "errors": [] }),
        Err(e) => json!({ "isValid": false, "errors": [e.to_string()] }),
    })
}

async fn get_singleton(cms: &Cms, actor: &Actor, args: Value) -> ToolResult {
    let GetSingleton { collection, locale } = arguments(args)?;
    let document = cms
        .documents()
        .singleton(actor, &collection)
        .await
        .map_err(failure)?;
    match locale {
        None => to_value(document),
        // The singleton's id found, read again in the locale asked.
        Some(locale) => {
            let read = ReadOptions {
                locale: Some(locale),
                ..ReadOptions::default()
            };
            to_value(document_of(cms, actor, &collection, &document.id, read).await?)
        }
    }
}

async fn list_assets(cms: &Cms, actor: &Actor, args: Value) -> ToolResult {
    let a: ListAssets = arguments(args)?;
    let page = cms
        .assets()
        .list(
            actor,
            AssetQuery {
                asset_type: a.asset_type,
                mime_type: None,
                search: a.search,
                limit: a.limit,
                offset: a.offset,
                include_children: false,
            },
        )
        .await
        .map_err(failure)?;
    Ok(json!({ "assets": to_value(page.data)?, "pagination": to_value(page.pagination)? }))
}

/// An operation on a document, for the change set.
pub(crate) fn operation(
    core: Core,
    collection: &str,
    id: Option<&str>,
    success: bool,
    before: Option<i64>,
    after: Option<i64>,
) -> Option<Operation> {
    Some(Operation {
        tool: core.name().to_string(),
        collection: Some(collection.to_string()),
        document_id: id.map(str::to_string),
        success,
        version_before: before,
        version_after: after,
    })
}

/// The newest version number of a document, for the change set (best effort: a document the
/// caller cannot read any more has none to report).
pub(crate) async fn latest(cms: &Cms, actor: &Actor, id: &str) -> Option<i64> {
    cms.documents()
        .latest_version(actor, id)
        .await
        .ok()
        .flatten()
}

async fn create(cms: &Cms, actor: &Actor, args: Value) -> Outcome {
    let a: Create = match arguments(args) {
        Ok(a) => a,
        Err(e) => return Outcome::read(Err(e)),
    };
    let created = cms
        .documents()
        .create(
            actor,
            NewDocument {
                doc_type: a.collection.clone(),
                data: Value::Object(a.data),
                publish: a.publish,
                locale: a.locale,
            },
        )
        .await;
    match created {
        Ok((document, validation)) => {
            let after = latest(cms, actor, &document.id).await;
            let op = operation(
                Core::CreateDocument,
                &a.collection,
                Some(&document.id),
                true,
                None,
                after,
            );
            Outcome {
                result: to_value(json!({ "document": document, "validation": validation })),
                operation: op,
            }
        }
        Err(e) => Outcome {
            result: Err(failure(e)),
            operation: operation(Core::CreateDocument, &a.collection, None, false, None, None),
        },
    }
}

/// One partial edit of a document's draft: the fields named, in a locale.
struct Edit<'a> {
    core: Core,
    collection: &'a str,
    id: &'a str,
    fields: &'a Map<String, Value>,
    expected_revision: Option<i64>,
    locale: Option<&'a str>,
}

/// Merges the edit's fields into the draft of its document, in its locale (the other locales
/// kept), and saves it, guarded by the revision.
async fn save_merged(cms: &Cms, actor: &Actor, edit: Edit<'_>) -> Outcome {
    let Edit {
        core,
        collection,
        id,
        fields,
        expected_revision,
        locale,
    } = edit;
    let (current, draft, written) =
        match locale::edit_base(cms, actor, collection, id, locale).await {
            Ok(base) => base,
            Err(e) => return Outcome::read(Err(e)),
        };
    let before = latest(cms, actor, id).await;
    let updated = cms
        .documents()
        .update(
            actor,
            id,
            DraftUpdate {
                data: merge_fields(&draft, fields),
                publish: false,
                // Without an expected revision, the merge is guarded by the one just read: an
                // edit landing in between is reported, never overwritten.
                expected_revision: Some(expected_revision.unwrap_or(current.meta.revision)),
                locale: written,
            },
        )
        .await;
    match updated {
        Ok((document, validation)) => {
            let after = latest(cms, actor, id).await;
            Outcome {
                // The shape of `create_document`'s result: the saved draft and what would block
                // publishing it (CONTRACT.md section 2).
                result: to_value(json!({ "document": document, "validation": validation })),
                operation: operation(core, collection, Some(id), true, before, after),
            }
        }
        Err(e) => Outcome {
            result: Err(failure(e)),
            operation: operation(core, collection, Some(id), false, before, before),
        },
    }
}

async fn update(cms: &Cms, actor: &Actor, args: Value) -> Outcome {
    match arguments::<Update>(args) {
        Ok(a) => {
            let edit = Edit {
                core: Core::UpdateDocument,
                collection: &a.collection,
                id: &a.id,
                fields: &a.data,
                expected_revision: a.expected_revision,
                locale: a.locale.as_deref(),
            };
            save_merged(cms, actor, edit).await
        }
        Err(e) => Outcome::read(Err(e)),
    }
}

async fn update_singleton(cms: &Cms, actor: &Actor, args: Value) -> Outcome {
    let UpdateSingleton {
        collection,
        data,
        locale,
    } = match arguments(args) {
        Ok(a) => a,
        Err(e) => return Outcome::read(Err(e)),
    };
    let row = match cms.documents().singleton(actor, &collection).await {
        Ok(row) => row,
        Err(e) => return Outcome::read(Err(failure(e))),
    };
    let edit = Edit {
        core: Core::UpdateSingleton,
        collection: &collection,
        id: &row.id,
        fields: &data,
        expected_revision: None,
        locale: locale.as_deref(),
    };
    save_merged(cms, actor, edit).await
}

async fn publish(cms: &Cms, actor: &Actor, args: Value) -> Outcome {
    let a: Publish = match arguments(args) {
        Ok(a) => a,
        Err(e) => return Outcome::read(Err(e)),
    };
    if let Err(e) = document_of(cms, actor, &a.collection, &a.id, ReadOptions::default()).await {
        return Outcome::read(Err(e));
    }
    let before = latest(cms, actor, &a.id).await;
    let core = Core::PublishDocument;
    match cms
        .documents()
        .publish(actor, &a.id, a.expected_revision)
        .await
    {
        Ok(document) => {
            let after = latest(cms, actor, &a.id).await;
            Outcome {
                result: to_value(document),
                operation: operation(core, &a.collection, Some(&a.id), true, before, after),
            }
        }
        Err(e) => Outcome {
            result: Err(failure(e)),
            operation: operation(core, &a.collection, Some(&a.id), false, before, before),
        },
    }
}

async fn upload(cms: &Cms, actor: &Actor, args: Value) -> Outcome {
    let a: Upload = match arguments(args) {
        Ok(a) => a,
        Err(e) => return Outcome::read(Err(e)),
    };
    let limit = cms.settings().assets.max_upload_bytes;
    // Base64 is 4 characters per 3 bytes: refuse what cannot fit before decoding it.
    if (a.content_base64.len() as u64 / 4).saturating_mul(3) > limit.saturating_add(3) {
        return Outcome::read(Err(message(format!(
            "the file is larger than the upload limit of {limit} bytes"
        ))));
    }
    let bytes = match base64::engine::general_purpose::STANDARD.decode(a.content_base64.trim()) {
        Ok(b) => b,
        Err(e) => return Outcome::read(Err(message(format!("`contentBase64`: {e}")))),
    };
    let assets = cms.assets();
    let body = futures_util::stream::iter([Ok(Bytes::from(bytes))]);
    let uploaded = async {
        let staged = assets.stage(actor, &a.filename, body).await?;
        assets
            .create(
                actor,
                staged,
                UploadMetadata {
                    title: a.title,
                    description: None,
                    alt: a.alt,
                    credit_line: None,
                    organization_id: None,
                },
            )
            .await
    }
    .await;
    match uploaded {
        Ok(asset) => Outcome {
            operation: Some(Operation {
                tool: Core::UploadAsset.name().into(),
                collection: None,
                document_id: Some(asset.id.clone()),
                success: true,
                version_before: None,
                version_after: None,
            }),
            result: to_value(asset),
        },
        Err(e) => Outcome::read(Err(failure(e))),
    }
}
