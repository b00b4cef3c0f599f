//! The Webhooks settings page (CONTRACT.md section 16): an endpoint added with its secret shown
//! once, a test sent and its delivery seen with the receiver's status, the secret rotated,
//! the endpoint edited, disabled and deleted; each step checked on the page and then against
//! the API. Hidden from a member without `org.settings`.

use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::Ui;
use crate::people_support::{first_owner, member};
use crate::support::{Session, TestApp, config_for, free_port};

const ENCRYPTION_KEY: &str = "a secret encryption key of at least thirty-two characters";

/// A receiver on a loopback port that answers 202 and counts what it is sent, until the test's
/// runtime ends.
async fn receiver() -> (String, Arc<Mutex<Vec<Value>>>) {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = seen.clone();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let record = record.clone();
            async move {
                record
                    .lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or_default());
                StatusCode::ACCEPTED
            }
        }),
    );
    let port = free_port();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (format!("http://127.0.0.1:{port}/hook"), seen)
}

async fn endpoints(app: &TestApp, session: &Session) -> Vec<Value> {
    let res = app.get("/api/webhooks").cookie(session).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].as_array().unwrap().clone()
}

async fn confirm_dialog(ui: &Ui) {
    ui.find("dialog[open] .dialog-actions button[data-value='true']")
        .await
        .click()
        .await
        .unwrap();
}

/// Whether `text` is anywhere in the page, markup or input values.
async fn shown(ui: &Ui, text: &str) -> bool {
    ui.eval(
        "return document.documentElement.outerHTML.includes(arguments[0]) || [...document.querySelectorAll('input')].some((i) => i.value === arguments[0])",
        vec![json!(text)],
    )
    .await
        == json!(true)
}

async fn an_endpoint_is_added_tested_rotated_disabled_and_deleted(url: String) {
    let (hook, received) = receiver().await;
    let mut config = config_for(&url);
    config.plugins.secret_encryption_key = Some(ENCRYPTION_KEY.into());
    let app = TestApp::custom(config, |b| b).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "settings-webhooks").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings").await;
    ui.click("Webhooks").await;
    ui.arrive("/admin/settings/webhooks").await;
    ui.see("No endpoints yet.").await;

    // Added: the secret is shown once, in its dialog.
    ui.fill("Endpoint URL", &hook).await;
    ui.fill("Description", "Search index").await;
    ui.click("Add endpoint").await;
    let secret_box = ui.find("dialog[open] input.secret-value").await;
    ui.see("you will not see it again").await;
    let secret = secret_box.prop("value").await.unwrap().unwrap();
    assert!(secret.starts_with("whsec_"), "{secret}");
    ui.screenshot("secret").await;
    ui.click("I have copied it").await;
    ui.find("tr[data-endpoint]").await;
    ui.see("Every event").await;
    assert!(!shown(&ui, &secret).await, "the secret is not shown again");
    let listed = endpoints(&ui.app, &ada).await;
    assert_eq!(listed.len(), 1);
    let id = listed[0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        (
            listed[0]["url"].clone(),
            listed[0]["events"].clone(),
            listed[0]["enabled"].clone()
        ),
        (json!(hook), json!(["*"]), json!(true))
    );
    assert_eq!(listed[0]["description"], "Search index");

    // A test: queued from the page, sent by the worker, seen in the deliveries with the
    // receiver's answer.
    ui.click("Test").await;
    ui.see("A test delivery to").await;
    let report = ui.app.app.cms.worker().tick().await.unwrap();
    assert_eq!(report.completed, 1, "{report:?}");
    assert_eq!(received.lock().unwrap().len(), 1);
    assert_eq!(received.lock().unwrap()[0]["type"], "webhook.test");
    ui.click("Refresh").await;
    ui.find("tr[data-delivery][data-status='completed']").await;
    let answered = ui.find("tr[data-delivery] td.response-status").await;
    assert_eq!(answered.text().await.unwrap(), "202");
    ui.see("webhook.test").await;
    ui.screenshot("deliveries").await;
    // The list shows it as the endpoint's last delivery, once drawn again.
    ui.open("/admin/settings/webhooks").await;
    ui.see("completed · 202").await;

    // Rotated: a new secret, shown once.
    ui.click("Rotate secret").await;
    confirm_dialog(&ui).await;
    let rotated_box = ui.find("dialog[open] input.secret-value").await;
    let rotated = rotated_box.prop("value").await.unwrap().unwrap();
    assert!(
        rotated.starts_with("whsec_") && rotated != secret,
        "{rotated}"
    );
    ui.click("I have copied it").await;
    assert!(!shown(&ui, &rotated).await);

    // Edited: only the types chosen.
    ui.click("Edit").await;
    ui.see("Edit endpoint").await;
    ui.control("Only the types chosen below")
        .await
        .click()
        .await
        .unwrap();
    ui.control("document.published")
        .await
        .click()
        .await
        .unwrap();
    ui.click("Save endpoint").await;
    ui.see("Add an endpoint").await;
    let listed = endpoints(&ui.app, &ada).await;
    assert_eq!(listed[0]["events"], json!(["document.published"]));
    ui.see("document.published").await;

    // Disabled.
    ui.click("Disable").await;
    ui.find("tr[data-endpoint][data-enabled='false']").await;
    assert_eq!(endpoints(&ui.app, &ada).await[0]["enabled"], false);
    ui.screenshot("disabled").await;

    // Deleted.
    ui.click("Delete").await;
    confirm_dialog(&ui).await;
    ui.see("is deleted").await;
    ui.see("No endpoints yet.").await;
    assert!(endpoints(&ui.app, &ada).await.is_empty());
    let res = ui
        .app
        .get(&format!("/api/webhooks/{id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{}", res.body);
    ui.stop().await;
}

/// An editor has no `org.settings`: the page is not offered, and opened by hand it says so.
async fn an_editor_is_not_offered_webhooks(url: String) {
    let mut config = config_for(&url);
    config.plugins.secret_encryption_key = Some(ENCRYPTION_KEY.into());
    let app = TestApp::custom(config, |b| b).await;
    let (ada, _) = first_owner(&app).await;
    let eve = member(&app, &ada, "Eve", "eve@example.com", "editor").await;
    let ui = Ui::start(app, "settings-webhooks-editor").await;
    ui.sign_in_as(&eve).await;
    ui.open("/admin/settings").await;
    let offered = ui
        .eval(
            "return [...document.querySelectorAll('#sidebar a')].some((a) => a.getAttribute('href') === '/admin/settings/webhooks')",
            vec![],
        )
        .await;
    assert_eq!(offered, json!(false));
    ui.open("/admin/settings/webhooks").await;
    ui.see("You may not use this section").await;
    ui.stop().await;
}

crate::admin_scenarios!(
    an_endpoint_is_added_tested_rotated_disabled_and_deleted,
    an_editor_is_not_offered_webhooks,
);
