//! The field builders of the dynamic schema: each field's name, type, arguments and
//! description, wired to its resolver in `resolve.rs`. The fields that only read a value of
//! their parent (a document's metadata, an image's `alt`, an asset's record, a validation)
//! read it here.

use std::sync::Arc;

use async_graphql::Value as GqlValue;
use async_graphql::dynamic::{Field, FieldFuture, FieldValue, InputValue, Object, TypeRef};
use cms_core::Issue;
use cms_service::assets::AssetView;
use cms_service::documents::{DocumentView, Validation};
use cms_service::paging::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
use serde_json::Value;

use super::names::{DOCUMENT_META, VALIDATION, VALIDATION_ISSUE};
use super::resolve::{self, Doc, Part, asset_id};
use super::shape::{Shape, type_ref};

fn children_argument() -> InputValue {
    InputValue::new(
        "includeChildOrganizations",
        TypeRef::named(TypeRef::BOOLEAN),
    )
    .description("Include the documents of child organizations (and resolve references there).")
}

/// `locale` of the query fields: the locale documents (and the documents they reference) are
/// read in (CONTRACT.md section 17).
fn read_locale_argument() -> InputValue {
    InputValue::new("locale", TypeRef::named(TypeRef::STRING)).description(
        "The locale localized fields are read in, each taken from the locale's fallback chain \
         when it has no value (`_meta.fallbackLocales` says which); `where` and `sort` compare \
         that locale's values, and referenced documents read in it too. A tag of GET \
         /api/locales; the default locale when absent. `*` is refused: a field has one type, \
         so every locale at once is REST's `locale=*`.",
    )
}

/// `locale` of the mutations: the locale `data`'s localized values are written in, and the
/// answer read in.
fn write_locale_argument() -> InputValue {
    InputValue::new("locale", TypeRef::named(TypeRef::STRING)).description(
        "The locale `data`'s localized values are written in (the other locales' values are \
         kept) and the answer is read in. A tag of GET /api/locales; the default locale when \
         absent. `*` is refused: writing every locale at once is REST's `locale: \"*\"`.",
    )
}

/// `allT(perspective, where, sort, limit, page, includeChildOrganizations, locale, search):
/// [T!]!`
pub fn all_field(doc_type: &str, type_name: &str) -> Field {
    let doc_type = doc_type.to_string();
    Field::new(
        format!("all{type_name}"),
        TypeRef::named_nn_list_nn(type_name),
        move |ctx| resolve::all(ctx, doc_type.clone()),
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
    .argument(read_locale_argument())
    .argument(
        InputValue::new("search", TypeRef::named(TypeRef::STRING)).description(
            "Full-text search over the type's searchable fields the caller may read: words              (all must match), `\"quoted phrases\"`, `-word` to exclude. Without `sort` the              results come by relevance; `_meta.score` says how relevant each is.",
        ),
    )
}

/// `T(id, perspective, includeChildOrganizations, locale): T`: null when there is no such
/// document for the caller.
pub fn one_field(_doc_type: &str, type_name: &str) -> Field {
    Field::new(type_name, TypeRef::named(type_name), resolve::one)
        .description("One document by id; null when it does not exist for the caller.")
        .argument(InputValue::new("id", TypeRef::named_nn(TypeRef::ID)))
        .argument(InputValue::new(
            "perspective",
            TypeRef::named("Perspective"),
        ))
        .argument(children_argument())
        .argument(read_locale_argument())
}

/// `createT`, `updateT`, `deleteT`, `publishT`, `unpublishT`. The documents they answer show
/// the draft copy, in their `locale`; those of `createT` and `updateT` carry `validation`.
pub fn mutation_fields(doc_type: &str, type_name: &str) -> Vec<Field> {
    let doc_type = doc_type.to_string();
    let t = || TypeRef::named(type_name);
    let revision = || InputValue::new("expectedRevision", TypeRef::named(TypeRef::INT));
    let id = || InputValue::new("id", TypeRef::named_nn(TypeRef::ID));
    vec![
        Field::new(format!("create{type_name}"), t(), move |ctx| {
            resolve::create(ctx, doc_type.clone())
        })
        .argument(InputValue::new("data", TypeRef::named_nn("JSON")))
        .argument(InputValue::new("publish", TypeRef::named(TypeRef::BOOLEAN)))
        .argument(write_locale_argument()),
        Field::new(format!("update{type_name}"), t(), resolve::update)
            .argument(id())
            .argument(InputValue::new("data", TypeRef::named_nn("JSON")))
            .argument(revision())
            .argument(InputValue::new("publish", TypeRef::named(TypeRef::BOOLEAN)))
            .argument(write_locale_argument()),
        Field::new(
            format!("delete{type_name}"),
            TypeRef::named(TypeRef::BOOLEAN),
            resolve::delete,
        )
        .description("Deletes the document; true when deleted (errors otherwise: CONFLICT with `extensions.referencedBy` while other documents reference it).")
        .argument(id()),
        Field::new(format!("publish{type_name}"), t(), resolve::publish)
            .description("Publishes the draft, every locale at once; the answer reads in `locale`.")
            .argument(id())
            .argument(revision())
            .argument(answer_locale_argument()),
        Field::new(format!("unpublish{type_name}"), t(), resolve::unpublish)
            .argument(id())
            .argument(revision())
            .argument(answer_locale_argument()),
    ]
}

/// `locale` of `publishT` and `unpublishT`: the locale their answer is read in.
fn answer_locale_argument() -> InputValue {
    InputValue::new("locale", TypeRef::named(TypeRef::STRING)).description(
        "The locale the answer's localized fields are read in: a tag of GET /api/locales; the \
         default locale when absent (`*` is refused, as on the queries).",
    )
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
        .field(
            Field::new("_meta", TypeRef::named_nn(DOCUMENT_META), |ctx| {
                let view = ctx
                    .parent_value
                    .downcast_ref::<Doc>()
                    .map(|d| FieldValue::owned_any(d.view.clone()));
                FieldFuture::new(async move { Ok(view) })
            })
            .description("What REST's `_meta` says: the revision and the locale read."),
        )
}

/// `DocumentMeta { revision, locale, fallbackLocales, score }`: REST's `_meta`, in GraphQL.
pub fn document_meta_object() -> Object {
    let field = |name: &str, ty: TypeRef, get: fn(&DocumentView) -> Option<GqlValue>| {
        Field::new(name, ty, move |ctx| {
            let value = ctx
                .parent_value
                .downcast_ref::<Arc<DocumentView>>()
                .and_then(|d| get(d));
            FieldFuture::from_value(value)
        })
    };
    Object::new(DOCUMENT_META)
        .description("A document's `_meta`, as REST shows it (CONTRACT.md section 17).")
        .field(field("revision", TypeRef::named_nn(TypeRef::INT), |d| {
            Some(GqlValue::from(d.meta.revision))
        }))
        .field(
            field("locale", TypeRef::named(TypeRef::STRING), |d| {
                d.meta.locale.as_deref().map(GqlValue::from)
            })
            .description(
                "The locale the document's localized fields are read in; null for a type \
                 without localized fields read without `locale`.",
            ),
        )
        .field(
            field("fallbackLocales", TypeRef::named("JSON"), |d| {
                d.meta
                    .fallback_locales
                    .as_ref()
                    .and_then(|f| serde_json::to_value(f).ok())
                    .and_then(|v| GqlValue::from_json(v).ok())
            })
            .description(
                "Field path → the locale actually served, for the values of the copy read taken \
                 from a fallback locale (`{}` when none); null when `locale` is null.",
            ),
        )
        .field(
            field("score", TypeRef::named(TypeRef::FLOAT), |d| {
                d.meta.score.map(GqlValue::from)
            })
            .description(
                "How relevant the document is to `allT`'s `search` (higher is more relevant); \
                 null without a search.",
            ),
        )
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

/// A data field named `name` in GraphQL, reading `key` of the stored data.
pub fn data_field(name: &str, key: &str, shape: Shape) -> Field {
    let key = key.to_string();
    let ty = type_ref(&shape);
    let shape = Arc::new(shape);
    Field::new(name, ty, move |ctx| resolve::data(ctx, &key, &shape))
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
        .field(
            Field::new("url", TypeRef::named(TypeRef::STRING), resolve::image_url)
                .description(
                    "A /media link to this image transformed (CONTRACT.md section 18), with the \
                     field's crop ({ top, bottom, left, right } fractions) as `rect` and, for \
                     `fit: \"crop\"`, its hotspot ({ x, y }) as the focal point; signed when \
                     transforms need a signature. Without arguments and without a crop, the original's link.",
                )
                .argument(
                    InputValue::new("w", TypeRef::named(TypeRef::INT))
                        .description("Width in pixels, 1 to 4096."),
                )
                .argument(
                    InputValue::new("h", TypeRef::named(TypeRef::INT))
                        .description("Height in pixels, 1 to 4096."),
                )
                .argument(
                    InputValue::new("fit", TypeRef::named(TypeRef::STRING))
                        .description("`clip` (default), `crop` or `max`."),
                )
                .argument(
                    InputValue::new("fm", TypeRef::named(TypeRef::STRING))
                        .description("`jpg`, `png`, `webp` or `avif`; default the original's."),
                )
                .argument(
                    InputValue::new("q", TypeRef::named(TypeRef::INT))
                        .description("Quality 1 to 100 (default 80)."),
                ),
        )
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
    Field::new("asset", TypeRef::named("Asset"), resolve::asset)
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
        .field(asset_view_field("hotspot", TypeRef::named("JSON"), |a| {
            a.hotspot
                .and_then(|h| GqlValue::from_json(serde_json::json!({ "x": h.x, "y": h.y })).ok())
        }))
        .field(asset_view_field(
            "lqip",
            TypeRef::named(TypeRef::STRING),
            |a| optional(&a.lqip),
        ))
        .field(asset_view_field(
            "dominantColor",
            TypeRef::named(TypeRef::STRING),
            |a| optional(&a.dominant_color),
        ))
        .field(asset_view_field(
            "hasAlpha",
            TypeRef::named(TypeRef::BOOLEAN),
            |a| a.has_alpha.map(GqlValue::from),
        ))
}

fn optional(s: &Option<String>) -> Option<GqlValue> {
    s.as_deref().map(GqlValue::from)
}
