//! Single sign-on with OpenID Connect (CONTRACT.md section 20), end to end against a real
//! OpenID provider on loopback (`oidc-provider`, tests/oidc/): the start's redirect with PKCE,
//! state and nonce; the first sign-in making an account for an allowed domain, a later one
//! finding it; an existing account linked by its verified address; an invitation honoured;
//! and every refusal (declined, tampered state, a used code, an unverified address, a domain
//! that may not sign up) landing on the sign-in page with its code.

use axum::http::StatusCode;
use serde_json::json;

use crate::oidc_provider::{Browser, OidcProvider};
use crate::people_support::{first_owner, member};
use crate::support::{Reply, TestApp, config_for};
use crate::two_factor::enrol_and_confirm;

const PUBLIC_URL: &str = "http://cms.test";
const CALLBACK: &str = "/api/auth/oidc/corp/callback";

/// An app with the provider `corp` (new accounts from example.com join Default as editors).
async fn app_with_provider(url: &str) -> (TestApp, OidcProvider) {
    let provider = OidcProvider::start(&format!("{PUBLIC_URL}{CALLBACK}"));
    let mut config = config_for(url);
    config.server.public_url = Some(PUBLIC_URL.into());
    config.auth.oidc.providers = vec![provider.config("editor")];
    (TestApp::with(config, None).await, provider)
}

/// A started sign-in: the provider's authorization URL and the flow cookie.
pub(crate) struct Started {
    authorization_url: String,
    flow_cookie: String,
}

pub(crate) async fn start(app: &TestApp, redirect: &str) -> Started {
    let res = app
        .get(&format!("/api/auth/oidc/corp/start?redirect={redirect}"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::SEE_OTHER, "{}", res.body);
    let set_cookie = res.header("set-cookie").unwrap();
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"),
        "{set_cookie}"
    );
    Started {
        authorization_url: res.header("location").unwrap().to_string(),
        flow_cookie: set_cookie.split(';').next().unwrap().to_string(),
    }
}

/// Follows the provider's redirect back into the app, with the flow cookie.
async fn come_back(app: &TestApp, callback_url: &str, flow_cookie: &str) -> Reply {
    let at = callback_url
        .find(CALLBACK)
        .unwrap_or_else(|| panic!("back to our callback: {callback_url}"));
    let path = &callback_url[at..];
    app.get(path).header("cookie", flow_cookie).send().await
}

/// A sign-in started for `redirect` and signed in at the provider as `login`: the start, and
/// the URL the provider sends the browser back to.
async fn at_provider(
    app: &TestApp,
    provider: &OidcProvider,
    redirect: &str,
    login: &str,
) -> (Started, String) {
    let started = start(app, redirect).await;
    let back = Browser::default()
        .sign_in(&provider.issuer, &started.authorization_url, login)
        .await;
    (started, back)
}

/// A whole sign-in as `login` at the provider: the app's answer to the return.
pub(crate) async fn sign_in_as(app: &TestApp, provider: &OidcProvider, login: &str) -> Reply {
    let (started, back) = at_provider(app, provider, "/admin/documents/post", login).await;
    come_back(app, &back, &started.flow_cookie).await
}

/// The session cookie of a signed-in return (which goes where the sign-in started).
pub(crate) fn session_cookie(res: &Reply) -> String {
    assert_eq!(res.status, StatusCode::SEE_OTHER, "{}", res.body);
    assert_eq!(res.header("location"), Some("/admin/documents/post"));
    res.headers
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap())
        .find(|c| c.starts_with("cms_session=") && !c.starts_with("cms_session=;"))
        .expect("a session cookie")
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

async fn who(app: &TestApp, cookie: &str) -> serde_json::Value {
    let res = app
        .get("/api/auth/get-session")
        .header("cookie", cookie)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["user"].clone()
}

/// The code of a refused return, which lands on the sign-in page without a session.
pub(crate) fn refusal(res: &Reply) -> &str {
    assert_eq!(res.status, StatusCode::SEE_OTHER, "{}", res.body);
    let location = res.header("location").unwrap();
    assert!(
        res.headers
            .get_all("set-cookie")
            .iter()
            .all(|c| !c.to_str().unwrap().starts_with("cms_session=")),
        "no session for a refusal"
    );
    location
        .strip_prefix("/admin/sign-in?sso=")
        .unwrap_or_else(|| panic!("to the sign-in page: {location}"))
}

async fn a_first_sign_in_makes_the_account_and_later_ones_find_it(url: String) {
    let (app, provider) = app_with_provider(&url).await;
    let (ada, org) = first_owner(&app).await;
    let res = app.get("/api/auth/oidc/providers").send().await;
    assert_eq!(
        res.body["data"],
        json!([{"id": "corp", "name": "Corp ID", "startUrl": "/api/auth/oidc/corp/start"}])
    );

    // The start sends the browser to the provider with PKCE, a state and a nonce.
    let started = start(&app, "/admin/documents/post").await;
    let url = &started.authorization_url;
    assert!(url.starts_with(&format!("{}/", provider.issuer)), "{url}");
    for part in [
        "response_type=code",
        "code_challenge_method=S256",
        "code_challenge=",
        "state=",
        "nonce=",
        "client_id=cms-tests",
    ] {
        assert!(url.contains(part), "{part} in {url}");
    }

    let res = sign_in_as(&app, &provider, "carol@example.com").await;
    let cookie = session_cookie(&res);
    assert!(
        res.headers
            .get_all("set-cookie")
            .iter()
            .any(|c| c.to_str().unwrap().starts_with("cms_oidc=;")),
        "the flow cookie is cleared"
    );
    let carol = who(&app, &cookie).await;
    assert_eq!(
        (&carol["email"], &carol["name"], &carol["emailVerified"]),
        (&json!("carol@example.com"), &json!("carol"), &json!(true))
    );
    // A member of Default with the provider's role.
    let members = app
        .get("/api/organizations/members")
        .cookie(&ada)
        .send()
        .await;
    let row = members.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "carol@example.com")
        .cloned()
        .expect("carol is a member");
    assert_eq!(row["role"], "editor");
    let res = app
        .get("/api/auth/get-session")
        .header("cookie", &cookie)
        .send()
        .await;
    assert_eq!(res.body["session"]["activeOrganizationId"], json!(org));

    // Signing in again finds the same account.
    let again = sign_in_as(&app, &provider, "carol@example.com").await;
    let again = who(&app, &session_cookie(&again)).await;
    assert_eq!(again["id"], carol["id"]);
}

async fn existing_accounts_link_by_verified_address_and_invitations_hold(url: String) {
    let (app, provider) = app_with_provider(&url).await;
    let (ada, _) = first_owner(&app).await;
    // Bob's domain may not sign up, but his account exists: the provider's verified address
    // links to it.
    let bob = member(&app, &ada, "Bob", "bob@partner.org", "viewer").await;
    let res = sign_in_as(&app, &provider, "bob@partner.org").await;
    assert_eq!(who(&app, &session_cookie(&res)).await["id"], bob.user["id"]);

    // An address the provider did not verify links to nothing and makes nothing.
    let res = sign_in_as(&app, &provider, "unverified-bob@partner.org").await;
    assert_eq!(refusal(&res), "unverified");
    let res = sign_in_as(&app, &provider, "unverified-dan@example.com").await;
    assert_eq!(refusal(&res), "unverified");

    // An invitation lets in an address whose domain may not sign up, with the invited role.
    let res = app
        .post(
            "/api/organizations/invitations",
            json!({"email": "frank@partner.org", "role": "viewer"}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let res = sign_in_as(&app, &provider, "frank@partner.org").await;
    let cookie = session_cookie(&res);
    let members = app
        .get("/api/organizations/members")
        .cookie(&ada)
        .send()
        .await;
    assert!(
        members.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["email"] == "frank@partner.org" && m["role"] == "viewer"),
        "{}",
        members.body
    );
    assert_eq!(who(&app, &cookie).await["email"], "frank@partner.org");

    // With two-factor sign-in on, the provider's word is not enough: the code is asked.
    let (authenticator, _) = enrol_and_confirm(&app, &ada).await;
    app.clock.advance_millis(30_000);
    let res = sign_in_as(&app, &provider, "ada@example.com").await;
    assert_eq!(res.status, StatusCode::SEE_OTHER, "{}", res.body);
    let location = res.header("location").unwrap();
    let (page, challenge) = location.split_once("#two-factor=").expect(location);
    assert_eq!(page, "/admin/sign-in?redirect=/admin/documents/post");
    let res = app
        .post(
            "/api/auth/two-factor",
            json!({"challenge": challenge, "code": authenticator.code(&app)}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["user"]["email"], "ada@example.com");
}

async fn refusals_land_on_the_sign_in_page(url: String) {
    let (app, provider) = app_with_provider(&url).await;
    first_owner(&app).await;
    let res = sign_in_as(&app, &provider, "eve@elsewhere.test").await;
    assert_eq!(refusal(&res), "domain");

    // Declined at the provider.
    let started = start(&app, "/admin").await;
    let back = Browser::default()
        .cancel(&provider.issuer, &started.authorization_url)
        .await;
    assert!(back.contains("error=access_denied"), "{back}");
    assert_eq!(
        refusal(&come_back(&app, &back, &started.flow_cookie).await),
        "denied"
    );

    // A return whose state was changed, or without the cookie of its start, or with another
    // start's cookie.
    let (started, back) = at_provider(&app, &provider, "/admin", "carol@example.com").await;
    let tampered = back.replacen("state=", "state=x", 1);
    assert_eq!(
        refusal(&come_back(&app, &tampered, &started.flow_cookie).await),
        "state"
    );
    assert_eq!(
        refusal(&come_back(&app, &back, "cms_oidc=v1:forged").await),
        "state"
    );
    let other = start(&app, "/admin").await;
    assert_eq!(
        refusal(&come_back(&app, &back, &other.flow_cookie).await),
        "state"
    );
    // The untouched return signs in once; its code does not work twice.
    let res = come_back(&app, &back, &started.flow_cookie).await;
    assert_eq!(res.status, StatusCode::SEE_OTHER);
    assert_eq!(res.header("location"), Some("/admin"));
    assert_eq!(
        refusal(&come_back(&app, &back, &started.flow_cookie).await),
        "code"
    );

    // Ten minutes later a started sign-in is over.
    let (started, back) = at_provider(&app, &provider, "/admin", "carol@example.com").await;
    app.clock.advance_millis(10 * 60_000 + 1_000);
    assert_eq!(
        refusal(&come_back(&app, &back, &started.flow_cookie).await),
        "state"
    );

    // Only configured providers; another site's address is never where a sign-in returns.
    let res = app.get("/api/auth/oidc/nope/start").send().await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let (started, back) =
        at_provider(&app, &provider, "https://evil.test/", "carol@example.com").await;
    let res = come_back(&app, &back, &started.flow_cookie).await;
    assert_eq!(res.header("location"), Some("/admin"));
}

cms_store::both_engines!(
    a_first_sign_in_makes_the_account_and_later_ones_find_it,
    existing_accounts_link_by_verified_address_and_invitations_hold,
    refusals_land_on_the_sign_in_page,
);
