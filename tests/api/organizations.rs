//! Organizations: list, create, switch, read, update, delete (CONTRACT.md section 4).

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::people_support::{active_org, first_owner, member, user_id};
use crate::support::{Session, TestApp};

const ORGS: &str = "/api/organizations";

async fn create(app: &TestApp, s: &Session, body: Value) -> Value {
    let res = app.post(ORGS, body).cookie(s).send().await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"].clone()
}

fn keys(v: &Value) -> Vec<&str> {
    let mut keys: Vec<_> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    keys
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_string()
}

async fn listing_and_creating_organizations(url: String) {
    let app = TestApp::start(&url).await;
    app.get(ORGS)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    let (ada, default) = first_owner(&app).await;

    let list = app.get(ORGS).cookie(&ada).send().await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    let orgs = list.body["data"].as_array().unwrap();
    assert_eq!(orgs.len(), 1);
    assert_eq!(
        keys(&orgs[0]),
        vec![
            "createdAt",
            "id",
            "locales",
            "metadata",
            "name",
            "parentId",
            "requireTwoFactor",
            "role",
            "slug"
        ]
    );
    // Every locale of the instance until the organization narrows them (CONTRACT.md 17).
    assert_eq!(orgs[0]["locales"], Value::Null);
    assert_eq!(
        (&orgs[0]["id"], &orgs[0]["slug"], &orgs[0]["role"]),
        (&json!(default), &json!("default"), &json!("owner"))
    );
    assert_eq!(orgs[0]["parentId"], Value::Null);
    assert_eq!(orgs[0]["metadata"], json!({}));

    let acme = create(
        &app,
        &ada,
        json!({"name": "Acme", "slug": "acme", "metadata": {"plan": "pro"}}),
    )
    .await;
    assert_eq!(acme["role"], "owner");
    assert_eq!(acme["metadata"], json!({"plan": "pro"}));
    assert_eq!(acme["parentId"], Value::Null);
    // Creating does not change the active organization.
    assert_eq!(
        active_org(&app, &ada).await.as_deref(),
        Some(default.as_str())
    );
    let list = app.get(ORGS).cookie(&ada).send().await;
    let slugs: Vec<_> = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["slug"].clone())
        .collect();
    assert_eq!(slugs, vec![json!("default"), json!("acme")]);

    // The new organization has the four built-in roles and its creator as owner.
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let roles: Vec<_> = tx
        .roles(&id(&acme))
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(roles.len(), 5, "{roles:?}");
    assert_eq!(
        tx.member(&id(&acme), &user_id(&ada))
            .await
            .unwrap()
            .unwrap()
            .role,
        "owner"
    );
    drop(tx);

    // Slugs are unique across the instance.
    let res = app
        .post(ORGS, json!({"name": "Other", "slug": "acme"}))
        .cookie(&ada)
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert!(message.contains("acme"), "{message}");

    // Input is validated.
    let res = app.post(ORGS, json!({})).cookie(&ada).send().await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let paths: Vec<_> = res.body["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].clone())
        .collect();
    assert_eq!(paths, vec![json!("name"), json!("slug")]);
    for bad in [
        json!({"name": "X", "slug": "Not A Slug"}),
        json!({"name": "X", "slug": "x", "metadata": [1]}),
        json!({"name": "X", "slug": "x", "metadata": "text"}),
        json!({"name": "X\u{7}", "slug": "x"}),
        json!({"name": "X", "slug": "x", "metadata": {"a": "\u{0}"}}),
    ] {
        let res = app.post(ORGS, bad.clone()).cookie(&ada).send().await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert!(res.body["issues"].is_array(), "{bad}: {}", res.body);
    }

    // Any signed-in user may create one and becomes its owner.
    let bob = member(&app, &ada, "Bob", "bob@example.com", "viewer").await;
    let bobs = create(&app, &bob, json!({"name": "Bob's", "slug": "bobs"})).await;
    assert_eq!(bobs["role"], "owner");
    // A key lists the one organization it is bound to.
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;
    let list = app.get(ORGS).key(&key).send().await;
    assert_eq!(list.status, StatusCode::OK);
    let orgs = list.body["data"].as_array().unwrap();
    assert_eq!(orgs.len(), 1);
    assert_eq!(
        (&orgs[0]["id"], &orgs[0]["role"]),
        (&json!(default), &json!("owner"))
    );
    // ... and cannot create organizations: that needs a person's session.
    app.post(ORGS, json!({"name": "K", "slug": "k"}))
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

async fn a_child_organization_needs_owner_or_admin_of_a_parent_without_parent(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, default) = first_owner(&app).await;
    let team = create(
        &app,
        &ada,
        json!({"name": "Team", "slug": "team", "parentId": default}),
    )
    .await;
    assert_eq!(team["parentId"], json!(default));

    // One level: a child cannot have children.
    let res = app
        .post(
            ORGS,
            json!({"name": "Sub", "slug": "sub", "parentId": id(&team)}),
        )
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "parentId");
    assert_eq!(res.body["issues"][0]["code"], "depth");

    // An unknown parent is a 400 too.
    let res = app
        .post(
            ORGS,
            json!({"name": "Sub", "slug": "sub", "parentId": "nope"}),
        )
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    // An editor of the parent may not attach children to it; an admin may.
    let bob = member(&app, &ada, "Bob", "bob@example.com", "editor").await;
    let res = app
        .post(ORGS, json!({"name": "B", "slug": "b", "parentId": default}))
        .cookie(&bob)
        .send()
        .await;
    res.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    // A parent the caller does not belong to reads as unknown.
    let bobs = create(&app, &bob, json!({"name": "Bob's", "slug": "bobs"})).await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "admin").await;
    let res = app
        .post(
            ORGS,
            json!({"name": "C", "slug": "c", "parentId": id(&bobs)}),
        )
        .cookie(&carol)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let child = create(
        &app,
        &carol,
        json!({"name": "Carol's team", "slug": "carols-team", "parentId": default}),
    )
    .await;
    assert_eq!(child["parentId"], json!(default));
    assert_eq!(child["role"], "owner");
    app.stop().await;
}

async fn switching_needs_membership_or_instance_admin(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, default) = first_owner(&app).await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "viewer").await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "viewer").await;
    let bobs = create(&app, &bob, json!({"name": "Bob's", "slug": "bobs"})).await;

    let res = app
        .post(
            "/api/organizations/switch",
            json!({"organizationId": id(&bobs)}),
        )
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        (&res.body["data"]["id"], &res.body["data"]["role"]),
        (&bobs["id"], &json!("owner"))
    );
    assert_eq!(active_org(&app, &bob).await, Some(id(&bobs)));
    // Switching back works too.
    let res = app
        .post(
            "/api/organizations/switch",
            json!({"organizationId": default}),
        )
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.body["data"]["role"], "viewer");

    // A non-member is refused, whether the organization exists or not.
    for target in [id(&bobs), "no-such-organization".to_string()] {
        app.post(
            "/api/organizations/switch",
            json!({"organizationId": target}),
        )
        .cookie(&carol)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    assert_eq!(active_org(&app, &carol).await, Some(default.clone()));

    // The instance super admin may enter any organization, and acts there.
    let res = app
        .post(
            "/api/organizations/switch",
            json!({"organizationId": id(&bobs)}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["role"], Value::Null);
    let members = app
        .get("/api/organizations/members")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(members.status, StatusCode::OK);
    assert_eq!(members.body["data"][0]["email"], "bob@example.com");
    app.post(
        "/api/organizations/switch",
        json!({"organizationId": "no-such-organization"}),
    )
    .cookie(&ada)
    .send()
    .await
    .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    // Bad input, keys, no credentials.
    app.post("/api/organizations/switch", json!({}))
        .cookie(&bob)
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // A key acts with its creator's role there: none in an organization only entered.
    app.post(
        "/api/settings/api-keys",
        json!({"name": "k", "permissions": ["read"]}),
    )
    .cookie(&ada)
    .send()
    .await
    .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    app.post(
        "/api/organizations/switch",
        json!({"organizationId": default}),
    )
    .cookie(&ada)
    .send()
    .await;
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;
    app.post(
        "/api/organizations/switch",
        json!({"organizationId": default}),
    )
    .key(&key)
    .send()
    .await
    .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.post(
        "/api/organizations/switch",
        json!({"organizationId": default}),
    )
    .send()
    .await
    .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn reading_and_updating_an_organization(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, default) = first_owner(&app).await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "editor").await;
    let acme = create(&app, &ada, json!({"name": "Acme", "slug": "acme"})).await;
    let path = |org: &str| format!("{ORGS}/{org}");

    let got = app.get(&path(&default)).cookie(&bob).send().await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    assert_eq!(
        (&got.body["data"]["slug"], &got.body["data"]["role"]),
        (&json!("default"), &json!("editor"))
    );
    // Not a member: 404, not 403 (no existence oracle).
    app.get(&path(&id(&acme)))
        .cookie(&bob)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.get(&path("missing"))
        .cookie(&bob)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    // An editor does not hold org.settings.
    app.req(Method::PATCH, &path(&default))
        .cookie(&bob)
        .json(json!({"name": "Mine"}))
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // The owner does, in an organization that is not even the active one.
    let res = app
        .req(Method::PATCH, &path(&id(&acme)))
        .cookie(&ada)
        .json(json!({"name": "Acme Inc", "slug": "acme-inc", "metadata": {"plan": "team"}}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        (
            &res.body["data"]["name"],
            &res.body["data"]["slug"],
            &res.body["data"]["metadata"]
        ),
        (
            &json!("Acme Inc"),
            &json!("acme-inc"),
            &json!({"plan": "team"})
        )
    );
    let got = app.get(&path(&id(&acme))).cookie(&ada).send().await;
    assert_eq!(got.body["data"]["name"], "Acme Inc");
    // One field alone leaves the others.
    let res = app
        .req(Method::PATCH, &path(&id(&acme)))
        .cookie(&ada)
        .json(json!({"metadata": {}}))
        .send()
        .await;
    assert_eq!(
        (&res.body["data"]["slug"], &res.body["data"]["metadata"]),
        (&json!("acme-inc"), &json!({}))
    );

    for (body, status) in [
        (json!({}), StatusCode::BAD_REQUEST),
        (json!({"parentId": default}), StatusCode::BAD_REQUEST),
        (json!({"slug": "Bad Slug"}), StatusCode::BAD_REQUEST),
        (json!({"name": ""}), StatusCode::BAD_REQUEST),
        (json!({"metadata": 3}), StatusCode::BAD_REQUEST),
        (json!({"slug": "default"}), StatusCode::CONFLICT),
    ] {
        let res = app
            .req(Method::PATCH, &path(&id(&acme)))
            .cookie(&ada)
            .json(body.clone())
            .send()
            .await;
        assert_eq!(res.status, status, "{body}: {}", res.body);
        assert_eq!(res.body["success"], false);
    }

    // A key with org.settings updates its own organization, and sees no other.
    let key = app
        .create_key(&ada, json!({"name": "k", "capabilities": ["org.settings"]}))
        .await;
    let res = app
        .req(Method::PATCH, &path(&default))
        .key(&key)
        .json(json!({"name": "Default Org"}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["name"], "Default Org");
    app.get(&path(&id(&acme)))
        .key(&key)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let read_only = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    app.req(Method::PATCH, &path(&default))
        .key(&read_only)
        .json(json!({"name": "Nope"}))
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

async fn deleting_an_organization_takes_its_content_with_it(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, default) = first_owner(&app).await;
    let acme = create(&app, &ada, json!({"name": "Acme", "slug": "acme"})).await;
    let acme_id = id(&acme);
    app.post(
        "/api/organizations/switch",
        json!({"organizationId": acme_id}),
    )
    .cookie(&ada)
    .send()
    .await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "admin").await;
    assert_eq!(active_org(&app, &bob).await, Some(acme_id.clone()));
    let post = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello"}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(post.status, StatusCode::CREATED, "{}", post.body);
    let post_id = id(&post.body["data"]);
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read", "write"]}))
        .await;
    crate::people_support::invite(&app, &ada, "dora@example.com", "viewer").await;
    let path = format!("{ORGS}/{acme_id}");

    // An admin is not an owner: a business refusal, in the handler envelope.
    let message = app
        .req(Method::DELETE, &path)
        .cookie(&bob)
        .send()
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    assert!(message.contains("owner"), "{message}");
    // Keys cannot delete organizations.
    app.req(Method::DELETE, &path)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // A parent with children is kept.
    let child = create(
        &app,
        &ada,
        json!({"name": "Child", "slug": "child", "parentId": acme_id}),
    )
    .await;
    app.req(Method::DELETE, &path)
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    let res = app
        .req(Method::DELETE, &format!("{ORGS}/{}", id(&child)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    let res = app.req(Method::DELETE, &path).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!({"id": acme_id, "deleted": true}));
    app.get(&path)
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    // Sessions that had it active have none now; its keys are gone.
    assert_eq!(active_org(&app, &bob).await, None);
    assert_eq!(active_org(&app, &ada).await, None);
    app.get("/api/documents?type=post")
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    assert!(tx.organization_by_id(&acme_id).await.unwrap().is_none());
    assert!(tx.roles(&acme_id).await.unwrap().is_empty());
    assert!(tx.members_of(&acme_id).await.unwrap().is_empty());
    assert!(tx.api_keys(&acme_id).await.unwrap().is_empty());
    assert!(tx.pending_invitations(&acme_id).await.unwrap().is_empty());
    assert!(
        tx.document(std::slice::from_ref(&acme_id), &post_id)
            .await
            .unwrap()
            .is_none(),
        "its documents are deleted"
    );
    drop(tx);
    assert_eq!(
        app.get(&format!("{ORGS}/{default}"))
            .cookie(&ada)
            .send()
            .await
            .status,
        StatusCode::OK,
        "other organizations are untouched"
    );

    // The instance super admin may delete an organization they do not belong to.
    let bobs = create(&app, &bob, json!({"name": "Bob's", "slug": "bobs"})).await;
    let res = app
        .req(Method::DELETE, &format!("{ORGS}/{}", id(&bobs)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // Anyone else who does not belong to it gets 404.
    let other = create(&app, &ada, json!({"name": "Ada 2", "slug": "ada-2"})).await;
    app.req(Method::DELETE, &format!("{ORGS}/{}", id(&other)))
        .cookie(&bob)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

cms_store::both_engines!(
    listing_and_creating_organizations,
    a_child_organization_needs_owner_or_admin_of_a_parent_without_parent,
    switching_needs_membership_or_instance_admin,
    reading_and_updating_an_organization,
    deleting_an_organization_takes_its_content_with_it,
);
