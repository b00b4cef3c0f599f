//! Resolvers. Every one calls the service layer with the request's actor, exactly as the REST
//! handlers do, so capabilities, schema rules and field stripping hold by construction: a
//! field the caller may not read is absent from the service's answer and resolves to null.
//!
//! Each resolver here is wired to its field in `fields.rs`; the values they hand to the
//! fields below them are a [`Doc`] or a [`Part`].

use std::sync::Arc;

use async_graphql::Value as GqlValue;
use async_graphql::dynamic::{FieldFuture, FieldValue, ResolverContext};
use cms_service::Error;
use cms_service::assets::ImageUrl;
use cms_service::documents::{
    DocumentView, DraftUpdate, ListRequest, NewDocument, Perspective, Validation,
};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;

use super::errors::{bad, gql_error};
use super::loaders::{AssetKey, Reading, RefKey, RequestCtx, call};
use super::shape::Shape;

/// A document as a resolver's parent: the service's view and how it was read, and for the
/// answer of `createT` and `updateT` what would block publishing it.
pub(super) struct Doc {
    pub(super) view: Arc<DocumentView>,
    pub(super) reading: Reading,
    pub(super) validation: Option<Arc<Validation>>,
}

/// An object-valued part of a document's data.
pub(super) struct Part {
    pub(super) data: Value,
    pub(super) reading: Reading,
}

fn rc<'a>(ctx: &ResolverContext<'a>) -> async_graphql::Result<&'a RequestCtx> {
    ctx.ctx.data::<RequestCtx>()
}

/// The `perspective` argument; without one, the actor's default (`published` for an anonymous
/// `public` reader, `draft` for everyone else).
fn perspective_arg(ctx: &ResolverContext<'_>) -> async_graphql::Result<Perspective> {
    let default = || Ok(Perspective::default_for(&rc(ctx)?.actor));
    match ctx.args.get("perspective") {
        None => default(),
        Some(v) if v.is_null() => default(),
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

/// Why `locale: "*"` is refused: a GraphQL field has one type, the plain value of one locale.
pub(super) const EVERY_LOCALE_REFUSED: &str = "GraphQL reads and writes one locale at a time \
     (a field has one type): `locale: \"*\"` is served by REST only (`locale=*` on GET \
     /api/documents and /api/documents/{id}, `\"locale\": \"*\"` in the body of POST \
     /api/documents and PUT /api/documents/{id}); name one locale of GET /api/locales";

/// The `locale` argument: a tag as named (the service checks it against the organization's
/// locales), `None` for the default locale; `*` is refused here (see
/// [`EVERY_LOCALE_REFUSED`]).
fn locale_arg(ctx: &ResolverContext<'_>) -> async_graphql::Result<Option<Arc<str>>> {
    match ctx.args.get("locale") {
        Some(v) if !v.is_null() => {
            let tag = v.string()?;
            if tag.trim() == "*" {
                return Err(bad(EVERY_LOCALE_REFUSED));
            }
            Ok(Some(Arc::from(tag)))
        }
        _ => Ok(None),
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

/// The document a `createT` or `updateT` saved (shown in `locale`), with its `validation`.
fn saved_value(
    view: DocumentView,
    validation: Validation,
    locale: Option<Arc<str>>,
) -> FieldValue<'static> {
    FieldValue::owned_any(Doc {
        view: Arc::new(view),
        reading: Reading::draft(locale),
        validation: Some(Arc::new(validation)),
    })
}

/// The `perspective`, `includeChildOrganizations` and `locale` arguments of a query field.
fn reading_args(ctx: &ResolverContext<'_>) -> async_graphql::Result<Reading> {
    let children = match ctx.args.get("includeChildOrganizations") {
        Some(v) if !v.is_null() => v.boolean()?,
        _ => false,
    };
    Ok(Reading {
        perspective: perspective_arg(ctx)?,
        children,
        locale: locale_arg(ctx)?,
    })
}

/// `allT`: a page of the documents of `doc_type`.
pub(super) fn all(ctx: ResolverContext<'_>, doc_type: String) -> FieldFuture<'_> {
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
            search: match ctx.args.get("search") {
                Some(v) if !v.is_null() => Some(v.string()?.to_string()),
                _ => None,
            },
        };
        call("list", 0);
        let page = rc
            .cms
            .documents()
            .list(&rc.actor, request)
            .await
            .map_err(gql_error)?;
        Ok(Some(FieldValue::list(
            page.data.into_iter().map(|v| doc_value(v, reading.clone())),
        )))
    })
}

/// `T`: one document by id, or null.
pub(super) fn one(ctx: ResolverContext<'_>) -> FieldFuture<'_> {
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
}

/// `createT`: a new document of `doc_type`.
pub(super) fn create(ctx: ResolverContext<'_>, doc_type: String) -> FieldFuture<'_> {
    FieldFuture::new(async move {
        let rc = rc(&ctx)?;
        let locale = locale_arg(&ctx)?;
        let input = NewDocument {
            doc_type,
            data: json_arg(&ctx, "data")?,
            publish: bool_arg(&ctx, "publish")?,
            locale: locale.as_deref().map(str::to_owned),
        };
        call("create", 0);
        let (view, validation) = rc
            .cms
            .documents()
            .create(&rc.actor, input)
            .await
            .map_err(gql_error)?;
        Ok(Some(saved_value(view, validation, locale)))
    })
}

/// `updateT`.
pub(super) fn update(ctx: ResolverContext<'_>) -> FieldFuture<'_> {
    FieldFuture::new(async move {
        let rc = rc(&ctx)?;
        let locale = locale_arg(&ctx)?;
        let input = DraftUpdate {
            data: json_arg(&ctx, "data")?,
            publish: bool_arg(&ctx, "publish")?,
            expected_revision: int_arg(&ctx, "expectedRevision")?,
            locale: locale.as_deref().map(str::to_owned),
        };
        call("update", 1);
        let (view, validation) = rc
            .cms
            .documents()
            .update(&rc.actor, &id_arg(&ctx)?, input)
            .await
            .map_err(gql_error)?;
        Ok(Some(saved_value(view, validation, locale)))
    })
}

/// `deleteT`.
pub(super) fn delete(ctx: ResolverContext<'_>) -> FieldFuture<'_> {
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
}

/// `publishT`.
pub(super) fn publish(ctx: ResolverContext<'_>) -> FieldFuture<'_> {
    FieldFuture::new(async move {
        let rc = rc(&ctx)?;
        let locale = locale_arg(&ctx)?;
        call("publish", 1);
        let view = rc
            .cms
            .documents()
            .publish_in(
                &rc.actor,
                &id_arg(&ctx)?,
                int_arg(&ctx, "expectedRevision")?,
                locale.as_deref(),
            )
            .await
            .map_err(gql_error)?;
        Ok(Some(doc_value(view, Reading::draft(locale))))
    })
}

/// `unpublishT`.
pub(super) fn unpublish(ctx: ResolverContext<'_>) -> FieldFuture<'_> {
    FieldFuture::new(async move {
        let rc = rc(&ctx)?;
        let locale = locale_arg(&ctx)?;
        call("unpublish", 1);
        let view = rc
            .cms
            .documents()
            .unpublish_in(
                &rc.actor,
                &id_arg(&ctx)?,
                int_arg(&ctx, "expectedRevision")?,
                locale.as_deref(),
            )
            .await
            .map_err(gql_error)?;
        Ok(Some(doc_value(view, Reading::draft(locale))))
    })
}

/// The object a data field's parent holds, and the copy it was read from.
fn parent_data<'p>(parent: &'p FieldValue<'_>) -> Option<(&'p Value, &'p Reading)> {
    if let Some(doc) = parent.downcast_ref::<Doc>() {
        return doc
            .view
            .data(doc.reading.perspective)
            .map(|d| (d, &doc.reading));
    }
    parent.downcast_ref::<Part>().map(|p| (&p.data, &p.reading))
}

/// A data field: `key` of its parent's stored data, in its GraphQL `shape`.
pub(super) fn data<'a>(ctx: ResolverContext<'a>, key: &str, shape: &Arc<Shape>) -> FieldFuture<'a> {
    let value = parent_data(ctx.parent_value).and_then(|(data, p)| {
        data.get(key)
            .filter(|v| !v.is_null())
            .map(|v| (v.clone(), p.clone()))
    });
    let shape = shape.clone();
    FieldFuture::new(async move {
        let Some((value, reading)) = value else {
            return Ok(None);
        };
        let rc = rc(&ctx)?;
        shaped(rc, &shape, value, reading).await
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

fn ref_key(value: &Value, reading: &Reading) -> Option<RefKey> {
    value.get("_ref").and_then(Value::as_str).map(|id| RefKey {
        id: id.to_string(),
        reading: reading.clone(),
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
            data.is_object().then(|| {
                FieldValue::owned_any(Part {
                    data,
                    reading: reading.clone(),
                })
            })
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
                let Some(key) = ref_key(&value, &reading) else {
                    return Ok(None);
                };
                rc.expand(1)?;
                let doc = rc.loader.load_one(key).await?;
                doc.and_then(|d| ref_value(targets, union, d, reading.clone()))
            }
            Shape::List(inner) => {
                let Value::Array(items) = value else {
                    return Ok(None);
                };
                if let Shape::Reference { type_name, targets } = inner.as_ref() {
                    let union = targets.len() > 1 || type_name != &targets[0].1;
                    let keys: Vec<Option<RefKey>> =
                        items.iter().map(|v| ref_key(v, &reading)).collect();
                    rc.expand(keys.iter().flatten().count())?;
                    let found = rc.loader.load_many(keys.iter().flatten().cloned()).await?;
                    let values = keys.into_iter().map(|k| {
                        k.and_then(|k| found.get(&k).cloned())
                            .and_then(|d| ref_value(targets, union, d, reading.clone()))
                            .unwrap_or(FieldValue::NULL)
                    });
                    Some(FieldValue::list(values.collect::<Vec<_>>()))
                } else {
                    let mut values = Vec::with_capacity(items.len());
                    for item in items {
                        values.push(
                            shaped(rc, inner, item, reading.clone())
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

pub(super) fn asset_id(v: &Value) -> Option<GqlValue> {
    v.get("asset")
        .and_then(|a| a.get("_ref"))
        .and_then(Value::as_str)
        .map(GqlValue::from)
}

/// The loader key of an image or file value's asset.
fn asset_key(part: &Part) -> Option<AssetKey> {
    match asset_id(&part.data)? {
        GqlValue::String(id) => Some(AssetKey {
            id,
            children: part.reading.children,
        }),
        _ => None,
    }
}

/// `asset` of an image or file value: the asset record, through the request's loader.
pub(super) fn asset(ctx: ResolverContext<'_>) -> FieldFuture<'_> {
    let key = ctx.parent_value.downcast_ref::<Part>().and_then(asset_key);
    FieldFuture::new(async move {
        let Some(key) = key else {
            return Ok(None);
        };
        let asset = rc(&ctx)?.assets.load_one(key).await?;
        Ok(asset.map(FieldValue::owned_any))
    })
}

/// `url(w, h, fit, fm, q)` of an image value: a `/media` transform of its asset with the
/// field's own crop and hotspot applied (the service builds and signs it); null when the asset
/// is gone or out of reach.
pub(super) fn image_url(ctx: ResolverContext<'_>) -> FieldFuture<'_> {
    FieldFuture::new(async move {
        let Some(part) = ctx.parent_value.downcast_ref::<Part>() else {
            return Ok(None);
        };
        let Some(key) = asset_key(part) else {
            return Ok(None);
        };
        let rc = rc(&ctx)?;
        let Some(asset) = rc.assets.load_one(key).await? else {
            return Ok(None);
        };
        let string_arg = |name: &str| -> async_graphql::Result<Option<String>> {
            match ctx.args.get(name) {
                Some(v) if !v.is_null() => Ok(Some(v.string()?.to_string())),
                _ => Ok(None),
            }
        };
        let ask = ImageUrl {
            width: int_arg(&ctx, "w")?,
            height: int_arg(&ctx, "h")?,
            fit: string_arg("fit")?,
            format: string_arg("fm")?,
            quality: int_arg(&ctx, "q")?,
            hotspot: part.data.get("hotspot").cloned(),
            crop: part.data.get("crop").cloned(),
        };
        let url = rc.cms.assets().image_url(&asset, &ask).map_err(gql_error)?;
        Ok(Some(FieldValue::value(url)))
    })
}
