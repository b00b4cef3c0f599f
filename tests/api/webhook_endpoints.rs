//! Webhook endpoints (CONTRACT.md section 16): managed through `/api/webhooks`, delivered by
//! the relay's fan-out (one job per event and endpoint that wants it, none otherwise), signed
//! the Standard Webhooks way and verified by an independent implementation (the PyPI package,
//! in `receiver.rs`), retried with the same `webhook-id`, logged with the receiver's status;
//! the settings form of section 11 delivered beside them.

mod receiver;

use std::collections::BTreeSet;

use axum::http::{Method, StatusCode};
use cms::plugin::{Plugin, PluginParts};
use cms::service::{Credentials, EventDeclaration, TickReport};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::support::{Reply, Session, TestApp, config_for};
use receiver::{Hook, Verifier};

const KEY: &str = "a secret encryption key of at least thirty-two characters";
const HOOKS: &str = "/api/webhooks";
const ORDER_PLACED: &str = "acme.order.placed";

/// A host plugin declaring an event type of its own.
struct Acme;

impl Plugin for Acme {
    fn id(&self) -> &str {
        "acme"
    }

    fn register(&self, parts: &mut PluginParts) {
        parts.event_type(
            EventDeclaration::from_json(
                ORDER_PLACED,
                &json!([{ "name": "orderId", "type": "string", "required": true }]),
            )
            .unwrap(),
        );
    }
}

/// An app with webhooks on (the default), an encryption key for their secrets, `configure`
/// applied, and the `acme` plugin.
async fn start(url: &str, configure: impl FnOnce(&mut cms::Config)) -> TestApp {
    let mut config = config_for(url);
    config.plugins.secret_encryption_key = Some(KEY.into());
    configure(&mut config);
    TestApp::custom(config, |b| b.plugin(Acme)).await
}

async fn create(app: &TestApp, session: &Session, body: Value) -> Reply {
    app.post(HOOKS, body).cookie(session).send().await
}

/// A new endpoint: its id and its secret.
async fn endpoint(
    app: &TestApp,
    session: &Session,
    url: &str,
    events: &[&str],
) -> (String, String) {
    let res = create(app, session, json!({"url": url, "events": events})).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let data = &res.body["data"];
    (
        data["id"].as_str().unwrap().to_string(),
        data["secret"].as_str().unwrap().to_string(),
    )
}

async fn call(
    app: &TestApp,
    session: &Session,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Reply {
    let call = app.req(method, path).cookie(session);
    match body {
        Some(body) => call.json(body).send().await,
        None => call.send().await,
    }
}

async fn publish(app: &TestApp, session: &Session, title: &str) -> Value {
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": title}, "publish": true}),
        )
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"].clone()
}

/// Emits an `acme.order.placed` event in the session's organization.
async fn order(app: &TestApp, session: &Session, id: &str) -> String {
    let actor = app
        .app
        .cms
        .auth()
        .authenticate(&Credentials {
            bearer: Some(session.token.clone()),
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("a signed-in actor")
        .actor;
    app.app
        .cms
        .events()
        .emit(&actor, ORDER_PLACED, json!({"orderId": id}))
        .await
        .unwrap()
        .id
}

async fn tick(app: &TestApp) -> TickReport {
    app.app.cms.worker().tick().await.expect("a tick")
}

fn report(claimed: u64, completed: u64, retried: u64, failed: u64) -> TickReport {
    TickReport {
        claimed,
        completed,
        retried,
        failed,
    }
}

/// The organization's events, newest first.
async fn events(app: &TestApp, session: &Session) -> Vec<Value> {
    let res = app
        .get("/api/events?pageSize=100")
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].as_array().unwrap().clone()
}

/// The newest event of `event_type`.
async fn newest(app: &TestApp, session: &Session, event_type: &str) -> Value {
    events(app, session)
        .await
        .into_iter()
        .find(|e| e["type"] == event_type)
        .unwrap_or_else(|| panic!("no {event_type} event"))
}

async fn deliveries(app: &TestApp, session: &Session, id: &str) -> Reply {
    app.get(&format!("{HOOKS}/{id}/deliveries"))
        .cookie(session)
        .send()
        .await
}

async fn webhook_jobs(app: &TestApp, session: &Session) -> Vec<Value> {
    let res = app
        .get("/api/jobs?type=webhooks.deliver&pageSize=100")
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].as_array().unwrap().clone()
}

/// How many bytes standard (padded) base64 text decodes to; `None` when it is not that.
fn base64_len(text: &str) -> Option<usize> {
    let alphabet = |c: char| c.is_ascii_alphanumeric() || c == '+' || c == '/';
    let data = text.trim_end_matches('=');
    let padding = text.len() - data.len();
    (text.len().is_multiple_of(4) && padding <= 2 && data.chars().all(alphabet))
        .then(|| text.len() / 4 * 3 - padding)
}

/// The ids of events as the log lists them.
fn ids_of(events: &[Value]) -> BTreeSet<String> {
    events
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect()
}

/// The ids of the events a receiver was sent.
fn event_ids(hooks: &[Hook]) -> BTreeSet<String> {
    hooks
        .iter()
        .map(|h| h.json()["id"].as_str().unwrap().to_string())
        .collect()
}

async fn an_endpoint_delivery_is_signed_and_retried_with_the_same_id(url: String) {
    let verifier = Verifier::start().await;
    verifier.script("in", &[500], 200).await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (id, secret) = endpoint(&app, &ada, &verifier.url("in"), &["document.published"]).await;
    let key = secret.strip_prefix("whsec_").expect("a whsec_ secret");
    assert_eq!(base64_len(key), Some(32), "{secret}");

    let doc = publish(&app, &ada, "Hi").await;
    assert_eq!(
        tick(&app).await,
        report(1, 0, 1, 0),
        "the first answer is 500"
    );
    let log = deliveries(&app, &ada, &id).await;
    assert_eq!(log.status, StatusCode::OK, "{}", log.body);
    let delivery = log.body["data"][0].clone();
    assert_eq!(log.body["pagination"]["total"], 1);
    assert_eq!(delivery["status"], "pending", "{delivery}");
    assert_eq!(delivery["attempts"], 1);
    assert_eq!(delivery["responseStatus"], 500);
    assert!(
        delivery["lastError"].as_str().unwrap().contains("500"),
        "{delivery}"
    );
    let event = newest(&app, &ada, "document.published").await;
    assert_eq!(delivery["eventId"], event["id"]);
    assert_eq!(delivery["eventType"], "document.published");
    let job = webhook_jobs(&app, &ada)
        .await
        .into_iter()
        .find(|j| j["id"] == delivery["id"])
        .expect("the delivery is a job");
    assert_eq!(
        job["idempotencyKey"],
        format!("wh:{}:{id}", event["id"].as_str().unwrap())
    );

    app.clock.advance_millis(1_600);
    assert_eq!(tick(&app).await, report(1, 1, 0, 0), "the retry");
    let delivery = deliveries(&app, &ada, &id).await.body["data"][0].clone();
    assert_eq!(delivery["status"], "completed", "{delivery}");
    assert_eq!(delivery["attempts"], 2);
    assert_eq!(delivery["responseStatus"], 200);

    let hooks = verifier.received("in").await;
    assert_eq!(hooks.len(), 2);
    for hook in &hooks {
        // The delivery's id on every attempt, the event's type, the event as the log shows it.
        assert_eq!(hook.header("webhook-id"), delivery["id"].as_str());
        assert_eq!(hook.header("x-cms-event"), Some("document.published"));
        assert_eq!(hook.header("content-type"), Some("application/json"));
        assert_eq!(
            hook.json(),
            json!({
                "id": event["id"],
                "type": "document.published",
                "organizationId": doc["organizationId"],
                "payload": {
                    "documentId": doc["id"],
                    "documentType": "post",
                    "publishedHash": doc["publishedHash"],
                },
                "createdAt": event["createdAt"],
            })
        );
        verifier
            .verify_hook(&secret, hook)
            .await
            .expect("the signature verifies with the endpoint's secret");
    }
    // A new timestamp for the retry, signed anew.
    let stamp = |h: &Hook| {
        h.header("webhook-timestamp")
            .unwrap()
            .parse::<i64>()
            .unwrap()
    };
    assert!(stamp(&hooks[1]) > stamp(&hooks[0]), "{hooks:?}");
    assert_ne!(
        hooks[0].header("webhook-signature"),
        hooks[1].header("webhook-signature")
    );
    // A tampered body, or another secret, does not verify.
    let tampered = hooks[1].body.replace("\"post\"", "\"page\"");
    assert_ne!(tampered, hooks[1].body);
    let refused = verifier
        .verify(&secret, &hooks[1].signed_headers(), &tampered)
        .await
        .unwrap_err();
    assert!(refused.contains("signature"), "{refused}");
    // 32 zero bytes: a well-formed secret, not this endpoint's.
    let other = format!("whsec_{}=", "A".repeat(43));
    assert!(verifier.verify_hook(&other, &hooks[1]).await.is_err());
    // Sent once: nothing more to do.
    assert_eq!(tick(&app).await, report(0, 0, 0, 0));
    app.stop().await;
}

async fn endpoints_are_managed_and_their_input_checked(url: String) {
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = create(
        &app,
        &ada,
        json!({"url": "https://hooks.example.com/in", "events": ["document.published", ORDER_PLACED],
               "description": "Search index"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let made = res.body["data"].clone();
    let id = made["id"].as_str().unwrap().to_string();
    let secret = made["secret"].as_str().unwrap().to_string();
    assert_eq!(made["enabled"], true, "enabled by default");
    assert_eq!(made["description"], "Search index");
    assert_eq!(made["lastDelivery"], Value::Null);
    assert_eq!(made["organizationId"], app.active_organization(&ada).await);

    // Never the secret again: not in the list, not in a get.
    let list = call(&app, &ada, Method::GET, HOOKS, None).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert_eq!(list.body["data"].as_array().unwrap().len(), 1);
    let one = call(&app, &ada, Method::GET, &format!("{HOOKS}/{id}"), None).await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.body);
    for body in [&list.body, &one.body] {
        assert!(!body.to_string().contains(&secret), "{body}");
        assert!(!body.to_string().contains("whsec_"), "{body}");
        assert!(!body.to_string().contains("secret"), "{body}");
    }
    assert_eq!(one.body["data"]["url"], "https://hooks.example.com/in");

    // PATCH changes what it names, and keeps the rest.
    let res = call(
        &app,
        &ada,
        Method::PATCH,
        &format!("{HOOKS}/{id}"),
        Some(json!({"events": ["*"], "enabled": false})),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["events"], json!(["*"]));
    assert_eq!(res.body["data"]["enabled"], false);
    assert_eq!(res.body["data"]["description"], "Search index");
    assert_eq!(res.body["data"]["url"], "https://hooks.example.com/in");
    assert!(!res.body.to_string().contains("whsec_"));

    // Each bad input is a 400: issues for values, a message for a body of the wrong shape.
    let good = json!({"url": "https://hooks.example.com/in", "events": ["*"]});
    let with = |key: &str, value: Value| {
        let mut body = good.clone();
        body[key] = value;
        body
    };
    let without = |key: &str| {
        let mut body = good.clone();
        body.as_object_mut().unwrap().remove(key);
        body
    };
    for (body, path) in [
        (without("url"), Some("url")),
        (
            with("url", json!("ftp://hooks.example.com/in")),
            Some("url"),
        ),
        (with("url", json!("hooks.example.com/in")), Some("url")),
        (with("url", json!("https://")), Some("url")),
        (without("events"), Some("events")),
        (with("events", json!([])), Some("events")),
        (
            with("events", json!(["document.published", "nope.thing.done"])),
            Some("events[1]"),
        ),
        (with("events", json!(["*", "user.deleted"])), Some("events")),
        (
            with("events", json!(["user.deleted", "user.deleted"])),
            Some("events[1]"),
        ),
        (with("events", json!(["webhook.test"])), Some("events[0]")),
        (
            with("description", json!("d".repeat(501))),
            Some("description"),
        ),
        (with("url", json!(5)), None),
        (with("events", json!("*")), None),
        (with("enabled", json!("yes")), None),
        (with("secret", json!("whsec_mine")), None),
        (json!(["not", "an", "object"]), None),
    ] {
        let res = create(&app, &ada, body.clone()).await;
        let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        match path {
            Some(path) => {
                let paths: Vec<&str> = res.body["issues"]
                    .as_array()
                    .unwrap_or_else(|| panic!("issues for {body}: {}", res.body))
                    .iter()
                    .map(|i| i["path"].as_str().unwrap())
                    .collect();
                assert_eq!(paths, [path], "{body}: {}", res.body);
            }
            None => assert!(!message.is_empty(), "{body}"),
        }
    }
    let res = app
        .req(Method::POST, HOOKS)
        .cookie(&ada)
        .raw("application/json", "{not json")
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    for patch in [
        json!({"secret": "whsec_mine"}),
        json!({}),
        json!({"url": "mailto:ada@example.com"}),
        json!({"events": ["nope.thing.done"]}),
    ] {
        let res = call(
            &app,
            &ada,
            Method::PATCH,
            &format!("{HOOKS}/{id}"),
            Some(patch),
        )
        .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    // Nothing of the refused requests was stored.
    let list = call(&app, &ada, Method::GET, HOOKS, None).await;
    assert_eq!(
        list.body["data"].as_array().unwrap().len(),
        1,
        "{}",
        list.body
    );
    assert_eq!(list.body["data"][0]["events"], json!(["*"]));

    // Deleted, it is gone; an unknown id is 404 on every route.
    let res = call(&app, &ada, Method::DELETE, &format!("{HOOKS}/{id}"), None).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!({"id": id, "deleted": true}));
    for (method, path, body) in [
        (Method::GET, format!("{HOOKS}/{id}"), None),
        (
            Method::PATCH,
            format!("{HOOKS}/{id}"),
            Some(json!({"enabled": true})),
        ),
        (Method::DELETE, format!("{HOOKS}/{id}"), None),
        (Method::POST, format!("{HOOKS}/{id}/rotate-secret"), None),
        (Method::POST, format!("{HOOKS}/{id}/test"), None),
        (Method::GET, format!("{HOOKS}/{id}/deliveries"), None),
    ] {
        let res = call(&app, &ada, method.clone(), &path, body).await;
        res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    }
    let list = call(&app, &ada, Method::GET, HOOKS, None).await;
    assert_eq!(list.body["data"], json!([]));
    app.stop().await;
}

async fn another_organizations_endpoint_is_404(url: String) {
    let app = start(&url, |c| c.auth.invite_only = false).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (id, _) = endpoint(&app, &ada, "https://hooks.example.com/ada", &["*"]).await;
    // Bob owns an organization of his own.
    let bob = app.sign_up("Bob", "bob@example.com").await;
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Bob's", "slug": "bobs"}),
        )
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let bobs = res.body["data"]["id"].as_str().unwrap().to_string();
    let res = app
        .post("/api/organizations/switch", json!({"organizationId": bobs}))
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    for (method, path, body) in [
        (Method::GET, format!("{HOOKS}/{id}"), None),
        (
            Method::PATCH,
            format!("{HOOKS}/{id}"),
            Some(json!({"enabled": false})),
        ),
        (Method::DELETE, format!("{HOOKS}/{id}"), None),
        (Method::POST, format!("{HOOKS}/{id}/rotate-secret"), None),
        (Method::POST, format!("{HOOKS}/{id}/test"), None),
        (Method::GET, format!("{HOOKS}/{id}/deliveries"), None),
    ] {
        let res = call(&app, &bob, method.clone(), &path, body).await;
        res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    }
    let list = call(&app, &bob, Method::GET, HOOKS, None).await;
    assert_eq!(list.body["data"], json!([]), "{}", list.body);
    // Ada's is untouched.
    let res = call(&app, &ada, Method::GET, &format!("{HOOKS}/{id}"), None).await;
    assert_eq!(res.body["data"]["enabled"], true, "{}", res.body);
    assert!(webhook_jobs(&app, &ada).await.is_empty());
    app.stop().await;
}

async fn the_secret_is_shown_once_and_rotation_replaces_it(url: String) {
    let verifier = Verifier::start().await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (id, old) = endpoint(&app, &ada, &verifier.url("in"), &["document.published"]).await;
    let res = call(
        &app,
        &ada,
        Method::POST,
        &format!("{HOOKS}/{id}/rotate-secret"),
        None,
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let new = res.body["data"]["secret"].as_str().unwrap().to_string();
    assert_eq!(
        res.body["data"].as_object().unwrap().len(),
        1,
        "only the secret"
    );
    assert!(new.starts_with("whsec_") && new != old, "{new}");
    let one = call(&app, &ada, Method::GET, &format!("{HOOKS}/{id}"), None).await;
    assert!(!one.body.to_string().contains(&new));

    publish(&app, &ada, "After rotation").await;
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    let hooks = verifier.received("in").await;
    assert_eq!(hooks.len(), 1);
    verifier
        .verify_hook(&new, &hooks[0])
        .await
        .expect("the new secret verifies");
    let refused = verifier.verify_hook(&old, &hooks[0]).await.unwrap_err();
    assert!(refused.contains("signature"), "{refused}");
    app.stop().await;
}

async fn without_an_encryption_key_no_endpoint_is_made(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = create(
        &app,
        &ada,
        json!({"url": "https://hooks.example.com/in", "events": ["*"]}),
    )
    .await;
    let message =
        res.assert_handler_error(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Entity");
    assert!(message.contains("CMS_SECRET_ENCRYPTION_KEY"), "{message}");
    let list = call(&app, &ada, Method::GET, HOOKS, None).await;
    assert_eq!(list.body["data"], json!([]), "{}", list.body);
    app.stop().await;
}

async fn the_filter_and_the_creation_time_decide_who_receives(url: String) {
    let verifier = Verifier::start().await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    // What the log held before the endpoints existed is nobody's.
    let before: BTreeSet<String> = ids_of(&events(&app, &ada).await);
    app.clock.advance_millis(5);
    let (_every, every_secret) = endpoint(&app, &ada, &verifier.url("every"), &["*"]).await;
    endpoint(&app, &ada, &verifier.url("orders"), &[ORDER_PLACED]).await;
    let (off, _) = endpoint(&app, &ada, &verifier.url("off"), &["*"]).await;
    let res = call(
        &app,
        &ada,
        Method::PATCH,
        &format!("{HOOKS}/{off}"),
        Some(json!({"enabled": false})),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    app.clock.advance_millis(5);
    let first_order = order(&app, &ada, "o-1").await;
    publish(&app, &ada, "Hi").await;
    // Made after those events, before the relay saw them: it gets none of them.
    app.clock.advance_millis(5);
    let (_late, _) = endpoint(&app, &ada, &verifier.url("late"), &["*"]).await;
    tick(&app).await;

    // `*`: every event of the organization since it was made, each once, signed.
    let logged: BTreeSet<String> = ids_of(&events(&app, &ada).await)
        .difference(&before)
        .cloned()
        .collect();
    let every = verifier.received("every").await;
    assert_eq!(event_ids(&every), logged);
    assert_eq!(every.len(), logged.len(), "each event once");
    for hook in &every {
        assert_eq!(hook.header("x-cms-event"), hook.json()["type"].as_str());
        verifier.verify_hook(&every_secret, hook).await.unwrap();
    }
    assert!(
        every
            .iter()
            .any(|h| h.json()["type"] == "document.published")
    );
    // A list: its types only.
    let orders = verifier.received("orders").await;
    assert_eq!(event_ids(&orders), BTreeSet::from([first_order.clone()]));
    assert_eq!(orders[0].json()["payload"], json!({"orderId": "o-1"}));
    // Disabled, and created after: nothing.
    assert!(verifier.received("off").await.is_empty());
    assert!(verifier.received("late").await.is_empty());

    // The late endpoint receives what is committed after it was made.
    app.clock.advance_millis(5);
    let second_order = order(&app, &ada, "o-2").await;
    assert_eq!(
        tick(&app).await,
        report(3, 3, 0, 0),
        "every, orders and late"
    );
    let late = verifier.received("late").await;
    assert_eq!(event_ids(&late), BTreeSet::from([second_order.clone()]));
    let orders = verifier.received("orders").await;
    assert_eq!(
        event_ids(&orders),
        BTreeSet::from([first_order, second_order])
    );
    assert!(verifier.received("off").await.is_empty());
    app.stop().await;
}

async fn no_job_is_made_for_an_event_no_endpoint_wants(url: String) {
    let verifier = Verifier::start().await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    endpoint(&app, &ada, &verifier.url("orders"), &[ORDER_PLACED]).await;
    let (off, _) = endpoint(&app, &ada, &verifier.url("off"), &["*"]).await;
    call(
        &app,
        &ada,
        Method::PATCH,
        &format!("{HOOKS}/{off}"),
        Some(json!({"enabled": false})),
    )
    .await;
    for n in 0..3 {
        publish(&app, &ada, &format!("Post {n}")).await;
    }
    assert_eq!(tick(&app).await, report(0, 0, 0, 0));
    // Relayed, and no job for any of them.
    let res = app.get("/api/jobs/health").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["outboxBacklog"], 0, "{}", res.body);
    let res = app.get("/api/jobs").cookie(&ada).send().await;
    assert_eq!(res.body["pagination"]["total"], 0, "{}", res.body);
    assert!(verifier.received("orders").await.is_empty());

    // The one event it wants makes one job.
    order(&app, &ada, "o-1").await;
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    assert_eq!(webhook_jobs(&app, &ada).await.len(), 1);
    assert_eq!(verifier.received("orders").await.len(), 1);
    app.stop().await;
}

async fn a_test_ping_reaches_that_endpoint_only(url: String) {
    let verifier = Verifier::start().await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    // Whatever signing up logged is older than the endpoints.
    app.clock.advance_millis(5);
    let (id, secret) = endpoint(&app, &ada, &verifier.url("pinged"), &[ORDER_PLACED]).await;
    endpoint(&app, &ada, &verifier.url("other"), &["*"]).await;
    // Disabled, it still takes a test.
    call(
        &app,
        &ada,
        Method::PATCH,
        &format!("{HOOKS}/{id}"),
        Some(json!({"enabled": false})),
    )
    .await;
    let res = call(
        &app,
        &ada,
        Method::POST,
        &format!("{HOOKS}/{id}/test"),
        None,
    )
    .await;
    assert_eq!(res.status, StatusCode::ACCEPTED, "{}", res.body);
    let queued = res.body["data"].clone();
    assert_eq!(
        (
            queued["status"].clone(),
            queued["eventType"].clone(),
            queued["endpointId"].clone()
        ),
        (json!("pending"), json!("webhook.test"), json!(id))
    );
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));

    let hooks = verifier.received("pinged").await;
    assert_eq!(hooks.len(), 1);
    let body = hooks[0].json();
    assert_eq!(body["type"], "webhook.test");
    assert_eq!(body["id"], queued["eventId"]);
    assert_eq!(body["payload"], json!({"endpointId": id}));
    assert_eq!(body["organizationId"], app.active_organization(&ada).await);
    assert_eq!(hooks[0].header("webhook-id"), queued["id"].as_str());
    assert_eq!(hooks[0].header("x-cms-event"), Some("webhook.test"));
    verifier.verify_hook(&secret, &hooks[0]).await.unwrap();
    assert!(
        verifier.received("other").await.is_empty(),
        "that endpoint only"
    );
    // A test is no event of the log.
    assert!(
        events(&app, &ada)
            .await
            .iter()
            .all(|e| e["type"] != "webhook.test")
    );
    let log = deliveries(&app, &ada, &id).await;
    assert_eq!(log.body["data"][0]["id"], queued["id"]);
    assert_eq!(log.body["data"][0]["status"], "completed");
    assert_eq!(log.body["data"][0]["responseStatus"], 200);
    app.stop().await;
}

async fn the_delivery_log_pages_newest_first_with_response_status(url: String) {
    let verifier = Verifier::start().await;
    verifier.script("in", &[200, 410, 204], 200).await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (id, _) = endpoint(&app, &ada, &verifier.url("in"), &[ORDER_PLACED]).await;
    let mut orders = Vec::new();
    for n in 0..3 {
        orders.push(order(&app, &ada, &format!("o-{n}")).await);
        app.clock.advance_millis(10);
        // One relay per event, so each delivery has a time of its own.
        tick(&app).await;
    }
    let page = |n: u32| format!("{HOOKS}/{id}/deliveries?page={n}&pageSize=2");
    let first = call(&app, &ada, Method::GET, &page(1), None).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.body["pagination"]["total"], 3);
    assert_eq!(first.body["pagination"]["hasNextPage"], true);
    let second = call(&app, &ada, Method::GET, &page(2), None).await;
    let listed: Vec<(Value, Value, Value)> = first.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second.body["data"].as_array().unwrap())
        .map(|d| {
            (
                d["eventId"].clone(),
                d["responseStatus"].clone(),
                d["status"].clone(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (json!(orders[2]), json!(204), json!("completed")),
            (json!(orders[1]), json!(410), json!("pending")),
            (json!(orders[0]), json!(200), json!("completed")),
        ]
    );
    // The list shows each endpoint's newest delivery.
    let list = call(&app, &ada, Method::GET, HOOKS, None).await;
    assert_eq!(
        list.body["data"][0]["lastDelivery"]["eventId"],
        json!(orders[2])
    );
    assert_eq!(list.body["data"][0]["lastDelivery"]["responseStatus"], 204);
    for bad in [
        "page=0",
        "pageSize=0",
        "pageSize=101",
        "page=x",
        "pageSize=-1",
    ] {
        let res = call(
            &app,
            &ada,
            Method::GET,
            &format!("{HOOKS}/{id}/deliveries?{bad}"),
            None,
        )
        .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    app.stop().await;
}

async fn an_organization_has_at_most_20_endpoints(url: String) {
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let mut ids = Vec::new();
    for n in 0..20 {
        let (id, _) = endpoint(
            &app,
            &ada,
            &format!("https://hooks.example.com/{n}"),
            &["*"],
        )
        .await;
        ids.push(id);
    }
    let res = create(
        &app,
        &ada,
        json!({"url": "https://hooks.example.com/21", "events": ["*"]}),
    )
    .await;
    let message = res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert!(message.contains("20"), "{message}");
    let list = call(&app, &ada, Method::GET, HOOKS, None).await;
    assert_eq!(list.body["data"].as_array().unwrap().len(), 20);
    // Room again once one goes.
    call(
        &app,
        &ada,
        Method::DELETE,
        &format!("{HOOKS}/{}", ids[0]),
        None,
    )
    .await;
    endpoint(&app, &ada, "https://hooks.example.com/21", &["*"]).await;
    app.stop().await;
}

/// `sha256=` and the hex HMAC-SHA-256 of `body` under `secret`, computed here.
fn settings_signature(secret: &str, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}

async fn the_settings_form_is_delivered_beside_endpoints(url: String) {
    let verifier = Verifier::start().await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (_, secret) = endpoint(
        &app,
        &ada,
        &verifier.url("endpoint"),
        &["document.published"],
    )
    .await;
    let res = app
        .req(Method::PUT, "/api/plugin-settings/webhooks")
        .json(
            json!({"values": {"url": verifier.url("form"), "events": "document.published",
                                "secret": "form-secret"}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    publish(&app, &ada, "Both").await;
    assert_eq!(tick(&app).await, report(2, 2, 0, 0));
    let event = newest(&app, &ada, "document.published").await;

    let form = verifier.received("form").await;
    assert_eq!(form.len(), 1);
    let hook = &form[0];
    let job = webhook_jobs(&app, &ada)
        .await
        .into_iter()
        .find(|j| j["payload"]["settings"] == true)
        .expect("the form's delivery job");
    assert_eq!(
        job["idempotencyKey"],
        format!("wh:{}:settings", event["id"].as_str().unwrap())
    );
    // Section 11's request, exactly: its three headers, no Standard Webhooks ones.
    assert_eq!(hook.header("x-cms-event"), Some("document.published"));
    assert_eq!(hook.header("x-cms-delivery"), job["id"].as_str());
    assert_eq!(
        hook.header("x-cms-signature"),
        Some(settings_signature("form-secret", hook.body.as_bytes()).as_str())
    );
    for absent in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        assert_eq!(hook.header(absent), None, "{absent}");
    }
    assert_eq!(hook.json()["id"], event["id"]);

    let endpoint_hooks = verifier.received("endpoint").await;
    assert_eq!(endpoint_hooks.len(), 1);
    assert_eq!(endpoint_hooks[0].body, hook.body, "the same event body");
    assert_eq!(endpoint_hooks[0].header("x-cms-signature"), None);
    assert_eq!(endpoint_hooks[0].header("x-cms-delivery"), None);
    verifier
        .verify_hook(&secret, &endpoint_hooks[0])
        .await
        .unwrap();
    app.stop().await;
}

async fn disabling_cancels_what_waits_and_deleting_drops_the_log(url: String) {
    let verifier = Verifier::start().await;
    verifier.script("in", &[503], 200).await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (id, _) = endpoint(&app, &ada, &verifier.url("in"), &[ORDER_PLACED]).await;
    order(&app, &ada, "o-1").await;
    assert_eq!(tick(&app).await, report(1, 0, 1, 0));
    let res = call(
        &app,
        &ada,
        Method::PATCH,
        &format!("{HOOKS}/{id}"),
        Some(json!({"enabled": false})),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let log = deliveries(&app, &ada, &id).await;
    assert_eq!(log.body["data"][0]["status"], "cancelled", "{}", log.body);
    assert_eq!(log.body["data"][0]["responseStatus"], 503);
    app.clock.advance_millis(60_000);
    assert_eq!(
        tick(&app).await,
        report(0, 0, 0, 0),
        "no retry once disabled"
    );
    assert_eq!(verifier.received("in").await.len(), 1);

    // Enabled again, it receives what comes from then on.
    call(
        &app,
        &ada,
        Method::PATCH,
        &format!("{HOOKS}/{id}"),
        Some(json!({"enabled": true})),
    )
    .await;
    order(&app, &ada, "o-2").await;
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    assert_eq!(verifier.received("in").await.len(), 2);

    // Deleted: the log goes with it, the jobs stay in the queue's history.
    let res = call(&app, &ada, Method::DELETE, &format!("{HOOKS}/{id}"), None).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    deliveries(&app, &ada, &id)
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let statuses: BTreeSet<String> = webhook_jobs(&app, &ada)
        .await
        .iter()
        .map(|j| j["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        statuses,
        BTreeSet::from(["cancelled".into(), "completed".into()])
    );
    order(&app, &ada, "o-3").await;
    assert_eq!(
        tick(&app).await,
        report(0, 0, 0, 0),
        "a deleted endpoint gets nothing"
    );
    app.stop().await;
}

async fn with_webhooks_off_the_routes_are_404(url: String) {
    let app = start(&url, |c| c.plugins.webhooks = false).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    for (method, path, body) in [
        (Method::GET, HOOKS.to_string(), None),
        (
            Method::POST,
            HOOKS.to_string(),
            Some(json!({"url": "https://x.example/", "events": ["*"]})),
        ),
        (Method::GET, format!("{HOOKS}/some-id/deliveries"), None),
        (Method::POST, format!("{HOOKS}/some-id/test"), None),
    ] {
        let res = call(&app, &ada, method, &path, body).await;
        let message = res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
        assert!(message.contains("plugins.webhooks"), "{message}");
    }
    // Still 401 without credentials: nothing is said before the caller is known.
    let res = app.get(HOOKS).send().await;
    res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

/// An API key holding `org.settings` manages endpoints like a session does.
async fn a_key_with_org_settings_manages_endpoints(url: String) {
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let key = app
        .create_key(
            &ada,
            json!({"name": "infra", "capabilities": ["org.settings"]}),
        )
        .await;
    let res = app
        .post(
            HOOKS,
            json!({"url": "https://hooks.example.com/in", "events": ["*"]}),
        )
        .key(&key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap();
    let res = app.get(&format!("{HOOKS}/{id}")).key(&key).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let list = call(&app, &ada, Method::GET, HOOKS, None).await;
    assert_eq!(list.body["data"][0]["id"], id);
    app.stop().await;
}

cms_store::both_engines!(
    an_endpoint_delivery_is_signed_and_retried_with_the_same_id,
    endpoints_are_managed_and_their_input_checked,
    another_organizations_endpoint_is_404,
    the_secret_is_shown_once_and_rotation_replaces_it,
    without_an_encryption_key_no_endpoint_is_made,
    the_filter_and_the_creation_time_decide_who_receives,
    no_job_is_made_for_an_event_no_endpoint_wants,
    a_test_ping_reaches_that_endpoint_only,
    the_delivery_log_pages_newest_first_with_response_status,
    an_organization_has_at_most_20_endpoints,
    the_settings_form_is_delivered_beside_endpoints,
    disabling_cancels_what_waits_and_deleting_drops_the_log,
    with_webhooks_off_the_routes_are_404,
    a_key_with_org_settings_manages_endpoints,
);
