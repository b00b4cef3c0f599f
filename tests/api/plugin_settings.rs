//! Plugin settings (SPEC.md "Plugin settings", Authentication points 6 and 13; CONTRACT.md
//! sections 9 and 12): listing, saving with replace semantics, redacted and encrypted secrets,
//! sessions with `org.settings` only, per organization, and the settings plugin handlers get.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::http::{Method, StatusCode};
use cms::core::plugin_settings::{SettingField, SettingKind, SettingsDeclaration};
use cms::service::Registry;
use cms::service::jobs::{
    Consumer, EventHandler, EventView, HandlerContext, HandlerError, JobHandler, JobView,
};
use serde_json::{Value, json};

use crate::support::{Session, TestApp};

/// The configuration of these tests: they declare settings of their own under the plugin id
/// `webhooks`, so the first-party plugin of that id is off (tests/api/webhooks.rs covers it).
fn config_for(url: &str) -> cms::Config {
    let mut config = crate::support::config_for(url);
    config.plugins.webhooks = false;
    config
}

const SETTINGS: &str = "/api/plugin-settings";
const WEBHOOKS: &str = "/api/plugin-settings/webhooks";
const KEY: &str = "a secret encryption key of at least thirty-two characters";
/// A secret whose bytes must never reach the database.
const PLAINTEXT: &str = "whsec-plaintext-7c1e9a0b4d";

fn field(name: &str, kind: SettingKind) -> SettingField {
    SettingField {
        name: name.into(),
        kind,
        title: format!("The {name}"),
    }
}

fn webhooks() -> SettingsDeclaration {
    SettingsDeclaration {
        plugin_id: "webhooks".into(),
        title: "Webhooks".into(),
        description: "Posts events to a URL".into(),
        fields: vec![
            field("url", SettingKind::String),
            field("events", SettingKind::Text),
            field("timeout", SettingKind::Number),
            field("enabled", SettingKind::Boolean),
            field("secret", SettingKind::Secret),
        ],
    }
}

fn analytics() -> SettingsDeclaration {
    SettingsDeclaration {
        plugin_id: "analytics".into(),
        title: "Analytics".into(),
        description: String::new(),
        fields: vec![field("siteId", SettingKind::String)],
    }
}

fn unset() -> Value {
    json!({"url": null, "events": null, "timeout": null, "enabled": null, "secret": null})
}

/// An app anyone may sign up to, declaring the two plugins, with or without the key.
async fn start(url: &str, key: Option<&str>) -> TestApp {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    config.plugins.secret_encryption_key = key.map(str::to_string);
    TestApp::custom(config, |b| {
        b.plugin_settings(webhooks()).plugin_settings(analytics())
    })
    .await
}

async fn put(
    app: &TestApp,
    session: &Session,
    plugin: &str,
    values: Value,
) -> crate::support::Reply {
    app.req(Method::PUT, &format!("{SETTINGS}/{plugin}"))
        .json(json!({ "values": values }))
        .cookie(session)
        .send()
        .await
}

async fn values_of(app: &TestApp, session: &Session, plugin: &str) -> Value {
    let res = app.get(SETTINGS).cookie(session).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pluginId"] == plugin)
        .unwrap_or_else(|| panic!("{plugin} in {}", res.body))["values"]
        .clone()
}

/// The stored `values` column of every row, as text, read past the service.
async fn raw_rows(url: &str) -> Vec<String> {
    use sqlx::Connection;
    let sql = "SELECT CAST(\"values\" AS TEXT) FROM plugin_settings";
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sql).fetch_all(&mut conn).await.unwrap()
    } else {
        // The test's login bypasses row-level security, and its URL names the test's schema.
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sql).fetch_all(&mut conn).await.unwrap()
    }
}

async fn settings_are_listed_saved_and_secrets_redacted(url: String) {
    let app = start(&url, Some(KEY)).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;

    // Every declared plugin, in declaration order, every field null.
    let res = app.get(SETTINGS).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["success"], true);
    let data = res.body["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "{}", res.body);
    assert_eq!(
        data[0],
        json!({
            "pluginId": "webhooks",
            "title": "Webhooks",
            "description": "Posts events to a URL",
            "fields": [
                {"name": "url", "type": "string", "title": "The url"},
                {"name": "events", "type": "text", "title": "The events"},
                {"name": "timeout", "type": "number", "title": "The timeout"},
                {"name": "enabled", "type": "boolean", "title": "The enabled"},
                {"name": "secret", "type": "secret", "title": "The secret"},
            ],
            "values": unset(),
        })
    );
    assert_eq!(data[1]["pluginId"], "analytics");
    assert_eq!(data[1]["values"], json!({"siteId": null}));

    // A save answers with the values as a read shows them: the secret redacted.
    let saved = json!({
        "url": "https://hooks.example.com/in",
        "events": "document.published,forms.submission.created",
        "timeout": 2.5,
        "enabled": true,
        "secret": PLAINTEXT,
    });
    let res = put(&app, &ada, "webhooks", saved.clone()).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let redacted = json!({
        "url": "https://hooks.example.com/in",
        "events": "document.published,forms.submission.created",
        "timeout": 2.5,
        "enabled": true,
        "secret": "********",
    });
    assert_eq!(res.body["data"]["pluginId"], "webhooks");
    assert_eq!(res.body["data"]["values"], redacted);
    assert!(!res.body.to_string().contains(PLAINTEXT));
    let list = app.get(SETTINGS).cookie(&ada).send().await;
    assert!(!list.body.to_string().contains(PLAINTEXT));
    assert_eq!(values_of(&app, &ada, "webhooks").await, redacted);
    assert_eq!(
        values_of(&app, &ada, "analytics").await,
        json!({"siteId": null})
    );
    // The plugin's own code gets the plaintext.
    let plugin_view = app.app.cms.plugin_settings();
    assert_eq!(
        plugin_view.values_for(&org, "webhooks").await.unwrap(),
        saved
    );

    // The stored bytes hold no plaintext, only the sealed form.
    let rows = raw_rows(&url).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(!rows[0].contains(PLAINTEXT), "{}", rows[0]);
    assert!(rows[0].contains("v1:"), "{}", rows[0]);
    assert!(rows[0].contains("hooks.example.com"), "{}", rows[0]);

    // "********" keeps the stored secret; an omitted field becomes unset.
    let res = put(
        &app,
        &ada,
        "webhooks",
        json!({"url": "https://other.example.com", "secret": "********", "enabled": false}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let expected = json!({
        "url": "https://other.example.com",
        "events": null,
        "timeout": null,
        "enabled": false,
        "secret": "********",
    });
    assert_eq!(res.body["data"]["values"], expected);
    assert_eq!(values_of(&app, &ada, "webhooks").await, expected);
    assert_eq!(
        plugin_view.values_for(&org, "webhooks").await.unwrap(),
        json!({
            "url": "https://other.example.com",
            "events": null,
            "timeout": null,
            "enabled": false,
            "secret": PLAINTEXT,
        })
    );

    // A new secret replaces it; null (or leaving it out) unsets it; "********" keeps unset.
    let res = put(
        &app,
        &ada,
        "webhooks",
        json!({"secret": "second-secret-value"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        plugin_view.values_for(&org, "webhooks").await.unwrap()["secret"],
        "second-secret-value"
    );
    let res = put(&app, &ada, "webhooks", json!({"secret": null, "url": "u"})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["values"]["secret"], Value::Null);
    let res = put(&app, &ada, "webhooks", json!({"secret": "********"})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(values_of(&app, &ada, "webhooks").await, unset());
    assert_eq!(
        plugin_view.values_for(&org, "webhooks").await.unwrap(),
        unset()
    );
    // An empty object unsets everything.
    put(&app, &ada, "analytics", json!({"siteId": "S-1"})).await;
    assert_eq!(
        values_of(&app, &ada, "analytics").await,
        json!({"siteId": "S-1"})
    );
    let res = put(&app, &ada, "analytics", json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        values_of(&app, &ada, "analytics").await,
        json!({"siteId": null})
    );
    app.stop().await;
}

async fn bad_values_are_400_and_unknown_plugins_404(url: String) {
    let app = start(&url, Some(KEY)).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    put(
        &app,
        &ada,
        "webhooks",
        json!({"url": "https://kept.example.com"}),
    )
    .await;

    let res = put(
        &app,
        &ada,
        "webhooks",
        json!({"url": 5, "timeout": "10", "enabled": "yes", "secret": 7, "colour": "red"}),
    )
    .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let mut issues: Vec<(String, String)> = res.body["issues"]
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
    issues.sort();
    let expected: Vec<(String, String)> = [
        ("colour", "unknown"),
        ("enabled", "type"),
        ("secret", "type"),
        ("timeout", "type"),
        ("url", "type"),
    ]
    .iter()
    .map(|(p, c)| (p.to_string(), c.to_string()))
    .collect();
    assert_eq!(issues, expected, "{}", res.body);

    for bad in [json!([1]), json!("x"), json!(null)] {
        let res = put(&app, &ada, "webhooks", bad.clone()).await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert_eq!(
            res.body["issues"][0]["path"], "values",
            "{bad}: {}",
            res.body
        );
    }
    // A body that is not JSON is 400 too.
    let res = app
        .req(Method::PUT, WEBHOOKS)
        .raw("application/json", "{not json")
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // Nothing of a refused save was stored.
    assert_eq!(
        values_of(&app, &ada, "webhooks").await["url"],
        "https://kept.example.com"
    );

    let res = put(&app, &ada, "mailchimp", json!({"url": "x"})).await;
    let message = res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    assert!(message.contains("mailchimp"), "{message}");
    app.stop().await;
}

async fn only_sessions_holding_org_settings_may_read_or_save(url: String) {
    let app = start(&url, Some(KEY)).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    let carol = app.sign_up("Carol", "carol@example.com").await;
    app.join(&bob, &org, "editor").await;
    app.join(&carol, &org, "admin").await;

    // Signed out: 401.
    app.get(SETTINGS)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.req(Method::PUT, WEBHOOKS)
        .json(json!({"values": {}}))
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");

    // An API key is refused, even one holding org.settings.
    let key = app
        .create_key(
            &ada,
            json!({"name": "k", "capabilities": ["org.settings", "document.read"]}),
        )
        .await;
    app.get(SETTINGS)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::PUT, WEBHOOKS)
        .json(json!({"values": {"url": "https://evil.example.com"}}))
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // Also for a plugin that does not exist: no oracle.
    app.req(Method::PUT, "/api/plugin-settings/nope")
        .json(json!({"values": {}}))
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");

    // A member without org.settings (an editor) can neither read nor save.
    app.get(SETTINGS)
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    put(
        &app,
        &bob,
        "webhooks",
        json!({"url": "https://evil.example.com"}),
    )
    .await
    .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");

    // An admin holds it.
    let res = put(
        &app,
        &carol,
        "webhooks",
        json!({"url": "https://ok.example.com"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        values_of(&app, &ada, "webhooks").await["url"],
        "https://ok.example.com"
    );

    // A custom role with org.settings may; the capability decides, not the role's name.
    let res = app
        .post(
            "/api/roles",
            json!({"name": "integrator", "capabilities": ["org.settings"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.join(&bob, &org, "integrator").await;
    assert_eq!(
        values_of(&app, &bob, "webhooks").await["url"],
        "https://ok.example.com"
    );
    app.stop().await;
}

async fn values_are_per_organization(url: String) {
    let app = start(&url, Some(KEY)).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let first = app.active_organization(&ada).await;
    let res = put(
        &app,
        &ada,
        "webhooks",
        json!({"url": "https://first.example.com", "secret": PLAINTEXT}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Second", "slug": "second"}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let second = res.body["data"]["id"].as_str().unwrap().to_string();
    let switch = |org: String| {
        let app = &app;
        let ada = &ada;
        async move {
            let res = app
                .post(
                    "/api/organizations/switch",
                    json!({ "organizationId": org }),
                )
                .cookie(ada)
                .send()
                .await;
            assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        }
    };
    switch(second.clone()).await;
    assert_eq!(values_of(&app, &ada, "webhooks").await, unset());
    // "********" where nothing is stored keeps nothing: another organization's secret is not
    // reachable this way.
    let res = put(
        &app,
        &ada,
        "webhooks",
        json!({"url": "https://second.example.com", "secret": "********"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["values"]["secret"], Value::Null);

    switch(first.clone()).await;
    let values = values_of(&app, &ada, "webhooks").await;
    assert_eq!(values["url"], "https://first.example.com");
    assert_eq!(values["secret"], "********");
    let plugin = app.app.cms.plugin_settings();
    assert_eq!(
        plugin.values_for(&first, "webhooks").await.unwrap()["secret"],
        PLAINTEXT
    );
    let second_values = plugin.values_for(&second, "webhooks").await.unwrap();
    assert_eq!(second_values["url"], "https://second.example.com");
    assert_eq!(second_values["secret"], Value::Null);
    assert!(plugin.values_for(&first, "nope").await.is_err());
    app.stop().await;
}

async fn secrets_need_the_encryption_key(url: String) {
    let app = start(&url, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;

    let res = put(
        &app,
        &ada,
        "webhooks",
        json!({"url": "https://hooks.example.com", "secret": PLAINTEXT}),
    )
    .await;
    let message =
        res.assert_handler_error(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Entity");
    assert!(message.contains("CMS_SECRET_ENCRYPTION_KEY"), "{message}");
    // Nothing of the save was stored, not even its plain fields.
    assert_eq!(values_of(&app, &ada, "webhooks").await, unset());
    assert!(raw_rows(&url).await.is_empty());

    // Settings without a new secret save as usual.
    let res = put(
        &app,
        &ada,
        "webhooks",
        json!({"url": "https://hooks.example.com", "secret": "********"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"]["values"]["url"],
        "https://hooks.example.com"
    );
    assert_eq!(res.body["data"]["values"]["secret"], Value::Null);
    let rows = raw_rows(&url).await;
    assert_eq!(rows.len(), 1);
    assert!(!rows.iter().any(|r| r.contains(PLAINTEXT)), "{rows:?}");
    app.stop().await;
}

async fn a_secret_under_another_key_is_an_error_not_garbage(url: String) {
    let app = start(&url, Some(KEY)).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let res = put(&app, &ada, "webhooks", json!({"secret": PLAINTEXT})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    // The same database, started with another key, then with none.
    for (key, says) in [
        (
            Some("another key, also at least thirty-two characters"),
            "CMS_SECRET_ENCRYPTION_KEY",
        ),
        (None, "not configured"),
    ] {
        let mut config = config_for(&url);
        config.plugins.secret_encryption_key = key.map(str::to_string);
        let other = TestApp::custom(config, |b| b.plugin_settings(webhooks())).await;
        let err = other
            .app
            .cms
            .plugin_settings()
            .values_for(&org, "webhooks")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{err}");
        assert!(!err.contains(PLAINTEXT), "{err}");
        // Reads through the endpoint still redact: they never decrypt.
        let res = other.get(SETTINGS).cookie(&ada).send().await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(res.body["data"][0]["values"]["secret"], "********");
        other.app.cms.store().close().await;
    }
    app.stop().await;
}

async fn a_plugin_declared_twice_stops_the_start(url: String) {
    let config = config_for(&url);
    let dir = config.data_dir.clone();
    let err = cms::Builder::new(config)
        .plugin_settings(webhooks())
        .plugin_settings(SettingsDeclaration {
            title: "Other".into(),
            ..webhooks()
        })
        .build()
        .await
        .err()
        .expect("the start is refused");
    assert!(err.to_string().contains("`webhooks`"), "{err}");
    assert!(err.to_string().contains("declared twice"), "{err}");
    let mut broken = analytics();
    broken.fields.push(field("siteId", SettingKind::Number));
    let err = cms::Builder::new(config_for(&url))
        .plugin_settings(broken)
        .build()
        .await
        .err()
        .expect("the start is refused");
    assert!(err.to_string().contains("declared twice"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Records the settings each event or job was handled with.
#[derive(Default)]
struct SettingsRecorder {
    seen: Mutex<Vec<Value>>,
}

#[async_trait]
impl EventHandler for SettingsRecorder {
    async fn handle(&self, ctx: &HandlerContext, _: &EventView) -> Result<(), HandlerError> {
        self.seen.lock().unwrap().push(ctx.settings.clone());
        Ok(())
    }
}

#[async_trait]
impl JobHandler for SettingsRecorder {
    async fn run(&self, ctx: &HandlerContext, _: &JobView) -> Result<(), HandlerError> {
        self.seen.lock().unwrap().push(ctx.settings.clone());
        Ok(())
    }
}

impl SettingsRecorder {
    fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

async fn plugin_handlers_receive_their_organizations_decrypted_settings(url: String) {
    let of_plugin = Arc::new(SettingsRecorder::default());
    let of_host = Arc::new(SettingsRecorder::default());
    let jobs = Arc::new(SettingsRecorder::default());
    let consumer = |id: &str, recorder: &Arc<SettingsRecorder>, plugin: Option<&str>| Consumer {
        id: id.into(),
        events: vec!["document.published".into()],
        max_attempts: Some(1),
        handler: recorder.clone(),
        settings: json!({"static": true}),
        plugin: plugin.map(str::to_string),
    };
    let registry = Registry::default()
        .consumer(consumer("webhooks.deliver", &of_plugin, Some("webhooks")))
        .unwrap()
        .consumer(consumer("search", &of_host, None))
        .unwrap()
        .plugin_job_handler("webhooks", "webhooks.ping", jobs.clone())
        .unwrap();
    let mut config = config_for(&url);
    config.plugins.secret_encryption_key = Some(KEY.into());
    let app = TestApp::custom(config, |b| b.registry(registry).plugin_settings(webhooks())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let res = put(
        &app,
        &ada,
        "webhooks",
        json!({"url": "https://hooks.example.com", "secret": PLAINTEXT, "timeout": 3}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello"}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.app
        .cms
        .worker()
        .enqueue(Some(&org), "webhooks.ping", json!({}), Some(1), None)
        .await
        .unwrap();
    let report = app.app.cms.worker().tick().await.unwrap();
    assert_eq!((report.completed, report.failed), (3, 0), "{report:?}");

    let expected = json!({
        "url": "https://hooks.example.com",
        "events": null,
        "timeout": 3,
        "enabled": null,
        "secret": PLAINTEXT,
    });
    assert_eq!(of_plugin.seen(), vec![expected.clone()]);
    assert_eq!(jobs.seen(), vec![expected]);
    // A consumer of no plugin keeps the settings it was registered with.
    assert_eq!(of_host.seen(), vec![json!({"static": true})]);
    app.stop().await;
}

cms_store::both_engines!(
    settings_are_listed_saved_and_secrets_redacted,
    bad_values_are_400_and_unknown_plugins_404,
    only_sessions_holding_org_settings_may_read_or_save,
    values_are_per_organization,
    secrets_need_the_encryption_key,
    a_secret_under_another_key_is_an_error_not_garbage,
    a_plugin_declared_twice_stops_the_start,
    plugin_handlers_receive_their_organizations_decrypted_settings,
);
