//! Presence on the document editor (issue 30): PUT /api/documents/{id}/presence says "I have
//! it open now" and lists the other people seen in the last 30 seconds, GET lists them
//! without announcing, DELETE leaves. Only people (sessions) take part; whoever may not read
//! the document is answered as its GET answers.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::people_support::{first_owner, member, user_id};
use crate::support::{Session, TestApp};

const DOCS: &str = "/api/documents";

fn presence(id: &str) -> String {
    format!("{DOCS}/{id}/presence")
}

async fn post(app: &TestApp, who: &Session) -> String {
    let res = app
        .post(DOCS, json!({"type": "post", "data": {"title": "Hello"}}))
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

/// `method` on the presence of `id` as `who`; the listed people's names, or the refusal.
async fn call(app: &TestApp, method: Method, id: &str, who: &Session) -> (StatusCode, Value) {
    let res = app.req(method, &presence(id)).cookie(who).send().await;
    (res.status, res.body)
}

fn names(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {body}"))
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

async fn presence_lists_the_other_people_with_a_document_open(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let grace = member(&app, &ada, "Grace", "grace@example.com", "viewer").await;
    let doc = post(&app, &ada).await;
    let other = post(&app, &ada).await;

    // Alone: nobody else is listed, the caller never is.
    let (status, body) = call(&app, Method::PUT, &doc, &ada).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"success": true, "data": []}));

    // Grace (a viewer: reading is enough) announces herself and sees Ada, with what the admin
    // shows of her.
    let (status, body) = call(&app, Method::PUT, &doc, &grace).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let listed = &body["data"][0];
    assert_eq!(body["data"].as_array().unwrap().len(), 1, "{body}");
    assert_eq!(listed["userId"], user_id(&ada));
    assert_eq!(listed["name"], "Ada");
    assert_eq!(listed["email"], "ada@example.com");
    assert!(listed["image"].is_null(), "{listed}");
    assert!(
        listed["seenAt"].as_str().unwrap().ends_with('Z'),
        "{listed}"
    );
    // And Ada sees Grace, by GET too, which announces nothing.
    let (status, body) = call(&app, Method::GET, &doc, &ada).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(names(&body), ["Grace"]);
    // Presence is per document.
    let (_, body) = call(&app, Method::GET, &other, &grace).await;
    assert_eq!(names(&body), Vec::<String>::new());

    // Ada leaves: Grace no longer sees her.
    let (status, body) = call(&app, Method::DELETE, &doc, &ada).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (_, body) = call(&app, Method::PUT, &doc, &grace).await;
    assert_eq!(names(&body), Vec::<String>::new());
    // Leaving twice is no error.
    let (status, _) = call(&app, Method::DELETE, &doc, &ada).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // Ada back; 31 seconds without a heartbeat and she is no longer listed.
    call(&app, Method::PUT, &doc, &ada).await;
    let (_, body) = call(&app, Method::GET, &doc, &grace).await;
    assert_eq!(names(&body), ["Ada"]);
    app.clock.advance_millis(31_000);
    let (_, body) = call(&app, Method::GET, &doc, &grace).await;
    assert_eq!(names(&body), Vec::<String>::new());
    let (_, body) = call(&app, Method::PUT, &doc, &ada).await;
    assert_eq!(
        names(&body),
        Vec::<String>::new(),
        "Grace's heartbeat is old too"
    );
    let (_, body) = call(&app, Method::PUT, &doc, &grace).await;
    assert_eq!(names(&body), ["Ada"]);

    // Rows long past the window go with the next heartbeat in the organization.
    app.clock.advance_millis(6 * 60 * 1000);
    call(&app, Method::PUT, &other, &ada).await;
    let org = app.active_organization(&ada).await;
    let mut tx = app.app.cms.store().read_for(&org).await.unwrap();
    let rows = tx.present_on(&org, &doc, 0).await.unwrap();
    assert!(rows.is_empty(), "stale rows swept: {rows:?}");
    drop(tx);
    app.stop().await;
}

async fn presence_is_a_persons_and_follows_document_reads(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let doc = post(&app, &ada).await;
    let home = app.active_organization(&ada).await;
    // Carol administers another organization.
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Elsewhere", "slug": "elsewhere"}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let elsewhere = res.body["data"]["id"].as_str().unwrap().to_string();
    switch(&app, &ada, &elsewhere).await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "admin").await;
    switch(&app, &ada, &home).await;
    call(&app, Method::PUT, &doc, &ada).await;

    // Another organization's member: 404 for every method, as the document's GET answers,
    // and Ada is not revealed.
    let got = app
        .get(&format!("{DOCS}/{doc}"))
        .cookie(&carol)
        .send()
        .await;
    got.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    for method in [Method::PUT, Method::GET, Method::DELETE] {
        let res = app
            .req(method.clone(), &presence(&doc))
            .cookie(&carol)
            .send()
            .await;
        res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
        assert!(
            !res.body.to_string().contains("Ada"),
            "{method}: {}",
            res.body
        );
    }
    let (_, body) = call(&app, Method::GET, &doc, &ada).await;
    assert_eq!(
        names(&body),
        Vec::<String>::new(),
        "Carol announced nothing"
    );

    // Unknown and malformed ids are answered as GET /api/documents/{id} answers them.
    for id in ["no-such-document", "%FF%FE", "a%2Fb"] {
        let got = app.get(&format!("{DOCS}/{id}")).cookie(&ada).send().await;
        assert!(got.status.is_client_error(), "{id}: {}", got.status);
        for method in [Method::PUT, Method::GET, Method::DELETE] {
            let res = app
                .req(method.clone(), &presence(id))
                .cookie(&ada)
                .send()
                .await;
            assert_eq!(res.status, got.status, "{method} {id}: {}", res.body);
            assert_eq!(res.body["error"], got.body["error"], "{method} {id}");
        }
    }
    let res = app
        .req(Method::PUT, &presence("no-such-document"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    // An API key is no person: refused with the reason, whatever it may read.
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read", "write"]}))
        .await;
    for method in [Method::PUT, Method::GET, Method::DELETE] {
        let res = app
            .req(method.clone(), &presence(&doc))
            .key(&key)
            .send()
            .await;
        let message = res.assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
        assert!(message.contains("API key"), "{method}: {message}");
    }
    // Without credentials: 401.
    let res = app.req(Method::PUT, &presence(&doc)).send().await;
    res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    // A cookie write from another site is refused by the CSRF check, and announces nothing.
    let grace = member(&app, &ada, "Grace", "grace@example.com", "editor").await;
    for method in [Method::PUT, Method::DELETE] {
        let res = app
            .req(method.clone(), &presence(&doc))
            .cookie_without_origin(&grace)
            .header("origin", "https://evil.example")
            .send()
            .await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{method}: {}", res.body);
    }
    let (_, body) = call(&app, Method::GET, &doc, &ada).await;
    assert_eq!(names(&body), Vec::<String>::new());
    app.stop().await;
}

async fn switch(app: &TestApp, who: &Session, organization: &str) {
    let res = app
        .post(
            "/api/organizations/switch",
            json!({ "organizationId": organization }),
        )
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

cms_store::both_engines!(
    presence_lists_the_other_people_with_a_document_open,
    presence_is_a_persons_and_follows_document_reads
);
