//! Changing one's password while signed in, and one's sessions (CONTRACT.md section 20): the
//! current password is required and checked, the other sessions end with the change (unless
//! asked not to), reset links sent before stop working; the sessions are listed with this one
//! marked, and any of them can be ended, never another person's.

use axum::http::{Method, StatusCode};
use cms::service::MailKind;
use serde_json::{Value, json};

use crate::people_support::{first_owner, sign_in, token_of};
use crate::support::{PASSWORD, Reply, Session, TestApp, config_for};

const CHANGE: &str = "/api/user/change-password";
const SESSIONS: &str = "/api/user/sessions";
const NEW_PASSWORD: &str = "a brand new passphrase";

async fn change(app: &TestApp, s: &Session, body: Value) -> Reply {
    app.post(CHANGE, body).cookie(s).send().await
}

async fn sign_in_with(app: &TestApp, password: &str) -> Reply {
    app.post(
        "/api/auth/sign-in/email",
        json!({"email": "ada@example.com", "password": password}),
    )
    .send()
    .await
}

/// Whether `s` still proves a session (401 once it ended; anything else is a failure).
pub(crate) async fn signed_in(app: &TestApp, s: &Session) -> bool {
    let res = app.get(SESSIONS).bearer(&s.token).send().await;
    match res.status {
        StatusCode::OK => true,
        StatusCode::UNAUTHORIZED => false,
        other => panic!("{other}: {}", res.body),
    }
}

async fn a_password_change_needs_the_current_one_and_ends_the_other_sessions(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let laptop = sign_in(&app, "ada@example.com").await;
    let phone = sign_in(&app, "ada@example.com").await;

    // What is missing or too short is named; a wrong current password is refused as sign-ins'
    // wrong passwords are, and counted like them.
    let res = change(&app, &ada, json!({})).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let paths: Vec<&str> = res.body["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["currentPassword", "newPassword"]);
    let res = change(
        &app,
        &ada,
        json!({"currentPassword": PASSWORD, "newPassword": "short"}),
    )
    .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "newPassword");
    let res = change(
        &app,
        &ada,
        json!({"currentPassword": "not my password", "newPassword": NEW_PASSWORD}),
    )
    .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = change(
        &app,
        &ada,
        json!({"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD, "also": 1}),
    )
    .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // An API key acts for its creator in one organization; it never changes their password.
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["write"]}))
        .await;
    let res = app
        .post(
            CHANGE,
            json!({"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}),
        )
        .key(&key)
        .send()
        .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    assert_eq!(sign_in_with(&app, PASSWORD).await.status, StatusCode::OK);

    // A reset link asked for before the change stops working with it.
    let res = app
        .post(
            "/api/user/request-password-reset",
            json!({"email": "ada@example.com"}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let link = app
        .mail
        .last(MailKind::PasswordReset, "ada@example.com")
        .await
        .link;

    let res = change(
        &app,
        &ada,
        json!({"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // The two other sessions, and the one the sign-in check above opened.
    assert_eq!(res.body["data"]["revokedSessions"], 3, "{}", res.body);
    assert!(
        signed_in(&app, &ada).await,
        "the session that changed it stays"
    );
    assert!(!signed_in(&app, &laptop).await && !signed_in(&app, &phone).await);
    assert_eq!(
        sign_in_with(&app, PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    let res = app
        .post(
            "/api/user/reset-password",
            json!({"token": token_of(&link), "newPassword": "yet another passphrase"}),
        )
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    // Asked to, the other sessions stay.
    let tablet = Session::from(&sign_in_with(&app, NEW_PASSWORD).await);
    let res = change(
        &app,
        &ada,
        json!({"currentPassword": NEW_PASSWORD, "newPassword": PASSWORD, "revokeOtherSessions": false}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["revokedSessions"], 0);
    assert!(signed_in(&app, &tablet).await);
    assert_eq!(sign_in_with(&app, PASSWORD).await.status, StatusCode::OK);
    app.stop().await;
}

async fn sessions_are_listed_and_ended_one_by_one(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let (ada, _) = first_owner(&app).await;
    let res = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com", "password": PASSWORD}),
        )
        .header("user-agent", "Phone Browser 1.0")
        .send()
        .await;
    let phone = Session::from(&res);
    let bob = app.sign_up("Bob", "bob@example.com").await;

    let res = app.get(SESSIONS).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let listed = res.body["data"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 2, "{}", res.body);
    let current: Vec<&Value> = listed.iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1, "exactly this session is current");
    let other = listed.iter().find(|s| s["current"] == false).unwrap();
    assert_eq!(other["userAgent"], "Phone Browser 1.0");
    for session in &listed {
        for key in ["id", "createdAt", "lastSeenAt"] {
            assert!(session[key].is_string(), "{key}: {session}");
        }
    }
    let phone_id = other["id"].as_str().unwrap().to_string();

    // Another person's session is no session of theirs; a key sees none.
    let res = app
        .req(Method::DELETE, &format!("{SESSIONS}/{phone_id}"))
        .cookie(&bob)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    assert!(signed_in(&app, &phone).await);
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;
    app.get(SESSIONS)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let bobs = app.get(SESSIONS).cookie(&bob).send().await;
    assert_eq!(bobs.body["data"].as_array().unwrap().len(), 1);
    assert!(!bobs.body.to_string().contains(&phone_id));

    // Ada ends her phone's session; then this one (which signs this client out).
    let res = app
        .req(Method::DELETE, &format!("{SESSIONS}/{phone_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!({"id": phone_id, "revoked": true}));
    assert!(!signed_in(&app, &phone).await);
    app.req(Method::DELETE, &format!("{SESSIONS}/{phone_id}"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let own = current[0]["id"].as_str().unwrap();
    let res = app
        .req(Method::DELETE, &format!("{SESSIONS}/{own}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(!signed_in(&app, &ada).await);
    app.stop().await;
}

cms_store::both_engines!(
    a_password_change_needs_the_current_one_and_ends_the_other_sessions,
    sessions_are_listed_and_ended_one_by_one,
);
