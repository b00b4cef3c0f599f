//! `/api/assets`: every endpoint of SPEC.md "Endpoints: Assets" plus `signed-url` (CONTRACT.md
//! section 6). Handlers read multipart forms, query strings and bodies; the service decides.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use cms_service::assets::{
    AssetQuery, AssetView, BulkDeleted, DirectUpload, Hotspot, MetadataChange, ReferenceView,
    SignedUrl, StagedFile, UploadMetadata, UploadTicket,
};
use cms_service::{Actor, Error};
use futures_util::TryStreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use super::documents::Deleted;
use super::params::{bad, flag, text};
use super::{Data, Paged, created, ok, paged};
use crate::AppState;
use crate::delivery::validators::{Conditional, IfNoneMatch, NotModified};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{ApiJson, ApiQuery, Authed};

const TAG: &str = "assets";

/// Room for the form's other fields and boundaries beyond the file itself.
const FORM_OVERHEAD: usize = 1024 * 1024;

pub fn routes(max_upload_bytes: u64) -> OpenApiRouter<AppState> {
    // Uploads may be far larger than a JSON body; the service counts the file's bytes
    // itself and answers 413 past `assets.maxUploadBytes`.
    let upload_limit = DefaultBodyLimit::max(
        usize::try_from(max_upload_bytes)
            .unwrap_or(usize::MAX)
            .saturating_add(FORM_OVERHEAD),
    );
    OpenApiRouter::new()
        .routes(routes!(list, upload).layer(upload_limit))
        .routes(routes!(delete_many))
        .routes(routes!(reference_counts))
        .routes(routes!(upload_url))
        .routes(routes!(confirm))
        .routes(routes!(get, update, delete))
        .routes(routes!(references))
        .routes(routes!(signed_url))
        .routes(routes!(poster).layer(upload_limit))
}

/// Whose assets a read sees.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ChildrenQuery {
    /// Include the assets of child organizations.
    #[serde(default, deserialize_with = "flag")]
    include_child_organizations: Option<bool>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    /// Only assets of this type: `image` or `file`.
    #[serde(default, deserialize_with = "text")]
    #[param(pattern = "^(image|file)?$")]
    asset_type: Option<String>,
    /// Only this MIME type (`image/png`), or a whole top-level type (`image/*`); `*/*` is any.
    #[serde(default, deserialize_with = "text")]
    mime_type: Option<String>,
    /// A case-insensitive substring of the title or description.
    #[serde(default, deserialize_with = "text")]
    search: Option<String>,
    /// Assets per page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    limit: Option<i64>,
    /// How many assets to skip, 0 (default) or more.
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Include the assets of child organizations.
    #[serde(default, deserialize_with = "flag")]
    include_child_organizations: Option<bool>,
}

/// Lists the assets of the caller's organization, newest first.
#[utoipa::path(get, path = "/api/assets", tag = TAG, params(ListQuery, IfNoneMatch),
    responses((status = 200, description = "A page of assets", body = Paged<AssetView>, headers(("ETag" = String, description = "Strong entity tag of the answer"), ("Cache-Control" = String, description = "`private, no-cache` for credentials"))), NotModified))]
async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
    conditional: Conditional,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Response> {
    let query = AssetQuery {
        asset_type: q.asset_type,
        mime_type: q.mime_type,
        search: q.search,
        limit: q.limit,
        offset: q.offset,
        include_children: q.include_child_organizations.unwrap_or(false),
    };
    let page = state.cms.assets().list(&actor, query).await?;
    Ok(conditional.respond(&paged(page.data, page.pagination).0))
}

/// The multipart form of an upload, as the handler reads it field by field (the file is
/// streamed into storage as it arrives). Any other field is refused with 400.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct UploadForm {
    /// The file; its type is detected from its bytes, its name kept (made safe).
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    /// At most 10,000 characters; empty means none. Defaults to the file's embedded title.
    #[schema(max_length = 10000)]
    title: Option<String>,
    /// At most 10,000 characters; empty means none.
    #[schema(max_length = 10000)]
    description: Option<String>,
    /// At most 10,000 characters; empty means none.
    #[schema(max_length = 10000)]
    alt: Option<String>,
    /// At most 10,000 characters; empty means none.
    #[schema(max_length = 10000)]
    credit_line: Option<String>,
    /// The caller's active organization, when given; another organization is refused (403).
    organization_id: Option<String>,
}

/// Uploads a file as a new asset of the caller's organization.
#[utoipa::path(post, path = "/api/assets", tag = TAG,
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 201, description = "The new asset", body = Data<AssetView>),
        (status = 200, description = "The organization already had these bytes: its existing asset, with `duplicate: true`; nothing was created", body = Data<AssetView>),
        (status = 413, description = "The file is larger than the upload limit (`assets.maxUploadBytes`)", body = ErrorBody),
        (status = 415, description = "The body is not `multipart/form-data`", body = ErrorBody),
        (status = 503, description = "The asset storage is unavailable", body = ErrorBody),
    ))]
async fn upload(
    State(state): State<AppState>,
    Authed(actor): Authed,
    request: Request,
) -> ApiResult<(StatusCode, Json<Data<AssetView>>)> {
    let form = read_form(&state, &actor, request).await?;
    let file = form.file.ok_or_else(|| {
        bad("`file` is required: send the file as a multipart field named `file`".into())
    })?;
    let asset = state
        .cms
        .assets()
        .create(&actor, file, form.metadata)
        .await?;
    Ok(uploaded(asset))
}

/// 201 for a new asset; 200 for an existing one the upload turned out to duplicate (nothing
/// was created).
fn uploaded(asset: AssetView) -> (StatusCode, Json<Data<AssetView>>) {
    if asset.duplicate {
        (StatusCode::OK, ok(asset))
    } else {
        created(asset)
    }
}

/// The multipart form of a poster: the image in `file`. The upload form's metadata fields are
/// accepted and ignored; any other field is refused with 400.
#[derive(ToSchema)]
#[allow(dead_code)]
struct PosterForm {
    /// A raster image (PNG, JPEG, GIF, WebP, AVIF).
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// Attaches an uploaded image as the poster of a video asset; the poster becomes an image asset
/// of its own.
#[utoipa::path(post, path = "/api/assets/{id}/poster", tag = TAG,
    params(("id" = String, Path, description = "The video asset's id")),
    request_body(content = PosterForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "The video, with its new poster", body = Data<AssetView>),
        (status = 413, description = "The image is larger than the upload limit (`assets.maxUploadBytes`)", body = ErrorBody),
        (status = 415, description = "The body is not `multipart/form-data`", body = ErrorBody),
        (status = 503, description = "The asset storage is unavailable", body = ErrorBody),
    ))]
async fn poster(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    request: Request,
) -> ApiResult<Json<Data<AssetView>>> {
    let form = read_form(&state, &actor, request).await?;
    let file = form
        .file
        .ok_or_else(|| bad("`file` is required: send the poster image as `file`".into()))?;
    let video = state.cms.assets().attach_poster(&actor, &id, file).await?;
    Ok(ok(video))
}

/// An upload form: the file (streamed into storage as it arrives) and its metadata fields,
/// in whatever order the client sent them.
struct Form {
    file: Option<StagedFile>,
    metadata: UploadMetadata,
}

async fn read_form(state: &AppState, actor: &Actor, request: Request) -> ApiResult<Form> {
    let is_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.get(..19)
                .is_some_and(|p| p.eq_ignore_ascii_case("multipart/form-data"))
        });
    if !is_form {
        return Err(ApiError::Request {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            message: "expected a `multipart/form-data` body with the file in a field named `file`"
                .into(),
        });
    }
    let mut multipart = Multipart::from_request(request, state)
        .await
        .map_err(|e| bad(e.body_text()))?;
    let mut form = Form {
        file: None,
        metadata: UploadMetadata::default(),
    };
    while let Some(field) = multipart.next_field().await.map_err(form_error)? {
        let name = field.name().unwrap_or_default().to_string();
        if name == "file" {
            if form.file.is_some() {
                return Err(bad("send one `file` per upload".into()));
            }
            let filename = field.file_name().unwrap_or("file").to_string();
            let body = field.map_err(form_error);
            form.file = Some(state.cms.assets().stage(actor, &filename, body).await?);
            continue;
        }
        let slot = match name.as_str() {
            "title" => &mut form.metadata.title,
            "description" => &mut form.metadata.description,
            "alt" => &mut form.metadata.alt,
            "creditLine" => &mut form.metadata.credit_line,
            "organizationId" => &mut form.metadata.organization_id,
            other => {
                return Err(bad(format!(
                    "unknown form field `{other}`: expected file, title, description, alt, creditLine, organizationId"
                )));
            }
        };
        let text = field.text().await.map_err(form_error)?;
        // As in JSON bodies (`extract::ApiJson`): no stored text can hold a NUL.
        if text.contains('\0') {
            return Err(bad(format!("`{name}` contains a NUL character")));
        }
        *slot = Some(text);
    }
    Ok(form)
}

/// A broken or oversized form, in the service's terms.
fn form_error(e: axum::extract::multipart::MultipartError) -> Error {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        Error::PayloadTooLarge("the upload is larger than the upload limit".into())
    } else {
        Error::bad_request(format!(
            "the multipart form is malformed: {}",
            e.body_text()
        ))
    }
}

/// Reads one asset.
#[utoipa::path(get, path = "/api/assets/{id}", tag = TAG,
    params(("id" = String, Path, description = "The asset id"), ChildrenQuery, IfNoneMatch),
    responses((status = 200, description = "The asset", body = Data<AssetView>, headers(("ETag" = String, description = "Strong entity tag of the answer"), ("Cache-Control" = String, description = "`private, no-cache` for credentials"))), NotModified))]
async fn get(
    State(state): State<AppState>,
    Authed(actor): Authed,
    conditional: Conditional,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<ChildrenQuery>,
) -> ApiResult<Response> {
    let children = q.include_child_organizations.unwrap_or(false);
    let asset = state.cms.assets().get(&actor, &id, children).await?;
    Ok(conditional.respond(&ok(asset).0))
}

/// A metadata change: each field named is set (a string; empty or `null` clears it), the
/// others are left. The handler reads the JSON object key by key, so an unknown key or a value
/// that is neither a string nor `null` is a 400 that names it.
#[derive(Debug, Default, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MetadataBody {
    /// At most 10,000 characters.
    #[schema(value_type = Option<String>, max_length = 10000)]
    title: Option<Option<String>>,
    /// At most 10,000 characters.
    #[schema(value_type = Option<String>, max_length = 10000)]
    description: Option<Option<String>>,
    /// At most 10,000 characters.
    #[schema(value_type = Option<String>, max_length = 10000)]
    alt: Option<Option<String>>,
    /// At most 10,000 characters.
    #[schema(value_type = Option<String>, max_length = 10000)]
    credit_line: Option<Option<String>>,
    /// The default focal point of `fit=crop` transforms, `{ x, y }` as fractions 0 to 1 of
    /// the width and height; `null` removes it.
    #[schema(value_type = Option<Hotspot>, nullable)]
    hotspot: Option<Option<Hotspot>>,
}

impl MetadataBody {
    fn read(body: Map<String, Value>) -> ApiResult<MetadataBody> {
        let mut change = MetadataBody::default();
        for (key, value) in body {
            if key == "hotspot" {
                let refusal =
                    || bad("`hotspot` is { x, y } with both fractions from 0 to 1, or null".into());
                change.hotspot = Some(match value {
                    Value::Null => None,
                    // An object only: serde would also take the array `[x, y]`.
                    value @ Value::Object(_) => {
                        Some(serde_json::from_value(value).map_err(|_| refusal())?)
                    }
                    _ => return Err(refusal()),
                });
                continue;
            }
            let slot = match key.as_str() {
                "title" => &mut change.title,
                "description" => &mut change.description,
                "alt" => &mut change.alt,
                "creditLine" => &mut change.credit_line,
                other => {
                    return Err(bad(format!(
                        "`{other}` cannot be changed: send title, description, alt, creditLine or hotspot"
                    )));
                }
            };
            *slot = Some(match value {
                Value::Null => None,
                Value::String(s) => Some(s),
                _ => return Err(bad(format!("`{key}` is a string or null"))),
            });
        }
        Ok(change)
    }
}

/// Changes an asset's title, description, alt text, credit line or hotspot.
#[utoipa::path(patch, path = "/api/assets/{id}", tag = TAG, request_body = MetadataBody,
    params(("id" = String, Path, description = "The asset id")),
    responses((status = 200, description = "The changed asset", body = Data<AssetView>)))]
async fn update(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Map<String, Value>>,
) -> ApiResult<Json<Data<AssetView>>> {
    let body = MetadataBody::read(body)?;
    let change = MetadataChange {
        title: body.title,
        description: body.description,
        alt: body.alt,
        credit_line: body.credit_line,
        hotspot: body.hotspot,
    };
    Ok(ok(state.cms.assets().update(&actor, &id, change).await?))
}

/// Deletes an asset no document references, and its stored file.
#[utoipa::path(delete, path = "/api/assets/{id}", tag = TAG,
    params(("id" = String, Path, description = "The asset id")),
    responses(
        (status = 200, description = "The asset is gone", body = Data<Deleted>),
        (status = 409, description = "Documents reference the asset", body = ErrorBody),
    ))]
async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<Json<Data<Deleted>>> {
    state.cms.assets().delete(&actor, &id).await?;
    Ok(ok(Deleted { id, deleted: true }))
}

/// Asset ids: 1 to 1000 (repeats count once).
#[derive(Debug, Deserialize, ToSchema)]
struct Ids {
    #[schema(min_items = 1, max_items = 1000)]
    ids: Vec<String>,
}

/// Deletes every named asset of the caller's organization, or none when one is referenced.
#[utoipa::path(delete, path = "/api/assets/bulk", tag = TAG, request_body = Ids,
    responses(
        (status = 200, description = "How many were deleted; ids naming no asset count as failed", body = Data<BulkDeleted>),
        (status = 409, description = "Documents reference some of the assets (`referencedIds`); nothing was deleted", body = ErrorBody),
    ))]
async fn delete_many(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<Ids>,
) -> ApiResult<Json<Data<BulkDeleted>>> {
    Ok(ok(state.cms.assets().delete_many(&actor, body.ids).await?))
}

/// Counts, per asset id, the documents of the caller's organization and its children that
/// reference it.
#[utoipa::path(post, path = "/api/assets/references/counts", tag = TAG, request_body = Ids,
    responses((status = 200, description = "Per requested id, its reference count (0 for an id naming no asset)",
        body = Data<HashMap<String, i64>>)))]
async fn reference_counts(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<Ids>,
) -> ApiResult<Json<Data<HashMap<String, i64>>>> {
    Ok(ok(state
        .cms
        .assets()
        .reference_counts(&actor, body.ids)
        .await?))
}

/// `{ total, references }`.
#[derive(Debug, Serialize, ToSchema)]
struct References {
    /// How many documents reference the asset.
    total: usize,
    references: Vec<ReferenceView>,
}

/// Lists the documents that reference an asset.
#[utoipa::path(get, path = "/api/assets/{id}/references", tag = TAG,
    params(("id" = String, Path, description = "The asset id"), ChildrenQuery),
    responses((status = 200, description = "The referencing documents", body = Data<References>)))]
async fn references(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<ChildrenQuery>,
) -> ApiResult<Json<Data<References>>> {
    let children = q.include_child_organizations.unwrap_or(false);
    let references = state.cms.assets().references(&actor, &id, children).await?;
    Ok(ok(References {
        total: references.len(),
        references,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct SignedUrlQuery {
    /// How long the link works, in seconds: 1 to 604800 (seven days), default 3600.
    #[param(minimum = 1, maximum = 604800)]
    expires_in: Option<i64>,
    /// Include the assets of child organizations.
    #[serde(default, deserialize_with = "flag")]
    include_child_organizations: Option<bool>,
}

/// A `/media` link to the asset that works without a session until it expires.
#[utoipa::path(get, path = "/api/assets/{id}/signed-url", tag = TAG,
    params(("id" = String, Path, description = "The asset id"), SignedUrlQuery),
    responses(
        (status = 200, description = "The signed link", body = Data<SignedUrl>),
        (status = 404, description = "No such asset, or signed URLs are off (no signing secret configured)", body = ErrorBody),
    ))]
async fn signed_url(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<SignedUrlQuery>,
) -> ApiResult<Json<Data<SignedUrl>>> {
    let children = q.include_child_organizations.unwrap_or(false);
    let url = state
        .cms
        .assets()
        .signed_url(&actor, &id, q.expires_in, children)
        .await?;
    Ok(ok(url))
}

/// A direct upload announced before its bytes.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UploadUrlBody {
    /// The file's name; not blank.
    filename: String,
    /// The announced type; the stored bytes decide the asset's type on confirm.
    mime_type: String,
    /// The file's size in bytes: 1 up to the upload limit.
    #[schema(minimum = 1)]
    size: i64,
}

/// A JSON body of a direct-upload endpoint, read only once direct upload is known to be on:
/// with it off, both endpoints are 404 whatever is sent.
async fn direct_upload_body<T: serde::de::DeserializeOwned>(
    state: &AppState,
    request: Request,
) -> ApiResult<T> {
    state.cms.assets().require_direct_upload()?;
    let ApiJson(body) = ApiJson::<T>::from_request(request, state).await?;
    Ok(body)
}

/// Announces a direct upload: a presigned URL the client PUTs the bytes to, then `confirm`.
#[utoipa::path(post, path = "/api/assets/upload-url", tag = TAG, request_body = UploadUrlBody,
    responses(
        (status = 201, description = "Where to put the bytes, until `expiresAt`", body = Data<UploadTicket>),
        (status = 404, description = "Direct upload is off (`storage.directUpload`)", body = ErrorBody),
        (status = 413, description = "`size` is larger than the upload limit", body = ErrorBody),
        (status = 503, description = "The asset storage is unavailable", body = ErrorBody),
    ))]
async fn upload_url(
    State(state): State<AppState>,
    Authed(actor): Authed,
    request: Request,
) -> ApiResult<(StatusCode, Json<Data<UploadTicket>>)> {
    let body: UploadUrlBody = direct_upload_body(&state, request).await?;
    let ticket = state
        .cms
        .assets()
        .upload_url(
            &actor,
            DirectUpload {
                filename: body.filename,
                mime_type: body.mime_type,
                size: body.size,
            },
        )
        .await?;
    Ok(created(ticket))
}

/// The direct upload to record.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConfirmBody {
    /// The `assetId` of the upload ticket.
    asset_id: String,
}

/// Records a direct upload as an asset once its bytes are in storage.
#[utoipa::path(post, path = "/api/assets/confirm", tag = TAG, request_body = ConfirmBody,
    responses(
        (status = 201, description = "The new asset", body = Data<AssetView>),
        (status = 200, description = "The organization already had these bytes: its existing asset, with `duplicate: true`; the upload is dropped", body = Data<AssetView>),
        (status = 404, description = "Direct upload is off, or no such pending (unexpired, unconfirmed) upload", body = ErrorBody),
        (status = 413, description = "The stored file is larger than the upload limit; the upload is dropped", body = ErrorBody),
        (status = 503, description = "The asset storage is unavailable", body = ErrorBody),
    ))]
async fn confirm(
    State(state): State<AppState>,
    Authed(actor): Authed,
    request: Request,
) -> ApiResult<(StatusCode, Json<Data<AssetView>>)> {
    let body: ConfirmBody = direct_upload_body(&state, request).await?;
    Ok(uploaded(
        state.cms.assets().confirm(&actor, &body.asset_id).await?,
    ))
}
