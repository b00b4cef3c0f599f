//! The audit log (issue 28 point 5, CONTRACT.md section 19): every listed action leaves an
//! entry naming who, where, what and from which address, written in the unit of the action
//! (a refused action leaves none); GET /api/audit filters and pages; the worker removes old
//! entries once a day.

use std::collections::BTreeSet;

use axum::http::{Method, StatusCode};
use cms::service::Clock;
use serde_json::{Value, json};

use crate::people_support::{first_owner, invite, member, sign_in, user_id};
use crate::support::{Reply, Session, TestApp, config_for};

const AUDIT: &str = "/api/audit";
const DOCS: &str = "/api/documents";
const KEY: &str = "a secret encryption key of at least thirty-two characters";
const ADDRESS: &str = "203.0.113.7";

async fn start(url: &str, configure: impl FnOnce(&mut cms::Config)) -> TestApp {
    let mut config = config_for(url);
    config.plugins.secret_encryption_key = Some(KEY.into());
    configure(&mut config);
    TestApp::with(config, None).await
}

async fn send(app: &TestApp, who: &Session, method: Method, path: &str, body: Value) -> Reply {
    let res = app
        .req(method, path)
        .json(body)
        .cookie(who)
        .peer(ADDRESS)
        .send()
        .await;
    assert!(res.status.is_success(), "{path}: {}", res.body);
    res
}

/// Every entry `who` reads with `query` (all pages of 100).
async fn entries(app: &TestApp, who: &Session, query: &str) -> Vec<Value> {
    let res = app
        .get(&format!("{AUDIT}?pageSize=100&{query}"))
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].as_array().unwrap().clone()
}

fn actions(entries: &[Value]) -> BTreeSet<String> {
    entries
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect()
}

fn only<'a>(entries: &'a [Value], action: &str) -> Vec<&'a Value> {
    entries.iter().filter(|e| e["action"] == action).collect()
}

/// Does every listed action once through the API, then reads the log.
async fn every_listed_action_leaves_an_entry(url: String) {
    let app = start(&url, |_| {}).await;
    let (ada, org) = first_owner(&app).await;
    let ada_id = user_id(&ada);

    // Sign-in: refused twice (a wrong password, an unknown address), then right; sign-out.
    for email in ["ada@example.com", "nobody@example.com"] {
        let res = app
            .post(
                "/api/auth/sign-in/email",
                json!({"email": email, "password": "wrong password"}),
            )
            .peer(ADDRESS)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.body);
    }
    let second = sign_in(&app, "ada@example.com").await;
    send(&app, &second, Method::POST, "/api/auth/sign-out", json!({})).await;

    // Roles, people and keys.
    send(
        &app,
        &ada,
        Method::POST,
        "/api/roles",
        json!({"name": "reviewer", "capabilities": ["document.read"]}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::PATCH,
        "/api/roles/reviewer",
        json!({"capabilities": ["document.read", "document.update"]}),
    )
    .await;
    let bob = invite(&app, &ada, "bob@example.com", "viewer").await;
    let bob_invitation = bob["id"].as_str().unwrap().to_string();
    send(
        &app,
        &ada,
        Method::DELETE,
        "/api/organizations/invitations",
        json!({"id": bob_invitation}),
    )
    .await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "editor").await;
    let carol_id = user_id(&carol);
    send(
        &app,
        &ada,
        Method::PATCH,
        "/api/organizations/members",
        json!({"userId": carol_id, "role": "reviewer"}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::DELETE,
        "/api/organizations/members",
        json!({"userId": carol_id}),
    )
    .await;
    send(&app, &ada, Method::DELETE, "/api/roles/reviewer", json!({})).await;
    let res = send(
        &app,
        &ada,
        Method::POST,
        "/api/settings/api-keys",
        json!({"name": "deploy", "permissions": ["read", "write"]}),
    )
    .await;
    let key = res.body["data"]["key"].as_str().unwrap().to_string();
    let key_id = res.body["data"]["id"].as_str().unwrap().to_string();

    // Settings.
    send(
        &app,
        &ada,
        Method::PATCH,
        &format!("/api/organizations/{org}"),
        json!({"name": "Acme"}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::PATCH,
        "/api/instance-settings",
        json!({"requireEmailVerification": false}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::PUT,
        "/api/plugin-settings/webhooks",
        json!({"values": {}}),
    )
    .await;
    let res = send(
        &app,
        &ada,
        Method::POST,
        "/api/webhooks",
        json!({"url": "https://hooks.example.com/in", "events": ["*"]}),
    )
    .await;
    let hook = res.body["data"]["id"].as_str().unwrap().to_string();
    send(
        &app,
        &ada,
        Method::PATCH,
        &format!("/api/webhooks/{hook}"),
        json!({"description": "the site"}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::DELETE,
        &format!("/api/webhooks/{hook}"),
        json!({}),
    )
    .await;

    // Content: born published, unpublished, published again by a key, restored, scheduled,
    // the schedule cancelled, deleted.
    let res = send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "post", "data": {"title": "Hello"}, "publish": true}),
    )
    .await;
    let doc = res.body["data"]["id"].as_str().unwrap().to_string();
    send(
        &app,
        &ada,
        Method::DELETE,
        &format!("{DOCS}/{doc}/publish"),
        json!({}),
    )
    .await;
    let res = app
        .post(&format!("{DOCS}/{doc}/publish"), json!({}))
        .key(&key)
        .peer(ADDRESS)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    send(
        &app,
        &ada,
        Method::POST,
        &format!("{DOCS}/{doc}/versions/1/restore"),
        json!({}),
    )
    .await;
    let run_at = app.clock.now().plus_days(1).to_rfc3339();
    send(
        &app,
        &ada,
        Method::POST,
        &format!("{DOCS}/{doc}/schedule"),
        json!({"action": "unpublish", "runAt": run_at}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::DELETE,
        &format!("{DOCS}/{doc}/schedule"),
        json!({}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::DELETE,
        &format!("{DOCS}/{doc}"),
        json!({}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::DELETE,
        &format!("/api/settings/api-keys/{key_id}"),
        json!({}),
    )
    .await;

    // The organization's log: everything but what belongs to no organization.
    let all_listed: BTreeSet<String> = cms::service::AuditAction::ALL
        .iter()
        .map(|a| a.as_str().to_string())
        .collect();
    let own = entries(&app, &ada, "").await;
    let mut expected = all_listed.clone();
    expected.remove("instanceSettings.updated");
    assert_eq!(actions(&own), expected, "{own:#?}");
    assert!(own.iter().all(|e| e["organizationId"] == org.as_str()));
    // The instance's: every action, the unknown address's failure and instance settings too.
    let everything = entries(&app, &ada, "scope=all").await;
    assert_eq!(actions(&everything), all_listed);
    let failures = only(&everything, "auth.signInFailed");
    assert_eq!(failures.len(), 2, "{failures:#?}");
    let unknown = failures.iter().find(|e| e["actorId"].is_null()).unwrap();
    assert!(unknown["organizationId"].is_null());
    assert!(
        unknown["summary"]
            .as_str()
            .unwrap()
            .contains("nobody@example.com")
    );
    let settings = &only(&everything, "instanceSettings.updated")[0];
    assert!(settings["organizationId"].is_null());
    assert_eq!(settings["summary"], "changed requireEmailVerification");

    // Who, what and from where.
    let sign_in = &only(&own, "auth.signIn")[0];
    assert_eq!(sign_in["actorType"], "user");
    assert_eq!(sign_in["actorId"], ada_id.as_str());
    assert_eq!(sign_in["target"], json!({"type": "user", "id": ada_id}));
    let failed = failures
        .iter()
        .find(|e| e["actorId"] == ada_id.as_str())
        .unwrap();
    assert_eq!(failed["ipAddress"], ADDRESS);
    let published = only(&own, "document.published");
    assert_eq!(published.len(), 2, "born published, then by the key");
    // Newest first: the key's publish, then Ada's.
    assert_eq!(published[0]["actorType"], "apiKey");
    assert_eq!(published[0]["actorId"], key_id.as_str());
    assert_eq!(published[0]["ipAddress"], ADDRESS);
    assert_eq!(published[1]["actorId"], ada_id.as_str());
    assert_eq!(
        published[1]["target"],
        json!({"type": "document", "id": doc})
    );
    assert_eq!(published[1]["summary"], "post");
    let role_change = &only(&own, "member.roleChanged")[0];
    assert_eq!(
        role_change["summary"],
        "carol@example.com: editor → reviewer"
    );
    let removed = &only(&own, "member.removed")[0];
    assert_eq!(removed["target"], json!({"type": "user", "id": carol_id}));
    // Invitations: Bob's created and cancelled, Carol's created.
    assert_eq!(only(&own, "invitation.created").len(), 2);
    let plugin = &only(&own, "pluginSettings.updated")[0];
    assert_eq!(
        plugin["target"],
        json!({"type": "plugin", "id": "webhooks"})
    );
    for entry in &own {
        for field in ["id", "action", "actorType", "summary", "createdAt"] {
            assert!(entry[field].is_string(), "{field} of {entry}");
        }
    }
    let times: Vec<&str> = own
        .iter()
        .map(|e| e["createdAt"].as_str().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {times:?}"
    );
    app.stop().await;
}

/// A refused action leaves no entry: the entry is written in the action's own unit.
async fn a_refused_action_leaves_no_entry(url: String) {
    let app = start(&url, |_| {}).await;
    let (ada, _) = first_owner(&app).await;
    // Publishing a draft that does not validate (a post needs a title) is refused.
    let res = app
        .post(DOCS, json!({"type": "post", "data": {}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let doc = res.body["data"]["id"].as_str().unwrap().to_string();
    let res = app
        .post(&format!("{DOCS}/{doc}/publish"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    // Removing the last owner is refused.
    let res = app
        .req(Method::DELETE, "/api/organizations/members")
        .json(json!({"userId": user_id(&ada)}))
        .cookie(&ada)
        .send()
        .await;
    assert!(res.status.is_client_error(), "{}", res.body);
    let own = entries(&app, &ada, "").await;
    assert!(only(&own, "document.published").is_empty(), "{own:#?}");
    assert!(only(&own, "member.removed").is_empty(), "{own:#?}");
    app.stop().await;
}

async fn filters_pages_and_who_may_read(url: String) {
    let app = start(&url, |_| {}).await;
    let (ada, _) = first_owner(&app).await;
    let viewer = member(&app, &ada, "Vic", "vic@example.com", "viewer").await;
    let admin = member(&app, &ada, "Al", "al@example.com", "admin").await;
    for i in 0..3 {
        send(
            &app,
            &ada,
            Method::POST,
            DOCS,
            json!({"type": "post", "data": {"title": format!("P{i}")}, "publish": true}),
        )
        .await;
        app.clock.advance_millis(1_000);
    }
    let middle = app.clock.now().plus_millis(-1_500).to_rfc3339();
    send(
        &app,
        &admin,
        Method::POST,
        DOCS,
        json!({"type": "post", "data": {"title": "by Al"}, "publish": true}),
    )
    .await;

    let published = entries(&app, &admin, "action=document.published").await;
    assert_eq!(published.len(), 4);
    let by_ada = entries(
        &app,
        &admin,
        &format!("action=document.published&actorId={}", user_id(&ada)),
    )
    .await;
    assert_eq!(by_ada.len(), 3);
    let since = entries(
        &app,
        &admin,
        &format!("action=document.published&from={middle}"),
    )
    .await;
    assert_eq!(since.len(), 2, "the last of Ada's and Al's");
    let until = entries(
        &app,
        &admin,
        &format!("action=document.published&to={middle}"),
    )
    .await;
    assert_eq!(until.len(), 2);
    let res = app
        .get(&format!(
            "{AUDIT}?action=document.published&page=2&pageSize=3"
        ))
        .cookie(&admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(res.body["pagination"]["total"], 4);
    assert_eq!(res.body["pagination"]["totalPages"], 2);

    // Bad filters: clear 400s.
    for query in [
        "action=document.eaten",
        "from=yesterday",
        "to=2026-13-01",
        "scope=mine",
        "page=0",
        "pageSize=500",
    ] {
        let res = app
            .get(&format!("{AUDIT}?{query}"))
            .cookie(&admin)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST, "{query}: {}", res.body);
    }
    // A viewer may not read it, nor an admin the whole instance; nobody signed out.
    app.get(AUDIT)
        .cookie(&viewer)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.get(&format!("{AUDIT}?scope=all"))
        .cookie(&admin)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.get(AUDIT)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

/// The worker's first tick of a day removes what is older than `audit.retentionDays`, and only
/// that.
async fn retention_removes_old_entries(url: String) {
    let app = start(&url, |c| c.audit.retention_days = 30).await;
    let (ada, _) = first_owner(&app).await;
    send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "post", "data": {"title": "old"}, "publish": true}),
    )
    .await;
    app.clock.advance_days(31);
    let ada = sign_in(&app, "ada@example.com").await;
    send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "post", "data": {"title": "new"}, "publish": true}),
    )
    .await;
    assert_eq!(
        only(&entries(&app, &ada, "").await, "document.published").len(),
        2
    );

    app.app.cms.worker().tick().await.unwrap();
    let kept = entries(&app, &ada, "").await;
    assert_eq!(only(&kept, "document.published").len(), 1, "{kept:#?}");
    assert!(
        only(&kept, "auth.signIn").len() == 1,
        "the recent sign-in stays"
    );
    app.stop().await;
}

cms_store::both_engines!(
    every_listed_action_leaves_an_entry,
    a_refused_action_leaves_no_entry,
    filters_pages_and_who_may_read,
    retention_removes_old_entries,
);
