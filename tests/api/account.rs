//! The caller's own account: profile, editor preferences, password reset and e-mail
//! verification (SPEC.md "User account", CONTRACT.md section 3).

use axum::http::{Method, StatusCode};
use cms::service::MailKind;
use serde_json::{Value, json};

use crate::people_support::{active_org, first_owner, invite, sign_in, token_of};
use crate::support::{PASSWORD, Session, TestApp, config_for};

const PREFS: &str = "/api/user/cms-preference";
const NEW_PASSWORD: &str = "a brand new passphrase";

async fn patch_user(app: &TestApp, s: &Session, body: Value) -> crate::support::Reply {
    app.req(Method::PATCH, "/api/user")
        .cookie(s)
        .json(body)
        .send()
        .await
}

async fn sign_in_with(app: &TestApp, email: &str, password: &str) -> crate::support::Reply {
    app.post(
        "/api/auth/sign-in/email",
        json!({"email": email, "password": password}),
    )
    .send()
    .await
}

fn verifying_config(url: &str) -> cms::Config {
    let mut config = config_for(url);
    config.auth.require_email_verification = true;
    config
}

async fn updating_the_profile(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let (ada, _) = first_owner(&app).await;
    app.sign_up("Bob", "bob@example.com").await;

    let res = patch_user(&app, &ada, json!({"name": "  Ada Lovelace "})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["name"], "Ada Lovelace");
    assert_eq!(res.body["data"]["email"], "ada@example.com");
    let got = app.get("/api/auth/get-session").cookie(&ada).send().await;
    assert_eq!(got.body["user"]["name"], "Ada Lovelace");

    // A new address: taken ones are 422 (as at sign-up), bad ones 400.
    let with_password = |email: &str| json!({"email": email, "currentPassword": PASSWORD});
    patch_user(&app, &ada, with_password("BOB@example.com"))
        .await
        .assert_handler_error(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Entity");
    let res = patch_user(&app, &ada, json!({"email": "nope"})).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "email");
    patch_user(&app, &ada, json!({}))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    patch_user(&app, &ada, json!({"name": ""}))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // The session stays whatever the profile says.
    assert!(active_org(&app, &ada).await.is_some());
    // Keys cannot change the person who made them.
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;
    app.req(Method::PATCH, "/api/user")
        .key(&key)
        .json(json!({"name": "Mallory"}))
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::PATCH, "/api/user")
        .json(json!({"name": "Nobody"}))
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn preferences_merge_top_level_keys(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let (ada, _) = first_owner(&app).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;

    let got = app.get(PREFS).cookie(&ada).send().await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.body["data"], json!({}));
    let patch = |s: &Session, body: Value| app.req(Method::PATCH, PREFS).cookie(s).json(body);
    let res = patch(&ada, json!({"theme": "dark", "panels": {"a": 1}}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"],
        json!({"theme": "dark", "panels": {"a": 1}})
    );
    // Top-level keys are replaced, not deep-merged; `null` removes a key.
    let res = patch(
        &ada,
        json!({"panels": {"b": 2}, "theme": null, "lang": "en"}),
    )
    .send()
    .await;
    assert_eq!(res.body["data"], json!({"panels": {"b": 2}, "lang": "en"}));
    let got = app.get(PREFS).cookie(&ada).send().await;
    assert_eq!(got.body["data"], json!({"panels": {"b": 2}, "lang": "en"}));
    // Everyone has their own.
    assert_eq!(
        app.get(PREFS).cookie(&bob).send().await.body["data"],
        json!({})
    );

    for bad in [json!([1, 2]), json!("dark"), json!({"x": "\u{0}"})] {
        patch(&ada, bad.clone())
            .send()
            .await
            .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    patch(&ada, json!({"big": "x".repeat(70 * 1024)}))
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(
        app.get(PREFS).cookie(&ada).send().await.body["data"],
        json!({"panels": {"b": 2}, "lang": "en"}),
        "refused patches change nothing"
    );
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;
    app.get(PREFS)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.get(PREFS)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn request_reset(app: &TestApp, email: &str) -> crate::support::Reply {
    app.post("/api/user/request-password-reset", json!({"email": email}))
        .send()
        .await
}

async fn reset(app: &TestApp, token: &str, password: &str) -> crate::support::Reply {
    app.post(
        "/api/user/reset-password",
        json!({"token": token, "newPassword": password}),
    )
    .send()
    .await
}

async fn a_password_reset_revokes_every_session_and_works_once(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let other = sign_in(&app, "ada@example.com").await;

    let res = request_reset(&app, "ADA@example.com").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let mail = app
        .mail
        .last(MailKind::PasswordReset, "ada@example.com")
        .await;
    assert!(
        mail.link
            .starts_with("http://127.0.0.1:3000/admin/reset-password?token="),
        "{}",
        mail.link
    );
    let token = token_of(&mail.link);
    // An unknown address gets the very same answer, and no e-mail.
    let unknown = request_reset(&app, "eve@example.com").await;
    assert_eq!((unknown.status, &unknown.body), (res.status, &res.body));
    request_reset(&app, "not an address")
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    // The new password is checked first; a bad token is 400.
    let res = reset(&app, &token, "short").await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "newPassword");
    reset(&app, "not-a-token", NEW_PASSWORD)
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.post("/api/user/reset-password", json!({}))
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    let res = reset(&app, &token, NEW_PASSWORD).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // Every session of the account is revoked.
    for session in [&ada, &other] {
        let got = app
            .get("/api/auth/get-session")
            .cookie(session)
            .send()
            .await;
        assert_eq!(got.body, Value::Null);
        app.get("/api/organizations")
            .bearer(&session.token)
            .send()
            .await
            .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    assert_eq!(
        sign_in_with(&app, "ada@example.com", PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    let res = sign_in_with(&app, "ada@example.com", NEW_PASSWORD).await;
    assert_eq!(res.status, StatusCode::OK);
    // The link reached the address, so it counts as verified.
    assert_eq!(res.body["user"]["emailVerified"], true);
    // Once only.
    reset(&app, &token, "yet another passphrase")
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(
        sign_in_with(&app, "ada@example.com", NEW_PASSWORD)
            .await
            .status,
        StatusCode::OK
    );
    app.stop().await;
}

async fn a_reset_token_expires_after_an_hour(url: String) {
    let app = TestApp::start(&url).await;
    first_owner(&app).await;
    request_reset(&app, "ada@example.com").await;
    let late = token_of(
        &app.mail
            .nth(MailKind::PasswordReset, "ada@example.com", 0)
            .await
            .link,
    );
    app.clock.advance_millis(61 * 60_000);
    reset(&app, &late, NEW_PASSWORD)
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // A fresh one works within the hour.
    request_reset(&app, "ada@example.com").await;
    let fresh = token_of(
        &app.mail
            .nth(MailKind::PasswordReset, "ada@example.com", 1)
            .await
            .link,
    );
    assert_ne!(fresh, late);
    app.clock.advance_millis(59 * 60_000);
    assert_eq!(
        reset(&app, &fresh, NEW_PASSWORD).await.status,
        StatusCode::OK
    );
    app.stop().await;
}

/// The address the session's user has now, and whether it is verified.
async fn current_email(app: &TestApp, s: &Session) -> (Value, Value) {
    let got = app.get("/api/auth/get-session").cookie(s).send().await;
    (
        got.body["user"]["email"].clone(),
        got.body["user"]["emailVerified"].clone(),
    )
}

/// CONTRACT.md section 13: an e-mail change needs the current password and takes effect only
/// when the new address answers.
async fn changing_the_email_needs_the_password_and_the_new_mailbox(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let (ada, _) = first_owner(&app).await;

    // Without the password: 400 naming it; with a wrong one: 403; nothing sent either way.
    let res = patch_user(&app, &ada, json!({"email": "ada@lovelace.org"})).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "currentPassword");
    patch_user(
        &app,
        &ada,
        json!({"email": "ada@lovelace.org", "currentPassword": "not the password"}),
    )
    .await
    .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    assert!(
        app.mail
            .to(MailKind::EmailVerification, "ada@lovelace.org")
            .is_empty()
    );

    // With it: 200, the e-mail unchanged, a link on its way to the new address.
    let res = patch_user(
        &app,
        &ada,
        json!({"email": "Ada@Lovelace.org", "currentPassword": PASSWORD, "name": "Ada L"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["email"], "ada@example.com");
    assert_eq!(
        res.body["data"]["name"], "Ada L",
        "the name changes at once"
    );
    assert_eq!(
        current_email(&app, &ada).await,
        (json!("ada@example.com"), json!(false))
    );
    assert_eq!(
        sign_in_with(&app, "ada@lovelace.org", PASSWORD)
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    let link = app
        .mail
        .last(MailKind::EmailVerification, "ada@lovelace.org")
        .await
        .link;
    let path = link
        .strip_prefix("http://127.0.0.1:3000")
        .unwrap()
        .to_string();
    request_reset(&app, "ada@example.com").await;
    let reset_token = token_of(
        &app.mail
            .last(MailKind::PasswordReset, "ada@example.com")
            .await
            .link,
    );
    let res = app.get(&path).send().await;
    assert_eq!(res.status, StatusCode::FOUND, "{}", res.body);
    // The old address's links stop working.
    reset(&app, &reset_token, NEW_PASSWORD)
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // Followed: the account moved to the new address, verified; the old one signs in no more.
    assert_eq!(
        current_email(&app, &ada).await,
        (json!("ada@lovelace.org"), json!(true))
    );
    assert_eq!(
        sign_in_with(&app, "ada@lovelace.org", PASSWORD)
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        sign_in_with(&app, "ada@example.com", PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    // A link works once.
    app.get(&path)
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    // An address taken by another account before the link is followed: refused, nothing
    // changed.
    let res = patch_user(
        &app,
        &ada,
        json!({"email": "carol@example.com", "currentPassword": PASSWORD}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let link = app
        .mail
        .last(MailKind::EmailVerification, "carol@example.com")
        .await
        .link;
    app.sign_up("Carol", "carol@example.com").await;
    app.get(link.strip_prefix("http://127.0.0.1:3000").unwrap())
        .send()
        .await
        .assert_handler_error(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Entity");
    assert_eq!(
        current_email(&app, &ada).await,
        (json!("ada@lovelace.org"), json!(true))
    );
    app.stop().await;
}

async fn email_verification_blocks_sign_in_until_the_link_is_followed(url: String) {
    let app = TestApp::with(verifying_config(&url), None).await;
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": "Ada", "email": "ada@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    // Signed up, but no session until the address is proven (better-auth's `token: null`).
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["token"], Value::Null);
    assert_eq!(res.body["user"]["emailVerified"], false);
    assert_eq!(res.body["user"]["role"], "super_admin");
    assert!(res.headers.get("set-cookie").is_none());
    let mail = app
        .mail
        .last(MailKind::EmailVerification, "ada@example.com")
        .await;
    assert!(
        mail.link
            .starts_with("http://127.0.0.1:3000/api/auth/verify-email?token="),
        "{}",
        mail.link
    );
    assert!(
        mail.link.ends_with("&callbackURL=%2Fadmin"),
        "{}",
        mail.link
    );
    let first_token = token_of(&mail.link);

    // Sign-in is refused (after the password is checked) and sends a new link.
    let wrong = sign_in_with(&app, "ada@example.com", "not the password").await;
    wrong.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    let res = sign_in_with(&app, "ada@example.com", PASSWORD).await;
    let message = res.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    assert!(message.contains("verify"), "{message}");
    assert!(res.headers.get("set-cookie").is_none());
    assert_eq!(
        app.mail
            .to(MailKind::EmailVerification, "ada@example.com")
            .len(),
        2
    );

    // Following the link verifies the address, once.
    let res = app
        .get(&format!("/api/auth/verify-email?token={first_token}"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["emailVerified"], true);
    app.get(&format!("/api/auth/verify-email?token={first_token}"))
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.get("/api/auth/verify-email")
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = sign_in_with(&app, "ada@example.com", PASSWORD).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["user"]["emailVerified"], true);
    let ada = Session::from(&res);
    assert!(active_org(&app, &ada).await.is_some(), "Default is active");

    // A sign-up with an invited address but without the invitation's secret is verified the
    // same way; it joins nothing, and the verified address may then accept the invitation.
    let invitation = invite(&app, &ada, "bob@example.com", "editor").await;
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": "Bob", "email": "bob@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(
        (res.status, &res.body["token"]),
        (StatusCode::OK, &Value::Null)
    );
    let link = app
        .mail
        .last(MailKind::EmailVerification, "bob@example.com")
        .await
        .link;
    let path = link.strip_prefix("http://127.0.0.1:3000").unwrap();
    // The link as mailed redirects to the admin.
    let res = app.get(path).send().await;
    assert_eq!(res.status, StatusCode::FOUND, "{}", res.body);
    assert_eq!(res.headers["location"], "/admin");
    let bob = sign_in(&app, "bob@example.com").await;
    let orgs = app.get("/api/organizations").cookie(&bob).send().await;
    assert_eq!(orgs.body["data"], json!([]), "{}", orgs.body);
    let accept = format!(
        "/api/organizations/invitations/{}/accept",
        invitation["id"].as_str().unwrap()
    );
    let res = app.post(&accept, json!({})).cookie(&bob).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let orgs = app.get("/api/organizations").cookie(&bob).send().await;
    assert_eq!(orgs.body["data"][0]["role"], "editor", "{}", orgs.body);

    // With the secret, an invited sign-up is verified by it: signed in at once, no link.
    let invitation = invite(&app, &ada, "cleo@example.com", "viewer").await;
    let res = crate::people_support::sign_up_invited(
        &app,
        "Cleo",
        "cleo@example.com",
        &crate::people_support::invitation_token(&invitation),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(res.body["token"].is_string(), "{}", res.body);
    assert_eq!(res.body["user"]["emailVerified"], true);
    assert!(
        app.mail
            .to(MailKind::EmailVerification, "cleo@example.com")
            .is_empty()
    );
    app.stop().await;
}

async fn verification_links_expire_and_redirect_only_to_the_instance(url: String) {
    let mut config = verifying_config(&url);
    config.server.public_url = Some("https://cms.example.com".into());
    let app = TestApp::with(config, None).await;
    app.post(
        "/api/auth/sign-up/email",
        json!({"name": "Ada", "email": "ada@example.com", "password": PASSWORD}),
    )
    .send()
    .await;
    let token = token_of(
        &app.mail
            .last(MailKind::EmailVerification, "ada@example.com")
            .await
            .link,
    );
    let verify = |query: String| app.get(&format!("/api/auth/verify-email?{query}"));

    // Anything but a path of the instance is refused before the token is used: another
    // origin, and an absolute URL even on the instance's own origin.
    for evil in [
        "https%3A%2F%2Fevil.example%2Fadmin",
        "%2F%2Fevil.example",
        "%2F%09%2Fevil.example",
        "https%3A%2F%2Fcms.example.com%40evil.example",
        "https%3A%2F%2Fcms.example.com%2Fadmin",
    ] {
        let res = verify(format!("token={token}&callbackURL={evil}"))
            .send()
            .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert!(res.headers.get("location").is_none());
    }
    // A path of the instance is fine.
    let res = verify(format!("token={token}&callbackURL=%2Fadmin%3Fwelcome%3D1"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FOUND, "{}", res.body);
    assert_eq!(res.headers["location"], "/admin?welcome=1");

    let res = sign_in_with(&app, "ada@example.com", PASSWORD).await;
    assert_eq!(
        res.status,
        StatusCode::OK,
        "verified by the redirecting link"
    );
    app.stop().await;
}

async fn a_verification_link_expires_after_a_day(url: String) {
    let app = TestApp::with(verifying_config(&url), None).await;
    app.post(
        "/api/auth/sign-up/email",
        json!({"name": "Ada", "email": "ada@example.com", "password": PASSWORD}),
    )
    .send()
    .await;
    let token = token_of(
        &app.mail
            .last(MailKind::EmailVerification, "ada@example.com")
            .await
            .link,
    );
    app.clock.advance_millis(24 * 3_600_000 + 60_000);
    app.get(&format!("/api/auth/verify-email?token={token}"))
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    sign_in_with(&app, "ada@example.com", PASSWORD)
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    // The link sent by that sign-in attempt is fresh and works.
    let fresh = token_of(
        &app.mail
            .last(MailKind::EmailVerification, "ada@example.com")
            .await
            .link,
    );
    assert_ne!(fresh, token);
    let res = app
        .get(&format!("/api/auth/verify-email?token={fresh}"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        sign_in_with(&app, "ada@example.com", PASSWORD).await.status,
        StatusCode::OK
    );
    app.stop().await;
}

cms_store::both_engines!(
    updating_the_profile,
    preferences_merge_top_level_keys,
    a_password_reset_revokes_every_session_and_works_once,
    a_reset_token_expires_after_an_hour,
    email_verification_blocks_sign_in_until_the_link_is_followed,
    verification_links_expire_and_redirect_only_to_the_instance,
    a_verification_link_expires_after_a_day,
    changing_the_email_needs_the_password_and_the_new_mailbox,
);
