//! `/media/{id}/{filename}`: asset delivery (SPEC.md "Asset", CONTRACT.md section 6). The
//! service decides who may fetch; this door speaks HTTP: `ETag` and `If-None-Match` (304),
//! `Range` (206, 416), caching, and headers that keep uploaded active content inert.

use std::ops::Range;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cms_service::assets::{Derivative, MediaAccess, MediaAsset, MediaRequest, TransformPlan};
use futures_util::TryStreamExt;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{AccessRefusal, ApiResult, ErrorBody};
use crate::extract::{ApiQuery, MaybeAuthed};

const TAG: &str = "media";

/// Uploaded files never run: no scripts, no plugins, no forms, even when a browser renders them.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; sandbox";

/// Axum answers HEAD for this GET route with the same headers and no body.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get))
        // The stored bytes, as stored: ranges and the file's tag speak of them.
        .route_layer(axum::middleware::map_response(
            crate::delivery::compression::keep_identity,
        ))
}

// Describes the response body only: the handler streams the bytes from storage.
/// The file's bytes, as stored, in the asset's own content type (`text/*` types with
/// `charset=utf-8`).
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
struct FileBytes(Vec<u8>);

// Describes the query string only: the handler passes its pairs to the service, which refuses
// unknown names and repeated ones.
/// A signed link's `sig` and `exp` (`GET /api/assets/{id}/signed-url`; either one present means
/// both are verified: a missing, wrong or expired signature is 403, also for a public asset),
/// and image transform parameters (CONTRACT.md section 18) for JPEG, PNG, WebP and GIF images.
/// Any transform parameter answers a derivative instead of the original; an unknown name, a
/// repeated one, a value out of range, or a transform of another kind of file is 400.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
struct MediaQuery {
    /// The link's signature; with transform parameters it covers them too.
    sig: Option<String>,
    /// When the link expires, in Unix seconds.
    #[param(value_type = Option<i64>)]
    exp: Option<String>,
    /// Output width in pixels, 1 to 4096.
    #[param(minimum = 1, maximum = 4096)]
    w: Option<u32>,
    /// Output height in pixels, 1 to 4096.
    #[param(minimum = 1, maximum = 4096)]
    h: Option<u32>,
    /// `clip` (default: fit inside), `crop` (fill and cut around the focal point), `max`
    /// (like clip, never upscaled).
    #[param(pattern = "^(clip|crop|max)$")]
    fit: Option<String>,
    /// A source crop in pixels, `x,y,w,h`, applied first.
    #[param(pattern = "^[0-9]+,[0-9]+,[0-9]+,[0-9]+$")]
    rect: Option<String>,
    /// Output format: `jpg`, `png`, `webp` or `avif`; default the original's (GIF becomes PNG).
    #[param(pattern = "^(jpg|png|webp|avif)$")]
    fm: Option<String>,
    /// Quality 1 to 100 (default 80); PNG ignores it.
    #[param(minimum = 1, maximum = 100)]
    q: Option<u8>,
    /// Device pixel ratio 1 to 3: multiplies `w` and `h` (the result is capped at 4096).
    #[param(minimum = 1, maximum = 3)]
    dpr: Option<f64>,
    /// `format`: AVIF, then WebP, when `Accept` takes them (answers `Vary: Accept`).
    #[param(pattern = "^format$")]
    auto: Option<String>,
    /// The focal point of `fit=crop`, a fraction 0 to 1 of the width (default the asset's
    /// hotspot, else 0.5).
    #[param(rename = "fp-x", minimum = 0, maximum = 1)]
    fp_x: Option<f64>,
    /// The focal point of `fit=crop`, a fraction 0 to 1 of the height.
    #[param(rename = "fp-y", minimum = 0, maximum = 1)]
    fp_y: Option<f64>,
}

/// Delivers an asset's bytes, whole or one byte range, or a transformed derivative of an
/// image. Public assets need no credential; private ones (`assets.private`) a session or API
/// key that may read the asset, or a valid `sig` and `exp`. With `assets.transformSigning`,
/// transform parameters need a signature (or a credential that may read the asset). HEAD
/// answers the same headers without a body.
#[utoipa::path(get, path = "/media/{id}/{filename}", tag = TAG, security(()),
    params(
        ("id" = String, Path, description = "The asset id"),
        ("filename" = String, Path, description = "The asset's stored file name"),
        MediaQuery,
        ("Accept" = Option<String>, Header, description = "With `auto=format`: `image/avif` or `image/webp` picks that format"),
        ("Range" = Option<String>, Header, description = "One byte range, `bytes=a-b`, `bytes=a-` or `bytes=-n`; anything else gets the whole file"),
        ("If-Range" = Option<String>, Header, description = "The range is served only when this is the current `ETag`, else the whole file"),
        ("If-None-Match" = Option<String>, Header, description = "Entity tags (or `*`); 304 when one is the current `ETag`"),
    ),
    responses(
        (status = 200, description = "The whole file, in its own content type; or, with transform parameters, the derivative (rendered once, then kept in the asset storage until the asset is deleted)",
            content_type = "*/*", body = inline(FileBytes),
            headers(
                ("ETag" = String, description = "The file's SHA-256, quoted; a derivative's tag joins the original's and the parameters' digests"),
                ("X-Cache" = String, description = "Derivatives: `HIT` when read from the asset storage, `MISS` when rendered for this request"),
                ("Vary" = String, description = "Derivatives with `auto=format`: `Accept`"),
                ("Cache-Control" = String, description = "`public` or `private`, `max-age=31536000, immutable`; `no-cache` for a crop that follows the asset's hotspot (no `fp-x`/`fp-y`), whose pixels change when the hotspot does"),
                ("Content-Length" = i64, description = "The file's size"),
                ("Accept-Ranges" = String, description = "`bytes`"),
                ("Content-Disposition" = String, description = "`inline` for raster images, else `attachment`, with the file name"),
            )),
        (status = 206, description = "The requested byte range",
            content_type = "*/*", body = inline(FileBytes),
            headers(
                ("Content-Range" = String, description = "`bytes a-b/size`"),
                ("ETag" = String, description = "The file's SHA-256, quoted"),
                ("Cache-Control" = String, description = "`public` or `private`, `max-age=31536000, immutable`"),
                ("Content-Length" = i64, description = "The range's length"),
            )),
        (status = 304, description = "`If-None-Match` names the current tag; no body",
            headers(
                ("ETag" = String, description = "The file's SHA-256, quoted"),
                ("Cache-Control" = String, description = "`public` or `private`, `max-age=31536000, immutable`"),
            )),
        (status = 400, description = "A transform parameter is unknown, repeated or out of range; or the asset is no JPEG, PNG, WebP or GIF image, or has more than 64 megapixels", body = ErrorBody),
        (status = 401, description = "The asset is private and the request has neither a credential nor a signature", body = AccessRefusal),
        (status = 403, description = "The signature is missing, wrong or expired, or the credential may not read the asset; or transforms need a signature (`assets.transformSigning`)", body = AccessRefusal),
        (status = 404, description = "No such asset under this file name, or not visible to the caller", body = ErrorBody),
        (status = 416, description = "The range starts past the end of the file; no body",
            headers(
                ("Content-Range" = String, description = "`bytes */size`"),
                ("ETag" = String, description = "The file's SHA-256, quoted"),
            )),
        (status = 422, description = "The stored image cannot be decoded", body = ErrorBody),
        (status = 503, description = "The asset storage is unavailable, or as many transforms run and wait as the server allows (`Retry-After` says when to try again)", body = ErrorBody),
    ))]
async fn get(
    State(state): State<AppState>,
    MaybeAuthed(actor): MaybeAuthed,
    Path((id, filename)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
    method: Method,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let assets = state.cms.assets();
    let request = MediaRequest {
        id: &id,
        filename: &filename,
        query: &query,
        accept: headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()),
    };
    let asset = assets.media(actor.as_ref(), request).await?;
    if let Some(plan) = &asset.transform {
        return derivative(&state, &asset, plan, &method, &headers).await;
    }
    let etag = format!("\"{}\"", asset.sha256);
    if matches_etag(headers.get(header::IF_NONE_MATCH), &etag) {
        let mut response = StatusCode::NOT_MODIFIED.into_response();
        common_headers(response.headers_mut(), &asset, &etag);
        return Ok(response);
    }
    let range = match requested_range(&headers, &etag, asset.size) {
        RangeAsk::Whole => None,
        RangeAsk::Part(range) => Some(range),
        RangeAsk::Unsatisfiable => {
            let mut response = StatusCode::RANGE_NOT_SATISFIABLE.into_response();
            common_headers(response.headers_mut(), &asset, &etag);
            insert(
                response.headers_mut(),
                header::CONTENT_RANGE,
                &format!("bytes */{}", asset.size),
            );
            return Ok(response);
        }
    };
    let (status, length) = match &range {
        Some(r) => (StatusCode::PARTIAL_CONTENT, r.end - r.start),
        None => (StatusCode::OK, asset.size),
    };
    let body = if method == Method::HEAD {
        Body::empty()
    } else {
        let stream = assets.media_bytes(&asset, range.clone()).await?;
        Body::from_stream(stream.map_err(std::io::Error::other))
    };
    let mut response = (status, body).into_response();
    let h = response.headers_mut();
    common_headers(h, &asset, &etag);
    insert(h, header::CONTENT_LENGTH, &length.to_string());
    if let Some(r) = range {
        insert(
            h,
            header::CONTENT_RANGE,
            &format!("bytes {}-{}/{}", r.start, r.end - 1, asset.size),
        );
    }
    Ok(response)
}

/// A transformed image: no ranges (derivatives are small), the same caching as originals.
async fn derivative(
    state: &AppState,
    asset: &MediaAsset,
    plan: &TransformPlan,
    method: &Method,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    if matches_etag(headers.get(header::IF_NONE_MATCH), &plan.etag) {
        let mut response = StatusCode::NOT_MODIFIED.into_response();
        derivative_headers(response.headers_mut(), asset, plan);
        return Ok(response);
    }
    let (body, length, cache) = match state.cms.assets().derivative(asset, plan).await? {
        Derivative::Stored { stream, size } => (
            Body::from_stream(stream.map_err(std::io::Error::other)),
            size,
            "HIT",
        ),
        Derivative::Rendered(bytes) => {
            let length = bytes.len() as u64;
            (Body::from(bytes), length, "MISS")
        }
    };
    let body = if *method == Method::HEAD {
        Body::empty()
    } else {
        body
    };
    let mut response = (StatusCode::OK, body).into_response();
    let h = response.headers_mut();
    derivative_headers(h, asset, plan);
    insert(h, header::CONTENT_LENGTH, &length.to_string());
    insert(h, header::HeaderName::from_static("x-cache"), cache);
    Ok(response)
}

fn derivative_headers(h: &mut HeaderMap, asset: &MediaAsset, plan: &TransformPlan) {
    content_headers(h, asset, plan.mime_type, &plan.etag);
    if plan.follows_hotspot {
        // The same URL shows other pixels once the asset's hotspot moves: kept, but checked
        // (a 304 while the hotspot stays).
        let cache = match asset.access {
            MediaAccess::Public => "public, no-cache",
            MediaAccess::Private => "private, no-cache",
        };
        insert(h, header::CACHE_CONTROL, cache);
    }
    // Derivatives are served whole.
    insert(h, header::ACCEPT_RANGES, "none");
    insert(h, header::CONTENT_DISPOSITION, "inline");
    if plan.varies_by_accept {
        insert(h, header::VARY, "Accept");
    }
}

fn common_headers(h: &mut HeaderMap, asset: &MediaAsset, etag: &str) {
    let content_type = if asset.mime_type.starts_with("text/") {
        format!("{}; charset=utf-8", asset.mime_type)
    } else {
        asset.mime_type.clone()
    };
    content_headers(h, asset, &content_type, etag);
    insert(h, header::ACCEPT_RANGES, "bytes");
    // Only raster images open in the browser; anything that could be active content (SVG,
    // HTML, PDF, ...) downloads. The stored name is already reduced to safe characters.
    let disposition = if cms_core::asset::is_raster(&asset.mime_type) {
        "inline"
    } else {
        "attachment"
    };
    insert(
        h,
        header::CONTENT_DISPOSITION,
        &format!("{disposition}; filename=\"{}\"", asset.filename),
    );
}

/// What originals and derivatives share: type, tag, caching, and inert content.
fn content_headers(h: &mut HeaderMap, asset: &MediaAsset, content_type: &str, etag: &str) {
    insert(h, header::CONTENT_TYPE, content_type);
    insert(h, header::ETAG, etag);
    // An asset id is unique per upload, so its bytes never change: cache for a year. What a
    // session or a signature let through stays in the browser's own cache.
    let cache = match asset.access {
        MediaAccess::Public => "public, max-age=31536000, immutable",
        MediaAccess::Private => "private, max-age=31536000, immutable",
    };
    insert(h, header::CACHE_CONTROL, cache);
    insert(h, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    insert(h, header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY);
}

fn insert(h: &mut HeaderMap, name: header::HeaderName, value: &str) {
    // Every value here is built from stored, already-safe strings; a failure would be a bug
    // upstream, and dropping the header is safer than answering with a broken one.
    match HeaderValue::from_str(value) {
        Ok(v) => {
            h.insert(name, v);
        }
        Err(_) => tracing::error!(header = %name, "unrepresentable media header value"),
    }
}

/// `If-None-Match`: the list matches when it names the current tag (weak or strong) or `*`.
fn matches_etag(header: Option<&HeaderValue>, etag: &str) -> bool {
    let Some(list) = header.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    list.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate == etag || candidate.strip_prefix("W/") == Some(etag)
    })
}

#[derive(Debug, PartialEq, Eq)]
enum RangeAsk {
    Whole,
    Part(Range<u64>),
    Unsatisfiable,
}

/// The one byte range a request asks for. Anything this server does not serve as a range (no
/// header, another unit, several ranges, a malformed value, an `If-Range` for an older tag)
/// gets the whole file, as RFC 9110 allows.
fn requested_range(headers: &HeaderMap, etag: &str, size: u64) -> RangeAsk {
    let Some(value) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return RangeAsk::Whole;
    };
    if let Some(if_range) = headers.get(header::IF_RANGE)
        && if_range.to_str().ok() != Some(etag)
    {
        return RangeAsk::Whole;
    }
    parse_range(value, size)
}

fn parse_range(value: &str, size: u64) -> RangeAsk {
    let Some(spec) = value.trim().strip_prefix("bytes=") else {
        return RangeAsk::Whole;
    };
    if spec.contains(',') {
        return RangeAsk::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return RangeAsk::Whole;
    };
    let number = |s: &str| s.trim().parse::<u64>().ok();
    match (first.trim().is_empty(), last.trim().is_empty()) {
        // `bytes=-n`: the last n bytes.
        (true, false) => match number(last) {
            Some(0) => RangeAsk::Unsatisfiable,
            Some(n) if size > 0 => RangeAsk::Part(size.saturating_sub(n)..size),
            Some(_) => RangeAsk::Unsatisfiable,
            None => RangeAsk::Whole,
        },
        // `bytes=a-`: from a to the end.
        (false, true) => match number(first) {
            Some(a) if a < size => RangeAsk::Part(a..size),
            Some(_) => RangeAsk::Unsatisfiable,
            None => RangeAsk::Whole,
        },
        (false, false) => match (number(first), number(last)) {
            (Some(a), Some(b)) if a > b => RangeAsk::Whole,
            (Some(a), Some(_)) if a >= size => RangeAsk::Unsatisfiable,
            (Some(a), Some(b)) => RangeAsk::Part(a..b.min(size - 1) + 1),
            _ => RangeAsk::Whole,
        },
        (true, true) => RangeAsk::Whole,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        use RangeAsk::*;
        assert_eq!(parse_range("bytes=0-9", 100), Part(0..10));
        assert_eq!(parse_range("bytes=90-200", 100), Part(90..100));
        assert_eq!(parse_range("bytes=95-", 100), Part(95..100));
        assert_eq!(parse_range("bytes=-10", 100), Part(90..100));
        assert_eq!(parse_range("bytes=-500", 100), Part(0..100));
        assert_eq!(parse_range("bytes=100-", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=100-150", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=5-1", 100), Whole);
        assert_eq!(parse_range("bytes=0-1,5-6", 100), Whole);
        assert_eq!(parse_range("items=0-1", 100), Whole);
        assert_eq!(parse_range("bytes=x-1", 100), Whole);
        assert_eq!(parse_range("bytes=-", 100), Whole);
    }

    #[test]
    fn entity_tags() {
        let tag = "\"abc\"";
        let h = |v: &str| HeaderValue::from_str(v).unwrap();
        assert!(matches_etag(Some(&h("\"abc\"")), tag));
        assert!(matches_etag(Some(&h("\"x\", W/\"abc\"")), tag));
        assert!(matches_etag(Some(&h("*")), tag));
        assert!(!matches_etag(Some(&h("\"abd\"")), tag));
        assert!(!matches_etag(None, tag));
    }
}
