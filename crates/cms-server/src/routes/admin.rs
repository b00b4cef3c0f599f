//! `/admin`: the admin UI's pages and files (crate `cms-admin`). A page is a small HTML shell
//! whose modules then speak the public HTTP API, so this door decides only one thing itself:
//! the signed-out are sent to sign-in before a private page is drawn.

use axum::extract::{OriginalUri, Path};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use cms_admin::Page;
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::error::{handler_error, no_such_endpoint};
use crate::extract::MaybeAuthed;

/// The admin's pages are not API operations: mounted, not described.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .route("/admin", axum::routing::get(home))
        .route("/admin/{*path}", axum::routing::get(page))
}

/// The admin's modules and stylesheets, mounted where no caller is resolved: they are the
/// same for everyone.
pub fn files() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/admin/static/{*file}", axum::routing::get(file))
        .route("/favicon.ico", axum::routing::get(favicon))
}

/// Browsers ask for `/favicon.ico` on pages that link no icon (the API's JSON, its docs): the
/// admin's icon, under its versioned address, rather than a 404 in every log.
async fn favicon() -> Redirect {
    Redirect::temporary(&format!(
        "/admin/static/{}/{}",
        cms_admin::version(),
        cms_admin::FAVICON
    ))
}

/// Everything a page may load comes from this origin; plugin parts too (their modules are
/// served under `/api`). Inline scripts and styles are refused outright.
const PAGE_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; font-src 'self'; \
    object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

async fn home(MaybeAuthed(actor): MaybeAuthed, uri: OriginalUri) -> Response {
    draw(Page::Home, actor.as_ref(), &uri)
}

async fn page(
    MaybeAuthed(actor): MaybeAuthed,
    uri: OriginalUri,
    Path(path): Path<String>,
) -> Response {
    match Page::from_path(&path) {
        Some(page) => draw(page, actor.as_ref(), &uri),
        None => no_such_endpoint(),
    }
}

/// The page, or sign-in (with the way back) for a private page and a caller without a
/// session. An API key is no session: a browser never carries one.
fn draw(page: Page, actor: Option<&cms_service::Actor>, uri: &OriginalUri) -> Response {
    let signed_in = actor.is_some_and(|actor| !actor.is_api_key());
    if !page.is_public() && !signed_in {
        // The page asked for is on this instance by construction; the one rule still decides,
        // so the way back never depends on how the request's path was spelled.
        let back = cms_core::redirect::same_origin_path_or_fallback(
            uri.path_and_query().map(|p| p.as_str()),
        );
        return Redirect::to(&format!("/admin/sign-in?redirect={}", encode(back))).into_response();
    }
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(PAGE_POLICY),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (
                header::REFERRER_POLICY,
                HeaderValue::from_static("same-origin"),
            ),
        ],
        cms_admin::render(&page),
    )
        .into_response()
}

/// A module or stylesheet: `{version}/{path}`, kept by browsers for good because a new build
/// has a new version.
async fn file(Path(versioned): Path<String>) -> Response {
    let found = versioned
        .split_once('/')
        .and_then(|(version, path)| cms_admin::asset(version, path));
    match found {
        Some(asset) => (
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(asset.content_type),
                ),
                (
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("public, max-age=31536000, immutable"),
                ),
                (
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                ),
            ],
            asset.bytes,
        )
            .into_response(),
        None => handler_error(StatusCode::NOT_FOUND, "no such file", &[]),
    }
}

/// `value` as one query parameter value: everything but unreserved characters and `/`
/// percent-encoded.
pub(crate) fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::encode;

    #[test]
    fn the_way_back_is_one_query_value() {
        assert_eq!(encode("/admin/documents/post"), "/admin/documents/post");
        assert_eq!(
            encode("/admin/documents/post?status=draft&page=2"),
            "/admin/documents/post%3Fstatus%3Ddraft%26page%3D2"
        );
    }
}
