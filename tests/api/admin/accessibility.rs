//! Accessibility (issues 32 and 30, "Done when"): axe-core finds no serious or critical
//! violation on any page of the admin (the list; the edit page with the rich-text editor and
//! its history; every settings section; home; the asset library and an asset; the pages of the
//! signed out) at a phone's 390 px and a desktop's 1400 px, in the light colour scheme and
//! again in the dark one (the admin follows the system's preference, issue 30 point 6; axe
//! checks the contrast of each), nor on the command palette and two-factor sign-in's set-up
//! and code step. (`layout.rs` checks that no page scrolls sideways at 320 px.)
//!
//! axe-core is test tooling from the npm registry (`tests/accessibility/`, installed by
//! `.ci/run`), injected into the page by WebDriver; the admin itself ships no third-party
//! JavaScript.

use axum::http::{Method, StatusCode};
use cms::core::schema::demo_schemas;
use serde_json::json;

use super::Ui;
use super::assets::{TEAL, png};
use crate::assets::uploaded;
use crate::browser::Browser;
use crate::people_support::first_owner;
use crate::support::{TestApp, config_for};

const AXE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/accessibility/node_modules/axe-core/axe.min.js"
);

/// The pages checked, each with what must be on screen before it is judged.
struct Checked {
    name: &'static str,
    path: String,
    /// Opens the history panel first (it is a disclosure on the edit page).
    open_history: bool,
}

pub(super) fn axe_source() -> String {
    std::fs::read_to_string(AXE).unwrap_or_else(|e| {
        panic!(
            "{AXE}: {e} (install it with `npm ci --prefix tests/accessibility`, as .ci/run does)"
        )
    })
}

/// Runs axe-core on the current page and returns its serious and critical violations, each as
/// "rule: target (summary)" for a readable failure.
pub(super) async fn serious_violations(ui: &Ui, axe: &str) -> Vec<String> {
    ui.eval(axe, vec![]).await;
    let result = ui
        .client()
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, { resultTypes: ['violations'] })
               .then((r) => done(r.violations.map((v) => ({ id: v.id, impact: v.impact,
                 nodes: v.nodes.map((n) => n.target.join(' ') + ' (' + n.failureSummary.replace(/\\s+/g, ' ') + ')') }))))
               .catch((e) => done({ error: String(e) }));",
            vec![],
        )
        .await
        .unwrap();
    assert!(result.get("error").is_none(), "axe-core failed: {result}");
    result
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
        .flat_map(|v| {
            let id = v["id"].as_str().unwrap().to_owned();
            v["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |n| format!("{id}: {}", n.as_str().unwrap()))
                .collect::<Vec<_>>()
        })
        .collect()
}

async fn open(ui: &Ui, page: &Checked) {
    ui.open(&page.path).await;
    if page.open_history {
        ui.eval(
            "const d = document.querySelector('details.history'); d.open = true; d.scrollIntoView();",
            vec![],
        )
        .await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
}

/// A body with what the rich-text editor draws: a heading, marks, a link, a nested list, a
/// quote and a block it does not edit.
fn rich_body() -> serde_json::Value {
    json!([
        { "_type": "block", "_key": "h", "style": "h2", "markDefs": [],
          "children": [{ "_type": "span", "_key": "h1", "text": "A heading", "marks": [] }] },
        { "_type": "block", "_key": "p", "style": "normal",
          "markDefs": [{ "_type": "link", "_key": "l", "href": "https://example.com/" }],
          "children": [
            { "_type": "span", "_key": "p1", "text": "Bold", "marks": ["strong"] },
            { "_type": "span", "_key": "p2", "text": " and a ", "marks": [] },
            { "_type": "span", "_key": "p3", "text": "link", "marks": ["l"] }
          ] },
        { "_type": "block", "_key": "a", "style": "normal", "listItem": "bullet", "level": 1, "markDefs": [],
          "children": [{ "_type": "span", "_key": "a1", "text": "One", "marks": [] }] },
        { "_type": "block", "_key": "b", "style": "normal", "listItem": "number", "level": 2, "markDefs": [],
          "children": [{ "_type": "span", "_key": "b1", "text": "Two", "marks": ["code"] }] },
        { "_type": "block", "_key": "q", "style": "blockquote", "markDefs": [],
          "children": [{ "_type": "span", "_key": "q1", "text": "Quoted", "marks": [] }] },
        { "_type": "callout", "_key": "c", "tone": "info" }
    ])
}

async fn pages_pass_axe_at_phone_and_desktop_widths(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello", "tags": ["news"], "body": rich_body()}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_owned();
    let res = app
        .req(Method::PUT, &format!("/api/documents/{id}"))
        .json(json!({"data": {"title": "Hello again"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    let asset = uploaded(&app, &ada, "harbour.png", &png(40, 20, TEAL)).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let pages = [
        Checked {
            name: "list",
            path: "/admin/documents/post".into(),
            open_history: false,
        },
        Checked {
            name: "edit",
            path: format!("/admin/documents/post/{id}"),
            open_history: false,
        },
        Checked {
            name: "history",
            path: format!("/admin/documents/post/{id}"),
            open_history: true,
        },
        Checked {
            name: "settings",
            path: "/admin/settings/members".into(),
            open_history: false,
        },
        Checked {
            name: "account",
            path: "/admin/settings/account".into(),
            open_history: false,
        },
        Checked {
            name: "home",
            path: "/admin".into(),
            open_history: false,
        },
        Checked {
            name: "assets",
            path: "/admin/assets".into(),
            open_history: false,
        },
        Checked {
            name: "asset",
            path: format!("/admin/assets/{asset}"),
            open_history: false,
        },
    ];
    // Every other settings section.
    let sections = [
        "organization",
        "roles",
        "api-keys",
        "webhooks",
        "plugins",
        "jobs",
        "events",
        "audit",
    ];
    let pages: Vec<Checked> = pages
        .into_iter()
        .chain(sections.iter().map(|section| Checked {
            name: section,
            path: format!("/admin/settings/{section}"),
            open_history: false,
        }))
        .collect();

    let axe = axe_source();
    let mut ui = Ui::start(app, "accessibility").await;
    ui.sign_in_as(&ada).await;
    let mut found = Vec::new();
    for scheme in ["light", "dark"] {
        if scheme == "dark" {
            // The same pages in a browser that prefers the dark scheme (a new browser: the
            // preference is a launch setting), signed in again.
            let light = ui.swap_browser(Browser::start_dark().await);
            light.stop().await;
            ui.sign_in_as(&ada).await;
        }
        let dark = ui
            .eval(
                "return matchMedia('(prefers-color-scheme: dark)').matches",
                vec![],
            )
            .await;
        assert_eq!(dark, json!(scheme == "dark"), "the browser's scheme");
        for (width, height) in [(1400, 900), (390, 844)] {
            ui.client().set_window_size(width, height).await.unwrap();
            for page in &pages {
                open(&ui, page).await;
                for violation in serious_violations(&ui, &axe).await {
                    found.push(format!(
                        "{} at {width} px, {scheme}: {violation}",
                        page.name
                    ));
                }
            }
        }
    }
    // The command palette open, with actions and a document matching what is typed.
    ui.client().set_window_size(1400, 900).await.unwrap();
    ui.open("/admin").await;
    let button = ui.find(".palette-button").await;
    ui.press(&button).await;
    ui.find("dialog.palette[open] [role=combobox]")
        .await
        .send_keys("hello")
        .await
        .unwrap();
    ui.find("dialog.palette [role=option][data-kind='document']")
        .await;
    for violation in serious_violations(&ui, &axe).await {
        found.push(format!("command palette: {violation}"));
    }
    // Two-factor sign-in's set-up (the QR code and the first code) and, signed out, the code
    // step of a sign-in (reached here as a single sign-on's return reaches it).
    ui.open("/admin/settings/account").await;
    ui.click("Set up two-factor sign-in").await;
    ui.find("img.qr-code").await;
    for violation in serious_violations(&ui, &axe).await {
        found.push(format!("two-factor set-up: {violation}"));
    }
    ui.client().delete_all_cookies().await.unwrap();
    ui.open("/admin/sign-in#two-factor=a-challenge").await;
    ui.see("Enter the six-digit code").await;
    for violation in serious_violations(&ui, &axe).await {
        found.push(format!("two-factor sign-in: {violation}"));
    }
    // The pages of the signed out.
    for path in [
        "/admin/sign-in",
        "/admin/forgot-password",
        "/admin/reset-password?token=a-token",
        "/admin/accept-invitation?token=a-token",
    ] {
        ui.open(path).await;
        for violation in serious_violations(&ui, &axe).await {
            found.push(format!("{path}: {violation}"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));

    ui.stop().await;
}

crate::admin_scenarios!(pages_pass_axe_at_phone_and_desktop_widths);
