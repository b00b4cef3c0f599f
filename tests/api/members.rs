//! Members of the active organization: list, change role, remove (CONTRACT.md sections 4, 12).

use axum::http::{Method, StatusCode};
use cms_store::roles::RoleRecord;
use serde_json::{Value, json};

use crate::people_support::{active_org, first_owner, member, user_id};
use crate::support::{Session, TestApp, config_for};

const MEMBERS: &str = "/api/organizations/members";

async fn change(app: &TestApp, who: &Session, user: &str, role: &str) -> crate::support::Reply {
    app.req(Method::PATCH, MEMBERS)
        .cookie(who)
        .json(json!({"userId": user, "role": role}))
        .send()
        .await
}

async fn remove(app: &TestApp, who: &Session, user: &str) -> crate::support::Reply {
    app.req(Method::DELETE, MEMBERS)
        .cookie(who)
        .json(json!({"userId": user}))
        .send()
        .await
}

fn roles_by_email(list: &Value) -> Vec<(String, String)> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["email"].as_str().unwrap().to_string(),
                m["role"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn any_member_lists_the_members(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let (ada, _) = first_owner(&app).await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "viewer").await;
    // Carol signed up without an invitation: she belongs to no organization.
    let carol = app.sign_up("Carol", "carol@example.com").await;

    let res = app.get(MEMBERS).cookie(&bob).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let first = res.body["data"][0].as_object().unwrap();
    let mut keys: Vec<_> = first.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, vec!["createdAt", "email", "name", "role", "userId"]);
    assert_eq!(
        roles_by_email(&res.body),
        vec![
            ("ada@example.com".into(), "owner".into()),
            ("bob@example.com".into(), "viewer".into())
        ]
    );
    assert_eq!(res.body["data"][1]["userId"], bob.user["id"]);
    assert_eq!(res.body["data"][1]["name"], "Bob");

    app.get(MEMBERS)
        .cookie(&carol)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.get(MEMBERS)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    // A key of a member lists them too.
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;
    let res = app.get(MEMBERS).key(&key).send().await;
    assert_eq!(res.body["data"].as_array().unwrap().len(), 2);
    app.stop().await;
}

async fn changing_a_members_role(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, org) = first_owner(&app).await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "editor").await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "admin").await;
    let (ada_id, bob_id) = (user_id(&ada), user_id(&bob));

    // An admin holds member.changeRole.
    let res = change(&app, &carol, &bob_id, "viewer").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        (
            &res.body["data"]["userId"],
            &res.body["data"]["role"],
            &res.body["data"]["email"]
        ),
        (&json!(bob_id), &json!("viewer"), &json!("bob@example.com"))
    );
    // Only an owner makes someone owner, or touches an owner's role.
    let message = change(&app, &carol, &bob_id, "owner")
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    assert!(message.contains("owner"), "{message}");
    change(&app, &carol, &ada_id, "viewer")
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    // A viewer does not hold member.changeRole.
    change(&app, &bob, &ada_id, "viewer")
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");

    // The role must exist in the organization; the member too.
    let res = change(&app, &ada, &bob_id, "reviewer").await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "role");
    change(&app, &ada, &bob_id, "Not A Role")
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    change(&app, &ada, "nobody", "viewer")
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.req(Method::PATCH, MEMBERS)
        .cookie(&ada)
        .json(json!({"role": "viewer"}))
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // A custom role of the organization can be given.
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    tx.insert_role(&RoleRecord {
        id: "custom-reviewer".into(),
        organization_id: org.clone(),
        name: "reviewer".into(),
        description: String::new(),
        capabilities: cms_store::Json(vec!["document.read".into()]),
        is_built_in: false,
        created_at: 0,
        updated_at: 0,
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let res = change(&app, &ada, &bob_id, "reviewer").await;
    assert_eq!(res.body["data"]["role"], "reviewer", "{}", res.body);

    // The owner makes Bob owner; then Ada may step down, leaving Bob the last owner.
    assert_eq!(
        change(&app, &ada, &bob_id, "owner").await.status,
        StatusCode::OK
    );
    assert_eq!(
        change(&app, &ada, &ada_id, "admin").await.status,
        StatusCode::OK
    );
    let message = change(&app, &bob, &bob_id, "admin")
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert!(message.contains("last owner"), "{message}");
    let list = app.get(MEMBERS).cookie(&bob).send().await;
    assert_eq!(
        roles_by_email(&list.body),
        vec![
            ("ada@example.com".into(), "admin".into()),
            ("bob@example.com".into(), "owner".into()),
            ("carol@example.com".into(), "admin".into())
        ]
    );
    app.stop().await;
}

/// Stores a custom role of the organization with these capabilities.
async fn custom_role(app: &TestApp, org: &str, name: &str, capabilities: &[&str]) {
    let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
    tx.insert_role(&RoleRecord {
        id: format!("{org}-{name}"),
        organization_id: org.to_string(),
        name: name.into(),
        description: String::new(),
        capabilities: cms_store::Json(capabilities.iter().map(|c| c.to_string()).collect()),
        is_built_in: false,
        created_at: 0,
        updated_at: 0,
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
}

/// CONTRACT.md section 13, "No one grants more than they hold".
async fn no_one_grants_more_than_they_hold(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, org) = first_owner(&app).await;
    custom_role(
        &app,
        &org,
        "manager",
        &[
            "member.changeRole",
            "member.invite",
            "document.read",
            "asset.read",
        ],
    )
    .await;
    custom_role(&app, &org, "keyholder", &["apiKey.manage", "document.read"]).await;
    custom_role(&app, &org, "reader", &["document.read"]).await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "admin").await;
    let dan = member(&app, &ada, "Dan", "dan@example.com", "manager").await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "viewer").await;
    let (carol_id, dan_id, bob_id) = (user_id(&carol), user_id(&dan), user_id(&bob));

    // Nobody changes their own role: an admin neither climbs to owner nor re-grants admin.
    for role in ["owner", "admin", "viewer"] {
        change(&app, &carol, &carol_id, role)
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    change(&app, &dan, &dan_id, "admin")
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // A role holding a capability the caller lacks cannot be given, by role change or invitation.
    for role in ["keyholder", "admin", "editor"] {
        change(&app, &dan, &bob_id, role)
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
        app.post(
            "/api/organizations/invitations",
            json!({"email": format!("{role}@example.com"), "role": role}),
        )
        .cookie(&dan)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    // Nor can someone above the caller be moved, even to a role within the ceiling.
    change(&app, &dan, &carol_id, "reader")
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // Within the ceiling it works.
    let res = change(&app, &dan, &bob_id, "reader").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .post(
            "/api/organizations/invitations",
            json!({"email": "rita@example.com", "role": "reader"}),
        )
        .cookie(&dan)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    // The admin holds apiKey.manage: the keyholder role is within its ceiling.
    let res = change(&app, &carol, &bob_id, "keyholder").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let list = app.get(MEMBERS).cookie(&ada).send().await;
    assert_eq!(
        roles_by_email(&list.body),
        vec![
            ("ada@example.com".into(), "owner".into()),
            ("carol@example.com".into(), "admin".into()),
            ("dan@example.com".into(), "manager".into()),
            ("bob@example.com".into(), "keyholder".into())
        ]
    );

    // An owner steps down while another owner remains; the last owner cannot.
    assert_eq!(
        change(&app, &ada, &carol_id, "owner").await.status,
        StatusCode::OK
    );
    let res = change(&app, &ada, &user_id(&ada), "admin").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    change(&app, &carol, &carol_id, "admin")
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    app.stop().await;
}

async fn removing_a_member(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, org) = first_owner(&app).await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "admin").await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "admin").await;
    let dan = member(&app, &ada, "Dan", "dan@example.com", "editor").await;
    let key = app
        .create_key(&bob, json!({"name": "bob's", "permissions": ["read"]}))
        .await;

    // An editor does not hold member.remove.
    remove(&app, &dan, &user_id(&carol))
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // An admin may not remove an owner.
    remove(&app, &carol, &user_id(&ada))
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    remove(&app, &carol, "nobody")
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    let res = remove(&app, &carol, &user_id(&bob)).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"],
        json!({"userId": user_id(&bob), "removed": true})
    );
    // On his very next request Bob has no active organization and his key is gone.
    assert_eq!(active_org(&app, &bob).await, None);
    app.get(MEMBERS)
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.get(MEMBERS)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    assert!(tx.member(&org, &user_id(&bob)).await.unwrap().is_none());
    assert!(
        tx.api_keys(&org)
            .await
            .unwrap()
            .iter()
            .all(|k| k.created_by != user_id(&bob)),
        "the removed member's keys are deleted"
    );
    drop(tx);
    app.stop().await;
}

async fn the_last_owner_cannot_be_demoted_or_removed(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ada_id = user_id(&ada);
    change(&app, &ada, &ada_id, "admin")
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    remove(&app, &ada, &ada_id)
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    // Making oneself owner again is no demotion.
    assert_eq!(
        change(&app, &ada, &ada_id, "owner").await.status,
        StatusCode::OK
    );

    // Two owners demoting each other at the same moment: one wins, the other is the last
    // owner by then.
    let bob = member(&app, &ada, "Bob", "bob@example.com", "owner").await;
    let bob_id = user_id(&bob);
    let app = std::sync::Arc::new(app);
    let (a, b) = {
        let (app1, app2) = (app.clone(), app.clone());
        let (ada, bob) = (ada.clone(), bob.clone());
        let (ada_id, bob_id) = (ada_id.clone(), bob_id.clone());
        tokio::join!(
            tokio::spawn(async move { change(&app1, &bob, &ada_id, "viewer").await.status }),
            tokio::spawn(async move { change(&app2, &ada, &bob_id, "viewer").await.status }),
        )
    };
    let mut statuses = vec![a.unwrap(), b.unwrap()];
    statuses.sort();
    // The loser may also have lost its owner role before it acted: a 403 then.
    assert_eq!(statuses[0], StatusCode::OK, "{statuses:?}");
    assert_ne!(statuses[1], StatusCode::OK, "{statuses:?}");
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let org = active_org(&app, &ada).await.unwrap();
    assert_eq!(tx.count_members_with_role(&org, "owner").await.unwrap(), 1);
    drop(tx);
    std::sync::Arc::into_inner(app).unwrap().stop().await;
}

cms_store::both_engines!(
    any_member_lists_the_members,
    changing_a_members_role,
    no_one_grants_more_than_they_hold,
    removing_a_member,
    the_last_owner_cannot_be_demoted_or_removed,
);
