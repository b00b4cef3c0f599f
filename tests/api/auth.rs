//! Sign-up, sign-in, sessions and sign-out (CONTRACT.md section 3).

use axum::http::{Method, StatusCode};
use cms::core::{BuiltInRole, CapabilitySet};
use serde_json::json;

use crate::support::{PASSWORD, Session, TestApp, config_for};

async fn the_first_sign_up_becomes_super_admin_and_owner_of_default(url: String) {
    let app = TestApp::start(&url).await;
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": "Ada", "email": "Ada@Example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["user"]["role"], "super_admin");
    assert_eq!(res.body["user"]["email"], "ada@example.com");
    assert_eq!(res.body["user"]["emailVerified"], false);
    assert!(
        res.body["user"].get("passwordHash").is_none()
            && res.body["user"].get("password_hash").is_none()
    );
    let cookie = res.headers["set-cookie"].to_str().unwrap();
    assert!(cookie.starts_with("cms_session="), "{cookie}");
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=604800"] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    assert!(
        !cookie.contains("Secure"),
        "plain http is not Secure: {cookie}"
    );
    let session = Session::from(&res);

    // The session's active organization is the new "Default" organization.
    let got = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.body["user"]["id"], session.user["id"]);
    let org_id = got.body["session"]["activeOrganizationId"]
        .as_str()
        .expect("an active organization")
        .to_string();

    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let org = tx.organization_by_id(&org_id).await.unwrap().unwrap();
    assert_eq!(
        (org.name.as_str(), org.slug.as_str()),
        ("Default", "default")
    );
    let user_id = session.user["id"].as_str().unwrap();
    assert_eq!(
        tx.member(&org_id, user_id).await.unwrap().unwrap().role,
        "owner"
    );
    // The built-in roles are seeded with the capabilities of CONTRACT.md sections 12 and 15
    // (`public` with none).
    let roles = tx.roles(&org_id).await.unwrap();
    assert_eq!(roles.len(), BuiltInRole::ALL.len());
    for role in BuiltInRole::ALL {
        let stored = roles
            .iter()
            .find(|r| r.name == role.name())
            .expect("seeded");
        assert!(stored.is_built_in);
        assert_eq!(
            stored.capabilities.0,
            role.seed(&CapabilitySet::all_core()).to_strings(),
            "{}",
            role.name()
        );
    }
    drop(tx);
    app.stop().await;
}

async fn the_bearer_token_works_like_the_cookie(url: String) {
    let app = TestApp::start(&url).await;
    let session = app.sign_up("Ada", "ada@example.com").await;
    let got = app
        .get("/api/auth/get-session")
        .bearer(&session.token)
        .send()
        .await;
    assert_eq!(got.body["user"]["email"], "ada@example.com");
    // The raw token is not a valid cookie: cookies must carry the signature.
    let got = app
        .get("/api/auth/get-session")
        .header("cookie", &format!("cms_session={}", session.token))
        .send()
        .await;
    assert_eq!(got.body, serde_json::Value::Null);
    // A tampered signature is refused.
    let tampered = format!("{}x", session.cookie);
    let got = app
        .get("/api/auth/get-session")
        .header("cookie", &tampered)
        .send()
        .await;
    assert_eq!(got.body, serde_json::Value::Null);
    app.stop().await;
}

async fn get_session_is_null_when_signed_out(url: String) {
    let app = TestApp::start(&url).await;
    let got = app.get("/api/auth/get-session").send().await;
    assert_eq!(
        (got.status, got.body.clone()),
        (StatusCode::OK, serde_json::Value::Null)
    );
    app.stop().await;
}

async fn a_second_sign_up_is_refused_while_invite_only(url: String) {
    let app = TestApp::start(&url).await;
    app.sign_up("Ada", "ada@example.com").await;
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": "Bob", "email": "bob@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    assert!(message.contains("invitation"), "{message}");
    assert!(res.headers.get("set-cookie").is_none());
    // Policy is checked before the e-mail: no account enumeration through sign-up.
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": "Ada", "email": "ada@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    res.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    // And the refused address cannot sign in: nothing was created.
    let res = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "bob@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn open_sign_up_makes_editors_without_an_organization(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    app.sign_up("Ada", "ada@example.com").await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    assert_eq!(bob.user["role"], "editor");
    let got = app.get("/api/auth/get-session").cookie(&bob).send().await;
    assert_eq!(
        got.body["session"]["activeOrganizationId"],
        serde_json::Value::Null
    );
    // An existing e-mail is 422, whatever its capitalisation.
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": "Ada", "email": "ADA@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Entity");
    app.stop().await;
}

async fn sign_up_input_is_validated_with_issues(url: String) {
    let app = TestApp::start(&url).await;
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": " ", "email": "not-an-email", "password": "short"}),
        )
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let paths: Vec<_> = res.body["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec!["name", "email", "password"]);
    assert_eq!(res.body["issues"][0]["code"], "required");
    let res = app.post("/api/auth/sign-up/email", json!({})).send().await;
    assert_eq!(res.body["issues"].as_array().unwrap().len(), 3);
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": "A", "email": "a@b.co", "password": "x".repeat(129)}),
        )
        .send()
        .await;
    assert_eq!(res.body["issues"][0]["path"], "password");
    // Validation comes before policy, and nothing was stored: the first sign-up is still open.
    app.sign_up("Ada", "ada@example.com").await;
    app.stop().await;
}

async fn sign_in_checks_the_password(url: String) {
    let app = TestApp::start(&url).await;
    app.sign_up("Ada", "ada@example.com").await;
    let wrong = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com", "password": "wrong password"}),
        )
        .send()
        .await;
    wrong.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    assert!(wrong.headers.get("set-cookie").is_none());
    let unknown = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "eve@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    // The same answer for an unknown account: no enumeration.
    assert_eq!(unknown.body, wrong.body);
    let missing = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com"}),
        )
        .send()
        .await;
    missing.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    let ok = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ADA@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    let session = Session::from(&ok);
    let got = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    assert_eq!(got.body["user"]["email"], "ada@example.com");
    assert!(
        got.body["session"]["activeOrganizationId"].is_string(),
        "sign-in activates the user's organization"
    );
    app.stop().await;
}

async fn sign_out_revokes_the_session_server_side(url: String) {
    let app = TestApp::start(&url).await;
    let session = app.sign_up("Ada", "ada@example.com").await;
    let other = Session::from(
        &app.post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com", "password": PASSWORD}),
        )
        .send()
        .await,
    );
    let res = app
        .req(Method::POST, "/api/auth/sign-out")
        .cookie(&session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert!(
        res.headers["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    // A copy of the cookie and the bearer token are both dead now.
    let got = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    assert_eq!(got.body, serde_json::Value::Null);
    let got = app
        .get("/api/auth/get-session")
        .bearer(&session.token)
        .send()
        .await;
    assert_eq!(got.body, serde_json::Value::Null);
    // Another session of the same user is unaffected.
    let got = app.get("/api/auth/get-session").cookie(&other).send().await;
    assert_eq!(got.body["user"]["email"], "ada@example.com");
    app.stop().await;
}

async fn sessions_expire_and_slide(url: String) {
    let app = TestApp::start(&url).await;
    let session = app.sign_up("Ada", "ada@example.com").await;
    // Used within a day: no refresh is written or sent.
    let res = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    assert!(res.headers.get("set-cookie").is_none());
    // Used after three days: the lifetime slides forward and the cookie is sent again.
    app.clock.advance_days(3);
    let res = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    assert_eq!(res.body["user"]["email"], "ada@example.com");
    assert!(
        res.headers["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=604800")
    );
    // Six more days: still valid thanks to the slide (9 days after sign-in).
    app.clock.advance_days(6);
    let res = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    assert_eq!(res.body["user"]["email"], "ada@example.com");
    // Unused for more than seven days: expired.
    app.clock.advance_days(8);
    let res = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    assert_eq!(res.body, serde_json::Value::Null);
    app.stop().await;
}

async fn rotating_the_auth_secret_invalidates_sessions_and_keys(url: String) {
    let config = config_for(&url);
    let app = TestApp::with(config.clone(), None).await;
    let session = app.sign_up("Ada", "ada@example.com").await;
    let key = app
        .create_key(&session, json!({"name": "ci", "permissions": ["read"]}))
        .await;
    app.app.cms.store().close().await;

    let mut rotated = config;
    rotated.auth.secret = Some("another secret, also thirty-two characters long".into());
    let app = TestApp::with(rotated, None).await;
    assert_eq!(
        app.get("/api/auth/get-session")
            .cookie(&session)
            .send()
            .await
            .body,
        serde_json::Value::Null
    );
    assert_eq!(
        app.get("/api/auth/get-session")
            .bearer(&session.token)
            .send()
            .await
            .body,
        serde_json::Value::Null
    );
    app.get("/api/settings/api-keys")
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn the_owner_role_is_reconciled_at_boot(url: String) {
    let config = config_for(&url);
    let app = TestApp::with(config.clone(), None).await;
    let session = app.sign_up("Ada", "ada@example.com").await;
    let got = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    let org_id = got.body["session"]["activeOrganizationId"]
        .as_str()
        .unwrap()
        .to_string();
    // Simulate an owner row that lags behind (an older version, a capability added since).
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    tx.reconcile_owner_roles(&["document.read".to_string()], 0)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    app.app.cms.store().close().await;

    let app = TestApp::with(config, None).await;
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let owner = tx.role(&org_id, "owner").await.unwrap().unwrap();
    assert_eq!(owner.capabilities.0, CapabilitySet::all_core().to_strings());
    drop(tx);
    app.stop().await;
}

async fn concurrent_first_sign_ups_make_exactly_one_super_admin(url: String) {
    let app = std::sync::Arc::new(TestApp::start(&url).await);
    let attempts: Vec<_> = (0..6)
        .map(|i| {
            let app = app.clone();
            tokio::spawn(async move {
                let body = json!({"name": format!("U{i}"), "email": format!("u{i}@example.com"), "password": PASSWORD});
                let res = app.post("/api/auth/sign-up/email", body).send().await;
                (res.status, res.body)
            })
        })
        .collect();
    let mut won = 0;
    for attempt in attempts {
        let (status, body) = attempt.await.unwrap();
        match status {
            StatusCode::OK => {
                won += 1;
                assert_eq!(body["user"]["role"], "super_admin");
            }
            StatusCode::FORBIDDEN => assert_eq!(body["error"], "Forbidden"),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(won, 1, "exactly one first administrator");
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    assert_eq!(
        tx.count_users().await.unwrap(),
        1,
        "the refused sign-ups stored nothing"
    );
    drop(tx);
    std::sync::Arc::into_inner(app)
        .expect("all requests done")
        .stop()
        .await;
}

cms_store::both_engines!(
    concurrent_first_sign_ups_make_exactly_one_super_admin,
    the_first_sign_up_becomes_super_admin_and_owner_of_default,
    the_bearer_token_works_like_the_cookie,
    get_session_is_null_when_signed_out,
    a_second_sign_up_is_refused_while_invite_only,
    open_sign_up_makes_editors_without_an_organization,
    sign_up_input_is_validated_with_issues,
    sign_in_checks_the_password,
    sign_out_revokes_the_session_server_side,
    sessions_expire_and_slide,
    rotating_the_auth_secret_invalidates_sessions_and_keys,
    the_owner_role_is_reconciled_at_boot,
);
