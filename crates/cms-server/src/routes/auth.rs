//! `/api/auth/*`: sign-up, sign-in, sign-out, get-session, and deleting one's account
//! (CONTRACT.md section 3). Success
//! bodies follow the better-auth shapes (`{ token, user }`), errors the handler envelope.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::AppendHeaders;
use cms_service::{
    Authenticated, ClaimCode, Credential, SessionView, SignIn, SignInOutcome, SignUp, SignedUp,
    User,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AccessRefusal, ApiResult, ErrorBody};
use crate::extract::{ApiJson, Authed, Client, MaybeAuthed};
use crate::routes::{Data, ok};
use crate::{AppState, session_cookie};

const TAG: &str = "auth";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sign_up))
        .routes(routes!(sign_in))
        .routes(routes!(sign_out))
        .routes(routes!(get_session))
        .routes(routes!(setup))
        .routes(routes!(delete_account))
}

/// A `Set-Cookie` header of the response.
pub(super) type SetCookie = [(HeaderName, HeaderValue); 1];

/// A new account.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SignUpBody {
    /// The person's name.
    name: Option<String>,
    /// The e-mail address, which signs in.
    email: Option<String>,
    password: Option<String>,
    /// The `token` of an invitation's `acceptUrl` for this address: the sign-up joins that
    /// invitation's organization with its role, and the address counts as verified. Without
    /// it (or with a wrong one) nothing is joined and the invitation stays pending.
    invitation_token: Option<String>,
}

/// E-mail and password.
#[derive(Deserialize, ToSchema)]
struct SignInBody {
    email: Option<String>,
    password: Option<String>,
}

/// A new session: its bearer token and its user. The same token is set as the session cookie.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct SignedIn {
    /// The session token, for `Authorization: Bearer`.
    pub(super) token: String,
    pub(super) user: User,
}

/// The right password of an account with two-factor sign-in on: no session yet, but a
/// challenge to send with a code to `POST /api/auth/two-factor` within 5 minutes.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct TwoFactorRequired {
    /// Always `true`.
    two_factor_required: bool,
    challenge: String,
}

/// What a sign-in answers: a session, or the challenge of a two-factor sign-in.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
enum SignInAnswer {
    SignedIn(SignedIn),
    TwoFactorRequired(TwoFactorRequired),
}

/// A new account: signed in at once, or (when the address must be verified first) without a
/// session, `token` then being `null`.
#[derive(Debug, Serialize, ToSchema)]
struct SignedUpBody {
    /// The session token, for `Authorization: Bearer`; `null` until the address is verified.
    token: Option<String>,
    user: User,
}

/// `{ "success": true }`: the session (and for a deleted account, the account) is over.
#[derive(Debug, Serialize, ToSchema)]
struct SignedOut {
    /// Always `true`.
    success: bool,
}

/// Creates an account (CONTRACT.md section 12). While the instance has no administrator, the
/// first-admin policy decides who may claim it; a query parameter named like a claim code
/// (`code`, `claimCode`, ...) is refused.
#[utoipa::path(post, path = "/api/auth/sign-up/email", tag = TAG, security(()),
    request_body = SignUpBody,
    params(
        ("x-cms-bootstrap-code" = Option<String>, Header, nullable = false,
            description = "The first-admin claim code from the server log (first sign-up only)"),
        ("cms_bootstrap_code" = Option<String>, Cookie, nullable = false,
            description = "The claim code, when the header is absent"),
    ),
    responses(
        (status = 200, description = "The account; signed in (session cookie set) unless the address must be verified first (`token` null, no cookie)",
            body = SignedUpBody,
            headers(("set-cookie" = String, description = "The session cookie, when signed in"))),
        (status = 403, description = "The sign-up policy refuses this sign-up (handler-layer body), or a cookie-authenticated request failed the CSRF check",
            body = AccessRefusal),
        (status = 422, description = "An account with this e-mail already exists", body = ErrorBody),
    ))]
async fn sign_up(
    State(state): State<AppState>,
    Client(client): Client,
    uri: axum::http::Uri,
    headers: HeaderMap,
    ApiJson(body): ApiJson<SignUpBody>,
) -> ApiResult<(
    AppendHeaders<Option<(HeaderName, HeaderValue)>>,
    Json<SignedUpBody>,
)> {
    let signed_up = state
        .cms
        .auth()
        .sign_up(SignUp {
            name: body.name,
            email: body.email,
            password: body.password,
            client,
            claim_code: claim_code(&uri, &headers),
            invitation_token: body.invitation_token,
        })
        .await?;
    Ok(match signed_up {
        SignedUp::SignedIn(auth) => {
            let cookie = cookie(&state, &headers, &auth);
            (
                AppendHeaders(Some((header::SET_COOKIE, cookie))),
                Json(SignedUpBody {
                    token: Some(auth.token),
                    user: auth.user,
                }),
            )
        }
        // better-auth's answer when the address must be verified first: no session yet.
        SignedUp::VerificationRequired(user) => (
            AppendHeaders(None),
            Json(SignedUpBody { token: None, user }),
        ),
    })
}

/// Signs in with e-mail and password; the session cookie is set. With two-factor sign-in on,
/// the answer is a challenge instead, and no cookie.
#[utoipa::path(post, path = "/api/auth/sign-in/email", tag = TAG, security(()),
    request_body = SignInBody,
    responses(
        (status = 200, description = "Signed in (the session cookie set), or a two-factor challenge (no cookie)", body = SignInAnswer,
            headers(("set-cookie" = String, description = "The session cookie, when signed in"))),
        (status = 401, description = "The e-mail or password is wrong", body = ErrorBody),
        (status = 403, description = "The address must be verified first (handler-layer body; a new link is sent), or a cookie-authenticated request failed the CSRF check",
            body = AccessRefusal),
    ))]
async fn sign_in(
    State(state): State<AppState>,
    Client(client): Client,
    headers: HeaderMap,
    ApiJson(body): ApiJson<SignInBody>,
) -> ApiResult<(
    AppendHeaders<Option<(HeaderName, HeaderValue)>>,
    Json<SignInAnswer>,
)> {
    let outcome = state
        .cms
        .auth()
        .sign_in(SignIn {
            email: body.email,
            password: body.password,
            client,
        })
        .await?;
    Ok(match outcome {
        SignInOutcome::SignedIn(auth) => {
            let ([cookie], Json(body)) = signed_in(&state, &headers, *auth);
            (
                AppendHeaders(Some(cookie)),
                Json(SignInAnswer::SignedIn(body)),
            )
        }
        SignInOutcome::TwoFactorRequired { challenge } => (
            AppendHeaders(None),
            Json(SignInAnswer::TwoFactorRequired(TwoFactorRequired {
                two_factor_required: true,
                challenge,
            })),
        ),
    })
}

/// The answer of a sign-in that opened a session: the cookie and `{ token, user }`.
pub(super) fn signed_in(
    state: &AppState,
    headers: &HeaderMap,
    auth: Authenticated,
) -> (SetCookie, Json<SignedIn>) {
    let cookie = cookie(state, headers, &auth);
    (
        [(header::SET_COOKIE, cookie)],
        Json(SignedIn {
            token: auth.token,
            user: auth.user,
        }),
    )
}

/// Ends the caller's session, if any (an API key has none), and clears the session cookie.
#[utoipa::path(post, path = "/api/auth/sign-out", tag = TAG, security(()),
    responses(
        (status = 200, description = "Signed out", body = SignedOut,
            headers(("set-cookie" = String, description = "Clears the session cookie"))),
        (status = 403, description = "A cookie-authenticated request failed the CSRF check",
            body = AccessRefusal),
    ))]
async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
    MaybeAuthed(actor): MaybeAuthed,
) -> ApiResult<(SetCookie, Json<SignedOut>)> {
    if let Some(actor) = &actor {
        state.cms.auth().sign_out(actor).await?;
    }
    Ok((
        [(
            header::SET_COOKIE,
            session_cookie::clear(state.is_secure(&headers)),
        )],
        Json(SignedOut { success: true }),
    ))
}

#[derive(Deserialize, ToSchema)]
struct AccountDeletion {
    /// The caller's password, confirming the deletion.
    password: Option<String>,
}

/// DELETE /api/user: the caller's own account, confirmed by password; the cookie is cleared.
/// A session is required (an API key is refused with 403).
#[utoipa::path(delete, path = "/api/user", tag = TAG, request_body = AccountDeletion,
    responses(
        (status = 200, description = "The account is gone", body = SignedOut,
            headers(("set-cookie" = String, description = "Clears the session cookie"))),
        (status = 401, description = "No valid credential, or the password is wrong (handler-layer body)",
            body = AccessRefusal),
        (status = 409, description = "The caller is the last owner of an organization", body = ErrorBody),
    ))]
async fn delete_account(
    State(state): State<AppState>,
    headers: HeaderMap,
    Authed(actor): Authed,
    ApiJson(body): ApiJson<AccountDeletion>,
) -> ApiResult<(SetCookie, Json<SignedOut>)> {
    state
        .cms
        .account()
        .delete_account(&actor, body.password.as_deref())
        .await?;
    Ok((
        [(
            header::SET_COOKIE,
            session_cookie::clear(state.is_secure(&headers)),
        )],
        Json(SignedOut { success: true }),
    ))
}

/// The caller's session and user.
#[derive(Debug, Serialize, ToSchema)]
struct SessionBody {
    session: SessionView,
    user: User,
}

/// `{ session, user }`, or `null` when the request carries no session (signed out, or an API
/// key, which is not a session).
#[utoipa::path(get, path = "/api/auth/get-session", tag = TAG, security(()),
    responses((status = 200, description = "The session, or null", body = Option<SessionBody>)))]
async fn get_session(MaybeAuthed(actor): MaybeAuthed) -> Json<Option<SessionBody>> {
    Json(actor.and_then(|actor| match actor.credential {
        Credential::Session(session) => Some(SessionBody {
            session,
            user: actor.user,
        }),
        Credential::ApiKey { .. }
        | Credential::Plugin { .. }
        | Credential::Preview(_)
        | Credential::Public { .. } => None,
    }))
}

/// Whether the instance still waits for its first account.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Setup {
    /// `true` while the instance has no user: the first sign-up creates the administrator
    /// (under the `auth.firstAdmin` policy).
    setup_required: bool,
}

/// Whether the instance has no user yet, so a client opens on "create the first account"
/// rather than on a sign-in nobody can pass. Public; it says this one bit and nothing more.
#[utoipa::path(get, path = "/api/auth/setup", tag = TAG, security(()),
    responses((status = 200, description = "Whether the first account is still to be made", body = Data<Setup>)))]
async fn setup(State(state): State<AppState>) -> ApiResult<Json<Data<Setup>>> {
    let setup_required = state.cms.auth().setup_required().await?;
    Ok(ok(Setup { setup_required }))
}

/// The `Set-Cookie` value of a new session.
fn cookie(state: &AppState, headers: &HeaderMap, auth: &Authenticated) -> HeaderValue {
    let max_age = state.cms.settings().session_lifetime_days * 86_400;
    session_cookie::set(&auth.cookie_value, max_age, state.is_secure(headers))
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
