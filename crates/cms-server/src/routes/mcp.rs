//! `/api/mcp`: the MCP server's Streamable HTTP transport (CONTRACT.md section 21), behind the
//! same middleware, credentials, CORS and limits as the rest of the API. The handlers only
//! refuse a request without a caller, or a new session past `mcp.maxSessions`, and hand the
//! rest to the transport (`cms-mcp`); what the SDK answers in plain text is rendered in the
//! error envelope here.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cms_service::Actor;
use tower::ServiceExt;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{self, ErrorBody};

const TAG: &str = "mcp";

/// The header naming a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The longest plain-text refusal of the transport read back to put in the envelope.
const REFUSAL_BYTES: usize = 4 * 1024;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(post, stream, end))
}

/// One JSON-RPC 2.0 message of the Model Context Protocol (protocol versions `2025-06-18` and
/// `2025-11-25`): `initialize` (answered with an `Mcp-Session-Id` header, required on every
/// later request), then `tools/list`, `tools/call`, `resources/list`,
/// `resources/templates/list`, `resources/read`, `ping`, and notifications. Tools and resources
/// act as the caller, with the caller's rights; each request's writes are one change set
/// (`source: mcp`). The client must accept both `application/json` and `text/event-stream`;
/// a request's answer comes as a one-message event stream. An unknown or expired session id is
/// 404: initialize again.
#[utoipa::path(post, path = "/api/mcp", tag = TAG,
    request_body(content = Object, content_type = "application/json", description = "A JSON-RPC 2.0 request, notification or response"),
    responses(
        (status = 200, description = "The answer to a request, as JSON or as an event stream", content(
            (Object = "application/json"),
            (String = "text/event-stream"),
        ), headers(("Mcp-Session-Id" = String, description = "The session, on the answer to `initialize`"))),
        (status = 202, description = "A notification or response accepted"),
        (status = 400, description = "Not a valid MCP message here (a JSON-RPC error, or the error envelope): a missing session id, a protocol version header that does not match", body = Object),
        (status = 401, description = "No valid credential; `WWW-Authenticate: Bearer`", body = crate::error::AccessRefusal),
        (status = 404, description = "The session id is unknown or expired (initialize again)", body = ErrorBody),
        (status = 406, description = "The client does not accept both `application/json` and `text/event-stream`", body = ErrorBody),
        (status = 429, description = "A new session past `mcp.maxSessions`; `Retry-After` says when to try again", body = ErrorBody),
    ))]
async fn post(State(state): State<AppState>, request: Request) -> Response {
    forward(&state, request).await
}

/// The session's stream of messages the server sends on its own (`Mcp-Session-Id` required,
/// `Accept: text/event-stream`).
#[utoipa::path(get, path = "/api/mcp", tag = TAG,
    responses(
        (status = 200, description = "The session's event stream", content_type = "text/event-stream", body = String),
        (status = 400, description = "No session id", body = Object),
        (status = 401, description = "No valid credential; `WWW-Authenticate: Bearer`", body = crate::error::AccessRefusal),
        (status = 404, description = "The session id is unknown or expired", body = ErrorBody),
        (status = 406, description = "The client does not accept `text/event-stream`", body = ErrorBody),
    ))]
async fn stream(State(state): State<AppState>, request: Request) -> Response {
    forward(&state, request).await
}

/// Ends the session named by `Mcp-Session-Id`.
#[utoipa::path(delete, path = "/api/mcp", tag = TAG,
    responses(
        (status = 204, description = "The session ended"),
        (status = 400, description = "No session id", body = Object),
        (status = 401, description = "No valid credential; `WWW-Authenticate: Bearer`", body = crate::error::AccessRefusal),
        (status = 404, description = "The session id is unknown or expired", body = ErrorBody),
    ))]
async fn end(State(state): State<AppState>, request: Request) -> Response {
    let mut response = forward(&state, request).await;
    // The transport says 202; the session is gone and nothing follows, which clients (the
    // official Python SDK among them) expect as 200 or 204.
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// Hands a request with a caller to the transport; refuses one without.
async fn forward(state: &AppState, request: Request) -> Response {
    let Some(transport) = &state.mcp else {
        return error::no_such_endpoint();
    };
    let signed_in = request
        .extensions()
        .get::<Actor>()
        .is_some_and(|actor| !actor.is_public());
    if !signed_in {
        let mut refusal = error::access_refusal(StatusCode::UNAUTHORIZED);
        refusal
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return refusal;
    }
    let opens_a_session =
        request.method() == Method::POST && !request.headers().contains_key(SESSION_HEADER);
    if opens_a_session && !transport.has_room().await {
        let mut refusal = error::handler_error(
            StatusCode::TOO_MANY_REQUESTS,
            "this instance holds as many MCP sessions as it may (mcp.maxSessions): end one, or try again when idle ones have closed",
            &[],
        );
        refusal
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
        return refusal;
    }
    let json_body = is_json(request.headers().get(header::CONTENT_TYPE));
    let Ok(response) = transport.service().oneshot(request).await;
    in_envelope(response.map(Body::new), json_body).await
}

fn is_json(content_type: Option<&HeaderValue>) -> bool {
    content_type
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The transport's own refusals are plain text: rendered in the handler-layer envelope, the
/// status kept, except that a JSON body which is no MCP message is a 400 like any body that
/// does not parse (the SDK says 415). JSON-RPC errors, results and streams pass untouched.
async fn in_envelope(response: Response, json_body: bool) -> Response {
    let status = response.status();
    let content_type = response.headers().get(header::CONTENT_TYPE);
    let plain = !is_json(content_type)
        && content_type.is_none_or(|v| !v.as_bytes().starts_with(b"text/event-stream"));
    if status.is_success() || !plain {
        return response;
    }
    let allow = response.headers().get(header::ALLOW).cloned();
    let text = match axum::body::to_bytes(response.into_body(), REFUSAL_BYTES).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    };
    let (status, message) = match status {
        StatusCode::NOT_FOUND => (
            status,
            "unknown MCP session (it ended, expired after being idle, or belongs to another \
             instance): send `initialize` again without `Mcp-Session-Id`"
                .to_string(),
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE if json_body => (
            StatusCode::BAD_REQUEST,
            "the body is not a JSON-RPC message of the Model Context Protocol".to_string(),
        ),
        _ => (status, plain_message(&text)),
    };
    let mut answer = error::handler_error(status, &message, &[]);
    if let Some(allow) = allow {
        answer.headers_mut().insert(header::ALLOW, allow);
    }
    answer.into_response()
}

/// The SDK's refusal without its `Status Text: ` prefix.
fn plain_message(text: &str) -> String {
    let message = text.split_once(": ").map_or(text, |(_, rest)| rest).trim();
    if message.is_empty() {
        "the request is not valid here".to_string()
    } else {
        message.to_string()
    }
}
