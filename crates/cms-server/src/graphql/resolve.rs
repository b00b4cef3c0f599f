//! Resolvers. Every one calls the service layer with the request's actor, exactly as the REST
//! handlers do, so capabilities, schema rules and field stripping hold by construction: a
//! field the caller may not read is absent from the service's answer and resolves to null.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_graphql::dataloader::{DataLoader, Loader};
use async_graphql::dynamic::{
    Field, FieldFuture, FieldValue, InputValue, Object, ResolverContext, TypeRef,
};
use async_graphql::{ErrorExtensions, Value as GqlValue};
use cms_core::Issue;
use cms_service::assets::AssetView;
use cms_service::documents::{
    DocumentView, DraftUpdate, ListRequest, MAX_BY_IDS, MAX_EXPANDED_NODES, NewDocument,
    Perspective, ReadOptions, Validation,
};
use cms_service::paging::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
use cms_service::{Actor, Cms, Error};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tracing::instrument::{Instrument, WithSubscriber};

use super::schema::type_ref;

/// The tracing target of one event per service call a GraphQL request makes (tests count them).
pub const CALL_TARGET: &str = "cms_server::graphql::call";

/// What a request's resolvers share: the service, the actor, and the batching reference
/// loader (one per request: the actor decides what it may see).
pub struct RequestCtx {
    cms: Cms,
    actor: Actor,
    loader: DataLoader<RefLoader>,
    assets: DataLoader<AssetLoader>,
    /// References resolved so far: a response expands at most [`MAX_EXPANDED_NODES`], as
    /// REST's `depth` does (the query's depth and complexity limits bound its shape, not the
    /// length of the reference lists it walks).
    expanded: AtomicUsize,
}

impl RequestCtx {
    pub fn new(cms: Cms, actor: Actor) -> Self {
        // Each batch runs on a task of its own: it keeps the request's span and subscriber.
        let spawn = |fut: BoxFuture<'static, ()>| {
            tokio::spawn(fut.in_current_span().with_current_subscriber())
        };
        let loader = RefLoader {
            cms: cms.clone(),
            actor: actor.clone(),
        };
        let assets = AssetLoader {
            cms: cms.clone(),
            actor: actor.clone(),
        };
        RequestCtx {
            cms,
            actor,
            loader: DataLoader::new(loader, spawn),
            assets: DataLoader::new(assets, spawn),
            expanded: AtomicUsize::new(0),
        }
    }

    /// Counts `n` more references to resolve; past [`MAX_EXPANDED_NODES`] in this request,
    /// the field is an error naming the limit (BAD_REQUEST) instead of a truncated list.
    fn expand(&self, n: usize) -> async_graphql::Result<()> {
        let before = self.expanded.fetch_add(n, Ordering::Relaxed);
        if before + n > MAX_EXPANDED_NODES {
            return Err(bad(&format!(
                "the response would expand more than {MAX_EXPANDED_NODES} references \
                 (MAX_EXPANDED_NODES): select fewer references or documents"
            )));
        }
        Ok(())
    }
}

/// How a data field's stored value is exposed.
#[derive(Debug, Clone)]
pub enum Shape {
    String,
    Float,
    Boolean,
    /// A slug's `current`.
    Slug,
    Json,
    Image,
    File,
    /// An object of the named GraphQL type.
    Object(String),
    /// `{ _ref }` resolved to the referenced document; `type_name` is the document type or the
    /// union of `targets` (schema name, GraphQL name).
    Reference {
        type_name: String,
        targets: Vec<(String, String)>,
    },
    List(Box<Shape>),
}

/// How a document was read, which its references are read the same way: the copy
/// (`perspective`) and whether child organizations' documents are in reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reading {
    perspective: Perspective,
    children: bool,
}

impl Reading {
    const DRAFT: Reading = Reading {
        perspective: Perspective::Draft,
        children: false,
    };

    fn options(self) -> ReadOptions {
        ReadOptions {
            perspective: self.perspective,
            depth: None,
            include_children: self.children,
        }
    }
}

/// A document as a resolver's parent: the service's view and how it was read, and for the
/// answer of `createT` and `updateT` what would block publishing it.
struct Doc {
    view: Arc<DocumentView>,
    reading: Reading,
    validation: Option<Arc<Validation>>,
}

/// An object-valued part of a document's data.
struct Part {
    data: Value,
    reading: Reading,
}

/// A service error as a GraphQL error with `extensions.code`.
pub fn gql_error(e: Error) -> async_graphql::Error {
    let (code, message) = match &e {
        Error::Unauthorized | Error::InvalidCredentials => {
            ("UNAUTHENTICATED", "authentication required".to_string())
        }
        Error::Forbidden => ("FORBIDDEN", "access denied".to_string()),
        Error::NotPermitted(m) => ("FORBIDDEN", m.clone()),
        Error::BadRequest { message, .. } => ("BAD_REQUEST", message.clone()),
        Error::NotFound(m) => ("NOT_FOUND", m.clone()),
        Error::Conflict(m) => ("CONFLICT", m.clone()),
        Error::RevisionConflict { .. } => ("CONFLICT", e.to_string()),
        Error::Unprocessable(m) => ("BAD_REQUEST", m.clone()),
        Error::PayloadTooLarge(m) => ("BAD_REQUEST", m.clone()),
        Error::AssetsReferenced { .. } => ("CONFLICT", e.to_string()),
        Error::DocumentReferenced { .. } => ("CONFLICT", e.to_string()),
        Error::TooManyRequests { .. } => ("TOO_MANY_REQUESTS", e.to_string()),
        Error::Unavailable(m) => ("UNAVAILABLE", m.clone()),
        Error::NotImplemented(m) => ("NOT_IMPLEMENTED", m.clone()),
        Error::Internal(detail) => {
            tracing::error!(error = %detail, "GraphQL resolver failed");
            ("INTERNAL", "internal error".to_string())
        }
    };
    async_graphql::Error::new(message).extend_with(|_, ext| {
        ext.set("code", code);
        match &e {
            Error::BadRequest { issues, .. } if !issues.is_empty() => {
                let issues = serde_json::to_value(issues).unwrap_or(Value::Null);
                if let Ok(v) = GqlValue::from_json(issues) {
                    ext.set("issues", v);
                }
            }
            Error::RevisionConflict { current, .. } => ext.set("currentRevision", *current),
            Error::DocumentReferenced { referrers, .. } => {
                let ids: Vec<GqlValue> = referrers
                    .iter()
                    .map(|id| GqlValue::from(id.as_str()))
                    .collect();
                ext.set("referencedBy", GqlValue::List(ids))
            }
            _ => {}
        }
    })
}

fn call(name: &'static str, ids: usize) {
    tracing::debug!(target: CALL_TARGET, call = name, ids, "service call");
}

fn rc<'a>(ctx: &ResolverContext<'a>) -> async_graphql::Result<&'a RequestCtx> {
    ctx.ctx.data::<RequestCtx>()
}

fn bad(message: &str) -> async_graphql::Error {
    gql_error(Error::bad_request(message))
}

fn perspective_arg(ctx: &ResolverContext<'_>) -> async_graphql::Result<Perspective> {
    match ctx.args.get("perspective") {
        None => Ok(Perspective::Draft),
        Some(v) if v.is_null() => Ok(Perspective::Draft),
        Some(v) => Perspective::parse(v.enum_name()?)
            .ok_or_else(|| bad("`perspective` is `draft` or `published`")),
    }
}

fn int_arg(ctx: &ResolverContext<'_>, name: &str) -> async_graphql::Result<Option<i64>> {
    match ctx.args.get(name) {
        Some(v) if !v.is_null() => Ok(Some(v.i64()?)),
        _ => Ok(None),
    }
}

fn bool_arg(ctx: &ResolverContext<'_>, name: &str) -> async_graphql::Result<bool> {
    match ctx.args.get(name) {
        Some(v) if !v.is_null() => Ok(v.boolean()?),
        _ => Ok(false),
    }
}

fn json_arg(ctx: &ResolverContext<'_>, name: &str) -> async_graphql::Result<Value> {
    match ctx.args.get(name) {
        Some(v) => Ok(v.as_value().clone().into_json()?),
        None => Ok(Value::Null),
    }
}

fn id_arg(ctx: &ResolverContext<'_>) -> async_graphql::Result<String> {
    Ok(ctx.args.try_get("id")?.string()?.to_string())
}

fn doc_value(view: DocumentView, reading: Reading) -> FieldValue<'static> {
    FieldValue::owned_any(Doc {
        view: Arc::new(view),
        reading,
        validation: None,
    })
}

/// The document a `createT` or `updateT` saved, with its `validation`.
fn saved_value(view: DocumentView, validation: Validation) -> FieldValue<'static> {
    FieldValue::owned_any(Doc {
        view: Arc::new(view),
        reading: Reading::DRAFT,
        validation: Some(Arc::new(validation)),
    })
}

/// The `perspective` and `includeChildOrganizations` arguments of a query field.
fn reading_args(ctx: &ResolverContext<'_>) -> async_graphql::Result<Reading> {
    let children = match ctx.args.get("includeChildOrganizations") {
        Some(v) if !v.is_null() => v.boolean()?,
        _ => false,
    };
    Ok(Reading {
        perspective: perspective_arg(ctx)?,
        children,
    })
}

fn children_argument() -> InputValue {
    InputValue::new(
        "includeChildOrganizations",
        TypeRef::named(TypeRef::BOOLEAN),
    )
    .description("Include the documents of child organizations (and resolve references there).")
}

/// `allT(perspective, where, sort, limit, page): [T!]!`
pub fn all_field(doc_type: &str, type_name: &str) -> Field {
    let doc_type = doc_type.to_string();
    Field::new(
        format!("all{type_name}"),
        TypeRef::named_nn_list_nn(type_name),
        move |ctx| {
            let doc_type = doc_type.clone();
            FieldFuture::new(async move {
                let rc = rc(&ctx)?;
                let reading = reading_args(&ctx)?;
                let sort = match ctx.args.get("sort") {
                    Some(v) if !v.is_null() => v
                        .list()?
                        .iter()
                        .map(|s| s.string().map(String::from))
                        .collect::<Result<Vec<_>, _>>()?,
                    _ => Vec::new(),
                };
                let request = ListRequest {
                    doc_type,
                    where_: json_arg(&ctx, "where")?,
                    sort,
                    published: None,
                    page: int_arg(&ctx, "page")?,
                    page_size: int_arg(&ctx, "limit")?,
                    read: reading.options(),
                };
                call("list", 0);
                let page = rc
                    .cms
                    .documents()
                    .list(&rc.actor, request)
                    .await
                    .map_err(gql_error)?;
                Ok(Some(FieldValue::list(
                    page.data.into_iter().map(|v| doc_value(v, reading)),
                )))
            })
        },
    )
    .description(format!(
        "A page of documents (`limit` 1 to {MAX_PAGE_SIZE}, default {DEFAULT_PAGE_SIZE}; \
         `page` from 1)."
    ))
    .argument(InputValue::new(
        "perspective",
        TypeRef::named("Perspective"),
    ))
    .argument(InputValue::new("where", TypeRef::named("JSON")))
    .argument(InputValue::new(
        "sort",
        TypeRef::named_nn_list(TypeRef::STRING),
    ))
    .argument(InputValue::new("limit", TypeRef::named(TypeRef::INT)))
    .argument(InputValue::new("page", TypeRef::named(TypeRef::INT)))
    .argument(children_argument())
}

/// `T(id, perspective): T`: null when there is no such document for the caller.
pub fn one_field(_doc_type: &str, type_name: &str) -> Field {
    Field::new(type_name, TypeRef::named(type_name), move |ctx| {
        FieldFuture::new(async move {
            let rc = rc(&ctx)?;
            let reading = reading_args(&ctx)?;
            let id = id_arg(&ctx)?;
            call("get", 1);
            match rc
                .cms
                .documents()
                .get(&rc.actor, &id, reading.options())
                .await
            {
                Ok(view) => Ok(Some(doc_value(view, reading))),
                Err(Error::NotFound(_)) => Ok(None),
                Err(e) => Err(gql_error(e)),
            }
        })
    })
    .description("One document by id; null when it does not exist for the caller.")
    .argument(InputValue::new("id", TypeRef::named_nn(TypeRef::ID)))
    .argument(InputValue::new(
        "perspective",
        TypeRef::named("Perspective"),
    ))
    .argument(children_argument())
}

/// `createT`, `updateT`, `deleteT`, `publishT`, `unpublishT`. The documents they answer show
/// the draft copy; those of `createT` and `updateT` carry `validation`.
pub fn mutation_fields(doc_type: &str, type_name: &str) -> Vec<Field> {
    let doc_type = doc_type.to_string();
    let t = || TypeRef::named(type_name);
    let revision = || InputValue::new("expectedRevision", TypeRef::named(TypeRef::INT));
    let id = || InputValue::new("id", TypeRef::named_nn(TypeRef::ID));
    vec![
        Field::new(format!("create{type_name}"), t(), move |ctx| {
            let doc_type = doc_type.clone();
            FieldFuture::new(async move {
                let rc = rc(&ctx)?;
                let input = NewDocument {
                    doc_type,
                    data: json_arg(&ctx, "data")?,
                    publish: bool_arg(&ctx, "publish")?,
                };
                call("create", 0);
                let (view, validation) = rc
                    .cms
                    .documents()
                    .create(&rc.actor, input)
                    .await
                    .map_err(gql_error)?;
                Ok(Some(saved_value(view, validation)))
            })
        })
        .argument(InputValue::new("data", TypeRef::named_nn("JSON")))
        .argument(InputValue::new("publish", TypeRef::named(TypeRef::BOOLEAN))),
        Field::new(format!("update{type_name}"), t(), |ctx| {
            FieldFuture::new(async move {
                let rc = rc(&ctx)?;
                let input = DraftUpdate {
                    data: json_arg(&ctx, "data")?,
                    publish: bool_arg(&ctx, "publish")?,
                    expected_revision: int_arg(&ctx, "expectedRevision")?,
                };
                call("update", 1);
                let (view, validation) = rc
                    .cms
                    .documents()
                    .update(&rc.actor, &id_arg(&ctx)?, input)
                    .await
                    .map_err(gql_error)?;
                Ok(Some(saved_value(view, validation)))
            })
        })
        .argument(id())
        .argument(InputValue::new("data", TypeRef::named_nn("JSON")))
        .argument(revision())
        .argument(InputValue::new("publish", TypeRef::named(TypeRef::BOOLEAN))),
        Field::new(
            format!("delete{type_name}"),
            TypeRef::named(TypeRef::BOOLEAN),
            |ctx| {
                FieldFuture::new(async move {
                    let rc = rc(&ctx)?;
                    call("delete", 1);
                    rc.cms
                        .documents()
                        .delete(&rc.actor, &id_arg(&ctx)?)
                        .await
                        .map_err(gql_error)?;
                    Ok(Some(FieldValue::value(true)))
                })
            },
        )
        .description("Deletes the document; true when deleted (errors otherwise: CONFLICT with `extensions.referencedBy` while other documents reference it).")
        .argument(id()),
        Field::new(format!("publish{type_name}"), t(), |ctx| {
            FieldFuture::new(async move {
                let rc = rc(&ctx)?;
                call("publish", 1);
                let view = rc
                    .cms
                    .documents()
                    .publish(
                        &rc.actor,
                        &id_arg(&ctx)?,
                        int_arg(&ctx, "expectedRevision")?,
                    )
                    .await
                    .map_err(gql_error)?;
                Ok(Some(doc_value(view, Reading::DRAFT)))
            })
        })
        .argument(id())
        .argument(revision()),
        Field::new(format!("unpublish{type_name}"), t(), |ctx| {
            FieldFuture::new(async move {
                let rc = rc(&ctx)?;
                call("unpublish", 1);
                let view = rc
                    .cms
                    .documents()
                    .unpublish(
                        &rc.actor,
                        &id_arg(&ctx)?,
                        int_arg(&ctx, "expectedRevision")?,
                    )
                    .await
                    .map_err(gql_error)?;
                Ok(Some(doc_value(view, Reading::DRAFT)))
            })
        })
        .argument(id())
        .argument(revision()),
    ]
}

fn meta(
    name: &str,
    ty: TypeRef,
    get: impl Fn(&DocumentView) -> Option<GqlValue> + Send + Sync + 'static,
) -> Field {
    Field::new(name, ty, move |ctx| {
        let value = ctx
            .parent_value
            .downcast_ref::<Doc>()
            .and_then(|d| get(&d.view));
        FieldFuture::from_value(value)
    })
}

/// The document type `T` with its document fields; the data fields are added by the caller.
pub fn document_object(type_name: &str) -> Object {
    let s = |v: &str| Some(GqlValue::from(v));
    Object::new(type_name)
        .field(meta(
            "id",
            TypeRef::named_nn(TypeRef::ID),
            move |d| s(&d.id),
        ))
        .field(meta("type", TypeRef::named_nn(TypeRef::STRING), move |d| {
            s(&d.doc_type)
        }))
        .field(meta(
            "organizationId",
            TypeRef::named_nn(TypeRef::ID),
            move |d| s(&d.organization_id),
        ))
        .field(meta("revision", TypeRef::named_nn(TypeRef::INT), |d| {
            Some(GqlValue::from(d.meta.revision))
        }))
        .field(meta("createdAt", TypeRef::named_nn(TypeRef::STRING), |d| {
            Some(GqlValue::from(d.created_at.to_rfc3339()))
        }))
        .field(meta("updatedAt", TypeRef::named_nn(TypeRef::STRING), |d| {
            Some(GqlValue::from(d.updated_at.to_rfc3339()))
        }))
        .field(meta("publishedAt", TypeRef::named(TypeRef::STRING), |d| {
            d.published_at.map(|t| GqlValue::from(t.to_rfc3339()))
        }))
        .field(meta("createdBy", TypeRef::named(TypeRef::ID), |d| {
            d.created_by.as_deref().map(GqlValue::from)
        }))
        .field(meta(
            "publishedHash",
            TypeRef::named(TypeRef::STRING),
            |d| d.published_hash.as_deref().map(GqlValue::from),
        ))
        .field(meta("status", TypeRef::named_nn(TypeRef::STRING), |d| {
            Some(GqlValue::from(if d.published_data.is_some() {
                "published"
            } else {
                "draft"
            }))
        }))
        .field(validation_field())
}

/// `validation: Validation` of a document: what would block publishing the draft that
/// `createT` or `updateT` just saved (CONTRACT.md section 2); null on every other document.
fn validation_field() -> Field {
    Field::new("validation", TypeRef::named(VALIDATION), |ctx| {
        let value = ctx
            .parent_value
            .downcast_ref::<Doc>()
            .and_then(|d| d.validation.clone())
            .map(FieldValue::owned_any);
        FieldFuture::new(async move { Ok(value) })
    })
    .description(
        "What would block publishing the saved draft: set on the answers of createT and \
         updateT, null elsewhere.",
    )
}

/// The GraphQL type of a save's validation, and of one of its errors.
pub const VALIDATION: &str = "Validation";
pub const VALIDATION_ISSUE: &str = "ValidationIssue";

/// `Validation { isValid, errors }`: the `validation` object of REST, in GraphQL.
pub fn validation_object() -> Object {
    Object::new(VALIDATION)
        .description("What would block publishing: `errors` has the element shape of `issues`.")
        .field(Field::new(
            "isValid",
            TypeRef::named_nn(TypeRef::BOOLEAN),
            |ctx| {
                let valid = ctx
                    .parent_value
                    .downcast_ref::<Arc<Validation>>()
                    .map(|v| GqlValue::from(v.is_valid));
                FieldFuture::from_value(valid)
            },
        ))
        .field(Field::new(
            "errors",
            TypeRef::named_nn_list_nn(VALIDATION_ISSUE),
            |ctx| {
                let errors = ctx
                    .parent_value
                    .downcast_ref::<Arc<Validation>>()
                    .map(|v| FieldValue::list(v.errors.iter().cloned().map(FieldValue::owned_any)));
                FieldFuture::new(async move { Ok(errors) })
            },
        ))
}

/// `ValidationIssue { path, code, message }`.
pub fn validation_issue_object() -> Object {
    let field = |name: &str, get: fn(&Issue) -> &str| {
        Field::new(name, TypeRef::named_nn(TypeRef::STRING), move |ctx| {
            let value = ctx
                .parent_value
                .downcast_ref::<Issue>()
                .map(|i| GqlValue::from(get(i)));
            FieldFuture::from_value(value)
        })
    };
    Object::new(VALIDATION_ISSUE)
        .field(field("path", |i| &i.path))
        .field(field("code", |i| &i.code))
        .field(field("message", |i| &i.message))
}

/// The object a data field's parent holds, and the copy it was read from.
fn parent_data<'p>(parent: &'p FieldValue<'_>) -> Option<(&'p Value, Reading)> {
    if let Some(doc) = parent.downcast_ref::<Doc>() {
        return doc
            .view
            .data(doc.reading.perspective)
            .map(|d| (d, doc.reading));
    }
    parent.downcast_ref::<Part>().map(|p| (&p.data, p.reading))
}

/// A data field named `name` in GraphQL, reading `key` of the stored data.
pub fn data_field(name: &str, key: &str, shape: Shape) -> Field {
    let key = key.to_string();
    let ty = type_ref(&shape);
    let shape = Arc::new(shape);
    Field::new(name, ty, move |ctx| {
        let value = parent_data(ctx.parent_value).and_then(|(data, p)| {
            data.get(&key)
                .filter(|v| !v.is_null())
                .map(|v| (v.clone(), p))
        });
        let shape = shape.clone();
        FieldFuture::new(async move {
            let Some((value, reading)) = value else {
                return Ok(None);
            };
            let rc = rc(&ctx)?;
            shaped(rc, &shape, value, reading).await
        })
    })
}

fn target_type(targets: &[(String, String)], doc_type: &str) -> Option<String> {
    targets
        .iter()
        .find(|(schema, _)| schema == doc_type)
        .map(|(_, name)| name.clone())
}

fn ref_value(
    targets: &[(String, String)],
    union: bool,
    doc: Arc<DocumentView>,
    reading: Reading,
) -> Option<FieldValue<'static>> {
    let name = target_type(targets, &doc.doc_type)?;
    let value = FieldValue::owned_any(Doc {
        view: doc,
        reading,
        validation: None,
    });
    Some(if union { value.with_type(name) } else { value })
}

fn ref_key(value: &Value, reading: Reading) -> Option<RefKey> {
    value.get("_ref").and_then(Value::as_str).map(|id| RefKey {
        id: id.to_string(),
        reading,
    })
}

/// A stored value in its GraphQL shape; a value of the wrong JSON type resolves to null.
fn shaped<'a>(
    rc: &'a RequestCtx,
    shape: &'a Shape,
    value: Value,
    reading: Reading,
) -> BoxFuture<'a, async_graphql::Result<Option<FieldValue<'static>>>> {
    async move {
        let part = |data: Value| {
            data.is_object()
                .then(|| FieldValue::owned_any(Part { data, reading }))
        };
        Ok(match shape {
            Shape::String => value.as_str().map(|s| FieldValue::value(s.to_string())),
            Shape::Float => value.as_f64().map(FieldValue::value),
            Shape::Boolean => value.as_bool().map(FieldValue::value),
            Shape::Slug => value
                .get("current")
                .and_then(Value::as_str)
                .map(|s| FieldValue::value(s.to_string())),
            Shape::Json => Some(FieldValue::value(GqlValue::from_json(value)?)),
            Shape::Image | Shape::File | Shape::Object(_) => part(value),
            Shape::Reference { type_name, targets } => {
                let union = targets.len() > 1 || type_name != &targets[0].1;
                let Some(key) = ref_key(&value, reading) else {
                    return Ok(None);
                };
                rc.expand(1)?;
                let doc = rc.loader.load_one(key).await?;
                doc.and_then(|d| ref_value(targets, union, d, reading))
            }
            Shape::List(inner) => {
                let Value::Array(items) = value else {
                    return Ok(None);
                };
                if let Shape::Reference { type_name, targets } = inner.as_ref() {
                    let union = targets.len() > 1 || type_name != &targets[0].1;
                    let keys: Vec<Option<RefKey>> =
                        items.iter().map(|v| ref_key(v, reading)).collect();
                    rc.expand(keys.iter().flatten().count())?;
                    let found = rc.loader.load_many(keys.iter().flatten().cloned()).await?;
                    let values = keys.into_iter().map(|k| {
                        k.and_then(|k| found.get(&k).cloned())
                            .and_then(|d| ref_value(targets, union, d, reading))
                            .unwrap_or(FieldValue::NULL)
                    });
                    Some(FieldValue::list(values.collect::<Vec<_>>()))
                } else {
                    let mut values = Vec::with_capacity(items.len());
                    for item in items {
                        values.push(
                            shaped(rc, inner, item, reading)
                                .await?
                                .unwrap_or(FieldValue::NULL),
                        );
                    }
                    Some(FieldValue::list(values))
                }
            }
        })
    }
    .boxed()
}

fn part_field(name: &str, ty: TypeRef, get: fn(&Value) -> Option<GqlValue>) -> Field {
    Field::new(name, ty, move |ctx| {
        let value = ctx
            .parent_value
            .downcast_ref::<Part>()
            .and_then(|p| get(&p.data));
        FieldFuture::from_value(value)
    })
}

fn json_of(v: Option<&Value>) -> Option<GqlValue> {
    v.filter(|v| !v.is_null())
        .and_then(|v| GqlValue::from_json(v.clone()).ok())
}

fn asset_id(v: &Value) -> Option<GqlValue> {
    v.get("asset")
        .and_then(|a| a.get("_ref"))
        .and_then(Value::as_str)
        .map(GqlValue::from)
}

/// An image field's value: the asset it references, and what the image adds.
pub fn image_object() -> Object {
    Object::new("ImageValue")
        .description("An image field: `assetId` is the referenced asset (GET /api/assets/{id}).")
        .field(part_field("assetId", TypeRef::named(TypeRef::ID), asset_id))
        .field(asset_field())
        .field(part_field("alt", TypeRef::named(TypeRef::STRING), |v| {
            v.get("alt").and_then(Value::as_str).map(GqlValue::from)
        }))
        .field(part_field("crop", TypeRef::named("JSON"), |v| {
            json_of(v.get("crop"))
        }))
        .field(part_field("hotspot", TypeRef::named("JSON"), |v| {
            json_of(v.get("hotspot"))
        }))
}

/// A file field's value: the asset it references.
pub fn file_object() -> Object {
    Object::new("FileValue")
        .description("A file field: `assetId` is the referenced asset (GET /api/assets/{id}).")
        .field(part_field("assetId", TypeRef::named(TypeRef::ID), asset_id))
        .field(asset_field())
}

/// `asset: Asset` of an image or file value: the asset record, null when it is gone or out of
/// the caller's reach. Loaded in batches like references.
fn asset_field() -> Field {
    Field::new("asset", TypeRef::named("Asset"), |ctx| {
        let key = ctx.parent_value.downcast_ref::<Part>().and_then(|p| {
            asset_id(&p.data).and_then(|id| match id {
                GqlValue::String(id) => Some(AssetKey {
                    id,
                    children: p.reading.children,
                }),
                _ => None,
            })
        });
        FieldFuture::new(async move {
            let Some(key) = key else {
                return Ok(None);
            };
            let asset = rc(&ctx)?.assets.load_one(key).await?;
            Ok(asset.map(FieldValue::owned_any))
        })
    })
}

/// An asset's field: `get` reads it from the service's view.
fn asset_view_field(name: &str, ty: TypeRef, get: fn(&AssetView) -> Option<GqlValue>) -> Field {
    Field::new(name, ty, move |ctx| {
        let value = ctx
            .parent_value
            .downcast_ref::<Arc<AssetView>>()
            .and_then(|a| get(a));
        FieldFuture::from_value(value)
    })
}

/// The `Asset` type: the asset record as GET /api/assets/{id} shows it.
pub fn asset_object() -> Object {
    Object::new("Asset")
        .description("An uploaded file; `url` is its /media path.")
        .field(asset_view_field(
            "id",
            TypeRef::named_nn(TypeRef::ID),
            |a| Some(GqlValue::from(a.id.as_str())),
        ))
        .field(asset_view_field(
            "filename",
            TypeRef::named_nn(TypeRef::STRING),
            |a| Some(GqlValue::from(a.filename.as_str())),
        ))
        .field(asset_view_field(
            "url",
            TypeRef::named_nn(TypeRef::STRING),
            |a| Some(GqlValue::from(a.url.as_str())),
        ))
        .field(asset_view_field(
            "assetType",
            TypeRef::named_nn(TypeRef::STRING),
            |a| Some(GqlValue::from(a.asset_type.as_str())),
        ))
        .field(asset_view_field(
            "mimeType",
            TypeRef::named_nn(TypeRef::STRING),
            |a| Some(GqlValue::from(a.mime_type.as_str())),
        ))
        // Bytes as a Float: GraphQL's Int is 32-bit.
        .field(asset_view_field(
            "size",
            TypeRef::named_nn(TypeRef::FLOAT),
            |a| Some(GqlValue::from(a.size as f64)),
        ))
        .field(asset_view_field(
            "width",
            TypeRef::named(TypeRef::INT),
            |a| a.width.map(GqlValue::from),
        ))
        .field(asset_view_field(
            "height",
            TypeRef::named(TypeRef::INT),
            |a| a.height.map(GqlValue::from),
        ))
        .field(asset_view_field(
            "sha256",
            TypeRef::named_nn(TypeRef::STRING),
            |a| Some(GqlValue::from(a.sha256.as_str())),
        ))
        .field(asset_view_field(
            "title",
            TypeRef::named(TypeRef::STRING),
            |a| optional(&a.title),
        ))
        .field(asset_view_field(
            "alt",
            TypeRef::named(TypeRef::STRING),
            |a| optional(&a.alt),
        ))
        .field(asset_view_field(
            "description",
            TypeRef::named(TypeRef::STRING),
            |a| optional(&a.description),
        ))
        .field(asset_view_field(
            "creditLine",
            TypeRef::named(TypeRef::STRING),
            |a| optional(&a.credit_line),
        ))
}

fn optional(s: &Option<String>) -> Option<GqlValue> {
    s.as_deref().map(GqlValue::from)
}

/// An asset by id, and whether child organizations are in reach.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AssetKey {
    id: String,
    children: bool,
}

/// Batches asset records: one `assets().by_ids` call per reach and 100 ids.
pub struct AssetLoader {
    cms: Cms,
    actor: Actor,
}

impl Loader<AssetKey> for AssetLoader {
    type Value = Arc<AssetView>;
    type Error = async_graphql::Error;

    async fn load(
        &self,
        keys: &[AssetKey],
    ) -> Result<HashMap<AssetKey, Arc<AssetView>>, Self::Error> {
        let mut found = HashMap::new();
        for children in [false, true] {
            let ids: Vec<String> = keys
                .iter()
                .filter(|k| k.children == children)
                .map(|k| k.id.clone())
                .collect();
            for chunk in ids.chunks(MAX_BY_IDS) {
                call("asset_by_ids", chunk.len());
                let views = self
                    .cms
                    .assets()
                    .by_ids(&self.actor, chunk, children)
                    .await
                    .map_err(gql_error)?;
                for view in views {
                    let key = AssetKey {
                        id: view.id.clone(),
                        children,
                    };
                    found.insert(key, Arc::new(view));
                }
            }
        }
        Ok(found)
    }
}

/// A referenced document, by id and how the document that references it was read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RefKey {
    id: String,
    reading: Reading,
}

/// Batches reference resolution: one `documents().by_ids` call per way of reading and 100 ids,
/// however many documents of a response hold references.
pub struct RefLoader {
    cms: Cms,
    actor: Actor,
}

impl Loader<RefKey> for RefLoader {
    type Value = Arc<DocumentView>;
    type Error = async_graphql::Error;

    async fn load(
        &self,
        keys: &[RefKey],
    ) -> Result<HashMap<RefKey, Arc<DocumentView>>, Self::Error> {
        let mut found = HashMap::new();
        // One group per way of reading (at most four), in a stable order.
        let mut readings: Vec<Reading> = Vec::new();
        for key in keys {
            if !readings.contains(&key.reading) {
                readings.push(key.reading);
            }
        }
        for reading in readings {
            let ids: Vec<String> = keys
                .iter()
                .filter(|k| k.reading == reading)
                .map(|k| k.id.clone())
                .collect();
            for chunk in ids.chunks(MAX_BY_IDS) {
                call("by_ids", chunk.len());
                let views = self
                    .cms
                    .documents()
                    .by_ids(&self.actor, chunk, reading.options())
                    .await
                    .map_err(gql_error)?;
                for view in views {
                    let key = RefKey {
                        id: view.id.clone(),
                        reading,
                    };
                    found.insert(key, Arc::new(view));
                }
            }
        }
        Ok(found)
    }
}
