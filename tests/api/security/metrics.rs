//! Rows of the security table for GET /metrics (CONTRACT.md section 19): with `metrics.token`
//! set, only that token as a Bearer token reads the metrics; no credential of a person or a
//! key stands in for it; and what it reads names route templates, never the ids a request
//! carried.

use std::sync::Arc;

use super::{Fx, METRICS_TOKEN, unauthorized};

pub(super) async fn metrics_need_the_metrics_token(fx: Arc<Fx>) {
    let app = &fx.app;
    let near_miss = format!("{}x", &METRICS_TOKEN[..METRICS_TOKEN.len() - 1]);
    let refused = [
        ("no credential", app.get("/metrics")),
        (
            "a wrong token of the same length",
            app.get("/metrics").bearer(&near_miss),
        ),
        (
            "the token with a suffix",
            app.get("/metrics").bearer(&format!("{METRICS_TOKEN}x")),
        ),
        (
            "the instance super admin's session",
            app.get("/metrics").cookie(&fx.ada),
        ),
        (
            "the instance super admin's session token",
            app.get("/metrics").bearer(&fx.ada.token),
        ),
        ("a read key", app.get("/metrics").key(&fx.read_key)),
        (
            "a write key as Bearer",
            app.get("/metrics").bearer(&fx.child_key),
        ),
        (
            "the token as an API key",
            app.get("/metrics").key(METRICS_TOKEN),
        ),
    ];
    for (what, call) in refused {
        unauthorized(&format!("GET /metrics with {what}"), &call.send().await);
    }
    let res = app.get("/metrics").bearer(METRICS_TOKEN).send().await;
    assert_eq!(res.status, axum::http::StatusCode::OK, "{}", res.text());
    let text = res.text();
    assert!(text.contains("cms_http_requests_total{"), "{text}");
    // The rows before read these documents by id: the labels hold the template only.
    for id in [&fx.alpha, &fx.beta, &fx.stranger_note, &fx.asset] {
        assert!(!text.contains(id.as_str()), "an id in a label: {id}");
    }
    assert!(text.contains(r#"route="/api/documents/{id}""#), "{text}");
}
