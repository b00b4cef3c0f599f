//! Single sign-on in headless Chromium (CONTRACT.md section 20): the sign-in page's button for
//! the provider, the provider's own login page (`oidc-provider` on loopback), and back in the
//! admin, signed in to a new account; a refusal is shown on the sign-in page in words.

use fantoccini::Locator;

use super::Ui;
use crate::oidc_provider::OidcProvider;
use crate::people_support::first_owner;
use crate::support::{TestApp, bind, config_for, serve_on};

/// Signs in on the provider's own login page (its form: `login`, `password`, a submit button).
async fn provider_login(ui: &Ui, login: &str) {
    let name = ui.find("input[name=login]").await;
    name.send_keys(login).await.unwrap();
    let password = ui.find("input[name=password]").await;
    password.send_keys("any password").await.unwrap();
    ui.screenshot("provider-login").await;
    let submit = ui
        .client()
        .find(Locator::Css("button[type=submit]"))
        .await
        .unwrap();
    submit.click().await.unwrap();
}

async fn the_provider_button_signs_in_through_its_login_page(url: String) {
    let (listener, origin) = bind().await;
    let provider = OidcProvider::start(&format!("{origin}/api/auth/oidc/corp/callback"));
    let mut config = config_for(&url);
    config.server.public_url = Some(origin.clone());
    config.auth.oidc.providers = vec![provider.config("editor")];
    let app = TestApp::with(config, None).await;
    first_owner(&app).await;
    let served = serve_on(&app, (listener, origin)).await;
    let ui = Ui::on(app, served, "single-sign-on").await;

    // A refused sign-in comes back to the sign-in page, which says why.
    ui.open("/admin/sign-in").await;
    ui.screenshot("sign-in-with-provider").await;
    ui.click("Sign in with Corp ID").await;
    provider_login(&ui, "eve@elsewhere.test").await;
    ui.arrive("/admin/sign-in").await;
    ui.see("its domain may not sign up here").await;

    // An allowed address gets an account and lands in the admin, signed in. The provider
    // remembers the first person: a fresh browser signs in as another.
    ui.client().delete_all_cookies().await.unwrap();
    ui.open("/admin/sign-in?redirect=/admin/settings/account")
        .await;
    ui.click("Sign in with Corp ID").await;
    provider_login(&ui, "carol@example.com").await;
    ui.arrive("/admin/settings/account").await;
    let email = ui
        .eval(
            "return document.querySelector('input[name=email]').value",
            vec![],
        )
        .await;
    assert_eq!(email, "carol@example.com");
    ui.screenshot("signed-in").await;
    ui.stop().await;
}

crate::admin_scenarios!(the_provider_button_signs_in_through_its_login_page);
