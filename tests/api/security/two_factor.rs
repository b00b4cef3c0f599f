//! Rows of the security table for two-factor sign-in (issue 29, CONTRACT.md section 20): it is
//! the person's own (no key enrols, reads or turns it off), and an organization that requires
//! it grants nothing to a member without it.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::json;

use super::{Fx, person};
use crate::two_factor::enrol_and_confirm;

const TWO_FACTOR_ROUTES: [&str; 3] = [
    "/api/user/two-factor/enroll",
    "/api/user/two-factor/confirm",
    "/api/user/two-factor/disable",
];

/// 29: keys and the two-factor routes; a member without it in an organization requiring it.
pub(super) async fn two_factor_is_the_persons_and_its_requirement_holds(fx: Arc<Fx>) {
    let app = &fx.app;
    let parent = format!("/api/organizations/{}", fx.parent);
    for key in [&fx.read_key, &fx.caps_key] {
        for path in TWO_FACTOR_ROUTES {
            let res = app.post(path, json!({})).key(key).send().await;
            assert_eq!(res.status, StatusCode::FORBIDDEN, "{path}: {}", res.body);
        }
        let res = app.get("/api/user/two-factor").key(key).send().await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);
        let res = app
            .req(Method::PATCH, &parent)
            .json(json!({"requireTwoFactor": true}))
            .key(key)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);
    }
    let res = app
        .req(Method::PATCH, &parent)
        .json(json!({"requireTwoFactor": true}))
        .cookie(&fx.viewer)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);

    // An organization of its own, so no other row meets the requirement.
    let carol = person(app, "carol2fa", &fx.outsider, "viewer").await;
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Locked", "slug": "locked-2fa"}),
        )
        .cookie(&carol)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let locked = res.body["data"]["id"].as_str().unwrap().to_string();
    enrol_and_confirm(app, &carol).await;
    let res = app
        .req(Method::PATCH, &format!("/api/organizations/{locked}"))
        .json(json!({"requireTwoFactor": true}))
        .cookie(&carol)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    let dave = person(app, "dave2fa", &locked, "admin").await;
    let reads = app
        .get("/api/documents?type=note")
        .cookie(&dave)
        .send()
        .await;
    let writes = app
        .post(
            "/api/documents",
            json!({"type": "note", "data": {"title": "no second factor"}}),
        )
        .cookie(&dave)
        .send()
        .await;
    let keys = app
        .post(
            "/api/settings/api-keys",
            json!({"name": "escape", "permissions": ["read"]}),
        )
        .cookie(&dave)
        .send()
        .await;
    let settings = app
        .req(Method::PATCH, &format!("/api/organizations/{locked}"))
        .json(json!({"requireTwoFactor": false}))
        .cookie(&dave)
        .send()
        .await;
    for res in [reads, writes, keys, settings] {
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);
        assert!(res.text().contains("two-factor"), "{}", res.body);
    }
}
