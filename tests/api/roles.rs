//! Roles: listing, custom roles, edits of built-ins, deletion rules, sessions only, plugin
//! capabilities, edits visible on the next request.

use axum::http::{Method, StatusCode};
use cms::core::Capability;
use cms::service::Credentials;
use cms_store::invitations::InvitationRecord;
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

const ROLES: &str = "/api/roles";

/// An app where anyone may sign up, so tests can have several people.
async fn open_app(url: &str) -> TestApp {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    TestApp::with(config, None).await
}

fn role_names(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

async fn capabilities_of(app: &TestApp, session: &Session) -> Vec<String> {
    let credentials = Credentials {
        bearer: Some(session.token.clone()),
        ..Default::default()
    };
    let resolved = app.app.cms.auth().authenticate(&credentials).await.unwrap();
    resolved.unwrap().actor.grant.capabilities.to_strings()
}

async fn roles_are_listed_created_edited_and_deleted(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;

    let res = app.get(ROLES).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        role_names(&res.body),
        ["owner", "admin", "editor", "viewer", "public"]
    );
    let viewer = &res.body["data"][3];
    for key in ["id", "description", "createdAt", "updatedAt"] {
        assert!(viewer[key].is_string(), "{key}: {viewer}");
    }
    assert_eq!(viewer["organizationId"], org.as_str());
    assert_eq!(viewer["isBuiltIn"], true);
    assert_eq!(
        viewer["capabilities"],
        json!(["document.read", "asset.read"])
    );

    // Writes imply reads, added on intake.
    let res = app
        .post(
            ROLES,
            json!({"name": "reviewer", "description": "Reviews drafts", "capabilities": ["document.update"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let reviewer = &res.body["data"];
    assert_eq!(reviewer["name"], "reviewer");
    assert_eq!(reviewer["description"], "Reviews drafts");
    assert_eq!(reviewer["isBuiltIn"], false);
    assert_eq!(reviewer["organizationId"], org.as_str());
    assert_eq!(
        reviewer["capabilities"],
        json!(["document.read", "document.update"])
    );

    // Taken and reserved names are conflicts; bad names and capabilities are 400s.
    let again = app
        .post(ROLES, json!({"name": "reviewer", "capabilities": []}))
        .cookie(&ada)
        .send()
        .await;
    again.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    for reserved in ["owner", "admin", "editor", "viewer", "public"] {
        let msg = app
            .post(ROLES, json!({"name": reserved, "capabilities": []}))
            .cookie(&ada)
            .send()
            .await
            .assert_handler_error(StatusCode::CONFLICT, "Conflict");
        assert!(msg.contains("reserved"), "{msg}");
    }
    for bad in [
        json!({"capabilities": []}),
        json!({"name": "Content Lead"}),
        json!({"name": ""}),
    ] {
        let res = app.post(ROLES, bad).cookie(&ada).send().await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert_eq!(res.body["issues"][0]["path"], "name", "{}", res.body);
    }
    let res = app
        .post(
            ROLES,
            json!({"name": "x", "capabilities": ["document.read", "document.destroy", "forms.export"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    let msg = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "capabilities[1]");
    assert!(
        res.body["issues"][0]["message"]
            .as_str()
            .unwrap()
            .contains("document.destroy")
    );
    assert!(
        res.body["issues"][1]["message"]
            .as_str()
            .unwrap()
            .contains("forms.export")
    );
    assert!(msg.contains("2 fields"), "{msg}");
    let res = app
        .post(ROLES, json!({"name": "x", "capabilities": "document.read"}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST);

    // PATCH: description and/or capabilities, at least one.
    let path = format!("{ROLES}/reviewer");
    let res = app
        .req(Method::PATCH, &path)
        .json(json!({"description": "Reads and fixes"}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["description"], "Reads and fixes");
    assert_eq!(
        res.body["data"]["capabilities"],
        json!(["document.read", "document.update"])
    );
    let res = app
        .req(Method::PATCH, &path)
        .json(json!({"capabilities": ["asset.upload"]}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["data"]["capabilities"],
        json!(["asset.read", "asset.upload"])
    );
    assert_eq!(res.body["data"]["description"], "Reads and fixes");
    app.req(Method::PATCH, &path)
        .json(json!({}))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.req(Method::PATCH, &path)
        .json(json!({"capabilities": ["nope"]}))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.req(Method::PATCH, &format!("{ROLES}/ghost"))
        .json(json!({"description": "x"}))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    // Built-ins: the owner's capabilities are fixed, the rest are editable.
    let owner = format!("{ROLES}/owner");
    app.req(Method::PATCH, &owner)
        .json(json!({"capabilities": ["document.read"]}))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .req(Method::PATCH, &owner)
        .json(json!({"description": "The boss"}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["description"], "The boss", "{}", res.body);
    assert_eq!(
        res.body["data"]["capabilities"].as_array().unwrap().len(),
        15
    );
    for editable in ["admin", "editor", "viewer"] {
        let res = app
            .req(Method::PATCH, &format!("{ROLES}/{editable}"))
            .json(json!({"capabilities": ["document.publish"]}))
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{editable}: {}", res.body);
        assert_eq!(
            res.body["data"]["capabilities"],
            json!(["document.read", "document.publish"])
        );
    }

    // DELETE: built-ins never, unknown 404, an unassigned custom role goes.
    for built_in in ["owner", "admin", "editor", "viewer", "public"] {
        app.req(Method::DELETE, &format!("{ROLES}/{built_in}"))
            .cookie(&ada)
            .send()
            .await
            .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    }
    app.req(Method::DELETE, &format!("{ROLES}/ghost"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let res = app.req(Method::DELETE, &path).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["name"], "reviewer");
    assert_eq!(res.body["data"]["deleted"], true);
    let res = app.get(ROLES).cookie(&ada).send().await;
    assert_eq!(
        role_names(&res.body),
        ["owner", "admin", "editor", "viewer", "public"]
    );
    app.stop().await;
}

async fn role_endpoints_are_for_member_sessions_and_managers(url: String) {
    let app = open_app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    let carol = app.sign_up("Carol", "carol@example.com").await;
    app.join(&bob, &org, "viewer").await;

    app.get(ROLES)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    // An API key is refused on every role endpoint, whatever it may do elsewhere.
    let key = app
        .create_key(
            &ada,
            json!({"name": "k", "capabilities": ["role.manage", "document.read"]}),
        )
        .await;
    app.get(ROLES)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.post(ROLES, json!({"name": "x", "capabilities": []}))
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::PATCH, &format!("{ROLES}/viewer"))
        .json(json!({"description": "x"}))
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::DELETE, &format!("{ROLES}/viewer"))
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");

    // Any member lists; managing needs role.manage.
    let res = app.get(ROLES).cookie(&bob).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"].as_array().unwrap().len(), 5);
    app.post(ROLES, json!({"name": "x", "capabilities": []}))
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::PATCH, &format!("{ROLES}/viewer"))
        .json(json!({"description": "x"}))
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::DELETE, &format!("{ROLES}/viewer"))
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // Someone in no organization sees none.
    app.get(ROLES)
        .cookie(&carol)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");

    // A manager cannot put into a role more than they hold.
    let res = app
        .post(
            ROLES,
            json!({"name": "manager", "capabilities": ["role.manage", "document.read"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.join(&bob, &org, "manager").await;
    let res = app
        .post(
            ROLES,
            json!({"name": "sneaky", "capabilities": ["apiKey.manage"]}),
        )
        .cookie(&bob)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["code"], "notHeld");
    let res = app
        .post(
            ROLES,
            json!({"name": "helper", "capabilities": ["document.read"]}),
        )
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.stop().await;
}

async fn a_role_still_assigned_cannot_be_deleted(url: String) {
    let app = open_app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    for name in ["writer", "guest", "temp"] {
        let res = app
            .post(
                ROLES,
                json!({"name": name, "capabilities": ["document.read"]}),
            )
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    }
    app.join(&bob, &org, "writer").await;
    let millis = {
        use cms::service::Clock;
        app.clock.now().millis()
    };
    let invitation = |id: &str, role: &str, status: &str, expires_at: i64| InvitationRecord {
        id: id.into(),
        organization_id: org.clone(),
        email: format!("{id}@example.com"),
        role: role.into(),
        status: status.into(),
        invited_by: None,
        token_hash: None,
        expires_at,
        created_at: 0,
        updated_at: 0,
    };
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    tx.insert_invitation(&invitation("i1", "guest", "pending", millis + 86_400_000))
        .await
        .unwrap();
    // Neither an expired pending invitation nor an accepted one holds a role.
    tx.insert_invitation(&invitation("i2", "temp", "pending", millis - 1000))
        .await
        .unwrap();
    tx.insert_invitation(&invitation("i3", "temp", "accepted", millis + 86_400_000))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    for held in ["writer", "guest"] {
        let msg = app
            .req(Method::DELETE, &format!("{ROLES}/{held}"))
            .cookie(&ada)
            .send()
            .await
            .assert_handler_error(StatusCode::CONFLICT, "Conflict");
        assert!(msg.contains("assigned"), "{msg}");
    }
    let res = app
        .req(Method::DELETE, &format!("{ROLES}/temp"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // Once the member moves on, the role can go.
    app.join(&bob, &org, "viewer").await;
    let res = app
        .req(Method::DELETE, &format!("{ROLES}/writer"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.stop().await;
}

async fn role_edits_apply_on_the_next_request(url: String) {
    let app = open_app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.post(
        ROLES,
        json!({"name": "writer", "capabilities": ["document.read"]}),
    )
    .cookie(&ada)
    .send()
    .await;
    app.join(&bob, &org, "writer").await;
    let doc = json!({"type": "post", "data": {"title": "Hi"}});
    app.post("/api/documents", doc.clone())
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .req(Method::PATCH, &format!("{ROLES}/writer"))
        .json(json!({"capabilities": ["document.create"]}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app.post("/api/documents", doc).cookie(&bob).send().await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert_eq!(
        capabilities_of(&app, &bob).await,
        ["document.read", "document.create"]
    );
    app.stop().await;
}

async fn custom_roles_hold_declared_plugin_capabilities(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let export: Capability = "forms.export".parse().unwrap();
    let app = TestApp::custom(config, |b| b.capabilities([export])).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    let res = app
        .post(
            ROLES,
            json!({"name": "exporter", "capabilities": ["forms.export", "document.read"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert_eq!(
        res.body["data"]["capabilities"],
        json!(["document.read", "forms.export"])
    );
    // The owner holds it too (reconciled at start), and a member of the custom role gets it.
    let roles = app.get(ROLES).cookie(&ada).send().await;
    assert!(
        roles.body["data"][0]["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("forms.export"))
    );
    app.join(&bob, &org, "exporter").await;
    assert_eq!(
        capabilities_of(&app, &bob).await,
        ["document.read", "forms.export"]
    );
    // Undeclared plugin capabilities stay refused.
    let res = app
        .post(
            ROLES,
            json!({"name": "other", "capabilities": ["forms.import"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.stop().await;
}

cms_store::both_engines!(
    roles_are_listed_created_edited_and_deleted,
    role_endpoints_are_for_member_sessions_and_managers,
    a_role_still_assigned_cannot_be_deleted,
    role_edits_apply_on_the_next_request,
    custom_roles_hold_declared_plugin_capabilities,
);
