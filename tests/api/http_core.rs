//! HTTP conventions: envelopes, request ids, body limits, unknown routes.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::support::{TestApp, config_for};

async fn malformed_json_is_400_in_the_handler_envelope(url: String) {
    let app = TestApp::start(&url).await;
    let res = app
        .req(Method::POST, "/api/auth/sign-up/email")
        .raw("application/json", "{\"name\": ")
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(message.contains("JSON"), "{message}");

    // Well-formed JSON of the wrong shape is a 400 too, never a 500.
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": 5, "email": [], "password": {}}),
        )
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .post("/api/auth/sign-up/email", json!([1, 2]))
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    let res = app
        .req(Method::POST, "/api/auth/sign-in/email")
        .raw("text/plain", "hello")
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Unsupported Media Type");
    app.stop().await;
}

async fn an_oversize_body_is_413(url: String) {
    let mut config = config_for(&url);
    config.server.max_json_bytes = 1024;
    let app = TestApp::with(config, None).await;
    let big =
        json!({"name": "x".repeat(2000), "email": "a@example.com", "password": "long enough"});
    let res = app.post("/api/auth/sign-up/email", big).send().await;
    res.assert_handler_error(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large");
    // Nothing was stored: the first sign-up is still open.
    app.sign_up("Ada", "ada@example.com").await;
    app.stop().await;
}

async fn every_response_carries_a_request_id(url: String) {
    let app = TestApp::start(&url).await;
    let res = app.get("/healthz").send().await;
    let generated = res.headers["x-request-id"].to_str().unwrap();
    assert_eq!(generated.len(), 36, "a UUID: {generated}");

    let res = app
        .get("/no/such/route")
        .header("x-request-id", "trace-me-42")
        .send()
        .await;
    assert_eq!(res.headers["x-request-id"], "trace-me-42");
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    let res = app
        .get("/api/settings/api-keys")
        .header("x-request-id", "abc")
        .send()
        .await;
    assert_eq!(res.headers["x-request-id"], "abc");
    app.stop().await;
}

async fn a_wrong_method_is_405_in_the_envelope(url: String) {
    let app = TestApp::start(&url).await;
    let res = app.req(Method::DELETE, "/healthz").send().await;
    res.assert_handler_error(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
    app.stop().await;
}

cms_store::both_engines!(
    malformed_json_is_400_in_the_handler_envelope,
    an_oversize_body_is_413,
    every_response_carries_a_request_id,
    a_wrong_method_is_405_in_the_envelope,
);
