//! Signing in and out through the admin: the first account, the claim code, a forgotten
//! password, an invitation accepted by a new person, and the way back to the page asked for.

use cms::core::FirstAdmin;
use cms::service::MailKind;
use serde_json::{Value, json};

use super::Ui;
use crate::people_support::{first_owner, invite};
use crate::support::{PASSWORD, TestApp, config_for};

/// The path part of an e-mailed link (absolute or not).
fn path_of(link: &str) -> &str {
    &link[link.find("/admin/").expect("an admin link")..]
}

async fn the_first_person_signs_up_then_out_and_back_in(url: String) {
    let ui = Ui::start(TestApp::start(&url).await, "sign-up").await;

    // Signed out, a private page sends the browser to sign-in.
    ui.client().goto(&ui.url("/admin?from=mail")).await.unwrap();
    ui.arrive("/admin/sign-in").await;
    let at = ui.client().current_url().await.unwrap();
    assert_eq!(at.query(), Some("redirect=/admin%3Ffrom%3Dmail"));
    // A fresh instance has nobody to sign in: the page creates the first account instead.
    ui.see("Create the first account").await;
    ui.screenshot("first-run").await;
    ui.fill("Name", "Ada Lovelace").await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.fill("Password", "short").await;
    ui.screenshot("sign-up").await;
    // The browser itself refuses a password under 8 characters: nothing is sent.
    ui.click("Create account").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Create account").await;
    // The first account owns "Default", active in the switcher, and lands where it was going.
    ui.arrive("/admin").await;
    let at = ui.client().current_url().await.unwrap();
    assert_eq!(at.query(), Some("from=mail"));
    let active = ui
        .eval("const s = document.getElementById('org-switcher'); return s.options[s.selectedIndex].text", vec![])
        .await;
    assert_eq!(active, json!("Default"));

    ui.click("Sign out").await;
    ui.arrive("/admin/sign-in").await;
    // The session is over on the server too: private pages send the browser back here.
    ui.client().goto(&ui.url("/admin")).await.unwrap();
    ui.arrive("/admin/sign-in").await;

    // A wrong password is said to be wrong; the right one signs in.
    ui.open("/admin/sign-in?redirect=/admin").await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.fill("Password", "not the password").await;
    ui.click("Sign in").await;
    ui.see("The e-mail or password is wrong.").await;
    ui.screenshot("wrong-password").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Sign in").await;
    ui.arrive("/admin").await;
    ui.see("Default").await;
    ui.screenshot("home").await;
    ui.stop().await;
}

/// A redirect to another origin is never followed.
async fn sign_in_goes_back_only_to_this_instance(url: String) {
    let app = TestApp::start(&url).await;
    app.sign_up("Ada", "ada@example.com").await;
    let ui = Ui::start(app, "redirect").await;
    ui.open("/admin/sign-in?redirect=//evil.example/admin")
        .await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Sign in").await;
    ui.arrive("/admin").await;
    let at = ui.client().current_url().await.unwrap();
    assert_eq!(at.origin().ascii_serialization(), ui.served.origin);
    ui.stop().await;
}

async fn the_claim_code_is_asked_for_when_the_policy_wants_it(url: String) {
    let mut config = config_for(&url);
    config.auth.first_admin = FirstAdmin::ClaimCode.as_str().into();
    let app = TestApp::with(config, None).await;
    let code = app
        .app
        .cms
        .auth()
        .issue_claim_code()
        .await
        .unwrap()
        .expect("a code while unclaimed");
    let ui = Ui::start(app, "claim-code").await;
    ui.open("/admin/sign-up").await;
    ui.fill("Name", "Ada").await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Create account").await;
    // Refused without the code, with the server's reason.
    ui.find(".banner.error").await;
    ui.screenshot("refused").await;
    ui.click("I have a claim code").await;
    ui.fill("Claim code", &code).await;
    ui.click("Create account").await;
    ui.arrive("/admin").await;
    ui.see("Default").await;
    ui.stop().await;
}

async fn a_forgotten_password_is_replaced_from_the_emailed_link(url: String) {
    let app = TestApp::start(&url).await;
    app.sign_up("Ada", "ada@example.com").await;
    let ui = Ui::start(app, "password-reset").await;
    ui.open("/admin/sign-in").await;
    ui.click("Forgot your password?").await;
    ui.arrive("/admin/forgot-password").await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.click("Send reset link").await;
    ui.see("a link to choose a new password is on its way")
        .await;
    let mail = ui
        .app
        .mail
        .last(MailKind::PasswordReset, "ada@example.com")
        .await;

    ui.open(path_of(&mail.link)).await;
    ui.fill("New password", "a brand new password").await;
    ui.fill("Repeat it", "a different one").await;
    ui.click("Set password").await;
    ui.see("The two passwords differ.").await;
    ui.fill("Repeat it", "a brand new password").await;
    ui.click("Set password").await;
    ui.see("Your password is set.").await;
    ui.screenshot("password-set").await;
    // The link works once.
    ui.open(path_of(&mail.link)).await;
    ui.fill("New password", "yet another password").await;
    ui.fill("Repeat it", "yet another password").await;
    ui.click("Set password").await;
    ui.see("expired or was already used").await;

    ui.open("/admin/sign-in").await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.fill("Password", "a brand new password").await;
    ui.click("Sign in").await;
    ui.arrive("/admin").await;
    ui.stop().await;
}

async fn an_invited_person_creates_their_account_and_joins(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let rename = app
        .req(
            axum::http::Method::PATCH,
            &format!(
                "/api/organizations/{}",
                crate::people_support::active_org(&app, &ada).await.unwrap()
            ),
        )
        .json(json!({"name": "Acme Publishing"}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(rename.status, axum::http::StatusCode::OK, "{}", rename.body);
    invite(&app, &ada, "grace@example.com", "editor").await;
    let mail = app
        .mail
        .last(MailKind::Invitation, "grace@example.com")
        .await;
    let ui = Ui::start(app, "invitation").await;
    // The e-mailed link carries the invitation's secret: the page says what joining means,
    // fills in the invited address, and the sign-up sends the secret, which joins.
    assert!(
        mail.link.contains("/admin/accept-invitation?token="),
        "{}",
        mail.link
    );
    ui.open(path_of(&mail.link)).await;
    ui.see("You are invited").await;
    ui.see("Ada invited you to join Acme Publishing as editor.")
        .await;
    ui.screenshot("invited").await;
    ui.fill("Name", "Grace Hopper").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Create account").await;
    ui.arrive("/admin").await;
    ui.see("Acme Publishing").await;
    ui.stop().await;
}

async fn a_signed_in_person_accepts_an_invitation(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let (ada, _) = first_owner(&app).await;
    // Grace signed up before she was invited, so her address is not verified yet.
    let grace = app.sign_up("Grace", "grace@example.com").await;
    let invitation = invite(&app, &ada, "grace@example.com", "viewer").await;
    let ui = Ui::start(app, "accept").await;
    ui.sign_in_as(&grace).await;
    // An unknown id is refused; so is the real id without the secret (nothing proves the
    // mailbox); a link with a wrong secret opens nothing.
    ui.open("/admin/accept-invitation/0190f3a0-0000-7000-8000-000000000000")
        .await;
    ui.click("Accept invitation").await;
    ui.find(".banner.error").await;
    ui.open(&format!(
        "/admin/accept-invitation/{}",
        invitation["id"].as_str().unwrap()
    ))
    .await;
    ui.click("Accept invitation").await;
    ui.see("Open the link from the invitation e-mail").await;
    ui.open("/admin/accept-invitation?token=not-the-secret")
        .await;
    ui.see("This invitation link is not valid any more").await;
    // The link from the e-mail joins.
    ui.open(path_of(invitation["acceptUrl"].as_str().unwrap()))
        .await;
    ui.see("Ada invited you to join Default as viewer.").await;
    ui.see("You are signed in as grace@example.com").await;
    ui.click("Accept invitation").await;
    ui.arrive("/admin").await;
    ui.see("Default").await;
    ui.stop().await;
}

/// Redirect targets as typed into a URL, and whether the way back may follow them: the table
/// both sides of the rule are checked against (`cms_core::redirect` on the server,
/// `js/redirect.js` in the browser).
const REDIRECT_TARGETS: &[(&str, bool)] = &[
    ("/admin", true),
    ("/admin/documents/post?page=2#top", true),
    ("/", true),
    ("", false),
    ("admin", false),
    ("//evil.example", false),
    ("/\\evil.example", false),
    ("\\\\evil.example", false),
    ("/admin\\..\\", false),
    ("https://evil.example/admin", false),
    ("http:/evil.example", false),
    ("javascript:alert(1)", false),
    ("/\t/evil.example", false),
    ("/\n/evil.example", false),
    ("/\r/evil.example", false),
    ("\t/admin", false),
    ("/ad min", false),
    ("/admin\u{0}", false),
    ("/admin\u{7f}", false),
    ("/admin\u{85}", false),
    ("/admin\u{a0}", false),
    ("/admin\u{2028}", false),
];

/// The browser's rule and the server's agree on every target of the table, and a signed-in
/// browser sent to sign-in with a hostile `redirect` stays on the instance.
async fn the_browser_follows_the_servers_redirect_rule(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let ui = Ui::start(app, "redirect-rule").await;
    ui.open("/admin/sign-in").await;
    let literals: Vec<Value> = REDIRECT_TARGETS.iter().map(|(raw, _)| json!(raw)).collect();
    let verdicts = ui
        .client()
        .execute_async(
            "const [targets, done] = arguments;
             const app = document.querySelector('script[type=module][src$=\"/js/app.js\"]').src;
             import(new URL('redirect.js', app).href).then((m) => done(targets.map((t) => m.sameOriginPath(t) === t)),
                                 (e) => done(String(e)));",
            vec![json!(literals)],
        )
        .await
        .unwrap();
    let verdicts = verdicts.as_array().unwrap_or_else(|| panic!("{verdicts}"));
    for (((raw, allowed), target), browser) in REDIRECT_TARGETS.iter().zip(&literals).zip(verdicts)
    {
        let target = target.as_str().unwrap();
        let server = cms::core::redirect::same_origin_path(target).is_some();
        assert_eq!(server, *allowed, "server on {raw:?}");
        assert_eq!(browser, &json!(*allowed), "browser on {raw:?}");
    }

    // Signed in, sign-in sends the browser straight on: to the admin, not the hostile target.
    ui.sign_in_as(&ada).await;
    for hostile in [
        "%2F%09%2Fevil.example",
        "%2F%5Cevil.example",
        "%2F%0A%2Fevil.example",
    ] {
        ui.client()
            .goto(&ui.url(&format!("/admin/sign-in?redirect={hostile}")))
            .await
            .unwrap();
        ui.arrive("/admin").await;
        let at = ui.client().current_url().await.unwrap();
        assert_eq!(
            at.origin().ascii_serialization(),
            ui.served.origin,
            "{hostile}"
        );
    }
    ui.stop().await;
}

crate::admin_scenarios!(
    the_first_person_signs_up_then_out_and_back_in,
    sign_in_goes_back_only_to_this_instance,
    the_browser_follows_the_servers_redirect_rule,
    the_claim_code_is_asked_for_when_the_policy_wants_it,
    a_forgotten_password_is_replaced_from_the_emailed_link,
    an_invited_person_creates_their_account_and_joins,
    a_signed_in_person_accepts_an_invitation,
);
