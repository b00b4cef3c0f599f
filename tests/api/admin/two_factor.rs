//! Two-factor sign-in in the admin (CONTRACT.md section 20): set up on the Account page from
//! the QR code's key with a computed code, the recovery codes shown once; the sign-in page
//! then asks for a code; and a member of an organization that requires it is sent to set it up
//! before anything else.

use axum::http::Method;
use cms::service::Clock;
use totp_rs::{Algorithm, Secret, TOTP};

use super::Ui;
use crate::people_support::{first_owner, member};
use crate::support::{PASSWORD, TestApp};

/// The code an authenticator app holding `key` shows at the test clock's time.
fn code_for(app: &TestApp, key: &str) -> String {
    let secret = Secret::Encoded(key.to_string()).to_bytes().unwrap();
    let totp = TOTP::new_unchecked(Algorithm::SHA1, 6, 0, 30, secret, None, String::new());
    totp.generate(u64::try_from(app.clock.now().millis() / 1000).unwrap())
}

/// Sets up two-factor sign-in on the open Account page: the key the page shows.
async fn set_up(ui: &Ui) -> String {
    ui.click("Set up two-factor sign-in").await;
    ui.find("img.qr-code").await;
    let key = ui.find(".secret-key").await.text().await.unwrap();
    ui.fill("Code from the app", &code_for(&ui.app, &key)).await;
    ui.click("Turn on").await;
    ui.see("Two-factor sign-in is on.").await;
    key
}

async fn two_factor_is_set_up_and_asked_at_sign_in(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "two-factor").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/account").await;
    ui.see("Signing in will ask for a code").await;

    // A wrong first code is named at its field; the right one turns it on.
    ui.click("Set up two-factor sign-in").await;
    ui.find("img.qr-code").await;
    ui.screenshot("enrol").await;
    let key = ui.find(".secret-key").await.text().await.unwrap();
    ui.fill("Code from the app", "000000").await;
    ui.click("Turn on").await;
    ui.see("the code does not match").await;
    ui.fill("Code from the app", &code_for(&ui.app, &key)).await;
    ui.click("Turn on").await;
    ui.see("Two-factor sign-in is on.").await;
    let codes = ui.eval(
        "return [...document.querySelectorAll('.recovery-codes code')].map((c) => c.textContent)",
        vec![],
    )
    .await;
    assert_eq!(codes.as_array().unwrap().len(), 10, "{codes}");
    ui.screenshot("recovery-codes").await;
    ui.click("I have saved them").await;
    ui.see("10 recovery codes left.").await;

    // Signing in now asks for a code after the password.
    ui.app.clock.advance_millis(30_000);
    ui.client().delete_all_cookies().await.unwrap();
    ui.open("/admin/sign-in").await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Sign in").await;
    ui.see("Enter the six-digit code").await;
    ui.fill("Code from your authenticator app", "000000").await;
    ui.click("Verify").await;
    ui.see("The code is wrong or was used already.").await;
    ui.screenshot("wrong-code").await;
    ui.fill("Code from your authenticator app", &code_for(&ui.app, &key))
        .await;
    ui.click("Verify").await;
    ui.arrive("/admin").await;

    // A recovery code works in place of the app's.
    ui.client().delete_all_cookies().await.unwrap();
    ui.open("/admin/sign-in").await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Sign in").await;
    ui.click("Use a recovery code instead").await;
    ui.fill("Recovery code", codes[0].as_str().unwrap()).await;
    ui.click("Verify").await;
    ui.arrive("/admin").await;
    ui.stop().await;
}

async fn an_organization_requiring_it_sends_members_to_set_it_up(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, org) = first_owner(&app).await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "editor").await;
    let ui = Ui::start(app, "two-factor-required").await;

    // The owner turns it on for themself, then requires it on the Organization page.
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/account").await;
    set_up(&ui).await;
    ui.open("/admin/settings/organization").await;
    let required = ui.find("input[name=requireTwoFactor]").await;
    ui.press(&required).await;
    ui.click("Save organization").await;
    ui.see("The organization is saved.").await;
    let res = ui
        .app
        .req(Method::GET, &format!("/api/organizations/{org}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["requireTwoFactor"], true, "{}", res.body);

    // A member without it lands on the Account page, whatever they open, until it is on.
    ui.client().delete_all_cookies().await.unwrap();
    ui.sign_in_as(&bob).await;
    ui.client()
        .goto(&ui.url("/admin/documents/post"))
        .await
        .unwrap();
    ui.arrive("/admin/settings/account").await;
    ui.see("This organization requires two-factor sign-in.")
        .await;
    ui.screenshot("required").await;
    ui.app.clock.advance_millis(30_000);
    set_up(&ui).await;
    ui.click("I have saved them").await;
    ui.arrive("/admin").await;
    let res = ui
        .app
        .get("/api/documents?type=post")
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, axum::http::StatusCode::OK, "{}", res.body);
    ui.stop().await;
}

crate::admin_scenarios!(
    two_factor_is_set_up_and_asked_at_sign_in,
    an_organization_requiring_it_sends_members_to_set_it_up,
);
