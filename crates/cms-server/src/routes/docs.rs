//! The instance describing itself: `/api/openapi.json` for machines and `/api/docs`, the
//! rendered reference, for people. The reference is Swagger UI, its files built into the binary
//! so it works with no network beyond this server.

use std::sync::{Arc, LazyLock};

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use utoipa_swagger_ui::Config;

use crate::AppState;
use crate::error::{handler_error, no_such_endpoint};
use crate::extract::MaybeAuthed;

const TAG: &str = "meta";

/// Where the signed-out are sent (CONTRACT.md section 12).
const SIGN_IN: &str = "/admin/sign-in?redirect=/api/docs";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(openapi_json))
        .routes(routes!(docs))
        // The reference's own files are not API operations: mounted, not described.
        .route("/api/docs/", axum::routing::get(docs_index))
        .route("/api/docs/{*file}", axum::routing::get(docs_file))
}

/// The OpenAPI 3.1 document of this instance: every endpoint, and a schema per registered
/// document type.
#[utoipa::path(get, path = "/api/openapi.json", tag = TAG,
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json")))]
async fn openapi_json(State(state): State<AppState>, MaybeAuthed(actor): MaybeAuthed) -> Response {
    // A credential is needed; an anonymous `public` reader has none (MaybeAuthed leaves it out).
    if actor.is_none() {
        return crate::error::ApiError::Service(cms_service::Error::Unauthorized).into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        axum::body::Bytes::from_owner(Arc::clone(&state.openapi)),
    )
        .into_response()
}

/// The rendered API reference. It needs a signed-in session: the signed-out are redirected to
/// sign-in, and so is an API key, which a browser never carries. 404 when `openapi.docsUi` is
/// false.
#[utoipa::path(get, path = "/api/docs", tag = TAG, security(()),
    responses(
        (status = 303, description = "To the reference's files (signed in) or to sign-in (signed out)"),
    ))]
async fn docs(State(state): State<AppState>, MaybeAuthed(actor): MaybeAuthed) -> Response {
    gate(&state, actor.as_ref()).unwrap_or_else(|| Redirect::to("/api/docs/").into_response())
}

/// A file of the rendered reference.
async fn docs_file(
    State(state): State<AppState>,
    MaybeAuthed(actor): MaybeAuthed,
    Path(file): Path<String>,
) -> Response {
    gate(&state, actor.as_ref()).unwrap_or_else(|| serve(&file))
}

/// The reference's `index.html`, at the directory itself (`{*file}` does not match it).
async fn docs_index(State(state): State<AppState>, MaybeAuthed(actor): MaybeAuthed) -> Response {
    gate(&state, actor.as_ref()).unwrap_or_else(|| serve(""))
}

/// The refusal for this caller, if any: 404 when the reference is off, sign-in when the caller
/// is not a signed-in person.
fn gate(state: &AppState, actor: Option<&cms_service::Actor>) -> Option<Response> {
    if !state.settings.docs_ui {
        return Some(no_such_endpoint());
    }
    match actor {
        Some(actor) if !actor.is_api_key() => None,
        _ => Some(Redirect::to(SIGN_IN).into_response()),
    }
}

static CONFIG: LazyLock<Arc<Config<'static>>> = LazyLock::new(|| {
    Arc::new(
        Config::new(["/api/openapi.json"])
            // The default validator badge would call validator.swagger.io.
            .validator_url("none")
            .with_credentials(true),
    )
});

fn serve(file: &str) -> Response {
    match utoipa_swagger_ui::serve(file, Arc::clone(&CONFIG)) {
        Ok(Some(found)) => {
            let mut response = (
                [
                    (header::CONTENT_TYPE, found.content_type),
                    (header::CACHE_CONTROL, "no-cache".to_string()),
                ],
                found.bytes.into_owned(),
            )
                .into_response();
            if found.gzpipped {
                response
                    .headers_mut()
                    .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            }
            response
        }
        Ok(None) => handler_error(StatusCode::NOT_FOUND, "no such file", &[]),
        Err(e) => {
            tracing::error!(error = %e, "the API reference could not be served");
            handler_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "an internal error occurred",
                &[],
            )
        }
    }
}
