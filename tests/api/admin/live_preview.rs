//! The edit page's views (issue 30, point 3): the live preview, the type's frontend in a frame
//! beside the form, reading the draft with a preview token and reloaded after every save; the
//! API view, the document as GET /api/documents/{id} answers it; and the admin pages'
//! Content-Security-Policy, which lets exactly the preview origins be framed.

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::response::Html;
use cms::core::schema::parse_schemas;
use serde_json::{Value, json};

use super::Ui;
use super::assets::until;
use crate::people_support::first_owner;
use crate::support::{TestApp, bind, config_for, serve_on};

/// A stand-in for a frontend: `/preview/{type}/{id}?token=` reads the draft from the CMS at
/// `cms` with the token, as a real frontend's server would, and shows its title.
async fn frontend(cms: String) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let page = move |Path((doc_type, id)): Path<(String, String)>,
                     Query(query): Query<HashMap<String, String>>| {
        let cms = cms.clone();
        async move {
            let token = query.get("token").cloned().unwrap_or_default();
            let read = reqwest::Client::new()
                .get(format!("{cms}/api/documents/{id}"))
                .header("x-cms-preview", &token)
                .send()
                .await
                .unwrap();
            let status = read.status();
            let body: Value = read.json().await.unwrap_or(Value::Null);
            let title = body["data"]["draftData"]["title"].as_str().unwrap_or("?");
            let escape = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;");
            Html(format!(
                "<!doctype html><title>Frontend</title><h1>{}</h1><p>{doc_type} read with the token: {status}</p>",
                escape(title)
            ))
        }
    };
    let router = axum::Router::new().route("/preview/{doc_type}/{id}", axum::routing::get(page));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (origin, task)
}

/// The text of the page in the preview frame (the first frame of the page).
async fn frame_text(ui: &Ui) -> String {
    let frame = ui.find("iframe.preview-frame").await;
    frame.enter_frame().await.unwrap();
    let text = match ui.client().find(fantoccini::Locator::Css("body")).await {
        Ok(body) => body.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    ui.client().enter_parent_frame().await.unwrap();
    text
}

/// Waits until the preview frame shows `text`.
async fn frame_shows(ui: &Ui, text: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let shown = frame_text(ui).await;
        if shown.contains(text) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the preview never showed {text:?}; it shows: {shown}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The preview frame's address.
async fn frame_src(ui: &Ui) -> String {
    let src = ui
        .eval(
            "return document.querySelector('iframe.preview-frame').getAttribute('src')",
            vec![],
        )
        .await;
    src.as_str().unwrap_or_default().to_string()
}

/// Which view buttons the page has, and which one is pressed.
async fn views(ui: &Ui) -> Value {
    ui.eval(
        "const b = [...document.querySelectorAll('.document-views button')];
         return { all: b.map(x => x.textContent), pressed: b.filter(x => x.getAttribute('aria-pressed') === 'true').map(x => x.textContent) };",
        vec![],
    )
    .await
}

async fn the_preview_and_api_views_follow_each_save(url: String) {
    let (listener, cms) = bind().await;
    let (origin, frontend) = frontend(cms.clone()).await;
    let schemas = parse_schemas(&json!([
        { "type": "document", "name": "page",
          "previewUrl": format!("{origin}/preview/{{type}}/{{id}}?token={{token}}"),
          "fields": [{ "name": "title", "type": "string" }] },
        { "type": "document", "name": "note", "fields": [{ "name": "title", "type": "string" }] }
    ]))
    .unwrap();
    let app = TestApp::custom(config_for(&url), |b| b.schemas(schemas)).await;
    let (ada, _) = first_owner(&app).await;
    let create = |doc_type: &str, title: &str| {
        app.post(
            "/api/documents",
            json!({"type": doc_type, "data": {"title": title}}),
        )
        .cookie(&ada)
        .send()
    };
    let page = create("page", "First title").await.body["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let note = create("note", "A note").await.body["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();

    // The admin's pages may frame the preview origin, and nothing else but themselves; they
    // may still not be framed.
    let res = app
        .get(&format!("/admin/documents/page/{page}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let policy = res.header("content-security-policy").unwrap().to_string();
    assert!(
        policy.contains(&format!("frame-src 'self' {origin}")),
        "{policy}"
    );
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");

    let served = serve_on(&app, (listener, cms)).await;
    let ui = Ui::on(app, served, "live-preview").await;
    ui.sign_in_as(&ada).await;

    // A type without a frontend has the form's views but no preview.
    ui.open(&format!("/admin/documents/note/{note}")).await;
    ui.find(".document-views button").await;
    assert_eq!(
        views(&ui).await,
        json!({"all": ["Edit", "API"], "pressed": ["Edit"]})
    );

    // The preview beside the form: the frontend's page, read with a preview token.
    ui.open(&format!("/admin/documents/page/{page}")).await;
    ui.click("Preview").await;
    frame_shows(&ui, "First title").await;
    frame_shows(&ui, "page read with the token: 200 OK").await;
    let first = frame_src(&ui).await;
    let prefix = format!("{origin}/preview/page/{page}?token=");
    let token = first
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{first} starts with {prefix}"))
        .to_string();
    assert!(token.starts_with("cmsp_"), "{token}");
    let side_by_side = ui
        .eval(
            "const form = document.querySelector('.document-main').getBoundingClientRect();
             const pane = document.querySelector('.document-preview').getBoundingClientRect();
             return pane.left >= form.right && !document.querySelector('.document-side').offsetParent;",
            vec![],
        )
        .await;
    assert_eq!(
        side_by_side,
        json!(true),
        "form left, preview right, no history"
    );
    let open = ui
        .eval(
            "const a = [...document.querySelectorAll('.document-preview a')].find(a => a.textContent === 'Open in new tab');
             return a && [a.getAttribute('href'), a.target];",
            vec![],
        )
        .await;
    assert_eq!(open, json!([first, "_blank"]));
    ui.screenshot("preview").await;
    let axe = super::accessibility::axe_source();
    let violations = super::accessibility::serious_violations(&ui, &axe).await;
    assert!(violations.is_empty(), "the preview view: {violations:#?}");

    // A save reloads the frame, which shows the new draft; the token is kept.
    ui.fill("Title", "Second title").await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    frame_shows(&ui, "Second title").await;
    assert_eq!(frame_src(&ui).await, first, "the same link, loaded again");

    // The API view: the document as GET /api/documents/{id} answers it, and the request.
    ui.click("API").await;
    let shown = until(
        &ui,
        "const pre = document.querySelector('.document-api pre');
         return pre && pre.offsetParent && pre.textContent.includes('Second title') && pre.textContent;",
        "the API view with the saved title",
    )
    .await;
    let shown: Value = serde_json::from_str(shown.as_str().unwrap()).unwrap();
    let read = ui
        .app
        .get(&format!("/api/documents/{page}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(shown, read.body, "exactly what the API answers");
    assert_eq!(shown["data"]["draftData"]["title"], "Second title");
    let request = ui.control("Request URL").await.prop("value").await.unwrap();
    assert_eq!(
        request.as_deref(),
        Some(ui.url(&format!("/api/documents/{page}")).as_str())
    );
    let focusable = ui
        .eval(
            "return document.querySelector('.document-api pre').getAttribute('tabindex')",
            vec![],
        )
        .await;
    assert_eq!(focusable, json!("0"));
    ui.screenshot("api").await;
    let violations = super::accessibility::serious_violations(&ui, &axe).await;
    assert!(violations.is_empty(), "the API view: {violations:#?}");
    // Refreshed after a save while shown.
    ui.fill("Title", "Third title").await;
    ui.click("Save draft").await;
    until(
        &ui,
        "const pre = document.querySelector('.document-api pre'); return pre.textContent.includes('Third title');",
        "the API view after the save",
    )
    .await;
    // Back to the preview, which the save left behind: drawn again from the saved draft.
    ui.click("Preview").await;
    frame_shows(&ui, "Third title").await;

    // The choice is remembered for the type.
    ui.open(&format!("/admin/documents/page/{page}")).await;
    ui.find("iframe.preview-frame").await;
    assert_eq!(
        views(&ui).await,
        json!({"all": ["Edit", "Preview", "API"], "pressed": ["Preview"]})
    );
    frame_shows(&ui, "Third title").await;

    // On a phone the preview is under the form, at a phone's width, and nothing but the
    // frame's own box scrolls sideways.
    ui.client().set_window_size(320, 800).await.unwrap();
    ui.open(&format!("/admin/documents/page/{page}")).await;
    ui.click("Phone").await;
    let fits = ui
        .eval(
            "const form = document.querySelector('.document-main').getBoundingClientRect();
             const pane = document.querySelector('.document-preview').getBoundingClientRect();
             const frame = document.querySelector('iframe.preview-frame').getBoundingClientRect();
             return [pane.top >= form.bottom, Math.round(frame.width), document.documentElement.scrollWidth <= window.innerWidth];",
            vec![],
        )
        .await;
    assert_eq!(
        fits,
        json!([true, 390, true]),
        "stacked, phone-wide, no sideways scroll"
    );
    ui.screenshot("phone").await;
    ui.stop().await;
    frontend.abort();
}

crate::admin_scenarios!(the_preview_and_api_views_follow_each_save);
