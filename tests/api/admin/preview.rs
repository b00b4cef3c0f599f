//! "Open preview" on the document edit page (CONTRACT.md section 15): the button shows for a
//! type with `previewUrl`, makes a link and opens the filled URL in a new tab, whose token reads
//! the saved draft.

use std::time::Duration;

use axum::http::StatusCode;
use cms::core::schema::parse_schemas;
use serde_json::json;

use super::Ui;
use crate::people_support::first_owner;
use crate::support::{TestApp, config_for};

/// A stand-in for the frontend: answers every path with the URL it was asked for.
async fn frontend() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let router =
        axum::Router::new().fallback(|uri: axum::http::Uri| async move { format!("asked {uri}") });
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (origin, task)
}

async fn open_preview_opens_the_filled_url_in_a_new_tab(url: String) {
    let (origin, frontend) = frontend().await;
    let schemas = parse_schemas(&json!([
        { "type": "document", "name": "page",
          "previewUrl": format!("{origin}/preview/{{type}}/{{slug}}?token={{token}}"),
          "fields": [{ "name": "title", "type": "string" }, { "name": "slug", "type": "slug" }] },
        { "type": "document", "name": "note", "fields": [{ "name": "title", "type": "string" }] }
    ]))
    .unwrap();
    let app = TestApp::custom(config_for(&url), |b| b.schemas(schemas)).await;
    let (ada, _) = first_owner(&app).await;
    let create = |doc_type: &str, data: serde_json::Value| {
        app.post("/api/documents", json!({"type": doc_type, "data": data}))
            .cookie(&ada)
            .send()
    };
    let page = create(
        "page",
        json!({"title": "Draft title", "slug": {"current": "über uns"}}),
    )
    .await;
    let page = page.body["data"]["id"].as_str().unwrap().to_string();
    let note = create("note", json!({"title": "No frontend"})).await;
    let note = note.body["data"]["id"].as_str().unwrap().to_string();

    let ui = Ui::start(app, "preview").await;
    ui.sign_in_as(&ada).await;
    // No previewUrl, no button.
    ui.open(&format!("/admin/documents/note/{note}")).await;
    ui.see("Save draft").await;
    assert!(!ui.main_text().await.contains("Open preview"));

    ui.open(&format!("/admin/documents/page/{page}")).await;
    let home = ui.client().window().await.unwrap();
    ui.click("Open preview").await;
    let mut opened = None;
    for _ in 0..200 {
        let windows = ui.client().windows().await.unwrap();
        if let Some(tab) = windows.into_iter().find(|w| *w != home) {
            ui.client().switch_to_window(tab).await.unwrap();
            let at = ui.client().current_url().await.unwrap().to_string();
            if at.starts_with(&origin) {
                opened = Some(at);
                break;
            }
            ui.client().switch_to_window(home.clone()).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let opened = opened.expect("the preview opened in a new tab");
    let prefix = format!("{origin}/preview/page/%C3%BCber%20uns?token=");
    let token = opened
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{opened} starts with {prefix}"))
        .to_string();
    assert!(token.starts_with("cmsp_"), "{token}");
    let shown = ui.client().source().await.unwrap();
    assert!(shown.contains("asked /preview/page/"), "{shown}");
    ui.client().switch_to_window(home).await.unwrap();

    // The token in the URL reads the draft, and nothing else.
    let res = ui
        .app
        .get(&format!("/api/documents/{page}"))
        .header("x-cms-preview", &token)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"]["title"], "Draft title");
    let res = ui
        .app
        .get(&format!("/api/documents/{note}"))
        .header("x-cms-preview", &token)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    ui.stop().await;
    frontend.abort();
}

crate::admin_scenarios!(open_preview_opens_the_filled_url_in_a_new_tab);
