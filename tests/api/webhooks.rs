//! The first-party `webhooks` plugin's settings form (CONTRACT.md section 11): per-organization
//! settings, one delivery job per event the form lists (none for the others), the signed POST
//! to a receiver on a loopback port, retries with backoff, dead letters, refused private
//! targets and timeouts. The endpoints of section 16 are `webhook_endpoints.rs`.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, Method, StatusCode};
use cms::plugin::{Plugin, PluginParts};
use cms::service::{Credentials, EventDeclaration, TickReport};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::support::{Session, TestApp, config_for};

const KEY: &str = "a secret encryption key of at least thirty-two characters";
const SECRET: &str = "whsec-0f3b9c2e7a";
const ORDER_PLACED: &str = "acme.order.placed";

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    /// The connection's far end: the same for requests over one kept-alive connection.
    peer: SocketAddr,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct Script {
    received: Vec<Received>,
    /// The statuses of the next answers, in order; then `otherwise`.
    statuses: VecDeque<u16>,
    otherwise: u16,
    /// How long each answer waits.
    delay: Duration,
}

/// A webhook receiver on a loopback port, answering as scripted, until stopped.
struct Receiver {
    url: String,
    script: Arc<Mutex<Script>>,
    server: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start(statuses: &[u16], otherwise: u16, delay: Duration) -> Receiver {
        let script = Arc::new(Mutex::new(Script {
            received: Vec::new(),
            statuses: statuses.iter().copied().collect(),
            otherwise,
            delay,
        }));
        let router = axum::Router::new()
            .route("/hook", axum::routing::any(answer))
            .with_state(script.clone());
        let port = crate::support::free_port();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("the receiver's port is free");
        let server = tokio::spawn(async move {
            let service = router.into_make_service_with_connect_info::<SocketAddr>();
            let _ = axum::serve(listener, service).await;
        });
        Receiver {
            url: format!("http://127.0.0.1:{port}/hook"),
            script,
            server,
        }
    }

    /// A receiver answering 200 at once.
    async fn ok() -> Receiver {
        Receiver::start(&[], 200, Duration::ZERO).await
    }

    fn received(&self) -> Vec<Received> {
        self.script.lock().unwrap().received.clone()
    }

    fn stop(self) {
        self.server.abort();
    }
}

async fn answer(
    State(script): State<Arc<Mutex<Script>>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let (status, delay) = {
        let mut script = script.lock().unwrap();
        script.received.push(Received {
            peer,
            method,
            headers,
            body,
        });
        let status = script.statuses.pop_front().unwrap_or(script.otherwise);
        (status, script.delay)
    };
    tokio::time::sleep(delay).await;
    StatusCode::from_u16(status).unwrap()
}

/// A plugin registered by the host, so before `webhooks`, declaring an event type of its own.
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

/// An app with the webhooks plugin on (the default), a key for secret settings, `configure`
/// applied to its configuration, and the `acme` plugin.
async fn start(url: &str, configure: impl FnOnce(&mut cms::Config)) -> TestApp {
    let mut config = config_for(url);
    config.plugins.secret_encryption_key = Some(KEY.into());
    configure(&mut config);
    TestApp::custom(config, |b| b.plugin(Acme)).await
}

async fn set_webhook(app: &TestApp, session: &Session, values: Value) {
    let res = app
        .req(Method::PUT, "/api/plugin-settings/webhooks")
        .json(json!({ "values": values }))
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
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

/// The delivery jobs of the settings form in the session's organization, newest first.
async fn webhook_jobs(app: &TestApp, session: &Session) -> Vec<Value> {
    let res = app
        .get("/api/jobs?type=webhooks.deliver&pageSize=100")
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|job| job["payload"]["settings"] == true)
        .cloned()
        .collect()
}

/// The one webhooks delivery job.
async fn the_job(app: &TestApp, session: &Session) -> Value {
    let jobs = webhook_jobs(app, session).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    jobs[0].clone()
}

/// The events of the session's organization, newest first.
async fn events(app: &TestApp, session: &Session) -> Vec<Value> {
    let res = app.get("/api/events").cookie(session).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].as_array().unwrap().clone()
}

/// `sha256=` and the hex HMAC-SHA-256 of `body` under `secret`, computed here.
fn expected_signature(secret: &str, body: &[u8]) -> String {
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

async fn a_matching_event_is_posted_signed_with_its_delivery_id(url: String) {
    let receiver = Receiver::ok().await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    set_webhook(
        &app,
        &ada,
        json!({
            "url": receiver.url,
            "events": "user.deleted, document.published",
            "secret": SECRET,
        }),
    )
    .await;
    // The settings page the plugin declared, secret redacted.
    let res = app.get("/api/plugin-settings").cookie(&ada).send().await;
    let page = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pluginId"] == "webhooks")
        .expect("the webhooks settings")
        .clone();
    let fields: Vec<(&str, &str)> = page["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        fields,
        [
            ("url", "string"),
            ("events", "string"),
            ("secret", "secret")
        ]
    );
    assert_eq!(page["values"]["secret"], "********");

    let doc = publish(&app, &ada, "Hi").await;
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));

    let event = events(&app, &ada).await[0].clone();
    assert_eq!(event["type"], "document.published");
    let job = the_job(&app, &ada).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["attempts"], 1);
    assert_eq!(
        job["idempotencyKey"],
        format!("wh:{}:settings", event["id"].as_str().unwrap())
    );

    let received = receiver.received();
    assert_eq!(received.len(), 1);
    let hook = &received[0];
    assert_eq!(hook.method, Method::POST);
    assert_eq!(hook.header("content-type"), Some("application/json"));
    assert_eq!(hook.header("x-cms-event"), Some("document.published"));
    assert_eq!(hook.header("x-cms-delivery"), job["id"].as_str());
    // The body is the event as the log shows it, with exactly these keys.
    let body = hook.json();
    assert_eq!(
        body,
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
    assert!(
        chrono::DateTime::parse_from_rfc3339(body["createdAt"].as_str().unwrap()).is_ok(),
        "{body}"
    );
    // The signature covers the exact bytes sent, under the saved secret.
    assert_eq!(
        hook.header("x-cms-signature"),
        Some(expected_signature(SECRET, &hook.body).as_str())
    );
    assert_ne!(
        hook.header("x-cms-signature"),
        Some(expected_signature("another secret", &hook.body).as_str())
    );

    // Without a secret the request goes unsigned.
    set_webhook(
        &app,
        &ada,
        json!({"url": receiver.url, "events": "document.published", "secret": null}),
    )
    .await;
    publish(&app, &ada, "Again").await;
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[1].header("x-cms-signature"), None);
    assert_eq!(
        received[1].header("x-cms-event"),
        Some("document.published")
    );
    assert_eq!(tick(&app).await, report(0, 0, 0, 0), "nothing twice");
    assert_eq!(receiver.received().len(), 2);

    receiver.stop();
    app.stop().await;
}

async fn a_failed_attempt_is_retried_with_the_same_delivery_id(url: String) {
    let receiver = Receiver::start(&[500], 200, Duration::ZERO).await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    set_webhook(
        &app,
        &ada,
        json!({"url": receiver.url, "events": "document.published", "secret": SECRET}),
    )
    .await;
    publish(&app, &ada, "Hi").await;

    assert_eq!(tick(&app).await, report(1, 0, 1, 0));
    let job = the_job(&app, &ada).await;
    assert_eq!(job["status"], "pending", "{job}");
    assert_eq!(job["attempts"], 1);
    let error = job["lastError"].as_str().expect("a lastError");
    assert!(error.contains("500"), "{error}");
    assert_eq!(receiver.received().len(), 1);

    assert_eq!(tick(&app).await, report(0, 0, 0, 0), "backing off");
    app.clock.advance_millis(1_600);
    assert_eq!(tick(&app).await, report(1, 1, 0, 0), "the retry");
    let job = the_job(&app, &ada).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["attempts"], 2);

    let received = receiver.received();
    assert_eq!(received.len(), 2);
    for hook in &received {
        assert_eq!(hook.header("x-cms-delivery"), job["id"].as_str());
        assert_eq!(
            hook.header("x-cms-signature"),
            Some(expected_signature(SECRET, &hook.body).as_str())
        );
    }
    assert_eq!(received[0].body, received[1].body, "the same event again");

    receiver.stop();
    app.stop().await;
}

async fn a_receiver_that_keeps_failing_dead_letters_the_delivery(url: String) {
    let receiver = Receiver::start(&[], 503, Duration::ZERO).await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    set_webhook(
        &app,
        &ada,
        json!({"url": receiver.url, "events": "document.published"}),
    )
    .await;
    publish(&app, &ada, "Hi").await;

    for attempt in 1..=4 {
        assert_eq!(tick(&app).await, report(1, 0, 1, 0), "attempt {attempt}");
        let job = the_job(&app, &ada).await;
        assert_eq!(job["status"], "pending", "{job}");
        assert_eq!(job["attempts"], attempt);
        // Past the longest backoff so far (8 s plus half again of jitter).
        app.clock.advance_millis(13_000);
    }
    assert_eq!(
        tick(&app).await,
        report(1, 0, 0, 1),
        "the fifth: dead-lettered"
    );
    let job = the_job(&app, &ada).await;
    assert_eq!(job["status"], "dead_letter", "{job}");
    assert_eq!(
        (job["attempts"].clone(), job["maxAttempts"].clone()),
        (json!(5), json!(5))
    );
    assert!(job["lastError"].as_str().unwrap().contains("503"), "{job}");
    assert_eq!(receiver.received().len(), 5);
    app.clock.advance_millis(3_600_000);
    assert_eq!(tick(&app).await, report(0, 0, 0, 0), "no sixth attempt");
    assert_eq!(receiver.received().len(), 5);

    receiver.stop();
    app.stop().await;
}

async fn events_not_listed_or_without_a_url_are_not_sent(url: String) {
    let receiver = Receiver::ok().await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;

    // No settings saved at all: no job is made.
    publish(&app, &ada, "Before").await;
    assert_eq!(tick(&app).await, report(0, 0, 0, 0));

    // A type not in the list.
    set_webhook(
        &app,
        &ada,
        json!({"url": receiver.url, "events": "user.deleted, ,document.publish"}),
    )
    .await;
    publish(&app, &ada, "Unlisted").await;
    assert_eq!(tick(&app).await, report(0, 0, 0, 0));

    // An empty list.
    set_webhook(&app, &ada, json!({"url": receiver.url, "events": ""})).await;
    publish(&app, &ada, "Empty list").await;
    assert_eq!(tick(&app).await, report(0, 0, 0, 0));

    // Listed, but no URL.
    set_webhook(
        &app,
        &ada,
        json!({"url": null, "events": "document.published", "secret": SECRET}),
    )
    .await;
    publish(&app, &ada, "No url").await;
    assert_eq!(tick(&app).await, report(0, 0, 0, 0));

    // The events were relayed; none made a job (no event nobody wants costs a job).
    let res = app.get("/api/jobs/health").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["outboxBacklog"], 0, "{}", res.body);
    let jobs = webhook_jobs(&app, &ada).await;
    assert!(jobs.is_empty(), "{jobs:?}");
    assert!(receiver.received().is_empty());

    // The same settings with the type listed do send: the receiver was reachable all along.
    set_webhook(
        &app,
        &ada,
        json!({"url": receiver.url, "events": " document.published "}),
    )
    .await;
    publish(&app, &ada, "Listed").await;
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    assert_eq!(receiver.received().len(), 1);

    receiver.stop();
    app.stop().await;
}

async fn private_targets_are_refused_when_denied(url: String) {
    let receiver = Receiver::ok().await;
    let app = start(&url, |c| c.plugins.webhooks_deny_private_targets = true).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    // By name: refused once `localhost` resolves to the loopback address.
    let by_name = receiver.url.replace("127.0.0.1", "localhost");
    set_webhook(
        &app,
        &ada,
        json!({"url": by_name, "events": "document.published"}),
    )
    .await;
    publish(&app, &ada, "Hi").await;
    assert_eq!(tick(&app).await, report(1, 0, 1, 0));
    let job = the_job(&app, &ada).await;
    assert_eq!(job["status"], "pending", "{job}");
    assert_eq!(job["attempts"], 1);
    let error = job["lastError"].as_str().unwrap();
    assert!(error.contains("internal address"), "{error}");
    assert!(error.contains("localhost"), "{error}");
    assert!(
        error.contains("plugins.webhooksDenyPrivateTargets"),
        "{error}"
    );

    // By address: refused too, on the retry.
    set_webhook(
        &app,
        &ada,
        json!({"url": receiver.url, "events": "document.published"}),
    )
    .await;
    app.clock.advance_millis(1_600);
    assert_eq!(tick(&app).await, report(1, 0, 1, 0));
    let job = the_job(&app, &ada).await;
    assert_eq!(job["attempts"], 2);
    let error = job["lastError"].as_str().unwrap();
    assert!(error.contains("127.0.0.1, an internal address"), "{error}");
    assert!(
        receiver.received().is_empty(),
        "nothing reached the receiver"
    );

    receiver.stop();
    app.stop().await;
}

/// The actor behind a session, as the HTTP door resolves it.
async fn actor(app: &TestApp, session: &Session) -> cms::service::Actor {
    app.app
        .cms
        .auth()
        .authenticate(&Credentials {
            bearer: Some(session.token.clone()),
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("a signed-in actor")
        .actor
}

async fn custom_events_declared_before_webhooks_are_delivered(url: String) {
    let receiver = Receiver::ok().await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    set_webhook(
        &app,
        &ada,
        json!({"url": receiver.url, "events": ORDER_PLACED, "secret": SECRET}),
    )
    .await;
    let emitted = app
        .app
        .cms
        .events()
        .emit(
            &actor(&app, &ada).await,
            ORDER_PLACED,
            json!({"orderId": "o-1"}),
        )
        .await
        .unwrap();
    // A document published beside it is not in this organization's list: no job for it.
    publish(&app, &ada, "Hi").await;
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));

    let received = receiver.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].header("x-cms-event"), Some(ORDER_PLACED));
    let body = received[0].json();
    assert_eq!(body["id"], emitted.id);
    assert_eq!(body["type"], ORDER_PLACED);
    assert_eq!(body["payload"], json!({"orderId": "o-1"}));
    assert_eq!(
        body["organizationId"].as_str(),
        emitted.organization_id.as_deref()
    );

    receiver.stop();
    app.stop().await;
}

async fn a_receiver_slower_than_the_timeout_fails_the_attempt(url: String) {
    let receiver = Receiver::start(&[], 200, Duration::from_secs(3)).await;
    let app = start(&url, |c| c.plugins.webhooks_timeout_ms = 300).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    set_webhook(
        &app,
        &ada,
        json!({"url": receiver.url, "events": "document.published"}),
    )
    .await;
    publish(&app, &ada, "Hi").await;
    let started = std::time::Instant::now();
    assert_eq!(tick(&app).await, report(1, 0, 1, 0));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the attempt was cut short: {:?}",
        started.elapsed()
    );
    let job = the_job(&app, &ada).await;
    assert_eq!(job["status"], "pending", "{job}");
    assert_eq!(job["attempts"], 1);
    let error = job["lastError"].as_str().unwrap();
    assert!(error.contains("did not answer within 300ms"), "{error}");
    assert_eq!(receiver.received().len(), 1, "the request did arrive");

    receiver.stop();
    app.stop().await;
}

async fn with_the_plugin_off_nothing_is_queued(url: String) {
    let app = start(&url, |c| c.plugins.webhooks = false).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    publish(&app, &ada, "Hi").await;
    // The events (the owner's membership, the create, the publish) are logged and relayed,
    // to no consumer.
    assert_eq!(events(&app, &ada).await.len(), 3);
    assert_eq!(tick(&app).await, report(0, 0, 0, 0));
    let res = app.get("/api/jobs").cookie(&ada).send().await;
    assert_eq!(res.body["pagination"]["total"], 0, "{}", res.body);
    let res = app.get("/api/jobs/health").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["outboxBacklog"], 0, "{}", res.body);
    // No settings page and no plugin listed.
    let res = app.get("/api/plugin-settings").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(
        res.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["pluginId"] != "webhooks"),
        "{}",
        res.body
    );
    let res = app.get("/api/plugins").cookie(&ada).send().await;
    let ids: Vec<&str> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&"webhooks"), "{ids:?}");
    app.stop().await;
}

async fn the_plugin_is_listed_with_its_job_handler_and_settings(url: String) {
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app.get("/api/plugins").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let plugins = res.body["data"].as_array().unwrap();
    let webhooks = plugins
        .iter()
        .find(|p| p["id"] == "webhooks")
        .expect("webhooks is listed");
    // No consumer: the relay decides what is sent; the plugin's handler sends it.
    assert_eq!(webhooks["consumers"], json!([]));
    assert_eq!(webhooks["jobTypes"], json!(["webhooks.deliver"]));
    assert_eq!(webhooks["settings"], true);
    assert_eq!(
        plugins.last().map(|p| p["id"].clone()),
        Some(json!("webhooks")),
        "registered last"
    );
    app.stop().await;
}

/// The plugin's one HTTP client serves every delivery: the second delivery, a job of its own
/// in a later tick, reaches the receiver over the connection the first one opened.
async fn deliveries_share_one_client_and_its_connections(url: String) {
    let receiver = Receiver::ok().await;
    let app = start(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    set_webhook(
        &app,
        &ada,
        json!({"url": receiver.url, "events": "document.published"}),
    )
    .await;
    publish(&app, &ada, "One").await;
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    publish(&app, &ada, "Two").await;
    assert_eq!(tick(&app).await, report(1, 1, 0, 0));
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        received[0].peer, received[1].peer,
        "the second delivery reused the first one's connection"
    );
    receiver.stop();
    app.stop().await;
}

cms_store::both_engines!(
    deliveries_share_one_client_and_its_connections,
    a_matching_event_is_posted_signed_with_its_delivery_id,
    a_failed_attempt_is_retried_with_the_same_delivery_id,
    a_receiver_that_keeps_failing_dead_letters_the_delivery,
    events_not_listed_or_without_a_url_are_not_sent,
    private_targets_are_refused_when_denied,
    custom_events_declared_before_webhooks_are_delivered,
    a_receiver_slower_than_the_timeout_fails_the_attempt,
    with_the_plugin_off_nothing_is_queued,
    the_plugin_is_listed_with_its_job_handler_and_settings,
);
