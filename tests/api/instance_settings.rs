//! `/api/instance-settings` (CONTRACT.md sections 9 and 12): the sign-up policy, for instance
//! super admins, kept in the database.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{PASSWORD, Session, TestApp, config_for};

const PATH: &str = "/api/instance-settings";

async fn patch(app: &TestApp, session: &Session, body: Value) -> crate::support::Reply {
    app.req(Method::PATCH, PATH)
        .json(body)
        .cookie(session)
        .send()
        .await
}

async fn only_instance_super_admins_with_a_session_reach_them(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let root = app.sign_up("Root", "root@example.com").await;
    let editor = app.sign_up("Ed", "ed@example.com").await;

    let got = app.get(PATH).cookie(&root).send().await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    assert_eq!(
        got.body["data"],
        json!({
            "inviteOnly": false,
            "requireEmailVerification": false,
            "firstAdmin": "open",
            "firstAdminEmails": [],
        })
    );

    app.get(PATH)
        .cookie(&editor)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    patch(&app, &editor, json!({"inviteOnly": true}))
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // A key is bound to one organization; instance settings are above them all.
    let key = app
        .create_key(
            &root,
            json!({"name": "k", "permissions": ["write"], "capabilities": ["apiKey.manage"]}),
        )
        .await;
    app.get(PATH)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.get(PATH)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    // The Bearer session token is a session.
    let got = app.get(PATH).bearer(&root.token).send().await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    app.stop().await;
}

async fn saved_settings_decide_sign_up_and_outlive_restarts(url: String) {
    let config = config_for(&url);
    let app = TestApp::with(config.clone(), None).await;
    let root = app.sign_up("Root", "root@example.com").await;
    // Configuration says invite-only: a second sign-up is refused.
    let body = json!({"name": "Ed", "email": "ed@example.com", "password": PASSWORD});
    app.post("/api/auth/sign-up/email", body.clone())
        .send()
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");

    let saved = patch(&app, &root, json!({"inviteOnly": false})).await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    assert_eq!(saved.body["data"]["inviteOnly"], false);
    let res = app.post("/api/auth/sign-up/email", body).send().await;
    assert_eq!(
        res.status,
        StatusCode::OK,
        "the saved setting decides: {}",
        res.body
    );

    // Another instance on the same database, and a restart with another configuration: the
    // saved key stays; an unsaved key follows the new configuration.
    let mut changed = config.clone();
    changed.auth.first_admin = "none".into();
    let other = TestApp::with(changed, None).await;
    let got = other.get(PATH).cookie(&root).send().await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    assert_eq!(got.body["data"]["inviteOnly"], false);
    assert_eq!(got.body["data"]["firstAdmin"], "none");
    other.app.cms.store().close().await;

    // Saving more keys keeps the earlier ones; e-mails are normalised and deduplicated.
    let saved = patch(
        &app,
        &root,
        json!({"firstAdmin": "allowlist", "firstAdminEmails": ["Boss@Example.com", "boss@example.com"]}),
    )
    .await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    assert_eq!(
        saved.body["data"],
        json!({
            "inviteOnly": false,
            "requireEmailVerification": false,
            "firstAdmin": "allowlist",
            "firstAdminEmails": ["boss@example.com"],
        })
    );
    assert_eq!(app.get(PATH).cookie(&root).send().await.body, saved.body);

    // Saved verification applies to the next sign-up: a link is sent, no session is opened,
    // and sign-in waits for the link.
    let saved = patch(&app, &root, json!({"requireEmailVerification": true})).await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    let body = json!({"name": "Vi", "email": "vi@example.com", "password": PASSWORD});
    let res = app.post("/api/auth/sign-up/email", body).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["token"], Value::Null);
    assert_eq!(app.mail.sent().len(), 1);
    app.post(
        "/api/auth/sign-in/email",
        json!({"email": "vi@example.com", "password": PASSWORD}),
    )
    .send()
    .await
    .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

async fn bad_instance_settings_are_400_and_change_nothing(url: String) {
    let app = TestApp::start(&url).await;
    let root = app.sign_up("Root", "root@example.com").await;
    let before = app.get(PATH).cookie(&root).send().await.body;
    let cases = [
        (
            json!({"inviteOnly": false, "siteName": "x"}),
            "siteName",
            "unknown",
        ),
        (json!({"inviteOnly": "no"}), "inviteOnly", "type"),
        (
            json!({"requireEmailVerification": 1}),
            "requireEmailVerification",
            "type",
        ),
        (json!({"firstAdmin": "anyone"}), "firstAdmin", "type"),
        (json!({"firstAdmin": true}), "firstAdmin", "type"),
        (
            json!({"firstAdminEmails": "a@example.com"}),
            "firstAdminEmails",
            "type",
        ),
        (
            json!({"firstAdminEmails": ["a@example.com", 3]}),
            "firstAdminEmails[1]",
            "type",
        ),
        (
            json!({"firstAdminEmails": ["nobody"]}),
            "firstAdminEmails[0]",
            "format",
        ),
        (
            json!({"firstAdmin": "allowlist"}),
            "firstAdminEmails",
            "required",
        ),
    ];
    for (body, path, code) in cases {
        let res = patch(&app, &root, body.clone()).await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        let issues = res.body["issues"].as_array().expect("issues");
        assert!(
            issues
                .iter()
                .any(|i| i["path"] == path && i["code"] == code),
            "{body}: {}",
            res.body
        );
    }
    for body in [json!([]), json!("inviteOnly"), json!(null)] {
        patch(&app, &root, body)
            .await
            .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    let res = app
        .req(Method::PATCH, PATH)
        .raw("application/json", "{\"inviteOnly\":")
        .cookie(&root)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(app.get(PATH).cookie(&root).send().await.body, before);
    app.stop().await;
}

cms_store::both_engines!(
    only_instance_super_admins_with_a_session_reach_them,
    saved_settings_decide_sign_up_and_outlive_restarts,
    bad_instance_settings_are_400_and_change_nothing,
);
