//! Rate limits on sign-in, sign-up and password-reset requests (CONTRACT.md section 3): 429 with `Retry-After`, per
//! client address and per e-mail, counted in the database.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::support::{PASSWORD, Reply, TestApp, config_for};

const SIGN_IN: &str = "/api/auth/sign-in/email";
const SIGN_UP: &str = "/api/auth/sign-up/email";
const RESET: &str = "/api/user/request-password-reset";

fn limited(url: &str, per_email: u32, per_address: u32) -> cms::Config {
    let mut config = config_for(url);
    config.auth.rate_limit.per_email = per_email;
    config.auth.rate_limit.per_address = per_address;
    config.auth.rate_limit.window_seconds = 60;
    config
}

fn credentials(email: &str, password: &str) -> Value {
    json!({"email": email, "password": password})
}

fn assert_too_many(res: &Reply) -> u64 {
    res.assert_handler_error(StatusCode::TOO_MANY_REQUESTS, "Too Many Requests");
    let secs: u64 = res.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&secs), "{secs}");
    secs
}

/// Every key of the counters table, read below the service.
async fn counter_keys(url: &str) -> Vec<String> {
    use sqlx::Connection;
    let sql = "SELECT key FROM rate_limits ORDER BY key";
    if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sql).fetch_all(&mut conn).await.unwrap()
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sql).fetch_all(&mut conn).await.unwrap()
    }
}

async fn sign_in_is_limited_per_email_until_the_window_ends(url: String) {
    let app = TestApp::with(limited(&url, 3, 1000), None).await;
    app.sign_up("Ada", "ada@example.com").await;
    for _ in 0..3 {
        let res = app
            .post(SIGN_IN, credentials("ada@example.com", "wrong password"))
            .peer("10.0.0.1")
            .send()
            .await;
        res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    // The e-mail is normalised: another spelling is the same counter. Even the right password
    // waits now.
    let res = app
        .post(SIGN_IN, credentials(" ADA@example.com", PASSWORD))
        .peer("10.0.0.2")
        .send()
        .await;
    assert_too_many(&res);
    // Another e-mail is unaffected.
    let res = app
        .post(SIGN_IN, credentials("bob@example.com", "wrong password"))
        .peer("10.0.0.1")
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");

    // The window resets.
    app.clock.advance_millis(60_000);
    let res = app
        .post(SIGN_IN, credentials("ada@example.com", PASSWORD))
        .peer("10.0.0.1")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.stop().await;
}

async fn sign_in_is_limited_per_client_address(url: String) {
    let app = TestApp::with(limited(&url, 1000, 3), None).await;
    for i in 0..3 {
        let res = app
            .post(SIGN_IN, credentials(&format!("u{i}@example.com"), PASSWORD))
            .peer("10.0.0.1")
            // Without a trusted proxy the header is the client's own word, and ignored.
            .header("x-forwarded-for", &format!("192.0.2.{i}"))
            .send()
            .await;
        res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    let res = app
        .post(SIGN_IN, credentials("new@example.com", PASSWORD))
        .peer("10.0.0.1")
        .header("x-forwarded-for", "192.0.2.99")
        .send()
        .await;
    let wait = assert_too_many(&res);
    assert!(wait >= 50, "the window began moments ago: {wait}");
    // IPv4-mapped IPv6 is the same address.
    let res = app
        .post(SIGN_IN, credentials("new@example.com", PASSWORD))
        .peer("::ffff:10.0.0.1")
        .send()
        .await;
    assert_too_many(&res);
    // Another address is unaffected.
    let res = app
        .post(SIGN_IN, credentials("new@example.com", PASSWORD))
        .peer("10.0.0.2")
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    // Time passing shortens Retry-After.
    app.clock.advance_millis(45_000);
    let res = app
        .post(SIGN_IN, credentials("new@example.com", PASSWORD))
        .peer("10.0.0.1")
        .send()
        .await;
    let later = assert_too_many(&res);
    assert!(later <= 15 && later < wait, "{later} after {wait}");
    app.stop().await;
}

async fn behind_a_trusted_proxy_the_forwarded_address_counts(url: String) {
    let mut config = limited(&url, 1000, 2);
    config.server.trusted_proxies = vec!["10.0.0.0/8".into()];
    let app = TestApp::with(config, None).await;
    let attempt = |forwarded: &'static str| {
        app.post(SIGN_IN, credentials("a@example.com", PASSWORD))
            .peer("10.0.0.1")
            .header("x-forwarded-for", forwarded)
            .send()
    };
    for _ in 0..2 {
        attempt("203.0.113.5")
            .await
            .assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    assert_too_many(&attempt("203.0.113.5").await);
    // A client prepending a fake address does not escape: the proxy appended the real one.
    assert_too_many(&attempt("198.51.100.7, 203.0.113.5").await);
    // Another client behind the same proxy has its own counter.
    attempt("203.0.113.6")
        .await
        .assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn sign_up_is_limited_before_anything_else(url: String) {
    let app = TestApp::with(limited(&url, 2, 1000), None).await;
    app.sign_up("Ada", "ada@example.com").await;
    // Invite-only: refused by policy, but each attempt counts.
    let body = json!({"name": "Eve", "email": "eve@example.com", "password": PASSWORD});
    app.post(SIGN_UP, body.clone())
        .send()
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    app.post(SIGN_UP, body.clone())
        .send()
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    // Past the limit even a malformed body is 429: nothing is looked at first.
    assert_too_many(&app.post(SIGN_UP, body).send().await);
    let res = app
        .post(
            SIGN_UP,
            json!({"email": "eve@example.com", "password": "x"}),
        )
        .send()
        .await;
    assert_too_many(&res);
    // Sign-in counts separately.
    let res = app
        .post(SIGN_IN, credentials("eve@example.com", PASSWORD))
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn instances_on_one_database_share_the_counters(url: String) {
    let config = limited(&url, 4, 1000);
    let a = TestApp::with(config.clone(), None).await;
    let b = TestApp::with(config, None).await;
    for app in [&a, &b, &a, &b] {
        app.post(SIGN_IN, credentials("ada@example.com", PASSWORD))
            .send()
            .await
            .assert_handler_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    for app in [&a, &b] {
        assert_too_many(
            &app.post(SIGN_IN, credentials("ada@example.com", PASSWORD))
                .send()
                .await,
        );
    }
    b.app.cms.store().close().await;
    a.stop().await;
}

async fn counters_hold_no_identifier_in_clear_and_expire(url: String) {
    let app = TestApp::with(limited(&url, 10, 10), None).await;
    app.post(SIGN_IN, credentials("ada@example.com", PASSWORD))
        .peer("10.0.0.1")
        .send()
        .await;
    let keys = counter_keys(&url).await;
    assert_eq!(keys.len(), 2, "{keys:?}");
    for key in &keys {
        assert!(key.starts_with("signIn."), "{key}");
        assert!(!key.contains("ada") && !key.contains("10.0.0.1"), "{key}");
    }
    // Past the window, the next attempt removes the expired counters.
    app.clock.advance_millis(61_000);
    app.post(SIGN_IN, credentials("bob@example.com", PASSWORD))
        .send()
        .await;
    let after = counter_keys(&url).await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert!(!keys.contains(&after[0]));
    app.stop().await;
}

/// Reset requests answer alike for every address (no enumeration), so the limit counts them
/// all: per e-mail and per client address, before anything is looked up or sent.
async fn password_reset_requests_are_limited(url: String) {
    let app = TestApp::with(limited(&url, 2, 3), None).await;
    app.sign_up("Ada", "ada@example.com").await;
    for _ in 0..2 {
        let res = app
            .post(RESET, json!({"email": "ada@example.com"}))
            .peer("10.0.0.1")
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    }
    let res = app
        .post(RESET, json!({"email": "Ada@Example.com"}))
        .peer("10.0.0.2")
        .send()
        .await;
    assert_too_many(&res);
    // The address limit: a third request from 10.0.0.1, for another address, still passes;
    // the fourth does not.
    let res = app
        .post(RESET, json!({"email": "nobody@example.com"}))
        .peer("10.0.0.1")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .post(RESET, json!({"email": "someone@example.com"}))
        .peer("10.0.0.1")
        .send()
        .await;
    assert_too_many(&res);
    // The reset e-mails leave on a task of their own.
    for _ in 0..250 {
        if app.mail.sent().len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        app.mail.sent().len(),
        2,
        "only the admitted requests for an existing account sent mail"
    );
    app.stop().await;
}

cms_store::both_engines!(
    password_reset_requests_are_limited,
    sign_in_is_limited_per_email_until_the_window_ends,
    sign_in_is_limited_per_client_address,
    behind_a_trusted_proxy_the_forwarded_address_counts,
    sign_up_is_limited_before_anything_else,
    instances_on_one_database_share_the_counters,
    counters_hold_no_identifier_in_clear_and_expire,
);
