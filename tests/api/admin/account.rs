//! The Account page's password and sessions (CONTRACT.md section 20): the password changed with
//! the current one (a wrong one named at its field), the sessions listed with this one marked,
//! another one signed out from the list, and this one, which leads to the sign-in page.

use axum::http::StatusCode;
use serde_json::json;

use super::Ui;
use crate::account_sessions::signed_in;
use crate::people_support::first_owner;
use crate::support::{PASSWORD, Session, TestApp};

const NEW_PASSWORD: &str = "a brand new passphrase";

async fn the_password_is_changed_and_sessions_signed_out(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let first_phone = Session::from(
        &app.post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com", "password": PASSWORD}),
        )
        .header("user-agent", "Phone Browser 1.0")
        .send()
        .await,
    );
    let ui = Ui::start(app, "account-sessions").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/account").await;
    ui.see("Phone Browser 1.0").await;
    ui.see("This session").await;
    ui.screenshot("sessions").await;

    // A wrong current password is refused at its form, and nothing changes.
    ui.fill("Current password", "not my password").await;
    ui.fill("New password", NEW_PASSWORD).await;
    ui.click("Change password").await;
    ui.find(".settings-part form .banner.error, .settings-part form [aria-invalid='true']")
        .await;
    assert!(signed_in(&ui.app, &first_phone).await);

    // The right one changes it and signs the phone out; the list shows only this browser.
    ui.fill("Current password", PASSWORD).await;
    ui.fill("New password", NEW_PASSWORD).await;
    ui.click("Change password").await;
    ui.see("Your password is changed; 1 other session was signed out.")
        .await;
    assert!(!signed_in(&ui.app, &first_phone).await);
    let res = ui
        .app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com", "password": NEW_PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    ui.screenshot("password-changed").await;

    // A session opened elsewhere is listed when the page is opened again, and signed out from
    // its row.
    let second_phone = Session::from(
        &ui.app
            .post(
                "/api/auth/sign-in/email",
                json!({"email": "ada@example.com", "password": NEW_PASSWORD}),
            )
            .header("user-agent", "Tablet Browser 2.0")
            .send()
            .await,
    );
    ui.open("/admin/settings/account").await;
    ui.see("Tablet Browser 2.0").await;
    let row = ui
        .find("button[aria-label='Sign out the session of Tablet Browser 2.0']")
        .await;
    ui.press(&row).await;
    ui.see("That session is signed out.").await;
    assert!(!signed_in(&ui.app, &second_phone).await);

    // Signing out this session asks first, then leaves for the sign-in page.
    let own = ui.find("button[aria-label='Sign out this session']").await;
    ui.press(&own).await;
    ui.find("dialog[open] .dialog-actions button[data-value='true']")
        .await
        .click()
        .await
        .unwrap();
    ui.find("form input[type='password']").await;
    let path = ui.eval("return location.pathname", vec![]).await;
    assert_eq!(path, json!("/admin/sign-in"));
    assert!(!signed_in(&ui.app, &ada).await);
    ui.stop().await;
}

crate::admin_scenarios!(the_password_is_changed_and_sessions_signed_out);
