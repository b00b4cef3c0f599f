//! Presence on the document edit page (issue 30 point 5): two people with the same post open
//! in two browsers see each other's names; when one saves, the other is told that a newer
//! version exists, without their unsaved input being touched, and Reload shows it; when one
//! leaves, the other stops listing them.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::Ui;
use crate::browser::Browser;
use crate::people_support::member;
use crate::support::TestApp;

/// The names in the "Also editing" chips.
const NAMES: &str =
    "return [...document.querySelectorAll('.presence .presence-name')].map(e => e.textContent);";

/// Waits (at most `seconds`) until the chips name exactly `want`.
async fn names_within(ui: &Ui, seconds: u64, want: &[&str]) {
    let want = json!(want);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        let shown = ui.eval(NAMES, vec![]).await;
        if shown == want {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the chips never named {want}: they name {shown}; the page shows: {}",
            ui.main_text().await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// [`names_within`] a heartbeat (10 s) and then some, for a slow machine.
async fn names_become(ui: &Ui, want: &[&str]) {
    names_within(ui, 25, want).await;
}

async fn title(ui: &Ui) -> Value {
    let control = ui.control("Title").await;
    json!(control.prop("value").await.unwrap())
}

async fn two_people_see_each_other_and_the_newer_version(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada Lovelace", "ada@example.com").await;
    let grace = member(&app, &ada, "Grace Hopper", "grace@example.com", "editor").await;
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "First draft"}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let path = format!(
        "/admin/documents/post/{}",
        res.body["data"]["id"].as_str().unwrap()
    );

    let mut ui = Ui::start(app, "presence").await;
    ui.sign_in_as(&ada).await;
    ui.open(&path).await;
    names_become(&ui, &[]).await;

    // Grace opens the same post in a browser of her own, and sees Ada at once.
    let second = Browser::start().await;
    second.client.set_window_size(1280, 900).await.unwrap();
    let adas = ui.swap_browser(second);
    ui.sign_in_as(&grace).await;
    ui.open(&path).await;
    // At once: well before either page's second heartbeat (10 s).
    names_within(&ui, 5, &["Ada Lovelace"]).await;
    let region = ui
        .eval(
            "const p = document.querySelector('.presence');
             return [p.getAttribute('role'), p.getAttribute('aria-live'), p.textContent];",
            vec![],
        )
        .await;
    assert_eq!(
        region,
        json!(["status", "polite", "Also editing: ALAda Lovelace"]),
        "a polite status region naming Ada, initials as her avatar"
    );
    ui.screenshot("grace-sees-ada").await;

    // Ada's page lists Grace at its next heartbeat.
    let graces = ui.swap_browser(adas);
    names_become(&ui, &["Grace Hopper"]).await;
    ui.screenshot("ada-sees-grace").await;
    // Ada types, and does not save.
    ui.fill("Title", "Ada's unsaved words").await;

    // Grace saves a change.
    let adas = ui.swap_browser(graces);
    ui.fill("Title", "Grace's version").await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;

    // Ada is told who saved; her input is as she left it.
    let graces = ui.swap_browser(adas);
    ui.see("Grace Hopper saved a newer version of this document.")
        .await;
    assert_eq!(title(&ui).await, json!("Ada's unsaved words"));
    ui.screenshot("ada-told").await;

    // Grace's own save told her nothing of the kind.
    let adas = ui.swap_browser(graces);
    let told = ui
        .eval(
            "return !!document.querySelector('.presence-newer');",
            vec![],
        )
        .await;
    assert_eq!(told, json!(false), "{}", ui.main_text().await);
    ui.screenshot("grace-saved").await;

    // Reload asks before dropping Ada's input, then shows Grace's version.
    let graces = ui.swap_browser(adas);
    ui.click("Show the newer version").await;
    ui.click("Discard and reload").await;
    ui.see("Reloaded the current copy.").await;
    assert_eq!(title(&ui).await, json!("Grace's version"));
    assert!(
        !ui.main_text()
            .await
            .contains("saved a newer version of this document"),
        "the message goes with the reload"
    );
    ui.screenshot("ada-reloaded").await;

    // Grace leaves the page: Ada stops listing her at her next heartbeat. Sooner than Grace's
    // last heartbeat could age out of the 30 s window (at least 20 s after she left): her page
    // said goodbye.
    let adas = ui.swap_browser(graces);
    ui.open("/admin").await;
    let graces = ui.swap_browser(adas);
    names_within(&ui, 14, &[]).await;
    ui.screenshot("grace-left").await;
    graces.stop().await;
    ui.stop().await;
}

crate::admin_scenarios!(two_people_see_each_other_and_the_newer_version);
