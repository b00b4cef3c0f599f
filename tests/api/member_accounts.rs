//! What an instance without working e-mail needs (issue 32 points 5 and 7): members created
//! with a password (POST /api/organizations/members), `mailDelivers` in /api/user/access so the
//! admin knows when to offer it, and GET /api/auth/setup for the first-run screen.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::people_support::{first_owner, member, sign_in};
use crate::support::{PASSWORD, Session, TestApp, config_for};

const MEMBERS: &str = "/api/organizations/members";

fn new_member(name: &str, email: &str, role: &str) -> Value {
    json!({"name": name, "email": email, "password": PASSWORD, "role": role})
}

async fn create(app: &TestApp, who: &Session, body: Value) -> crate::support::Reply {
    app.post(MEMBERS, body).cookie(who).send().await
}

async fn an_admin_creates_a_member_who_signs_in(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, org) = first_owner(&app).await;
    let res = create(&app, &ada, new_member("Bob", "Bob@Example.com", "editor")).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let bob_id = res.body["data"]["userId"].as_str().unwrap().to_string();
    assert_eq!(res.body["data"]["email"], "bob@example.com");
    assert_eq!(res.body["data"]["name"], "Bob");
    assert_eq!(res.body["data"]["role"], "editor");

    // The password the admin chose opens a session in the organization.
    let signed_in = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "bob@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(signed_in.status, StatusCode::OK, "{}", signed_in.body);
    // Nobody proved the mailbox.
    assert_eq!(signed_in.body["user"]["emailVerified"], false);
    assert_eq!(signed_in.body["user"]["role"], "editor");
    let bob = Session::from(&signed_in);
    let orgs = app.get("/api/organizations").cookie(&bob).send().await;
    assert_eq!(orgs.body["data"][0]["id"], org.as_str(), "{}", orgs.body);
    assert_eq!(orgs.body["data"][0]["role"], "editor");
    let list = app.get(MEMBERS).cookie(&ada).send().await;
    assert!(
        list.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["userId"] == bob_id.as_str() && m["role"] == "editor"),
        "{}",
        list.body
    );
    // Like every other way of joining, it is announced as `member.added`.
    let events = crate::builtin_events::logged(&url).await;
    let added = events.last().expect("an event");
    assert_eq!(added.event_type, "member.added");
    assert_eq!(added.organization.as_deref(), Some(org.as_str()));
    assert_eq!(added.payload, json!({"userId": bob_id, "role": "editor"}));
    app.stop().await;
}

async fn creating_a_member_is_held_to_the_invitation_rules(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let admin = member(&app, &ada, "Adam", "adam@example.com", "admin").await;
    let viewer = member(&app, &ada, "Vic", "vic@example.com", "viewer").await;

    // An address with an account (here Ada's, in any case) is never given a second password.
    let res = create(&app, &ada, new_member("Ada 2", "ADA@example.com", "editor")).await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    // Bad input is 400 naming the fields.
    let res = create(
        &app,
        &ada,
        json!({"name": "Eve", "email": "not an address", "password": "short", "role": "editor"}),
    )
    .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let named = res.body.to_string();
    assert!(
        named.contains("\"email\"") && named.contains("\"password\""),
        "{named}"
    );
    create(&app, &ada, new_member("Eve", "eve@example.com", "public"))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    create(
        &app,
        &ada,
        new_member("Eve", "eve@example.com", "nosuchrole"),
    )
    .await
    .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // Who may not invite may not create members; only an owner makes an owner.
    create(
        &app,
        &viewer,
        new_member("Eve", "eve@example.com", "viewer"),
    )
    .await
    .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = create(&app, &admin, new_member("Eve", "eve@example.com", "owner")).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);
    app.post(MEMBERS, new_member("Eve", "eve@example.com", "viewer"))
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    // None of the refusals made an account.
    let signed_in = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "eve@example.com", "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(
        signed_in.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        signed_in.body
    );
    // The admin may create what an admin may invite.
    let res = create(&app, &admin, new_member("Eve", "eve@example.com", "editor")).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.stop().await;
}

async fn access_says_whether_mail_delivers(url: String) {
    // The test mailer stands for a real transport: messages reach someone.
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let res = app.get("/api/user/access").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["mailDelivers"], true, "{}", res.body);
    app.stop().await;

    // The default transport writes messages to the log: nobody receives them.
    // The same database: Ada exists already and signs in.
    let app = TestApp::with_configured_mailer(config_for(&url)).await;
    let ada = sign_in(&app, "ada@example.com").await;
    let res = app.get("/api/user/access").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["mailDelivers"], false, "{}", res.body);
    app.stop().await;
}

async fn setup_is_required_until_the_first_account(url: String) {
    let app = TestApp::start(&url).await;
    let res = app.get("/api/auth/setup").send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // One boolean and nothing else: no counts, no policy.
    assert_eq!(res.body["data"], json!({"setupRequired": true}));
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app.get("/api/auth/setup").send().await;
    assert_eq!(res.body["data"], json!({"setupRequired": false}));
    // The same for a signed-in caller.
    let res = app.get("/api/auth/setup").cookie(&ada).send().await;
    assert_eq!(res.body["data"], json!({"setupRequired": false}));
    app.stop().await;
}

cms_store::both_engines!(
    an_admin_creates_a_member_who_signs_in,
    creating_a_member_is_held_to_the_invitation_rules,
    access_says_whether_mail_delivers,
    setup_is_required_until_the_first_account,
);
