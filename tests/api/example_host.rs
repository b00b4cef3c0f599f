//! The example host application's plugin (`examples/newsletter`), registered the way the
//! example registers it: its settings page, its consumer and its route through HTTP.

#[path = "../../examples/newsletter/plugin.rs"]
mod newsletter;

use axum::http::StatusCode;
use serde_json::json;

use crate::support::{Session, TestApp, config_for};

async fn app(url: &str) -> TestApp {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    config.plugins.secret_encryption_key =
        Some("an encryption key of at least thirty-two characters".into());
    TestApp::custom(config, |b| b.plugin(newsletter::Newsletter)).await
}

async fn publish_post(app: &TestApp, session: &Session, title: &str) -> String {
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": title}, "publish": true}),
        )
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn queued(app: &TestApp, session: &Session) -> Vec<serde_json::Value> {
    let res = app
        .get("/api/events?type=newsletter.issue.queued")
        .cookie(session)
        .send()
        .await;
    res.body["data"].as_array().unwrap().clone()
}

async fn the_example_plugin_extends_the_service(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    // Its settings page is listed, and saved per organization with the token encrypted.
    let res = app.get("/api/plugin-settings").cookie(&ada).send().await;
    let page = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pluginId"] == "newsletter")
        .expect("the newsletter settings page")
        .clone();
    assert_eq!(
        page["values"],
        json!({"listId": null, "apiToken": null, "sendOnPublish": null})
    );
    // Until a list is set, queuing by hand is refused and publishing queues nothing.
    let first = publish_post(&app, &ada, "Before").await;
    // Consumers read the settings when the event is delivered: this one is, before any.
    app.app.cms.worker().tick().await.unwrap();
    assert!(queued(&app, &ada).await.is_empty());
    let res = app
        .post(&format!("/api/newsletter/issues/{first}"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    let res = app
        .req(axum::http::Method::PUT, "/api/plugin-settings/newsletter")
        .cookie(&ada)
        .json(json!({"values": {"listId": "weekly", "apiToken": "tok-123", "sendOnPublish": true}}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["values"]["apiToken"], "********");
    // The consumer reads the organization's settings (token decrypted) on each delivery.
    let values = app
        .app
        .cms
        .plugin_settings()
        .values_for(&org, "newsletter")
        .await
        .unwrap();
    assert_eq!(values["apiToken"], "tok-123");
    let second = publish_post(&app, &ada, "After").await;
    app.app.cms.worker().tick().await.unwrap();
    let events = queued(&app, &ada).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0]["payload"],
        json!({"documentId": second, "listId": "weekly"})
    );
    // The route: gated by the plugin's capability, answered by the plugin.
    let res = app
        .post(&format!("/api/newsletter/issues/{first}"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::ACCEPTED, "{}", res.body);
    assert_eq!(res.body["data"]["listId"], "weekly");
    assert_eq!(queued(&app, &ada).await.len(), 2);
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "editor").await;
    app.post(&format!("/api/newsletter/issues/{first}"), json!({}))
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.post(&format!("/api/newsletter/issues/{first}"), json!({}))
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    // The admin tool's module is served by the plugin itself.
    let res = app.get("/api/newsletter/admin.js").send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert!(
        res.header("content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    let plugins = app.get("/api/plugins").cookie(&ada).send().await;
    let listed = plugins.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "newsletter")
        .unwrap()
        .clone();
    assert_eq!(listed["settings"], true);
    assert_eq!(listed["events"], json!(["newsletter.issue.queued"]));
    assert_eq!(listed["consumers"], json!(["newsletter-on-publish"]));
    assert_eq!(
        listed["adminTools"][0]["component"]["module"],
        "/api/newsletter/admin.js"
    );
    app.stop().await;
}

cms_store::both_engines!(the_example_plugin_extends_the_service);
