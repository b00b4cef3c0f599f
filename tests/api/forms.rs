//! The first-party `forms` plugin through HTTP (CONTRACT.md section 11): a published form takes
//! public submissions, each stored with its `forms.submission.created` event in one
//! transaction and delivered to consumers; members list them.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::http::{Method, StatusCode};
use cms::service::Registry;
use cms::service::jobs::{Consumer, EventHandler, EventView, HandlerContext, HandlerError};
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

#[derive(Default)]
struct Recorder(Mutex<Vec<EventView>>);

#[async_trait]
impl EventHandler for Recorder {
    async fn handle(&self, _: &HandlerContext, event: &EventView) -> Result<(), HandlerError> {
        self.0.lock().unwrap().push(event.clone());
        Ok(())
    }
}

async fn app(url: &str, recorder: &Arc<Recorder>) -> TestApp {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    let registry = Registry::default()
        .consumer(Consumer {
            id: "notify".into(),
            events: vec!["forms.submission.created".into()],
            max_attempts: None,
            handler: recorder.clone(),
            settings: json!({}),
            plugin: None,
        })
        .unwrap();
    TestApp::custom(config, |b| b.registry(registry)).await
}

/// A contact form, published unless `publish` is false; its id.
async fn contact_form(app: &TestApp, owner: &Session, publish: bool) -> String {
    let res = app
        .post(
            "/api/documents",
            json!({"type": "form", "publish": publish, "data": {
                "title": "Contact",
                "fields": [
                    {"name": "name", "label": "Name", "type": "text", "required": true},
                    {"name": "email", "label": "E-mail", "type": "email", "required": true},
                    {"name": "message", "type": "textarea"},
                    {"name": "subscribe", "type": "checkbox"}
                ]
            }}),
        )
        .cookie(owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

fn submissions(form: &str) -> String {
    format!("/api/forms/{form}/submissions")
}

async fn a_public_submission_is_stored_with_its_event_and_delivered(url: String) {
    let recorder = Arc::new(Recorder::default());
    let app = app(&url, &recorder).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&owner).await;
    let form = contact_form(&app, &owner, true).await;
    let values =
        json!({"name": "Bob", "email": "bob@example.com", "message": "Hello", "subscribe": true});
    // No credential at all: the route is public.
    let res = app.post(&submissions(&form), values.clone()).send().await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(res.body["data"]["formId"], form);
    assert!(res.body["data"]["createdAt"].is_string());
    // The submission is a document of the form's organization, written by the plugin.
    let stored = app
        .get(&format!("/api/documents/{id}"))
        .cookie(&owner)
        .send()
        .await;
    assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
    assert_eq!(stored.body["data"]["type"], "formSubmission");
    assert_eq!(stored.body["data"]["organizationId"], org);
    assert_eq!(stored.body["data"]["createdBy"], "plugin:forms");
    assert_eq!(stored.body["data"]["draftData"]["data"], values);
    // Its event is in the log...
    let events = app
        .get("/api/events?type=forms.submission.created")
        .cookie(&owner)
        .send()
        .await;
    assert_eq!(
        events.body["data"].as_array().unwrap().len(),
        1,
        "{}",
        events.body
    );
    let event = &events.body["data"][0];
    assert_eq!(
        event["payload"],
        json!({"submissionId": id, "formId": form})
    );
    assert_eq!(event["organizationId"], org);
    // ...and reaches its consumer through the outbox on the next worker tick.
    app.app.cms.worker().tick().await.unwrap();
    let seen = recorder.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].event_type, "forms.submission.created");
    assert_eq!(seen[0].payload["submissionId"], id);
    // Members list the form's submissions, newest first.
    app.post(
        &submissions(&form),
        json!({"name": "Cy", "email": "cy@example.com"}),
    )
    .send()
    .await;
    let list = app.get(&submissions(&form)).cookie(&owner).send().await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert_eq!(list.body["pagination"]["total"], 2);
    assert_eq!(list.body["data"][0]["data"]["name"], "Cy");
    assert_eq!(list.body["data"][1]["id"], id);
    assert_eq!(list.body["data"][1]["formId"], form);
    let page = app
        .get(&format!("{}?page=2&pageSize=1", submissions(&form)))
        .cookie(&owner)
        .send()
        .await;
    assert_eq!(page.body["data"][0]["id"], id, "{}", page.body);
    app.stop().await;
}

async fn submissions_are_checked_against_the_published_form(url: String) {
    let recorder = Arc::new(Recorder::default());
    let app = app(&url, &recorder).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let form = contact_form(&app, &owner, true).await;
    let res = app
        .post(
            &submissions(&form),
            json!({"email": "nope", "subscribe": "yes", "phone": "123"}),
        )
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let issues: Vec<(String, String)> = res.body["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["path"].as_str().unwrap().to_string(),
                i["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("phone", "unknown"),
        ("name", "required"),
        ("email", "email"),
        ("subscribe", "type"),
    ];
    assert_eq!(
        issues,
        expected
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_string()))
            .collect::<Vec<_>>()
    );
    let res = app
        .req(Method::POST, &submissions(&form))
        .json(json!(["not", "an", "object"]))
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .req(Method::POST, &submissions(&form))
        .raw("application/json", "{broken")
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // Nothing was stored, and no event was appended.
    let list = app.get(&submissions(&form)).cookie(&owner).send().await;
    assert_eq!(list.body["pagination"]["total"], 0);
    let events = app
        .get("/api/events?type=forms.submission.created")
        .cookie(&owner)
        .send()
        .await;
    assert_eq!(events.body["data"], json!([]));
    app.stop().await;
}

async fn unknown_unpublished_and_foreign_forms_are_not_found(url: String) {
    let recorder = Arc::new(Recorder::default());
    let app = app(&url, &recorder).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let values = json!({"name": "Bob", "email": "bob@example.com"});
    let draft = contact_form(&app, &owner, false).await;
    let post = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hi"}, "publish": true}),
        )
        .cookie(&owner)
        .send()
        .await;
    let post = post.body["data"]["id"].as_str().unwrap().to_string();
    for id in [
        draft.as_str(),
        post.as_str(),
        "0190b5a0-0000-7000-8000-000000000000",
    ] {
        let res = app.post(&submissions(id), values.clone()).send().await;
        res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    }
    // Submissions of one organization's form are not listed to another organization.
    let form = contact_form(&app, &owner, true).await;
    let res = app.post(&submissions(&form), values).send().await;
    assert_eq!(res.status, StatusCode::CREATED);
    let eve = app.sign_up("Eve", "eve@example.com").await;
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Eve's", "slug": "eves"}),
        )
        .cookie(&eve)
        .send()
        .await;
    let eves = res.body["data"]["id"].as_str().unwrap().to_string();
    app.post("/api/organizations/switch", json!({"organizationId": eves}))
        .cookie(&eve)
        .send()
        .await;
    let res = app.get(&submissions(&form)).cookie(&eve).send().await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.get(&submissions(&form))
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn members_cannot_write_submissions_by_hand(url: String) {
    let recorder = Arc::new(Recorder::default());
    let app = app(&url, &recorder).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let form = contact_form(&app, &ada, true).await;
    // Not even an owner of the organization: the schema's role lists for writes are empty.
    // (Ada, the first user, is an instance super admin, whom SPEC.md lets bypass schema rules.)
    let owner = app.sign_up("Bob", "bob@example.com").await;
    let org = app.active_organization(&ada).await;
    app.join(&owner, &org, "owner").await;
    let res = app
        .post(
            "/api/documents",
            json!({"type": "formSubmission", "data": {"form": {"_ref": form}, "data": {}}}),
        )
        .cookie(&owner)
        .send()
        .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .post(
            &submissions(&form),
            json!({"name": "Bob", "email": "b@example.com"}),
        )
        .send()
        .await;
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let res = app
        .req(Method::PUT, &format!("/api/documents/{id}"))
        .cookie(&owner)
        .json(json!({"data": {"form": {"_ref": form}, "data": {"name": "Mallory"}}}))
        .send()
        .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // Deleting one is an ordinary document delete.
    let res = app
        .req(Method::DELETE, &format!("/api/documents/{id}"))
        .cookie(&owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.stop().await;
}

async fn the_plugin_can_be_turned_off(url: String) {
    let mut config = config_for(&url);
    config.plugins.forms = false;
    let app = TestApp::with(config, None).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let res = app.get("/api/schemas/form").cookie(&owner).send().await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let res = app.post(&submissions("x"), json!({})).send().await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let plugins: Value = app.get("/api/plugins").cookie(&owner).send().await.body;
    assert!(
        !plugins["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == "forms")
    );
    app.stop().await;
}

/// `Retry-After` of a 429 in the handler envelope, in seconds.
fn too_many(res: &crate::support::Reply) -> u64 {
    res.assert_handler_error(StatusCode::TOO_MANY_REQUESTS, "Too Many Requests");
    let secs: u64 = res.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&secs), "{secs}");
    secs
}

/// CONTRACT.md section 13: each client address may submit `plugins.formsSubmissionsPerMinute`
/// times a minute, counted in the database, bad submissions included; another address, or
/// the next minute, submits again.
async fn submissions_are_limited_per_client_address(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    config.plugins.forms_submissions_per_minute = 3;
    let app = TestApp::with(config, None).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let form = contact_form(&app, &owner, true).await;
    let good = json!({"name": "Bob", "email": "bob@example.com"});
    let submit =
        |peer: &'static str, body: Value| app.post(&submissions(&form), body).peer(peer).send();
    for _ in 0..2 {
        let res = submit("198.51.100.7", good.clone()).await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    }
    // A refused submission counts too: a flood of bad ones is limited like good ones.
    submit("198.51.100.7", json!({"name": "Bob"}))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    too_many(&submit("198.51.100.7", good.clone()).await);
    // An unknown form from the same address waits too, before anything is looked up.
    let res = app
        .post(&submissions("no-such-form"), good.clone())
        .peer("198.51.100.7")
        .send()
        .await;
    too_many(&res);
    // Another address is its own counter; an IPv6 client is counted by its /64.
    let res = submit("198.51.100.8", good.clone()).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    for _ in 0..3 {
        submit("2001:db8:1:2::1", good.clone()).await;
    }
    too_many(&submit("2001:db8:1:2::99", good.clone()).await);
    // Only accepted submissions were stored: 2 + 1 + 3.
    let list = app.get(&submissions(&form)).cookie(&owner).send().await;
    assert_eq!(list.body["pagination"]["total"], 6, "{}", list.body);

    // The next window takes submissions again.
    app.clock.advance_millis(60_000);
    let res = submit("198.51.100.7", good.clone()).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.stop().await;
}

/// The address behind trusted proxies is the forwarded one (the `Client` extractor), so one
/// proxy does not make every visitor share one counter.
async fn behind_a_trusted_proxy_the_forwarded_address_counts(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    config.plugins.forms_submissions_per_minute = 1;
    config.server.trusted_proxies = vec!["10.0.0.0/8".into()];
    let app = TestApp::with(config, None).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let form = contact_form(&app, &owner, true).await;
    let good = json!({"name": "Bob", "email": "bob@example.com"});
    let via_proxy = |client: &'static str| {
        app.post(&submissions(&form), good.clone())
            .peer("10.0.0.2")
            .header("x-forwarded-for", client)
            .send()
    };
    assert_eq!(via_proxy("203.0.113.1").await.status, StatusCode::CREATED);
    assert_eq!(via_proxy("203.0.113.2").await.status, StatusCode::CREATED);
    too_many(&via_proxy("203.0.113.1").await);
    app.stop().await;
}

cms_store::both_engines!(
    submissions_are_limited_per_client_address,
    behind_a_trusted_proxy_the_forwarded_address_counts,
    a_public_submission_is_stored_with_its_event_and_delivered,
    submissions_are_checked_against_the_published_form,
    unknown_unpublished_and_foreign_forms_are_not_found,
    members_cannot_write_submissions_by_hand,
    the_plugin_can_be_turned_off,
);
