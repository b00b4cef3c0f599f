//! Rows of the security table for webhook endpoints (issue 25, CONTRACT.md section 16): only
//! `org.settings` in the endpoint's own organization reaches `/api/webhooks`; a member without
//! it and a key without it are refused (403), the admin of another organization (or of the
//! child) finds nothing (404), an anonymous `public` reader and a preview token are not even
//! callers there (401); and the signing secret never appears after the answer that made it.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::{DOCS, Fx, forbidden, not_found, unauthorized};
use crate::support::{Reply, Session};

const HOOKS: &str = "/api/webhooks";

/// Who calls, and how.
enum Caller<'a> {
    Session(&'a Session),
    Key(&'a str),
    /// No credential, naming the organization (its `public` role).
    Public(&'a str),
    Preview(&'a str),
}

/// Every webhook route, against the endpoint `id`: (method, path, body).
fn routes(id: &str) -> Vec<(Method, String, Option<Value>)> {
    let good = json!({"url": "https://attacker.example/in", "events": ["*"]});
    vec![
        (Method::GET, HOOKS.to_string(), None),
        (Method::POST, HOOKS.to_string(), Some(good)),
        (Method::GET, format!("{HOOKS}/{id}"), None),
        (
            Method::PATCH,
            format!("{HOOKS}/{id}"),
            Some(json!({"url": "https://attacker.example/in"})),
        ),
        (Method::POST, format!("{HOOKS}/{id}/rotate-secret"), None),
        (Method::POST, format!("{HOOKS}/{id}/test"), None),
        (Method::GET, format!("{HOOKS}/{id}/deliveries"), None),
        (Method::DELETE, format!("{HOOKS}/{id}"), None),
    ]
}

async fn send(
    fx: &Fx,
    caller: &Caller<'_>,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Reply {
    let call = fx.app.req(method, path);
    let call = match caller {
        Caller::Session(s) => call.cookie(s),
        Caller::Key(key) => call.key(key),
        Caller::Public(slug) => call.header("x-cms-organization", slug),
        Caller::Preview(token) => call.header("x-cms-preview", token),
    };
    match body {
        Some(body) => call.json(body).send().await,
        None => call.send().await,
    }
}

/// The parent's endpoint, as its admin made it: its id and secret.
async fn parent_endpoint(fx: &Fx) -> (String, String) {
    let res = fx
        .app
        .post(
            HOOKS,
            json!({"url": "https://hooks.parent.example/in", "events": ["document.published"],
                   "description": "the parent's"}),
        )
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let data = &res.body["data"];
    (
        data["id"].as_str().unwrap().to_string(),
        data["secret"].as_str().unwrap().to_string(),
    )
}

/// The endpoint as the parent's admin reads it: unchanged by the attacks.
async fn assert_untouched(fx: &Fx, id: &str, secret: &str) {
    let res = fx.get(&fx.admin, &format!("{HOOKS}/{id}")).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["url"], "https://hooks.parent.example/in");
    assert!(!res.body.to_string().contains(secret));
    let res = fx.get(&fx.admin, &format!("{HOOKS}/{id}/deliveries")).await;
    assert_eq!(
        res.body["pagination"]["total"], 0,
        "no test was queued: {}",
        res.body
    );
    let res = fx.get(&fx.admin, HOOKS).await;
    let urls: Vec<&str> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["url"].as_str().unwrap())
        .collect();
    assert!(!urls.contains(&"https://attacker.example/in"), "{urls:?}");
}

pub(super) async fn webhook_routes_need_org_settings_in_the_organization(fx: Arc<Fx>) {
    let (id, secret) = parent_endpoint(&fx).await;
    // Members without org.settings, and keys without it (the parent's read and capability
    // keys, the outsider's write key): 403 on every route.
    for (who, caller) in [
        ("viewer", Caller::Session(&fx.viewer)),
        ("editor", Caller::Session(&fx.editor)),
        ("read key", Caller::Key(&fx.read_key)),
        ("capability key", Caller::Key(&fx.caps_key)),
        ("outsider write key", Caller::Key(&fx.stranger_key)),
    ] {
        for (method, path, body) in routes(&id) {
            let res = send(&fx, &caller, method.clone(), &path, body).await;
            forbidden(&format!("{who}: {method} {path}"), &res);
        }
    }
    // Another organization's admin (and the child's): the parent's endpoint does not exist for
    // them; their own list holds none of the parent's.
    for (who, caller) in [
        ("outsider admin", Caller::Session(&fx.stranger)),
        ("child admin", Caller::Session(&fx.child_admin)),
    ] {
        for (method, path, body) in routes(&id) {
            if path == HOOKS {
                continue;
            }
            let res = send(&fx, &caller, method.clone(), &path, body).await;
            not_found(&format!("{who}: {method} {path}"), &res);
        }
    }
    let res = send(
        &fx,
        &Caller::Session(&fx.stranger),
        Method::GET,
        HOOKS,
        None,
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(!res.body.to_string().contains(&id), "{}", res.body);
    assert_untouched(&fx, &id, &secret).await;
}

pub(super) async fn webhook_routes_refuse_anonymous_and_preview_callers(fx: Arc<Fx>) {
    let (id, secret) = parent_endpoint(&fx).await;
    // The parent's `public` role may read documents: it still is no caller here.
    let res = fx
        .app
        .req(Method::PATCH, "/api/roles/public")
        .json(json!({"capabilities": ["document.read", "asset.read"]}))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = fx
        .get(&fx.ada, &format!("/api/organizations/{}", fx.parent))
        .await;
    let slug = res.body["data"]["slug"].as_str().unwrap().to_string();
    let res = fx
        .app
        .req(Method::POST, &format!("{DOCS}/{}/preview", fx.beta))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let token = res.body["data"]["token"].as_str().unwrap().to_string();
    for (who, caller) in [
        ("public role", Caller::Public(&slug)),
        ("preview token", Caller::Preview(&token)),
    ] {
        for (method, path, body) in routes(&id) {
            let res = send(&fx, &caller, method.clone(), &path, body).await;
            unauthorized(&format!("{who}: {method} {path}"), &res);
        }
    }
    assert_untouched(&fx, &id, &secret).await;
}

pub(super) async fn webhook_secret_is_never_read_back(fx: Arc<Fx>) {
    let (id, secret) = parent_endpoint(&fx).await;
    let res = fx
        .app
        .req(Method::POST, &format!("{HOOKS}/{id}/rotate-secret"))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let rotated = res.body["data"]["secret"].as_str().unwrap().to_string();
    for path in [
        HOOKS.to_string(),
        format!("{HOOKS}/{id}"),
        format!("{HOOKS}/{id}/deliveries"),
    ] {
        for who in [&fx.admin, &fx.ada] {
            let res = fx.get(who, &path).await;
            assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
            let text = res.body.to_string();
            for shown in [&secret, &rotated] {
                assert!(
                    !text.contains(shown.as_str()),
                    "{path} shows a secret: {text}"
                );
            }
            assert!(!text.contains("whsec_"), "{path}: {text}");
        }
    }
    let res = fx
        .app
        .req(Method::PATCH, &format!("{HOOKS}/{id}"))
        .json(json!({"description": "changed"}))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(!res.body.to_string().contains("whsec_"), "{}", res.body);
}
