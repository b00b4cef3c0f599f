//! `/admin`: the admin UI's pages and files (crate `cms-admin`). A page is a small HTML shell
//! whose modules then speak the public HTTP API, so this door decides only one thing itself:
//! the signed-out are sent to sign-in before a private page is drawn.

use axum::extract::{OriginalUri, Path, State};
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
/// served under `/api`). Inline scripts and styles are refused outright. `frame-src` is
/// [`page_policy`]'s to fill in.
const PAGE_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; font-src 'self'; \
    object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The admin pages' Content-Security-Policy, decided once at start from the document types:
/// the edit page shows a type's `previewUrl` in a frame (the live preview), so `frame-src`
/// lists the origin of every such template beside 'self'. Nothing else may be framed, and the
/// admin itself still may not be (`frame-ancestors 'none'`).
pub(crate) fn page_policy(schemas: &cms_core::schema::Schemas) -> HeaderValue {
    let mut frames = vec!["'self'".to_string()];
    for schema in schemas.documents() {
        let Some(template) = &schema.preview_url else {
            continue;
        };
        match preview_origin(template.as_str()) {
            Some(origin) if !frames.contains(&origin) => frames.push(origin),
            Some(_) => {}
            None => tracing::warn!(
                schema = %schema.name,
                template = %template,
                "previewUrl's origin cannot be listed in the admin's frame-src: its live preview will not load"
            ),
        }
    }
    let policy = format!("{PAGE_POLICY}; frame-src {}", frames.join(" "));
    // Every part is ASCII without control characters (checked below): always a valid value.
    HeaderValue::from_str(&policy).unwrap_or_else(|_| HeaderValue::from_static(PAGE_POLICY))
}

/// `scheme://host[:port]` of an http(s) URL template, lower-cased as browsers compare origins,
/// or `None` when its origin is not a fixed, plain host: a `{placeholder}` there (the schema
/// parser refuses those already), user information, or any character a policy could read as
/// more than a host (`;`, `,`, quotes, spaces).
fn preview_origin(template: &str) -> Option<String> {
    let (scheme, rest) = template.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']');
    if authority.is_empty() || !authority.chars().all(plain) {
        return None;
    }
    Some(format!("{scheme}://{}", authority.to_ascii_lowercase()))
}

async fn home(
    State(state): State<AppState>,
    MaybeAuthed(actor): MaybeAuthed,
    uri: OriginalUri,
) -> Response {
    draw(&state, Page::Home, actor.as_ref(), &uri)
}

async fn page(
    State(state): State<AppState>,
    MaybeAuthed(actor): MaybeAuthed,
    uri: OriginalUri,
    Path(path): Path<String>,
) -> Response {
    match Page::from_path(&path) {
        Some(page) => draw(&state, page, actor.as_ref(), &uri),
        None => no_such_endpoint(),
    }
}

/// The page, or sign-in (with the way back) for a private page and a caller without a
/// session. An API key is no session: a browser never carries one.
fn draw(
    state: &AppState,
    page: Page,
    actor: Option<&cms_service::Actor>,
    uri: &OriginalUri,
) -> Response {
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
            (header::CONTENT_SECURITY_POLICY, state.admin_policy.clone()),
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
    use super::{encode, page_policy, preview_origin};
    use cms_core::schema::{Schemas, parse_schemas};
    use serde_json::json;

    fn policy(previews: &[&str]) -> String {
        let mut list: Vec<serde_json::Value> = previews
            .iter()
            .enumerate()
            .map(|(i, url)| {
                json!({ "type": "document", "name": format!("t{i}"), "previewUrl": url,
                        "fields": [{ "name": "title", "type": "string" }] })
            })
            .collect();
        list.push(json!({ "type": "document", "name": "plain",
                          "fields": [{ "name": "title", "type": "string" }] }));
        let schemas = Schemas::new(parse_schemas(&json!(list)).unwrap()).unwrap();
        page_policy(&schemas).to_str().unwrap().to_string()
    }

    fn frame_src(policy: &str) -> &str {
        policy
            .split("; ")
            .find(|d| d.starts_with("frame-src "))
            .unwrap_or_else(|| panic!("no frame-src in {policy}"))
    }

    #[test]
    fn frame_src_lists_each_preview_origin_once() {
        let policy = policy(&[
            "https://www.example.com/{type}/{slug}?preview={token}",
            "HTTP://Localhost:3000/preview?id={id}&token={token}",
            "https://www.example.com/other/{id}",
            "http://[::1]:8080#{token}",
        ]);
        assert_eq!(
            frame_src(&policy),
            "frame-src 'self' https://www.example.com http://localhost:3000 http://[::1]:8080"
        );
        // The rest of the policy is as before: the admin itself is never framed.
        assert!(
            policy.starts_with("default-src 'self'; script-src 'self';"),
            "{policy}"
        );
        assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
        assert_eq!(policy.matches("frame-src").count(), 1, "{policy}");
    }

    #[test]
    fn without_previews_only_the_instance_is_framed() {
        assert_eq!(frame_src(&policy(&[])), "frame-src 'self'");
    }

    #[test]
    fn origins_that_are_not_plain_hosts_are_left_out() {
        assert_eq!(
            preview_origin("https://x.test"),
            Some("https://x.test".into())
        );
        assert_eq!(
            preview_origin("https://x.test?a={id}"),
            Some("https://x.test".into())
        );
        for template in [
            "https://{slug}.x.test/",
            "https://x.test:{id}/",
            "https://user@x.test/",
            "https://x.test;script-src/",
            "https://x.test,other/",
            "https:///path",
            "ftp://x.test/",
            "no scheme",
        ] {
            assert_eq!(preview_origin(template), None, "{template}");
        }
    }

    #[test]
    fn the_way_back_is_one_query_value() {
        assert_eq!(encode("/admin/documents/post"), "/admin/documents/post");
        assert_eq!(
            encode("/admin/documents/post?status=draft&page=2"),
            "/admin/documents/post%3Fstatus%3Ddraft%26page%3D2"
        );
    }
}
