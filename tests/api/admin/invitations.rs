//! Invitations in the admin (issue 32, point 5): the link of an invitation just made, to copy
//! and hand over; the accept page saying who invites to what, with the address filled in; and,
//! on an instance whose e-mail reaches nobody, a member created with a password.

use cms::service::MailKind;
use serde_json::{Value, json};

use super::Ui;
use crate::people_support::{first_owner, invite};
use crate::support::{PASSWORD, TestApp, config_for};

/// The path part of an absolute link.
fn path_of(link: &str) -> &str {
    &link[link.find("/admin/").expect("an admin link")..]
}

/// The text of the notices shown so far.
async fn notices(ui: &Ui) -> String {
    let text = ui
        .eval("return [...document.querySelectorAll('.notice')].map((n) => n.textContent).join(' | ')", vec![])
        .await;
    text.as_str().unwrap_or_default().to_string()
}

async fn the_invitation_link_is_shown_once_to_copy(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "invitation-link").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/members").await;
    ui.fill("Invite e-mail", "grace@example.com").await;
    ui.click("Send invitation").await;
    let panel = ui.find(".invitation-link").await;
    let mail = ui
        .app
        .mail
        .last(MailKind::Invitation, "grace@example.com")
        .await;
    // The field holds the very acceptUrl the API answered (and e-mailed), secret included.
    let shown = ui
        .eval(
            "return document.getElementById('invitation-link').value",
            vec![],
        )
        .await;
    assert_eq!(shown, json!(mail.link));
    assert!(
        mail.link.contains("/admin/accept-invitation?token="),
        "{}",
        mail.link
    );
    let text = panel.text().await.unwrap();
    assert!(text.contains("shown only now"), "{text}");
    assert!(
        text.contains("It was also e-mailed to grace@example.com"),
        "{text}"
    );
    let readonly = ui
        .eval(
            "return document.getElementById('invitation-link').readOnly",
            vec![],
        )
        .await;
    assert_eq!(readonly, json!(true));
    ui.screenshot("link").await;

    // Copied to the clipboard, or, where the browser refuses that, selected for the keyboard.
    ui.click("Copy invitation link").await;
    let mut said = String::new();
    for _ in 0..100 {
        said = notices(&ui).await;
        if said.contains("copied") || said.contains("selected") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    if said.contains("selected") {
        let selected = ui
            .eval("const i = document.getElementById('invitation-link'); return i.value.substring(i.selectionStart, i.selectionEnd)", vec![])
            .await;
        assert_eq!(selected, json!(mail.link));
    } else {
        assert!(said.contains("The invitation link is copied."), "{said}");
    }

    // The secret is never listed: once the page is drawn again, the link is gone.
    ui.open("/admin/settings/members").await;
    ui.see("grace@example.com").await;
    let panels = ui
        .eval(
            "return document.querySelectorAll('.invitation-link').length",
            vec![],
        )
        .await;
    assert_eq!(panels, json!(0));
    let page = ui.main_text().await;
    assert!(!page.contains(&mail.link), "{page}");
    ui.stop().await;
}

async fn the_accept_page_says_who_invites_to_what(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let invitation = invite(&app, &ada, "grace@example.com", "viewer").await;
    let ui = Ui::start(app, "accept-page").await;
    ui.open(path_of(invitation["acceptUrl"].as_str().unwrap()))
        .await;
    ui.see("Ada invited you to join Default as viewer.").await;
    let facts: Value = ui
        .eval(
            "return [...document.querySelectorAll('dl.facts dt')].map((dt) => [dt.textContent, dt.nextElementSibling.textContent])",
            vec![],
        )
        .await;
    assert_eq!(
        facts,
        json!([
            ["Organization", "Default"],
            ["Role", "viewer"],
            ["Invited by", "Ada"],
            ["For", "grace@example.com"]
        ])
    );
    let email = ui.control("E-mail").await.prop("value").await.unwrap();
    assert_eq!(email.as_deref(), Some("grace@example.com"));
    ui.screenshot("accept").await;
    ui.fill("Name", "Grace").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Create account").await;
    ui.arrive("/admin").await;
    ui.see("Default").await;
    ui.stop().await;
}

async fn without_mail_a_member_is_created_with_a_password(url: String) {
    // The configured transport is the log: nothing reaches anyone.
    let app = TestApp::with_configured_mailer(config_for(&url)).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "create-member").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/members").await;

    // An invitation is made, and its link is what reaches the person.
    ui.fill("Invite e-mail", "grace@example.com").await;
    ui.click("Send invitation").await;
    let panel = ui.find(".invitation-link").await;
    let text = panel.text().await.unwrap();
    assert!(
        text.contains("E-mail is not set up on this instance"),
        "{text}"
    );

    ui.see("Create a member").await;
    ui.fill("Member name", "Bob Builder").await;
    ui.fill("Member e-mail", "bob@example.com").await;
    ui.fill("Member password", PASSWORD).await;
    ui.control("Member role")
        .await
        .select_by_value("editor")
        .await
        .unwrap();
    ui.screenshot("form").await;
    ui.click("Create member with password").await;
    ui.see("Bob Builder is a member now").await;
    ui.find("tr[data-email='bob@example.com']").await;
    ui.screenshot("created").await;

    // Bob signs in with the password he was given.
    ui.click("Sign out").await;
    ui.arrive("/admin/sign-in").await;
    ui.fill("E-mail", "bob@example.com").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Sign in").await;
    ui.arrive("/admin").await;
    ui.see("Default").await;
    let name = ui
        .eval(
            "return document.querySelector('#topbar .user').textContent",
            vec![],
        )
        .await;
    assert_eq!(name, json!("Bob Builder"));
    ui.stop().await;
}

crate::admin_scenarios!(
    the_invitation_link_is_shown_once_to_copy,
    the_accept_page_says_who_invites_to_what,
    without_mail_a_member_is_created_with_a_password,
);
