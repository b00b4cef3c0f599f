//! `/admin` over plain HTTP: which pages the signed-out may see, where everyone else is sent,
//! and the headers that keep the admin's pages and files safe and cacheable.

use axum::http::StatusCode;

use crate::support::TestApp;

async fn private_pages_send_the_signed_out_to_sign_in(url: String) {
    let app = TestApp::start(&url).await;
    for (path, back) in [
        ("/admin", "/admin"),
        ("/admin/documents/post", "/admin/documents/post"),
        (
            "/admin/documents/post?status=draft&page=2",
            "/admin/documents/post%3Fstatus%3Ddraft%26page%3D2",
        ),
        ("/admin/settings/api-keys", "/admin/settings/api-keys"),
    ] {
        let res = app.get(path).send().await;
        assert_eq!(res.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(
            res.header("location"),
            Some(format!("/admin/sign-in?redirect={back}").as_str()),
            "{path}"
        );
    }
    // An API key is no browser session.
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let key = app
        .create_key(
            &ada,
            serde_json::json!({"name": "k", "capabilities": ["document.read"]}),
        )
        .await;
    let res = app.get("/admin/documents/post").key(&key).send().await;
    assert_eq!(res.status, StatusCode::SEE_OTHER);
    app.stop().await;
}

async fn pages_are_shells_with_a_strict_policy(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    for (path, page) in [
        ("/admin/sign-in", "sign-in"),
        ("/admin/accept-invitation/abc", "accept-invitation"),
        ("/admin/reset-password?token=x", "reset-password"),
    ] {
        let res = app.get(path).send().await;
        assert_eq!(res.status, StatusCode::OK, "{path}");
        assert!(
            res.text().contains(&format!("data-page=\"{page}\"")),
            "{}",
            res.text()
        );
    }
    let res = app
        .get("/admin/documents/post/new")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
    let policy = res.header("content-security-policy").unwrap();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert_eq!(res.header("x-frame-options"), Some("DENY"));
    assert!(res.text().contains("data-type=\"post\""), "{}", res.text());
    assert!(res.text().contains("data-id=\"new\""), "{}", res.text());

    // Unknown pages and odd segments are not pages.
    for path in [
        "/admin/nope",
        "/admin/settings/nope",
        "/admin/documents/%3Cscript%3E",
    ] {
        let res = app.get(path).cookie(&ada).send().await;
        assert_eq!(res.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(res.body["success"], false, "{path}");
    }
    app.stop().await;
}

async fn files_are_versioned_and_kept_forever(url: String) {
    let app = TestApp::start(&url).await;
    let shell = app.get("/admin/sign-in").send().await.text();
    let end = shell.find("/js/app.js").unwrap() + "/js/app.js".len();
    let start = shell[..end].rfind("/admin/static/").unwrap();
    let script = &shell[start..end];
    assert!(script.ends_with("/js/app.js"), "{script}");
    let res = app.get(script).send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(
        res.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(
        res.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
    // Another version, or a path outside the files, is not served.
    let stale = script.replace(cms_admin_version(script), "000000000000");
    assert_eq!(app.get(&stale).send().await.status, StatusCode::NOT_FOUND);
    let outside = script.replace("js/app.js", "../Cargo.toml");
    assert_eq!(app.get(&outside).send().await.status, StatusCode::NOT_FOUND);
    app.stop().await;
}

/// Every page links the admin's SVG icon, served with the other files; `/favicon.ico`, which
/// browsers ask for on pages that link none, leads to it.
async fn the_icon_is_linked_and_served(url: String) {
    let app = TestApp::start(&url).await;
    let shell = app.get("/admin/sign-in").send().await.text();
    let link = shell
        .lines()
        .find(|line| line.contains("rel=\"icon\""))
        .unwrap_or_else(|| panic!("no icon link in {shell}"));
    assert!(link.contains("type=\"image/svg+xml\""), "{link}");
    let start = link.find("/admin/static/").unwrap();
    let href = &link[start..link[start..].find('"').unwrap() + start];
    let res = app.get(href).send().await;
    assert_eq!(res.status, StatusCode::OK, "{href}");
    assert_eq!(res.header("content-type"), Some("image/svg+xml"));
    assert!(res.text().starts_with("<svg"), "{}", res.text());
    let res = app.get("/favicon.ico").send().await;
    assert_eq!(res.status, StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(res.header("location"), Some(href));
    app.stop().await;
}

/// The version segment of `/admin/static/{version}/...`.
fn cms_admin_version(path: &str) -> &str {
    path.trim_start_matches("/admin/static/")
        .split('/')
        .next()
        .unwrap()
}

cms_store::both_engines!(
    private_pages_send_the_signed_out_to_sign_in,
    pages_are_shells_with_a_strict_policy,
    files_are_versioned_and_kept_forever,
    the_icon_is_linked_and_served,
);
