//! `/api/auth/*`: sign-up, sign-in, sign-out, get-session, and deleting one's account
//! (CONTRACT.md section 3). Success
//! bodies follow the better-auth shapes (`{ token, user }`), errors the handler envelope.

use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing};
use cms_service::{Authenticated, ClaimCode, Credential, SignIn, SignUp, SignedUp};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ApiResult;
use crate::extract::{ApiJson, Authed, Client, MaybeAuthed};
use crate::{AppState, session_cookie};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/auth/sign-up/email", routing::post(sign_up))
        .route("/api/auth/sign-in/email", routing::post(sign_in))
        .route("/api/auth/sign-out", routing::post(sign_out))
        .route("/api/auth/get-session", routing::get(get_session))
        .route("/api/user", routing::delete(delete_account))
}

#[derive(Deserialize)]
struct SignUpBody {
    name: Option<String>,
    email: Option<String>,
    password: Option<String>,
}

#[derive(Deserialize)]
struct SignInBody {
    email: Option<String>,
    password: Option<String>,
}

async fn sign_up(
    State(state): State<AppState>,
    Client(client): Client,
    uri: axum::http::Uri,
    headers: HeaderMap,
    ApiJson(body): ApiJson<SignUpBody>,
) -> ApiResult<Response> {
    let signed_up = state
        .cms
        .auth()
        .sign_up(SignUp {
            name: body.name,
            email: body.email,
            password: body.password,
            client,
            claim_code: claim_code(&uri, &headers),
        })
        .await?;
    Ok(match signed_up {
        SignedUp::SignedIn(auth) => with_session(&state, &headers, auth),
        // better-auth's answer when the address must be verified first: no session yet.
        SignedUp::VerificationRequired(user) => {
            Json(json!({ "token": null, "user": user })).into_response()
        }
    })
}

async fn sign_in(
    State(state): State<AppState>,
    Client(client): Client,
    headers: HeaderMap,
    ApiJson(body): ApiJson<SignInBody>,
) -> ApiResult<Response> {
    let signed_in = state
        .cms
        .auth()
        .sign_in(SignIn {
            email: body.email,
            password: body.password,
            client,
        })
        .await?;
    Ok(with_session(&state, &headers, signed_in))
}

async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
    MaybeAuthed(actor): MaybeAuthed,
) -> ApiResult<Response> {
    if let Some(actor) = &actor {
        state.cms.auth().sign_out(actor).await?;
    }
    let mut response = Json(json!({ "success": true })).into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        session_cookie::clear(state.is_secure(&headers)),
    );
    Ok(response)
}

#[derive(Deserialize)]
struct DeleteAccountBody {
    password: Option<String>,
}

/// DELETE /api/user: the caller's own account, confirmed by password; the cookie is cleared.
async fn delete_account(
    State(state): State<AppState>,
    headers: HeaderMap,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<DeleteAccountBody>,
) -> ApiResult<Response> {
    state
        .cms
        .auth()
        .delete_account(&actor, body.password.as_deref())
        .await?;
    let mut response = Json(json!({ "success": true })).into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        session_cookie::clear(state.is_secure(&headers)),
    );
    Ok(response)
}

/// `{ session, user }`, or `null` when the request carries no session (signed out, or an API
/// key, which is not a session).
async fn get_session(MaybeAuthed(actor): MaybeAuthed) -> Json<Value> {
    match actor {
        Some(actor) => match actor.credential {
            Credential::Session(session) => Json(json!({ "session": session, "user": actor.user })),
            Credential::ApiKey { .. } => Json(Value::Null),
        },
        None => Json(Value::Null),
    }
}

fn with_session(state: &AppState, headers: &HeaderMap, auth: Authenticated) -> Response {
    let max_age = state.cms.settings().session_lifetime_days * 86_400;
    let cookie = session_cookie::set(&auth.cookie_value, max_age, state.is_secure(headers));
    let mut response = Json(json!({ "token": auth.token, "user": auth.user })).into_response();
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    response
}

/// The first-admin claim code of a sign-up: header `x-cms-bootstrap-code`, else cookie
/// `cms_bootstrap_code` (SPEC.md Authentication point 12). A query parameter that looks like a
/// code is reported as such, so the service refuses it even when it is right.
fn claim_code(uri: &axum::http::Uri, headers: &HeaderMap) -> ClaimCode {
    if uri.query().is_some_and(names_a_code) {
        return ClaimCode::InUrl;
    }
    let header = headers
        .get("x-cms-bootstrap-code")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    let cookie = || session_cookie::read_named(headers, "cms_bootstrap_code");
    match header.map(String::from).or_else(cookie) {
        Some(code) => ClaimCode::Presented(code),
        None => ClaimCode::Absent,
    }
}

/// Whether a query string carries a parameter named like a claim code (`code`, `claimCode`,
/// `bootstrapCode`, `cms_bootstrap_code`, `x-cms-bootstrap-code`, in any case).
fn names_a_code(query: &str) -> bool {
    query.split('&').any(|pair| {
        let name = pair.split('=').next().unwrap_or_default();
        let name: String = name
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .flat_map(char::to_lowercase)
            .collect();
        matches!(
            name.as_str(),
            "code" | "claimcode" | "bootstrapcode" | "cmsbootstrapcode" | "xcmsbootstrapcode"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_parameters_are_recognised_in_any_spelling() {
        for query in [
            "code=x",
            "a=1&claimCode=x",
            "bootstrap_code=x",
            "CMS_BOOTSTRAP_CODE=x",
            "x-cms-bootstrap-code",
        ] {
            assert!(names_a_code(query), "{query}");
        }
        for query in ["", "callbackURL=/admin", "codes=1", "a=code"] {
            assert!(!names_a_code(query), "{query}");
        }
    }
}
