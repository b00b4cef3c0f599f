//! Identity lifecycle: sign-out, password reset, member removal and role change take effect
//! on the very next request, for every session and API key they affect.

use axum::http::{Method, StatusCode};
use cms::service::MailKind;
use serde_json::json;

use crate::people_support::{create_post, first_owner, member, sign_in, token_of, user_id};
use crate::support::{Session, TestApp};

const DOCS: &str = "/api/documents";

/// Bob, an admin of Ada's organization (so that he may create API keys), signed in twice, with
/// a read-write key.
async fn admin_bob(app: &TestApp, ada: &Session) -> (Session, Session, String) {
    let bob = member(app, ada, "Bob", "bob@example.com", "admin").await;
    let bob_again = sign_in(app, "bob@example.com").await;
    let key = app
        .create_key(
            &bob,
            json!({"name": "bob's", "permissions": ["read", "write"]}),
        )
        .await;
    (bob, bob_again, key)
}

async fn signing_out_ends_that_session_on_the_next_request(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let other = sign_in(&app, "ada@example.com").await;
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).cookie(&ada)).await,
        StatusCode::CREATED
    );
    app.req(Method::POST, "/api/auth/sign-out")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).cookie(&ada)).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).bearer(&ada.token)).await,
        StatusCode::UNAUTHORIZED
    );
    // Only that session: another one of the same person goes on.
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).cookie(&other)).await,
        StatusCode::CREATED
    );
    app.stop().await;
}

async fn a_password_reset_ends_every_session_on_the_next_request(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let (bob, bob_again, key) = admin_bob(&app, &ada).await;
    app.post(
        "/api/user/request-password-reset",
        json!({"email": "bob@example.com"}),
    )
    .send()
    .await;
    let token = token_of(
        &app.mail
            .last(MailKind::PasswordReset, "bob@example.com")
            .await
            .link,
    );
    let res = app
        .post(
            "/api/user/reset-password",
            json!({"token": token, "newPassword": "a brand new passphrase"}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    for session in [&bob, &bob_again] {
        assert_eq!(
            create_post(app.req(Method::POST, DOCS).cookie(session)).await,
            StatusCode::UNAUTHORIZED
        );
    }
    // Keys are not sessions: the reset leaves them (delete a key to revoke it).
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).key(&key)).await,
        StatusCode::CREATED
    );
    // Other people's sessions are untouched.
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).cookie(&ada)).await,
        StatusCode::CREATED
    );
    app.stop().await;
}

async fn removal_ends_access_on_the_next_request(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let (bob, bob_again, key) = admin_bob(&app, &ada).await;
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).cookie(&bob)).await,
        StatusCode::CREATED
    );
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).key(&key)).await,
        StatusCode::CREATED
    );

    let res = app
        .req(Method::DELETE, "/api/organizations/members")
        .cookie(&ada)
        .json(json!({"userId": user_id(&bob)}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // Every session of Bob's that had the organization active: still signed in, no access.
    for session in [&bob, &bob_again] {
        assert_eq!(
            create_post(app.req(Method::POST, DOCS).cookie(session)).await,
            StatusCode::FORBIDDEN
        );
        app.get("/api/documents?type=post")
            .cookie(session)
            .send()
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    // His key stops working altogether.
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).key(&key)).await,
        StatusCode::UNAUTHORIZED
    );
    // Switching back in is refused: he is no member any more.
    let org = crate::people_support::active_org(&app, &ada).await.unwrap();
    app.post("/api/organizations/switch", json!({"organizationId": org}))
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

async fn a_role_change_applies_on_the_next_request(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    // An admin, so that he may create API keys.
    let bob = member(&app, &ada, "Bob", "bob@example.com", "admin").await;
    let key = app
        .create_key(
            &bob,
            json!({"name": "bob's", "permissions": ["read", "write"]}),
        )
        .await;
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).cookie(&bob)).await,
        StatusCode::CREATED
    );
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).key(&key)).await,
        StatusCode::CREATED
    );

    let res = app
        .req(Method::PATCH, "/api/organizations/members")
        .cookie(&ada)
        .json(json!({"userId": user_id(&bob), "role": "viewer"}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // The session and the key are both clamped to what a viewer holds.
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).cookie(&bob)).await,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).key(&key)).await,
        StatusCode::FORBIDDEN
    );
    let read = app.get("/api/documents?type=post").key(&key).send().await;
    assert_eq!(
        read.status,
        StatusCode::OK,
        "reading is still within a viewer's role"
    );

    // Promoted again: the same key writes again, without being re-created.
    app.req(Method::PATCH, "/api/organizations/members")
        .cookie(&ada)
        .json(json!({"userId": user_id(&bob), "role": "admin"}))
        .send()
        .await;
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).key(&key)).await,
        StatusCode::CREATED
    );
    assert_eq!(
        create_post(app.req(Method::POST, DOCS).cookie(&bob)).await,
        StatusCode::CREATED
    );
    app.stop().await;
}

cms_store::both_engines!(
    signing_out_ends_that_session_on_the_next_request,
    a_password_reset_ends_every_session_on_the_next_request,
    removal_ends_access_on_the_next_request,
    a_role_change_applies_on_the_next_request,
);
