//! API keys: creation, listing, use, precedence over the cookie, scopes, deletion, expiry.

use axum::http::{Method, StatusCode};
use cms::core::CoreCapability::{self, *};
use cms::service::Credentials;
use cms_store::organizations::MemberRecord;
use serde_json::json;

use crate::support::{TestApp, config_for};

const KEYS: &str = "/api/settings/api-keys";

/// The capabilities a key resolves to, straight from the service layer.
async fn capabilities_of(app: &TestApp, key: &str) -> Vec<String> {
    let credentials = Credentials {
        api_key: Some(key.to_string()),
        ..Default::default()
    };
    let resolved = app
        .app
        .cms
        .auth()
        .authenticate(&credentials)
        .await
        .unwrap()
        .expect("a valid key");
    resolved.actor.grant.capabilities.to_strings()
}

fn names(caps: &[CoreCapability]) -> Vec<String> {
    caps.iter().map(|c| c.as_str().to_string()).collect()
}

async fn a_key_is_shown_once_and_listed_without_its_secret(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app
        .post(
            KEYS,
            json!({"name": "ci", "permissions": ["read"], "expiresInDays": 30}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let data = &res.body["data"];
    let key = data["key"].as_str().unwrap();
    assert!(key.starts_with("cms_") && key.len() > 40, "{key}");
    assert_eq!(data["name"], "ci");
    assert_eq!(data["permissions"], json!(["read"]));
    assert!(data["createdAt"].is_string() && data["expiresAt"].is_string());

    let list = app.get(KEYS).cookie(&ada).send().await;
    assert_eq!(list.status, StatusCode::OK);
    let listed = &list.body["data"][0];
    assert_eq!(listed["id"], data["id"]);
    assert!(listed.get("key").is_none(), "no secret in lists: {listed}");
    let text = list.body.to_string();
    assert!(!text.contains(key) && !text.contains("hash"), "{text}");
    assert_eq!(
        app.post(KEYS, json!({"name": "forever", "permissions": ["read"]}))
            .cookie(&ada)
            .send()
            .await
            .body["data"]["expiresAt"],
        serde_json::Value::Null
    );

    // The secret is stored only as an HMAC.
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let org = data["organizationId"].as_str().unwrap();
    for stored in tx.api_keys(org).await.unwrap() {
        assert_ne!(stored.key_hash, key);
        assert_eq!(stored.key_hash.len(), 64);
    }
    drop(tx);
    app.stop().await;
}

async fn the_key_is_bound_to_its_organization_and_acts_there(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let key = app
        .create_key(
            &ada,
            json!({"name": "admin", "capabilities": ["apiKey.manage"]}),
        )
        .await;
    let res = app.get(KEYS).key(&key).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"].as_array().unwrap().len(), 1);
    app.stop().await;
}

async fn read_and_write_permissions_map_to_capabilities(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let read = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    let write = app
        .create_key(&ada, json!({"name": "w", "permissions": ["write"]}))
        .await;
    assert_eq!(
        capabilities_of(&app, &read).await,
        names(&[DocumentRead, AssetRead])
    );
    assert_eq!(
        capabilities_of(&app, &write).await,
        names(&[
            DocumentRead,
            DocumentCreate,
            DocumentUpdate,
            DocumentDelete,
            DocumentPublish,
            DocumentUnpublish,
            AssetRead,
            AssetUpload,
            AssetDelete,
        ])
    );
    // Neither permission reaches management: both keys are refused with the auth layer's 403.
    for key in [&read, &write] {
        app.get(KEYS)
            .key(key)
            .send()
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
        app.post(KEYS, json!({"name": "x", "permissions": ["read"]}))
            .key(key)
            .send()
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    app.stop().await;
}

async fn capabilities_alone_decide_when_present(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    // `write` would grant document.delete; the capability list does not, so the key cannot.
    let key = app
        .create_key(&ada, json!({"name": "c", "permissions": ["write"], "capabilities": ["document.create", "apiKey.manage"]}))
        .await;
    // Write implies read: document.read was added on intake.
    assert_eq!(
        capabilities_of(&app, &key).await,
        names(&[DocumentRead, DocumentCreate, ApiKeyManage])
    );
    assert_eq!(app.get(KEYS).key(&key).send().await.status, StatusCode::OK);
    app.stop().await;
}

async fn the_key_wins_over_the_cookie(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let read = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    // The cookie alone may list keys (owner); with a read key beside it the key decides.
    assert_eq!(
        app.get(KEYS).cookie(&ada).send().await.status,
        StatusCode::OK
    );
    app.get(KEYS)
        .cookie(&ada)
        .key(&read)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // A bad key does not fall back to the cookie.
    app.get(KEYS)
        .cookie(&ada)
        .key("cms_not-a-key")
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn a_deleted_key_stops_working_at_once(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app
        .post(
            KEYS,
            json!({"name": "m", "capabilities": ["apiKey.manage"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    let (id, key) = (
        res.body["data"]["id"].as_str().unwrap().to_string(),
        res.body["data"]["key"].as_str().unwrap().to_string(),
    );
    assert_eq!(app.get(KEYS).key(&key).send().await.status, StatusCode::OK);

    let res = app
        .req(Method::DELETE, &format!("{KEYS}/{id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!({"id": id, "deleted": true}));
    app.get(KEYS)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    // Deleting again, or an unknown id, is 404 in the handler envelope.
    let res = app
        .req(Method::DELETE, &format!("{KEYS}/{id}"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

async fn an_expired_key_is_401(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let key = app
        .create_key(
            &ada,
            json!({"name": "m", "capabilities": ["apiKey.manage"], "expiresInDays": 1}),
        )
        .await;
    assert_eq!(app.get(KEYS).key(&key).send().await.status, StatusCode::OK);
    app.clock.advance_days(2);
    app.get(KEYS)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn key_requests_are_validated(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let bad = |body| app.post(KEYS, body).cookie(&ada).send();
    let res = bad(json!({"permissions": ["read"]})).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "name");
    let res = bad(json!({"name": "n"})).await;
    let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(message.contains("permissions"), "{message}");
    let res = bad(json!({"name": "n", "permissions": [], "capabilities": []})).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = bad(json!({"name": "n", "permissions": ["admin"]})).await;
    assert_eq!(res.body["issues"][0]["path"], "permissions[0]");
    let res = bad(
        json!({"name": "n", "capabilities": ["document.read", "document.destroy", "nope.nothing"]}),
    )
    .await;
    let paths: Vec<_> = res.body["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].clone())
        .collect();
    assert_eq!(
        paths,
        vec![json!("capabilities[1]"), json!("capabilities[2]")]
    );
    for days in [0, -1, 100_000] {
        let res = bad(json!({"name": "n", "permissions": ["read"], "expiresInDays": days})).await;
        assert_eq!(res.body["issues"][0]["path"], "expiresInDays", "{days}");
    }
    let res = bad(json!({"name": "n", "permissions": "read"})).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.stop().await;
}

async fn managing_keys_needs_a_session_or_key_with_api_key_manage(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    app.get(KEYS)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.post(KEYS, json!({"name": "n", "permissions": ["read"]}))
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.req(Method::DELETE, &format!("{KEYS}/x"))
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.sign_up("Ada", "ada@example.com").await;
    // Bob belongs to no organization: he holds nothing.
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.get(KEYS)
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.post(KEYS, json!({"name": "n", "permissions": ["read"]}))
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

/// Gives `user` a role in `org`, or removes them with `None`. Membership endpoints come with the
/// tenancy work; the store stands in for them here.
async fn set_role(app: &TestApp, org: &str, user: &str, role: Option<&str>) {
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    match role {
        Some(role) if tx.member(org, user).await.unwrap().is_some() => {
            assert!(tx.update_member_role(org, user, role).await.unwrap());
        }
        Some(role) => {
            let member = MemberRecord {
                organization_id: org.into(),
                user_id: user.into(),
                role: role.into(),
                created_at: 0,
            };
            tx.insert_member(&member).await.unwrap();
        }
        None => assert!(tx.delete_member(org, user).await.unwrap()),
    }
    tx.commit().await.unwrap();
}

async fn a_key_follows_its_creators_current_role(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app
        .get("/api/auth/get-session")
        .cookie(&ada)
        .send()
        .await
        .body["session"]["activeOrganizationId"]
        .as_str()
        .unwrap()
        .to_string();
    let bob = app.sign_up("Bob", "bob@example.com").await;
    let bob_id = bob.user["id"].as_str().unwrap().to_string();
    set_role(&app, &org, &bob_id, Some("admin")).await;
    // Signing in again activates the organization Bob now belongs to.
    let bob = crate::support::Session::from(
        &app.post(
            "/api/auth/sign-in/email",
            json!({"email": "bob@example.com", "password": crate::support::PASSWORD}),
        )
        .send()
        .await,
    );
    let key = app
        .create_key(
            &bob,
            json!({"name": "b", "capabilities": ["apiKey.manage", "document.create"]}),
        )
        .await;
    assert_eq!(
        capabilities_of(&app, &key).await,
        names(&[DocumentRead, DocumentCreate, ApiKeyManage])
    );
    assert_eq!(app.get(KEYS).key(&key).send().await.status, StatusCode::OK);

    // Demoted to viewer: the key is clamped to what a viewer holds, on the next request.
    set_role(&app, &org, &bob_id, Some("viewer")).await;
    assert_eq!(capabilities_of(&app, &key).await, names(&[DocumentRead]));
    app.get(KEYS)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");

    // Gone from the organization: the key stops working.
    set_role(&app, &org, &bob_id, None).await;
    app.get(KEYS)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

/// A key made by an instance super admin acts with its creator's role in the key's
/// organization, never with the instance role (CONTRACT.md section 13): demoted there to
/// viewer, their write key may only read; gone from it, the key stops working.
async fn a_super_admins_key_acts_with_the_creators_role_there(url: String) {
    let app = TestApp::with(config_for(&url), None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let ada_id = ada.user["id"].as_str().unwrap().to_string();
    let org = crate::people_support::active_org(&app, &ada)
        .await
        .expect("the first account's organization");
    let key = app
        .create_key(&ada, json!({"name": "w", "permissions": ["write"]}))
        .await;
    let post = json!({"type": "post", "data": {"title": "By key"}});
    let res = app
        .post("/api/documents", post.clone())
        .key(&key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);

    set_role(&app, &org, &ada_id, Some("viewer")).await;
    assert_eq!(
        capabilities_of(&app, &key).await,
        names(&[DocumentRead, AssetRead])
    );
    app.post("/api/documents", post.clone())
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // Her session keeps the instance role's powers.
    let res = app.post("/api/documents", post).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);

    set_role(&app, &org, &ada_id, None).await;
    app.get("/api/documents?type=post")
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

cms_store::both_engines!(
    a_super_admins_key_acts_with_the_creators_role_there,
    a_key_follows_its_creators_current_role,
    a_key_is_shown_once_and_listed_without_its_secret,
    the_key_is_bound_to_its_organization_and_acts_there,
    read_and_write_permissions_map_to_capabilities,
    capabilities_alone_decide_when_present,
    the_key_wins_over_the_cookie,
    a_deleted_key_stops_working_at_once,
    an_expired_key_is_401,
    key_requests_are_validated,
    managing_keys_needs_a_session_or_key_with_api_key_manage,
);
