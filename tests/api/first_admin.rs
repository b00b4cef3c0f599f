//! First-admin policies (SPEC.md Authentication point 12, CONTRACT.md section 3): open, claim
//! code, allowlist, none, and out-of-band provisioning through the service path that
//! `cms user create` uses.

use axum::http::StatusCode;
use cms::core::{FirstAdmin, InstanceRole};
use cms::service::{Error, NewUser};
use serde_json::{Value, json};

use crate::support::{PASSWORD, Session, TestApp, config_for};

const SIGN_UP: &str = "/api/auth/sign-up/email";

fn body(name: &str, email: &str) -> Value {
    json!({"name": name, "email": email, "password": PASSWORD})
}

fn config_with(url: &str, policy: FirstAdmin) -> cms::Config {
    let mut config = config_for(url);
    config.auth.first_admin = policy.as_str().into();
    config
}

fn new_user(name: &str, email: &str, additional: Option<InstanceRole>) -> NewUser {
    NewUser {
        name: Some(name.into()),
        email: Some(email.into()),
        password: Some(PASSWORD.into()),
        additional,
    }
}

async fn claim_code_hash(app: &TestApp) -> Option<String> {
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    tx.instance_flag("claimCodeHash").await.unwrap()
}

async fn user_count(app: &TestApp) -> i64 {
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    tx.count_users().await.unwrap()
}

async fn the_claim_code_policy_admits_only_the_printed_code(url: String) {
    let app = TestApp::with(config_with(&url, FirstAdmin::ClaimCode), None).await;
    let code = app
        .app
        .cms
        .auth()
        .issue_claim_code()
        .await
        .unwrap()
        .expect("a code while unclaimed");
    // Only its keyed hash is stored.
    let stored = claim_code_hash(&app).await.expect("the hash is stored");
    assert_eq!(stored.len(), 64);
    assert!(!stored.contains(&code));

    let refused = [
        app.post(SIGN_UP, body("Eve", "eve@example.com"))
            .send()
            .await,
        app.post(SIGN_UP, body("Eve", "eve@example.com"))
            .header("x-cms-bootstrap-code", "not-the-code")
            .send()
            .await,
        // The header comes first: a wrong header is not rescued by a right cookie.
        app.post(SIGN_UP, body("Eve", "eve@example.com"))
            .header("x-cms-bootstrap-code", "not-the-code")
            .header("cookie", &format!("cms_bootstrap_code={code}"))
            .send()
            .await,
        // A code in the URL is refused even when it is right, with or without a header.
        app.post(
            &format!("{SIGN_UP}?code={code}"),
            body("Eve", "eve@example.com"),
        )
        .send()
        .await,
        app.post(
            &format!("{SIGN_UP}?cms_bootstrap_code={code}"),
            body("Eve", "eve@example.com"),
        )
        .header("x-cms-bootstrap-code", &code)
        .send()
        .await,
    ];
    for res in &refused {
        res.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    }
    assert!(
        refused[3]
            .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden")
            .contains("URL")
    );
    assert_eq!(
        user_count(&app).await,
        0,
        "no refused sign-up stored anything"
    );

    // The cookie works when no header is sent.
    let res = app
        .post(SIGN_UP, body("Ada", "ada@example.com"))
        .header("cookie", &format!("cms_bootstrap_code={code}"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["user"]["role"], "super_admin");
    // Single use: the window is closed and the hash gone; no new code is issued.
    assert_eq!(claim_code_hash(&app).await, None);
    assert_eq!(app.app.cms.auth().issue_claim_code().await.unwrap(), None);
    let again = app
        .post(SIGN_UP, body("Bob", "bob@example.com"))
        .header("x-cms-bootstrap-code", &code)
        .send()
        .await;
    again.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

async fn a_restart_replaces_the_code_until_the_instance_is_claimed(url: String) {
    let config = config_with(&url, FirstAdmin::ClaimCode);
    let app = TestApp::with(config.clone(), None).await;
    let first = app
        .app
        .cms
        .auth()
        .issue_claim_code()
        .await
        .unwrap()
        .unwrap();
    app.app.cms.store().close().await;

    let app = TestApp::with(config.clone(), None).await;
    let second = app
        .app
        .cms
        .auth()
        .issue_claim_code()
        .await
        .unwrap()
        .unwrap();
    assert_ne!(first, second);
    let stale = app
        .post(SIGN_UP, body("Ada", "ada@example.com"))
        .header("x-cms-bootstrap-code", &first)
        .send()
        .await;
    stale.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .post(SIGN_UP, body("Ada", "ada@example.com"))
        .header("x-cms-bootstrap-code", &second)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.app.cms.store().close().await;

    // Once a user exists, a restart prints no code.
    let app = TestApp::with(config, None).await;
    assert_eq!(app.app.cms.auth().issue_claim_code().await.unwrap(), None);
    assert_eq!(claim_code_hash(&app).await, None);
    app.stop().await;
}

async fn the_claim_window_closes_at_the_first_account_whatever_the_door(url: String) {
    let mut config = config_with(&url, FirstAdmin::ClaimCode);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let code = app
        .app
        .cms
        .auth()
        .issue_claim_code()
        .await
        .unwrap()
        .unwrap();
    let admin = app
        .app
        .cms
        .auth()
        .create_user(new_user("Root", "root@example.com", None))
        .await
        .unwrap();
    assert_eq!(admin.role, InstanceRole::SuperAdmin);
    assert_eq!(claim_code_hash(&app).await, None);
    // The unused code makes nobody an administrator now: this is an ordinary later sign-up.
    let res = app
        .post(SIGN_UP, body("Ada", "ada@example.com"))
        .header("x-cms-bootstrap-code", &code)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["user"]["role"], "editor");
    app.stop().await;
}

async fn the_allowlist_policy_admits_only_listed_addresses(url: String) {
    let mut config = config_with(&url, FirstAdmin::Allowlist);
    config.auth.first_admin_emails = vec!["Boss@Example.com".into()];
    let app = TestApp::with(config, None).await;
    let res = app
        .post(SIGN_UP, body("Eve", "eve@example.com"))
        .send()
        .await;
    res.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    // Compared case-insensitively.
    let res = app
        .post(SIGN_UP, body("Boss", "BOSS@example.COM"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["user"]["role"], "super_admin");
    assert_eq!(res.body["user"]["email"], "boss@example.com");
    app.stop().await;
}

async fn the_none_policy_leaves_the_first_admin_to_the_operator(url: String) {
    let mut config = config_with(&url, FirstAdmin::None);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    assert_eq!(app.app.cms.auth().issue_claim_code().await.unwrap(), None);
    let res = app
        .post(SIGN_UP, body("Eve", "eve@example.com"))
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    assert!(message.contains("cms user create"), "{message}");
    assert_eq!(user_count(&app).await, 0);

    // Bad input is refused like a sign-up's, with issues.
    let bad = app
        .app
        .cms
        .auth()
        .create_user(NewUser {
            password: Some("short".into()),
            ..new_user("Root", "root@example.com", None)
        })
        .await;
    assert!(matches!(bad, Err(Error::BadRequest { .. })), "{bad:?}");

    let root = app
        .app
        .cms
        .auth()
        .create_user(new_user("Root", "Root@Example.com", None))
        .await
        .unwrap();
    assert_eq!(root.role, InstanceRole::SuperAdmin);
    assert!(root.email_verified, "the operator vouches for the address");
    // Exactly as the first sign-up: owner of "Default", which sign-in activates.
    let res = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "root@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let session = Session::from(&res);
    let got = app
        .get("/api/auth/get-session")
        .cookie(&session)
        .send()
        .await;
    let org_id = got.body["session"]["activeOrganizationId"]
        .as_str()
        .expect("Default is active")
        .to_string();
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let org = tx.organization_by_id(&org_id).await.unwrap().unwrap();
    assert_eq!(org.slug, "default");
    assert_eq!(
        tx.member(&org_id, &root.id).await.unwrap().unwrap().role,
        "owner"
    );
    drop(tx);

    // A second run is refused unless it asks for a further user.
    let again = app
        .app
        .cms
        .auth()
        .create_user(new_user("Two", "two@example.com", None))
        .await;
    assert!(matches!(again, Err(Error::Conflict(_))), "{again:?}");
    let taken = app
        .app
        .cms
        .auth()
        .create_user(new_user(
            "Dup",
            "root@example.com",
            Some(InstanceRole::Admin),
        ))
        .await;
    assert!(matches!(taken, Err(Error::Unprocessable(_))), "{taken:?}");
    let further = app
        .app
        .cms
        .auth()
        .create_user(new_user(
            "Two",
            "two@example.com",
            Some(InstanceRole::Admin),
        ))
        .await
        .unwrap();
    assert_eq!(further.role, InstanceRole::Admin);
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    assert!(tx.memberships_of(&further.id).await.unwrap().is_empty());
    drop(tx);
    // Sign-up is open now that the instance has its administrator (inviteOnly is off here).
    let res = app
        .post(SIGN_UP, body("Eve", "eve@example.com"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["user"]["role"], "editor");
    app.stop().await;
}

cms_store::both_engines!(
    the_claim_code_policy_admits_only_the_printed_code,
    a_restart_replaces_the_code_until_the_instance_is_claimed,
    the_claim_window_closes_at_the_first_account_whatever_the_door,
    the_allowlist_policy_admits_only_listed_addresses,
    the_none_policy_leaves_the_first_admin_to_the_operator,
);
