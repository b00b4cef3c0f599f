//! Layout and first impressions (issue 32, point 7): no page scrolls sideways on a phone
//! (320 and 390 px) nor on a wide window, "Sign out" stays within reach on a phone, a fresh
//! instance opens on "create the first account", and the home page shows what to do next.

use axum::http::StatusCode;
use cms::core::schema::demo_schemas;
use serde_json::{Value, json};

use super::Ui;
use crate::people_support::{first_owner, member};
use crate::support::{PASSWORD, Session, TestApp, config_for};

/// Creates a post and returns its id.
async fn post(app: &TestApp, who: &Session, title: &str, publish: bool) -> String {
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": title}, "publish": publish}),
        )
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_owned()
}

/// How wide the page is against the window, after the page is drawn.
async fn widths(ui: &Ui) -> (i64, i64) {
    let seen = ui
        .eval(
            "return [document.documentElement.scrollWidth, window.innerWidth]",
            vec![],
        )
        .await;
    (seen[0].as_i64().unwrap(), seen[1].as_i64().unwrap())
}

/// The elements that reach past the window outside a scrolling box (or absolutely placed,
/// which escapes one unless it is positioned), to name the culprit when a page overflows.
async fn culprits(ui: &Ui) -> Value {
    ui.eval(
        "const past = (e) => e.getBoundingClientRect().right > window.innerWidth + 1;
         const scrolled = (e) => { for (let a = e.parentElement; a; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return true; return false; };
         const placed = (e) => ['absolute', 'fixed'].includes(getComputedStyle(e).position);
         return [...document.querySelectorAll('body *')].filter((e) => past(e) && (placed(e) || !scrolled(e))).slice(0, 8).map((e) => e.tagName + '.' + e.className + ' ' + getComputedStyle(e).overflowX + ' ' + Math.round(e.getBoundingClientRect().right))",
        vec![],
    )
    .await
}

async fn no_page_scrolls_sideways(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let id = post(
        &app,
        &ada,
        "A title long enough to wrap on a phone, with averyveryverylongwordthatdoesnotbreak",
        true,
    )
    .await;
    let res = app
        .req(axum::http::Method::PUT, &format!("/api/documents/{id}"))
        .json(json!({"data": {"title": "Changed after publishing"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    member(
        &app,
        &ada,
        "Grace Hopper",
        "grace.hopper.with.a.long.address@example.com",
        "editor",
    )
    .await;
    let ui = Ui::start(app, "layout").await;
    ui.sign_in_as(&ada).await;
    let pages = [
        "/admin",
        "/admin/documents/post",
        &format!("/admin/documents/post/{id}"),
        "/admin/settings/members",
        "/admin/settings/account",
        "/admin/assets",
    ];
    for width in [320, 390, 1400] {
        ui.client().set_window_size(width, 800).await.unwrap();
        for page in pages {
            ui.open(page).await;
            if page.ends_with(&id) {
                // The history panel open as well.
                ui.click("History").await;
                ui.find(".history[open]").await;
            }
            let (scroll, inner) = widths(&ui).await;
            assert!(
                scroll <= inner,
                "{page} at {width} px is {scroll} px wide for a {inner} px window: {}",
                culprits(&ui).await
            );
            if width != 1400 {
                let name = format!(
                    "{width}-{}",
                    page.trim_start_matches("/admin").replace('/', "-")
                );
                ui.screenshot(&name).await;
            }
        }
    }
    ui.stop().await;
}

async fn sign_out_is_within_reach_on_a_phone(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "phone-sign-out").await;
    ui.client().set_window_size(390, 800).await.unwrap();
    ui.sign_in_as(&ada).await;
    ui.open("/admin").await;
    // Inside the window, not covered by anything else.
    let placement = ui
        .eval(
            "const b = document.getElementById('sign-out').getBoundingClientRect();
             const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
             return { left: b.left, right: b.right, width: b.width, inner: window.innerWidth, mine: hit && hit.id === 'sign-out' };",
            vec![],
        )
        .await;
    assert!(placement["width"].as_f64().unwrap() > 0.0, "{placement}");
    assert!(placement["left"].as_f64().unwrap() >= 0.0, "{placement}");
    assert!(
        placement["right"].as_f64().unwrap() <= placement["inner"].as_f64().unwrap(),
        "{placement}"
    );
    assert_eq!(placement["mine"], json!(true), "{placement}");
    ui.screenshot("top-bar").await;
    ui.click("Sign out").await;
    ui.arrive("/admin/sign-in").await;
    ui.stop().await;
}

async fn a_fresh_instance_opens_on_the_first_account(url: String) {
    let ui = Ui::start(TestApp::start(&url).await, "first-run").await;
    ui.client().goto(&ui.url("/admin")).await.unwrap();
    ui.arrive("/admin/sign-in").await;
    ui.see("Create the first account").await;
    ui.see("becomes its administrator").await;
    ui.screenshot("first-run").await;
    ui.fill("Name", "Ada Lovelace").await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Create account").await;
    ui.arrive("/admin").await;
    ui.see("Default").await;
    let role = ui
        .app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(role.body["user"]["role"], "super_admin", "{}", role.body);
    // Once it has an account, signing out leads to the usual sign-in.
    ui.click("Sign out").await;
    ui.arrive("/admin/sign-in").await;
    ui.see("Forgot your password?").await;
    let text = ui.main_text().await;
    assert!(!text.contains("Create the first account"), "{text}");
    ui.stop().await;
}

/// The titles listed in a home section, in order.
async fn listed(ui: &Ui, section: &str) -> Vec<String> {
    let got = ui
        .eval(
            "return [...document.querySelectorAll(`[data-section='${arguments[0]}'] .doc-list li a`)].map((a) => a.textContent)",
            vec![json!(section)],
        )
        .await;
    serde_json::from_value(got).unwrap()
}

async fn the_home_page_shows_what_to_do_next(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let viewer = member(&app, &ada, "Vic", "vic@example.com", "viewer").await;
    // A second between writes, so "newest first" has one answer.
    let tick = || app.clock.advance_millis(1000);
    post(&app, &ada, "Published and untouched", true).await;
    tick();
    let changed = post(&app, &ada, "Published", true).await;
    tick();
    post(&app, &ada, "Never published", false).await;
    tick();
    let res = app
        .req(
            axum::http::Method::PUT,
            &format!("/api/documents/{changed}"),
        )
        .json(json!({"data": {"title": "Published then changed"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    tick();
    let res = app
        .post(
            "/api/documents",
            json!({"type": "author", "data": {"name": "Ada Lovelace"}, "publish": false}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);

    let ui = Ui::start(app, "home").await;
    ui.client().set_window_size(1400, 900).await.unwrap();
    ui.sign_in_as(&ada).await;
    ui.open("/admin").await;
    ui.see("Recent edits").await;
    ui.see("Drafts waiting to publish").await;
    ui.screenshot("home").await;
    // Create new: one per type the caller may create, singletons aside (the first-party
    // forms plugin's types follow the demo's).
    let creates = ui
        .eval(
            "return [...document.querySelectorAll(\"[data-section='create-new'] a\")].map((a) => [a.textContent, a.getAttribute('href')])",
            vec![],
        )
        .await;
    assert_eq!(
        creates.as_array().unwrap()[..3],
        [
            json!(["New Post", "/admin/documents/post/new"]),
            json!(["New Author", "/admin/documents/author/new"]),
            json!(["New Page", "/admin/documents/page/new"])
        ]
    );
    let text = creates.to_string();
    assert!(!text.contains("siteSettings"), "{text}");
    // Recent edits: every type, newest first.
    let recent = listed(&ui, "recent-edits").await;
    assert_eq!(recent.len(), 4, "{recent:?}");
    assert_eq!(
        recent,
        [
            "Ada Lovelace",
            "Published then changed",
            "Never published",
            "Published and untouched"
        ]
    );
    // Drafts: never published, or changed since.
    let mut drafts = listed(&ui, "drafts").await;
    drafts.sort();
    assert_eq!(
        drafts,
        ["Ada Lovelace", "Never published", "Published then changed"]
    );
    ui.click("New Post").await;
    ui.arrive("/admin/documents/post/new").await;

    // A viewer reads the same lists but is offered nothing to create.
    ui.sign_in_as(&viewer).await;
    ui.open("/admin").await;
    ui.see("You may not create documents here.").await;
    assert_eq!(listed(&ui, "recent-edits").await.len(), 4);
    ui.stop().await;
}

crate::admin_scenarios!(
    no_page_scrolls_sideways,
    sign_out_is_within_reach_on_a_phone,
    a_fresh_instance_opens_on_the_first_account,
    the_home_page_shows_what_to_do_next,
);
