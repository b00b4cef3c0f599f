//! Two-factor sign-in (CONTRACT.md section 20): enrolling an authenticator app with a first
//! code, the challenge a right password then answers, codes that work once, recovery codes,
//! the challenge's lifetime and wrong-code budget, the rate limit, turning it off, and an
//! organization that requires it. The codes are computed here as an authenticator app would,
//! at the test clock's time.

use axum::http::StatusCode;
use cms::service::Clock;
use serde_json::{Value, json};
use totp_rs::{Algorithm, Secret, TOTP};

use crate::account_sessions::signed_in;
use crate::people_support::{first_owner, member};
use crate::support::{PASSWORD, Reply, Session, TestApp, config_for};

const ENROLL: &str = "/api/user/two-factor/enroll";
const CONFIRM: &str = "/api/user/two-factor/confirm";
const DISABLE: &str = "/api/user/two-factor/disable";
const STATUS: &str = "/api/user/two-factor";
const SECOND_STEP: &str = "/api/auth/two-factor";

/// An authenticator app holding the secret of an enrolment.
pub(crate) struct App(TOTP);

impl App {
    pub(crate) fn code(&self, app: &TestApp) -> String {
        let secs = u64::try_from(app.clock.now().millis() / 1000).unwrap();
        self.0.generate(secs)
    }
}

/// Starts an enrolment for `s` and checks what it answers.
async fn enroll(app: &TestApp, s: &Session) -> App {
    let res = app.post(ENROLL, json!({})).cookie(s).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let data = &res.body["data"];
    let secret = data["secret"].as_str().unwrap();
    let url = data["otpauthUrl"].as_str().unwrap();
    assert!(url.starts_with("otpauth://totp/CMS:"), "{url}");
    assert!(url.contains(&format!("secret={secret}")), "{url}");
    assert!(data["qrCodeSvg"].as_str().unwrap().starts_with("<?xml"));
    let bytes = Secret::Encoded(secret.to_string()).to_bytes().unwrap();
    App(TOTP::new_unchecked(
        Algorithm::SHA1,
        6,
        0,
        30,
        bytes,
        None,
        String::new(),
    ))
}

/// Enrols and confirms, then moves the clock to the next step (the confirming code's step is
/// spent): two-factor on, the recovery codes returned.
async fn turn_on(app: &TestApp, s: &Session) -> (App, Vec<String>) {
    let on = enrol_and_confirm(app, s).await;
    app.clock.advance_millis(30_000);
    on
}

/// Enrols and confirms with the current code: two-factor on, the recovery codes returned.
pub(crate) async fn enrol_and_confirm(app: &TestApp, s: &Session) -> (App, Vec<String>) {
    let authenticator = enroll(app, s).await;
    let res = app
        .post(CONFIRM, json!({"code": authenticator.code(app)}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let codes = res.body["data"]["recoveryCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    (authenticator, codes)
}

async fn password_step(app: &TestApp, email: &str) -> Reply {
    app.post(
        "/api/auth/sign-in/email",
        json!({"email": email, "password": PASSWORD}),
    )
    .send()
    .await
}

/// Signs in with the right password and answers the challenge it gets.
async fn challenge(app: &TestApp, email: &str) -> String {
    let res = password_step(app, email).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["twoFactorRequired"], true, "{}", res.body);
    assert!(res.headers.get("set-cookie").is_none(), "no session yet");
    assert!(res.body.get("token").is_none());
    res.body["challenge"].as_str().unwrap().to_string()
}

async fn second_step(app: &TestApp, body: Value) -> Reply {
    app.post(SECOND_STEP, body).send().await
}

async fn status(app: &TestApp, s: &Session) -> Value {
    let res = app.get(STATUS).cookie(s).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].clone()
}

async fn enrolment_turns_on_with_a_code_and_then_sign_in_asks_for_one(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    assert_eq!(
        status(&app, &ada).await,
        json!({"enabled": false, "pending": false, "recoveryCodesLeft": 0})
    );

    // A wrong first code leaves it off; the right one turns it on with ten recovery codes.
    let authenticator = enroll(&app, &ada).await;
    assert_eq!(status(&app, &ada).await["pending"], true);
    let res = app
        .post(CONFIRM, json!({"code": "000000"}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "code");
    let used = authenticator.code(&app);
    let res = app
        .post(CONFIRM, json!({"code": used}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let recovery: Vec<String> =
        serde_json::from_value(res.body["data"]["recoveryCodes"].clone()).unwrap();
    assert_eq!(recovery.len(), 10);
    assert_eq!(
        status(&app, &ada).await,
        json!({"enabled": true, "pending": false, "recoveryCodesLeft": 10})
    );
    let res = app.post(ENROLL, json!({})).cookie(&ada).send().await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");

    // The right password alone opens no session; the code that confirmed is spent.
    let first = challenge(&app, "ada@example.com").await;
    let res = second_step(&app, json!({"challenge": first, "code": used})).await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    assert!(res.text().contains("used already"), "{}", res.body);

    // The next step's code opens it, with the cookie, once.
    app.clock.advance_millis(30_000);
    let code = authenticator.code(&app);
    let res = second_step(&app, json!({"challenge": first, "code": code})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let session = Session::from(&res);
    assert_eq!(session.user["email"], "ada@example.com");
    assert!(signed_in(&app, &session).await);
    let res = second_step(&app, json!({"challenge": first, "code": code})).await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    let again = challenge(&app, "ada@example.com").await;
    let res = second_step(&app, json!({"challenge": again, "code": code})).await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    assert!(
        res.text().contains("used already"),
        "a code works once: {}",
        res.body
    );

    // A recovery code works once, typed any way, in place of the app's code.
    let typed = recovery[3].to_uppercase().replace('-', " ");
    let res = second_step(&app, json!({"challenge": again, "recoveryCode": typed})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let third = challenge(&app, "ada@example.com").await;
    let res = second_step(
        &app,
        json!({"challenge": third, "recoveryCode": recovery[3]}),
    )
    .await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    assert_eq!(status(&app, &ada).await["recoveryCodesLeft"], 9);

    // Malformed answers are named.
    let res = second_step(&app, json!({"challenge": third})).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = second_step(
        &app,
        json!({"challenge": third, "code": "123456", "recoveryCode": recovery[0]}),
    )
    .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = second_step(&app, json!({"code": "123456"})).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    // An API key acts for its creator in one organization; it never enrols the person.
    let key = app
        .create_key(
            &ada,
            json!({"name": "ci", "permissions": ["read", "write"]}),
        )
        .await;
    for path in [ENROLL, CONFIRM, DISABLE] {
        let res = app.post(path, json!({})).key(&key).send().await;
        res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    let res = app.get(STATUS).key(&key).send().await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
}

async fn a_challenge_lasts_five_minutes_and_five_wrong_codes(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let (authenticator, _) = turn_on(&app, &ada).await;

    // Five wrong codes leave the challenge open; the right one still signs in.
    let survivor = challenge(&app, "ada@example.com").await;
    for _ in 0..5 {
        let res = second_step(&app, json!({"challenge": survivor, "code": "000000"})).await;
        res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    let res = second_step(
        &app,
        json!({"challenge": survivor, "code": authenticator.code(&app)}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    // The sixth ends it: even the right code is then refused.
    app.clock.advance_millis(30_000);
    let spent = challenge(&app, "ada@example.com").await;
    for _ in 0..6 {
        second_step(&app, json!({"challenge": spent, "code": "000000"})).await;
    }
    let res = second_step(
        &app,
        json!({"challenge": spent, "code": authenticator.code(&app)}),
    )
    .await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    assert!(res.text().contains("sign in again"), "{}", res.body);

    // Five minutes later a challenge is over.
    let late = challenge(&app, "ada@example.com").await;
    app.clock.advance_millis(5 * 60_000 + 1_000);
    let res = second_step(
        &app,
        json!({"challenge": late, "code": authenticator.code(&app)}),
    )
    .await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    assert!(res.text().contains("expired"), "{}", res.body);
    let res = second_step(&app, json!({"challenge": "made-up", "code": "123456"})).await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
}

async fn codes_are_rate_limited_like_sign_ins(url: String) {
    let mut config = config_for(&url);
    // Confirming the enrolment counts as one code.
    config.auth.rate_limit.per_email = 4;
    config.auth.rate_limit.per_address = 100;
    let app = TestApp::with(config, None).await;
    let (ada, _) = first_owner(&app).await;
    let (authenticator, _) = turn_on(&app, &ada).await;
    let first = challenge(&app, "ada@example.com").await;
    for _ in 0..3 {
        let res = second_step(&app, json!({"challenge": first, "code": "000000"})).await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.body);
    }
    // The fourth code within the window is refused before it is looked at, right or not.
    let res = second_step(
        &app,
        json!({"challenge": first, "code": authenticator.code(&app)}),
    )
    .await;
    res.assert_handler_error(StatusCode::TOO_MANY_REQUESTS, "Too Many Requests");
    assert!(res.header("retry-after").is_some());
}

async fn turning_it_off_needs_the_password(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let res = app
        .post(DISABLE, json!({"currentPassword": PASSWORD}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    turn_on(&app, &ada).await;
    let res = app.post(DISABLE, json!({})).cookie(&ada).send().await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .post(DISABLE, json!({"currentPassword": "not my password"}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .post(DISABLE, json!({"currentPassword": PASSWORD}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(status(&app, &ada).await["enabled"], false);
    // The password alone signs in again.
    let res = password_step(&app, "ada@example.com").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(res.body["token"].is_string(), "{}", res.body);
}

async fn an_organization_may_require_two_factor(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, org) = first_owner(&app).await;
    let patch = |s: &Session, on: bool| {
        app.req(
            axum::http::Method::PATCH,
            &format!("/api/organizations/{org}"),
        )
        .json(json!({"requireTwoFactor": on}))
        .cookie(s)
    };
    // Nobody requires it of others without using it themself.
    let res = patch(&ada, true).send().await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "requireTwoFactor");
    turn_on(&app, &ada).await;
    let res = patch(&ada, true).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["requireTwoFactor"], true);

    // A member without it may do nothing there but enrol; the refusal says so.
    let bob = member(&app, &ada, "Bob", "bob@example.com", "editor").await;
    let res = app
        .get("/api/documents?type=post")
        .cookie(&bob)
        .send()
        .await;
    res.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    assert!(res.text().contains("two-factor"), "{}", res.body);
    let res = app.get("/api/auth/get-session").cookie(&bob).send().await;
    assert_eq!(res.body["session"]["twoFactorEnrolmentRequired"], true);
    assert_eq!(res.body["session"]["twoFactorEnabled"], false);
    let res = app
        .req(
            axum::http::Method::PATCH,
            &format!("/api/organizations/{org}"),
        )
        .json(json!({"name": "Taken over"}))
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);

    // Enrolled, the same session acts at once.
    turn_on(&app, &bob).await;
    let res = app
        .get("/api/documents?type=post")
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app.get("/api/auth/get-session").cookie(&bob).send().await;
    assert_eq!(res.body["session"]["twoFactorEnrolmentRequired"], false);

    // Turning it off for the organization needs no second factor of anyone else.
    let res = patch(&ada, false).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["requireTwoFactor"], false);
}

cms_store::both_engines!(
    enrolment_turns_on_with_a_code_and_then_sign_in_asks_for_one,
    a_challenge_lasts_five_minutes_and_five_wrong_codes,
    codes_are_rate_limited_like_sign_ins,
    turning_it_off_needs_the_password,
    an_organization_may_require_two_factor,
);
