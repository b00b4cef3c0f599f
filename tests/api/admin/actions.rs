//! The edit page's actions (issue 32, point 2): the status and the actions stay in sight on a
//! long document, history sits beside the form on a wide window, and Save and Publish are on
//! only when they would change something: Save with unsaved input, Publish with that or with a
//! saved draft the published copy does not have (in any locale).

use axum::http::StatusCode;
use cms::core::schema::demo_schemas;
use serde_json::{Value, json};

use super::Ui;
use crate::people_support::first_owner;
use crate::support::{Session, TestApp, config_for};

/// Whether the button `text` of the action bar is disabled, waiting for the page to settle on
/// `expected` (the state is decided after a read that may still run).
async fn button_disabled(ui: &Ui, text: &str, expected: bool) {
    let script = "const b = [...document.querySelectorAll('.document-actions button')].find((b) => b.textContent.trim() === arguments[0]); return b ? b.disabled : null;";
    let mut seen = Value::Null;
    for _ in 0..200 {
        seen = ui.eval(script, vec![json!(text)]).await;
        if seen == json!(expected) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{text}: disabled is {seen}, expected {expected}");
}

async fn versions(ui: &Ui, who: &Session, id: &str) -> usize {
    let res = ui
        .app
        .get(&format!("/api/documents/{id}/versions"))
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].as_array().unwrap().len()
}

async fn actions_stay_in_sight_and_wait_for_a_change(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    // A long post: forty paragraphs make the form many screens tall.
    let body: Vec<Value> = (0..40)
        .map(|i| json!({"_type": "block", "_key": format!("b{i}"), "style": "normal", "markDefs": [],
            "children": [{"_type": "span", "_key": format!("s{i}"), "text": format!("Paragraph {i}."), "marks": []}]}))
        .collect();
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Long read", "body": body}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_owned();

    let ui = Ui::start(app, "doc-actions").await;
    ui.client().set_window_size(1400, 900).await.unwrap();
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;

    // Published and unchanged: nothing to save, nothing to publish.
    button_disabled(&ui, "Save draft", true).await;
    button_disabled(&ui, "Publish", true).await;

    // Scrolled to the end of the form, the actions are still on screen, below the top bar.
    let placement = ui
        .eval(
            "window.scrollTo(0, document.documentElement.scrollHeight);
             const bar = document.querySelector('.topbar').getBoundingClientRect();
             const publish = [...document.querySelectorAll('.document-actions button')].find((b) => b.textContent.trim() === 'Publish').getBoundingClientRect();
             return { scrolled: window.scrollY, barBottom: bar.bottom, top: publish.top, bottom: publish.bottom, height: window.innerHeight };",
            vec![],
        )
        .await;
    assert!(
        placement["scrolled"].as_f64().unwrap() > 500.0,
        "{placement}"
    );
    let top = placement["top"].as_f64().unwrap();
    assert!(
        top >= placement["barBottom"].as_f64().unwrap() - 1.0
            && placement["bottom"].as_f64().unwrap() <= placement["height"].as_f64().unwrap(),
        "Publish is out of sight: {placement}"
    );

    // History is a panel beside the form, not under it.
    let sides = ui
        .eval(
            "const form = document.querySelector('.document-main').getBoundingClientRect();
             const side = document.querySelector('.document-side details.history').getBoundingClientRect();
             return { formRight: form.right, sideLeft: side.left };",
            vec![],
        )
        .await;
    assert!(
        sides["sideLeft"].as_f64().unwrap() >= sides["formRight"].as_f64().unwrap(),
        "{sides}"
    );
    ui.screenshot("actions-in-sight").await;

    // Typing turns both on; saving the draft leaves Publish on (the draft is not published).
    ui.fill("Title", "Long read, revised").await;
    button_disabled(&ui, "Save draft", false).await;
    button_disabled(&ui, "Publish", false).await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    button_disabled(&ui, "Save draft", true).await;
    button_disabled(&ui, "Publish", false).await;

    // Publishing makes the published copy the draft: both off again, and no click can write a
    // version for nothing.
    let before = versions(&ui, &ada, &id).await;
    ui.click("Publish").await;
    ui.see("Published.").await;
    button_disabled(&ui, "Publish", true).await;
    button_disabled(&ui, "Save draft", true).await;
    assert_eq!(versions(&ui, &ada, &id).await, before + 1);

    // Changed back by typing the old title again: the form equals the saved draft, so Save is
    // off again, as it was.
    ui.fill("Title", "Other").await;
    button_disabled(&ui, "Save draft", false).await;
    ui.fill("Title", "Long read, revised").await;
    button_disabled(&ui, "Save draft", true).await;
    ui.stop().await;
}

crate::admin_scenarios!(actions_stay_in_sight_and_wait_for_a_change);
