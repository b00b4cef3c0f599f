//! Middleware: turning the request's credentials into an actor (SPEC.md Authentication point
//! 1; a preview token, CONTRACT.md section 15), the CSRF check of cookie-authenticated writes,
//! and sending a refreshed session cookie when the session slid forward.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{Extensions, HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cms_service::Credentials;

use crate::error::ApiError;
use crate::{AppState, client_address, csrf, session_cookie};

pub async fn resolve_actor(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let address = ClientAddress(client_ip(&state, req.extensions(), req.headers()));
    req.extensions_mut().insert(address);
    let credentials = credentials(req.headers(), req.uri().query(), address.0);
    let from_cookie = credentials.api_key.is_none()
        && credentials.bearer.is_none()
        && credentials.cookie.is_some();
    let resolved = match state.cms.auth().authenticate(&credentials).await {
        Ok(resolved) => resolved,
        Err(e) => return ApiError::from(e).into_response(),
    };
    let Some(resolved) = resolved else {
        return next.run(req).await;
    };
    if resolved.actor.is_preview() {
        return preview(resolved.actor, req, next).await;
    }
    // Only a cookie is sent by the browser on its own, so only a cookie needs proof that the
    // page asking is ours. A request whose cookie proves nothing is simply not signed in.
    if from_cookie
        && csrf::applies_to(req.method())
        && !csrf::same_origin(req.headers(), req.uri(), state.public_origin.as_ref())
        && !state.delivery.cors.lets_write(req.headers())
    {
        return crate::error::access_refusal(StatusCode::FORBIDDEN);
    }
    let refresh = (resolved.session_extended && from_cookie)
        .then(|| credentials.cookie.clone())
        .flatten();
    req.extensions_mut().insert(resolved.actor);
    let secure = state.is_secure(req.headers());
    let mut response = next.run(req).await;
    // A handler that set the cookie itself (sign-in, sign-out) has the last word.
    if let Some(value) = refresh
        && !response.headers().contains_key(header::SET_COOKIE)
    {
        let max_age = state.cms.settings().session_lifetime_days * 86_400;
        response.headers_mut().append(
            header::SET_COOKIE,
            session_cookie::set(&value, max_age, secure),
        );
    }
    response
}

/// A request proven by a preview token (CONTRACT.md section 15). The service refuses its actor
/// everything but reading the token's document; the door answers 401 at once to anything
/// other than that one GET, so no handler, GraphQL or plugin route even starts for it, and
/// marks every answer as not to be stored by any cache.
async fn preview(actor: cms_service::Actor, mut req: Request, next: Next) -> Response {
    let reads_its_document = matches!(*req.method(), Method::GET | Method::HEAD)
        && req
            .uri()
            .path()
            .strip_prefix("/api/documents/")
            .is_some_and(|id| !id.contains('/') && actor.previews(id));
    let mut response = if reads_its_document {
        req.extensions_mut().insert(actor);
        next.run(req).await
    } else {
        crate::error::access_refusal(StatusCode::UNAUTHORIZED)
    };
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    response
}

fn credentials(headers: &HeaderMap, query: Option<&str>, address: Option<IpAddr>) -> Credentials {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(String::from)
    };
    let bearer = text(header::AUTHORIZATION.as_str()).and_then(|v| {
        let (scheme, token) = v.split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| token.trim().to_string())
    });
    let api_key = text("x-api-key");
    // Only a request that sends neither a key nor a bearer token can be a preview or a public
    // read: the query is read for them, in one pass, only then.
    let anonymous = if api_key.is_none() && bearer.is_none() {
        AnonymousParameters::of(query)
    } else {
        AnonymousParameters::default()
    };
    Credentials {
        api_key,
        bearer,
        cookie: session_cookie::read(headers),
        organization: text(ORGANIZATION_HEADER).or(anonymous.organization),
        client_address: address,
        preview: text("x-cms-preview").or(anonymous.preview),
    }
}

/// The header naming the organization an anonymous request reads (CONTRACT.md section 15).
pub(crate) const ORGANIZATION_HEADER: &str = "x-cms-organization";

/// What the query string may carry in place of credentials headers: the organization an
/// anonymous request names (`organization`, a slug) and a preview link's token (`preview`), for
/// frontends that can only pass a URL. The service decides what either is worth.
#[derive(Default)]
struct AnonymousParameters {
    organization: Option<String>,
    preview: Option<String>,
}

impl AnonymousParameters {
    fn of(query: Option<&str>) -> Self {
        let Some(pairs) =
            query.and_then(|q| serde_html_form::from_str::<Vec<(String, String)>>(q).ok())
        else {
            return Self::default();
        };
        let named = |name: &str| -> Vec<String> {
            pairs
                .iter()
                .filter(|(key, _)| key == name)
                .map(|(_, value)| value.trim().to_string())
                .collect()
        };
        // An organization named twice names none; the first preview token given counts.
        let organization = match named("organization").as_slice() {
            [one] if !one.is_empty() => Some(one.clone()),
            _ => None,
        };
        AnonymousParameters {
            organization,
            preview: named("preview").into_iter().find(|token| !token.is_empty()),
        }
    }
}

/// The client's address: the socket peer, or what trusted proxies forwarded
/// (`server.trustedProxies`). `None` when the server does not know the peer (a router driven
/// without connection info).
fn client_ip(state: &AppState, extensions: &Extensions, headers: &HeaderMap) -> Option<IpAddr> {
    let peer = extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| *addr);
    client_address::resolve(peer, headers, &state.settings.trusted_proxies)
}

/// The client's address as [`resolve_actor`] resolved it, for the `Client` extractor.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress(pub Option<IpAddr>);

/// Refuses a NUL character anywhere in the path or query: no identifier or parameter can hold
/// one, and PostgreSQL cannot even compare text holding one, so it is refused here, once,
/// rather than failing deep inside a query.
pub async fn refuse_nul(req: Request, next: Next) -> Response {
    let has_nul = |s: &str| s.contains("%00") || s.contains('\0');
    if has_nul(req.uri().path()) || req.uri().query().is_some_and(has_nul) {
        return crate::error::handler_error(
            axum::http::StatusCode::BAD_REQUEST,
            "the request URL contains a NUL character",
            &[],
        );
    }
    next.run(req).await
}
