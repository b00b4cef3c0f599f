//! Rows of the security table for de-duplicated uploads (issue 32 point 8): an upload is
//! answered with an existing asset of the caller's own organization only; never another
//! organization's (a parent's included), even for the same bytes.

use std::sync::Arc;

use axum::http::{Method, StatusCode};

use super::{ASSETS, Fx, png};

/// The fixture's parent asset and outsider asset hold the same bytes (`new_asset`).
pub(super) async fn duplicate_uploads_answer_only_the_callers_own_asset(fx: Arc<Fx>) {
    let app = &fx.app;
    let bytes = png(4, 3, 10);
    let send = |key: Option<&str>, session: Option<&crate::support::Session>| {
        let mut req = app.req(Method::POST, ASSETS);
        if let Some(key) = key {
            req = req.key(key);
        }
        if let Some(session) = session {
            req = req.cookie(session);
        }
        req.multipart(&[], Some(("file", "same.png", &bytes)))
            .send()
    };
    // The outsider: its own asset with these bytes, never the parent's.
    let res = send(None, Some(&fx.stranger)).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["duplicate"], true);
    assert_eq!(res.body["data"]["id"], fx.stranger_asset.as_str());
    assert_ne!(res.body["data"]["id"], fx.asset.as_str());
    // The child's admin: the child has no asset with these bytes, so a new one of its own,
    // never its parent's (removed again, so the fixture stays as it was).
    let res = send(Some(&fx.child_key), None).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert!(res.body["data"].get("duplicate").is_none(), "{}", res.body);
    assert_eq!(res.body["data"]["organizationId"], fx.child.as_str());
    let new = res.body["data"]["id"].as_str().unwrap().to_string();
    assert_ne!(new, fx.asset);
    let res = app
        .req(Method::DELETE, &format!("{ASSETS}/{new}"))
        .key(&fx.child_key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // The parent's editor reads assets: the parent's own asset.
    let res = send(None, Some(&fx.editor)).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["id"], fx.asset.as_str());
}
