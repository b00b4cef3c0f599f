//! `/api/auth/oidc/*`: single sign-on with OpenID Connect (CONTRACT.md section 20). The start
//! sends the browser to the provider with the sealed flow in a short-lived cookie; the
//! callback trades the code for a session and sends the browser on. Every refusal lands on the
//! admin's sign-in page with a code (`?sso=domain`), which the page turns into words: nothing a
//! provider or a link sends is shown as text.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cms_service::{OidcCallback, OidcProviderView, OidcRefusal, SignInOutcome};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Data, ok};
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiQuery, Client};
use crate::{AppState, session_cookie};

const TAG: &str = "auth";
/// The cookie holding a sign-in in progress, only where the callback reads it.
const FLOW_COOKIE: &str = "cms_oidc";
const FLOW_PATH: &str = "/api/auth/oidc";
/// Where the browser goes after a sign-in that named nowhere else.
const AFTER_SIGN_IN: &str = "/admin";
const SIGN_IN_PAGE: &str = "/admin/sign-in";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(providers))
        .routes(routes!(start))
        .routes(routes!(callback))
}

/// The configured providers, for the sign-in page's buttons. Public.
#[utoipa::path(get, path = "/api/auth/oidc/providers", tag = TAG, security(()),
    responses((status = 200, description = "The providers, possibly none", body = Data<Vec<OidcProviderView>>)))]
async fn providers(State(state): State<AppState>) -> Json<Data<Vec<OidcProviderView>>> {
    ok(state.cms.auth().oidc_providers())
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct StartQuery {
    /// A path of this instance to go to once signed in (anything else is ignored).
    redirect: Option<String>,
}

/// Starts a sign-in at the provider: 303 to its authorization endpoint, with PKCE, a state
/// and a nonce, and the flow kept in a cookie for ten minutes.
#[utoipa::path(get, path = "/api/auth/oidc/{provider}/start", tag = TAG, security(()),
    params(("provider" = String, Path, description = "The provider's `id`"), StartQuery),
    responses(
        (status = 303, description = "To the provider's sign-in",
            headers(("location" = String), ("set-cookie" = String, description = "The sign-in in progress"))),
        (status = 404, description = "No such provider", body = ErrorBody),
        (status = 503, description = "The provider cannot be reached", body = ErrorBody),
    ))]
async fn start(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<StartQuery>,
) -> ApiResult<Response> {
    let started = state
        .cms
        .auth()
        .start_oidc(&provider, query.redirect.as_deref())
        .await?;
    let cookie = flow_cookie(&started.flow, 600, state.is_secure(&headers));
    Ok(see_other(&started.location, [cookie]))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    /// The provider's refusal (`access_denied`, ...). Anything else it sends (`iss`,
    /// `error_description`) is ignored: the ID token's issuer is what is checked.
    error: Option<String>,
}

/// Where the provider sends the browser back. Signs in (303 to where the sign-in started, the
/// session cookie set), or goes on to the second factor, or shows the refusal on the sign-in
/// page (`?sso=denied|state|code|unverified|domain|unavailable`).
#[utoipa::path(get, path = "/api/auth/oidc/{provider}/callback", tag = TAG, security(()),
    params(("provider" = String, Path, description = "The provider's `id`"), CallbackQuery),
    responses(
        (status = 303, description = "Signed in, on to the second factor, or back to the sign-in page with the refusal's code",
            headers(("location" = String), ("set-cookie" = String, description = "The session cookie when signed in; the flow cookie cleared"))),
        (status = 404, description = "No such provider", body = ErrorBody),
    ))]
async fn callback(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    Client(client): Client,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<CallbackQuery>,
) -> ApiResult<Response> {
    let secure = state.is_secure(&headers);
    let finished = state
        .cms
        .auth()
        .complete_oidc(
            &provider,
            OidcCallback {
                code: query.code,
                state: query.state,
                error: query.error,
                flow: session_cookie::read_named(&headers, FLOW_COOKIE),
                client,
            },
        )
        .await?;
    let clear = flow_cookie("", 0, secure);
    let signed_in = match finished {
        Ok(signed_in) => signed_in,
        Err(refusal) => return Ok(see_other(&refused(refusal), [clear])),
    };
    let back = signed_in.return_to.as_deref().unwrap_or(AFTER_SIGN_IN);
    Ok(match signed_in.outcome {
        SignInOutcome::SignedIn(auth) => {
            let max_age = state.cms.settings().session_lifetime_days * 86_400;
            let session = session_cookie::set(&auth.cookie_value, max_age, secure);
            let mut response = see_other(back, [clear]);
            response.headers_mut().append(header::SET_COOKIE, session);
            response
        }
        // In the fragment: it reaches the page's script, never a server log or a Referer.
        SignInOutcome::TwoFactorRequired { challenge } => see_other(
            &format!(
                "{SIGN_IN_PAGE}?redirect={}#two-factor={challenge}",
                super::admin::encode(back)
            ),
            [clear],
        ),
    })
}

/// The sign-in page showing `refusal`.
fn refused(refusal: OidcRefusal) -> String {
    format!("{SIGN_IN_PAGE}?sso={}", refusal.code())
}

fn see_other(location: &str, cookies: [HeaderValue; 1]) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, location);
    }
    for cookie in cookies {
        headers.append(header::SET_COOKIE, cookie);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `Set-Cookie` for the flow: HttpOnly, SameSite=Lax (the provider's redirect back is a
/// top-level navigation from another site, which Lax admits), only under `/api/auth/oidc`.
fn flow_cookie(value: &str, max_age_secs: i64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{FLOW_COOKIE}={value}; Path={FLOW_PATH}; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{secure}"
    ))
    .expect("a sealed flow is base64 and a prefix: a valid header value")
}
