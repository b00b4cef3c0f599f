//! The Audit log settings page (issue 28 point 5): an owner reads who did what, filters it by
//! action, and a viewer is not offered the page.

use axum::http::{Method, StatusCode};
use serde_json::json;

use super::Ui;
use crate::people_support::{first_owner, member, user_id};
use crate::support::TestApp;

async fn the_audit_page_lists_and_filters_entries(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "viewer").await;
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Audited"}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let res = app
        .req(Method::PATCH, "/api/organizations/members")
        .json(json!({"userId": user_id(&bob), "role": "editor"}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    let ui = Ui::start(app, "audit").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/audit").await;
    ui.see("document.published").await;
    ui.see("bob@example.com: viewer → editor").await;
    // The person by name, from the members list.
    let who = ui
        .eval("return document.querySelector('tr[data-action=\"document.published\"] td:nth-child(3)').textContent", vec![])
        .await;
    assert!(who.as_str().unwrap().starts_with("Ada"), "{who}");
    ui.screenshot("audit").await;

    // Filtered to one action: only its rows are drawn again.
    ui.eval(
        "const s = document.querySelector('select[name=action]'); s.value = 'member.roleChanged'; s.dispatchEvent(new Event('change'));",
        vec![],
    )
    .await;
    let mut drawn = json!(null);
    for _ in 0..100 {
        drawn = ui
            .eval("return [...document.querySelectorAll('tr[data-entry]')].map(r => r.dataset.action)", vec![])
            .await;
        if drawn == json!(["member.roleChanged"]) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(drawn, json!(["member.roleChanged"]));

    // Bob, now an editor, has no org.settings: no link, and the page says so.
    ui.sign_in_as(&bob).await;
    ui.open("/admin/settings/audit").await;
    ui.see("You may not use this section").await;
    let link = ui
        .eval(
            "return !!document.querySelector('a[href=\"/admin/settings/audit\"]')",
            vec![],
        )
        .await;
    assert_eq!(link, json!(false));
    ui.stop().await;
}

crate::admin_scenarios!(the_audit_page_lists_and_filters_entries,);
