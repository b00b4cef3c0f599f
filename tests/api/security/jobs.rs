//! Rows of the security table for instance-wide powers (issue 21, Build point 1; CONTRACT.md
//! section 13): `scope=all` and other organizations' jobs are for a signed-in instance super
//! admin, and a key its super admin made stays inside its organization with its listed scope.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::json;

use super::{Fx, forbidden, not_found};
use crate::jobs::{job_status, stored_job};

/// A write key of the instance super admin, bound to the parent (checked, not assumed).
async fn super_admin_key(fx: &Fx) -> String {
    let key = fx
        .app
        .create_key(
            &fx.ada,
            json!({"name": "ada-write", "permissions": ["write"]}),
        )
        .await;
    let res = fx.app.get("/api/organizations").key(&key).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"][0]["id"], json!(fx.parent), "{}", res.body);
    key
}

pub(super) async fn job_powers_beyond_the_organization_need_a_super_admin_session(fx: Arc<Fx>) {
    let key = super_admin_key(&fx).await;
    let pending = stored_job(&fx.app, &fx.outsider, "pending").await;
    let failed = stored_job(&fx.app, &fx.outsider, "failed").await;
    for path in ["/api/jobs", "/api/events", "/api/jobs/health"] {
        let res = fx
            .app
            .get(&format!("{path}?scope=all"))
            .key(&key)
            .send()
            .await;
        forbidden(
            &format!("{path}?scope=all with the super admin's key"),
            &res,
        );
    }
    for (job, action) in [(&pending, "cancel"), (&failed, "retry")] {
        let res = fx
            .app
            .post(&format!("/api/jobs/{job}/{action}"), json!({}))
            .key(&key)
            .send()
            .await;
        not_found(
            &format!("{action} of the outsider's job with the key"),
            &res,
        );
    }
    assert_eq!(job_status(&fx.app, &pending).await, "pending");
    assert_eq!(job_status(&fx.app, &failed).await, "failed");

    // In its own organization, managing a job takes document.publish.
    let own = stored_job(&fx.app, &fx.parent, "pending").await;
    let res = fx
        .app
        .post(&format!("/api/jobs/{own}/cancel"), json!({}))
        .cookie(&fx.viewer)
        .send()
        .await;
    forbidden("viewer cancels a job of their organization", &res);
    assert_eq!(job_status(&fx.app, &own).await, "pending");

    // The super admin's session holds the instance-wide powers.
    let res = fx
        .app
        .get("/api/jobs?scope=all")
        .cookie(&fx.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = fx
        .app
        .post(&format!("/api/jobs/{pending}/cancel"), json!({}))
        .cookie(&fx.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(job_status(&fx.app, &pending).await, "cancelled");
}

pub(super) async fn super_admin_key_stays_inside_its_organization(fx: Arc<Fx>) {
    let key = super_admin_key(&fx).await;
    let res = fx
        .app
        .post(
            "/api/organizations/switch",
            json!({"organizationId": fx.outsider}),
        )
        .key(&key)
        .send()
        .await;
    forbidden("switch with the key", &res);
    for org in [&fx.outsider, &fx.child] {
        let res = fx
            .app
            .get(&format!("/api/organizations/{org}"))
            .key(&key)
            .send()
            .await;
        not_found("read another organization with the key", &res);
    }
    let res = fx
        .app
        .req(
            axum::http::Method::DELETE,
            &format!("/api/organizations/{}", fx.outsider),
        )
        .key(&key)
        .send()
        .await;
    forbidden("delete another organization with the key", &res);
    let res = fx
        .app
        .get(&format!("/api/organizations/{}", fx.outsider))
        .cookie(&fx.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "still there: {}", res.body);
    let res = fx.app.get("/api/instance-settings").key(&key).send().await;
    forbidden("instance settings with the key", &res);
    let res = fx
        .app
        .req(axum::http::Method::PATCH, "/api/instance-settings")
        .json(json!({"inviteOnly": true}))
        .key(&key)
        .send()
        .await;
    forbidden("instance settings change with the key", &res);
}
