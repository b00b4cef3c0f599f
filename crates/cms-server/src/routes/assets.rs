//! `/api/assets`: every endpoint of SPEC.md "Endpoints: Assets" plus `signed-url` (CONTRACT.md
//! section 6). Handlers read multipart forms, query strings and bodies; the service decides.

use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::{Json, Router, routing};
use cms_service::assets::{AssetQuery, DirectUpload, MetadataChange, StagedFile, UploadMetadata};
use cms_service::{Actor, Error};
use futures_util::TryStreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::params::{Params, bad, bool_param, int_param, param};
use super::{created, ok};
use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiQuery, Authed};

/// Room for the form's other fields and boundaries beyond the file itself.
const FORM_OVERHEAD: usize = 1024 * 1024;

pub fn routes(max_upload_bytes: u64) -> Router<AppState> {
    // Uploads may be far larger than a JSON body; the service counts the file's bytes
    // itself and answers 413 past `assets.maxUploadBytes`.
    let upload_limit = DefaultBodyLimit::max(
        usize::try_from(max_upload_bytes)
            .unwrap_or(usize::MAX)
            .saturating_add(FORM_OVERHEAD),
    );
    Router::new()
        .route(
            "/api/assets",
            routing::get(list).post(upload).layer(upload_limit),
        )
        .route("/api/assets/bulk", routing::delete(delete_many))
        .route(
            "/api/assets/references/counts",
            routing::post(reference_counts),
        )
        .route("/api/assets/upload-url", routing::post(upload_url))
        .route("/api/assets/confirm", routing::post(confirm))
        .route(
            "/api/assets/{id}",
            routing::get(get).patch(update).delete(delete),
        )
        .route("/api/assets/{id}/references", routing::get(references))
        .route("/api/assets/{id}/signed-url", routing::get(signed_url))
        .route(
            "/api/assets/{id}/poster",
            routing::post(poster).layer(upload_limit),
        )
}

async fn list(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    let text = |name| param(&params, name).map(str::to_string);
    let query = AssetQuery {
        asset_type: text("assetType"),
        mime_type: text("mimeType"),
        search: text("search"),
        limit: int_param(&params, "limit", 20)?,
        offset: int_param(&params, "offset", 0)?,
        include_children: bool_param(&params, "includeChildOrganizations")?,
    };
    let page = state.cms.assets().list(&actor, query).await?;
    Ok(Json(
        json!({ "success": true, "data": page.data, "pagination": page.pagination }),
    ))
}

async fn upload(
    State(state): State<AppState>,
    Authed(actor): Authed,
    request: Request,
) -> ApiResult<impl IntoResponse> {
    let form = read_form(&state, &actor, request).await?;
    let file = form.file.ok_or_else(|| {
        bad("`file` is required: send the file as a multipart field named `file`".into())
    })?;
    let asset = state
        .cms
        .assets()
        .create(&actor, file, form.metadata)
        .await?;
    Ok(created(asset))
}

async fn poster(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    request: Request,
) -> ApiResult<impl IntoResponse> {
    let form = read_form(&state, &actor, request).await?;
    let file = form
        .file
        .ok_or_else(|| bad("`file` is required: send the poster image as `file`".into()))?;
    let video = state.cms.assets().attach_poster(&actor, &id, file).await?;
    Ok(ok(video))
}

/// An upload form: the file (streamed into storage as it arrives) and its metadata fields,
/// in whatever order the client sent them.
struct UploadForm {
    file: Option<StagedFile>,
    metadata: UploadMetadata,
}

async fn read_form(state: &AppState, actor: &Actor, request: Request) -> ApiResult<UploadForm> {
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
    let mut form = UploadForm {
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
        *slot = Some(field.text().await.map_err(form_error)?);
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

async fn get(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    let children = bool_param(&params, "includeChildOrganizations")?;
    Ok(ok(state.cms.assets().get(&actor, &id, children).await?))
}

async fn update(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Map<String, Value>>,
) -> ApiResult<impl IntoResponse> {
    let mut change = MetadataChange::default();
    for (key, value) in body {
        let slot = match key.as_str() {
            "title" => &mut change.title,
            "description" => &mut change.description,
            "alt" => &mut change.alt,
            "creditLine" => &mut change.credit_line,
            other => {
                return Err(bad(format!(
                    "`{other}` cannot be changed: send title, description, alt or creditLine"
                )));
            }
        };
        *slot = Some(match value {
            Value::Null => None,
            Value::String(s) => Some(s),
            _ => return Err(bad(format!("`{key}` is a string or null"))),
        });
    }
    Ok(ok(state.cms.assets().update(&actor, &id, change).await?))
}

async fn delete(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
) -> ApiResult<impl IntoResponse> {
    state.cms.assets().delete(&actor, &id).await?;
    Ok(ok(json!({ "id": id, "deleted": true })))
}

#[derive(Deserialize)]
struct Ids {
    ids: Vec<String>,
}

async fn delete_many(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<Ids>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state.cms.assets().delete_many(&actor, body.ids).await?))
}

async fn reference_counts(
    State(state): State<AppState>,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<Ids>,
) -> ApiResult<impl IntoResponse> {
    Ok(ok(state
        .cms
        .assets()
        .reference_counts(&actor, body.ids)
        .await?))
}

async fn references(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    let children = bool_param(&params, "includeChildOrganizations")?;
    let references = state.cms.assets().references(&actor, &id, children).await?;
    Ok(ok(
        json!({ "total": references.len(), "references": references }),
    ))
}

async fn signed_url(
    State(state): State<AppState>,
    Authed(actor): Authed,
    Path(id): Path<String>,
    ApiQuery(params): Params,
) -> ApiResult<impl IntoResponse> {
    let expires_in = match param(&params, "expiresIn") {
        None | Some("") => None,
        Some(_) => Some(int_param(&params, "expiresIn", 0)?),
    };
    let children = bool_param(&params, "includeChildOrganizations")?;
    let url = state
        .cms
        .assets()
        .signed_url(&actor, &id, expires_in, children)
        .await?;
    Ok(ok(url))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UploadUrlBody {
    filename: String,
    mime_type: String,
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

async fn upload_url(
    State(state): State<AppState>,
    Authed(actor): Authed,
    request: Request,
) -> ApiResult<impl IntoResponse> {
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

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConfirmBody {
    asset_id: String,
}

async fn confirm(
    State(state): State<AppState>,
    Authed(actor): Authed,
    request: Request,
) -> ApiResult<impl IntoResponse> {
    let body: ConfirmBody = direct_upload_body(&state, request).await?;
    Ok(created(
        state.cms.assets().confirm(&actor, &body.asset_id).await?,
    ))
}
