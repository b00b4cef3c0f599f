//! A website on another origin reads published content from the service in a real browser
//! (issue 24, CONTRACT.md section 15): headless Chromium opens a page served from a second
//! loopback origin, whose script calls the API with `fetch()`, naming the organization and
//! sending no credentials. CORS, the `public` role and the exposed `ETag` are what a browser
//! enforces, so only a browser proves them.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Html;
use fantoccini::Locator;
use serde_json::{Value, json};

use crate::browser::Browser;
use crate::support::{Session, TestApp, config_for, serve};

/// The site's one page: it fetches the published posts, lists their titles and records what
/// the browser let it see (status, the exposed tag, or the error CORS turned the call into).
/// A second fetch asks the browser to revalidate (`cache: "no-cache"`): it sends the tag back
/// and, on a 304, hands the page the body it kept.
fn page(cms: &str, organization: &str) -> String {
    format!(
        r#"<!doctype html>
<html><head><meta charset="utf-8"><title>A website</title></head>
<body>
<ul id="posts"></ul>
<p id="out"></p>
<script>
const out = document.getElementById("out");
const read = (cache) => fetch("{cms}/api/documents?type=post&sort=title", {{
  headers: {{ "x-cms-organization": "{organization}" }},
  credentials: "omit",
  cache,
}});
(async () => {{
  try {{
    const res = await read("default");
    out.dataset.status = String(res.status);
    out.dataset.etag = res.headers.get("etag") || "";
    out.dataset.cacheControl = res.headers.get("cache-control") || "";
    const body = await res.json();
    for (const doc of body.data) {{
      const item = document.createElement("li");
      item.textContent = doc.publishedData.title;
      item.dataset.hasDraft = String("draftData" in doc);
      document.getElementById("posts").appendChild(item);
    }}
    const again = await read("no-cache");
    out.dataset.revalidated = String(again.status);
    out.dataset.revalidatedTitles = (await again.json()).data.length;
  }} catch (e) {{
    out.dataset.error = String(e);
  }}
  out.dataset.done = "true";
}})();
</script>
</body></html>"#
    )
}

/// A second loopback server, the website, serving [`page`] at `/` on every host name it is
/// reached by; stops when the test's runtime ends.
async fn site(listener: tokio::net::TcpListener, html: String) {
    let router = axum::Router::new().route(
        "/",
        axum::routing::get(move || {
            let html = html.clone();
            async move { Html(html) }
        }),
    );
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
}

async fn publish(app: &TestApp, owner: &Session, title: &str, publish: bool) {
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": title}, "publish": publish}),
        )
        .cookie(owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
}

/// The page's record once its script has finished (`data-done`), as attribute → value.
async fn outcome(browser: &Browser, url: &str) -> Value {
    browser.client.goto(url).await.unwrap();
    let out = browser
        .client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css("#out[data-done='true']"))
        .await
        .unwrap_or_else(|e| panic!("the page at {url} did not finish: {e}"));
    let mut record = serde_json::Map::new();
    for name in [
        "status",
        "etag",
        "cacheControl",
        "revalidated",
        "revalidatedTitles",
        "error",
    ] {
        let attribute = format!("data-{}", kebab(name));
        if let Some(value) = out.attr(&attribute).await.unwrap() {
            record.insert(name.into(), Value::String(value));
        }
    }
    let mut titles = Vec::new();
    for item in browser
        .client
        .find_all(Locator::Css("#posts li"))
        .await
        .unwrap()
    {
        let draft = item.attr("data-has-draft").await.unwrap();
        assert_eq!(
            draft.as_deref(),
            Some("false"),
            "an anonymous read shows no draft"
        );
        titles.push(Value::String(item.text().await.unwrap()));
    }
    record.insert("titles".into(), Value::Array(titles));
    Value::Object(record)
}

fn kebab(camel: &str) -> String {
    camel
        .chars()
        .flat_map(|c| {
            if c.is_ascii_uppercase() {
                vec!['-', c.to_ascii_lowercase()]
            } else {
                vec![c]
            }
        })
        .collect()
}

async fn a_website_on_another_origin_reads_published_posts(url: String) {
    // The website's origin must be known before the service starts: it is the one listed.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let listed = format!("http://127.0.0.1:{port}");
    let mut config = config_for(&url);
    config.cors.origins = vec![listed.clone()];
    let app = TestApp::with(config, None).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&owner).await;
    let res = app
        .get(&format!("/api/organizations/{org}"))
        .cookie(&owner)
        .send()
        .await;
    let slug = res.body["data"]["slug"].as_str().unwrap().to_string();
    let res = app
        .req(axum::http::Method::PATCH, "/api/roles/public")
        .json(json!({"capabilities": ["document.read"]}))
        .cookie(&owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    publish(&app, &owner, "Hello from the CMS", true).await;
    publish(&app, &owner, "Second post", true).await;
    publish(&app, &owner, "Not yet published", false).await;

    let served = serve(&app).await;
    site(listener, page(&served.origin, &slug)).await;
    let browser = Browser::start().await;

    // From the listed origin: the published titles, the exposed tag, a shared cache policy,
    // and a revalidation the browser completes from its cache.
    let seen = outcome(&browser, &format!("{listed}/")).await;
    assert_eq!(seen.get("error"), None, "{seen}");
    assert_eq!(seen["status"], "200", "{seen}");
    assert_eq!(
        seen["titles"],
        json!(["Hello from the CMS", "Second post"]),
        "{seen}"
    );
    assert!(
        seen["etag"].as_str().is_some_and(|t| t.starts_with('"')),
        "the ETag is exposed to the page: {seen}"
    );
    assert!(
        seen["cacheControl"]
            .as_str()
            .is_some_and(|c| c.starts_with("public, max-age=")),
        "{seen}"
    );
    assert_eq!(seen["revalidated"], "200", "{seen}");
    assert_eq!(seen["revalidatedTitles"], "2", "{seen}");

    // The same page from an origin not listed (another host name, same server): the browser
    // refuses the page the answer, so the script sees a network error and no post.
    let unlisted = format!("http://localhost:{port}/");
    let seen = outcome(&browser, &unlisted).await;
    assert!(
        seen["error"]
            .as_str()
            .is_some_and(|e| e.contains("TypeError")),
        "CORS refused: {seen}"
    );
    assert_eq!(seen["titles"], json!([]), "{seen}");

    browser.stop().await;
    drop(served);
    app.stop().await;
}

cms_store::both_engines!(a_website_on_another_origin_reads_published_posts);
