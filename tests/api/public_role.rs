//! The built-in `public` role (CONTRACT.md section 15): every organization has it; owners and
//! admins grant it `document.read` and `asset.read` only; it is nobody's role; a request
//! without credentials naming an organization (`x-cms-organization` or `?organization=`) reads
//! that organization's published content as it, and nothing else; anonymous reads are limited
//! per client address.

use axum::http::{Method, StatusCode};
use cms::core::schema::parse_schemas;
use serde_json::{Value, json};

use crate::assets::{ASSETS, png};
use crate::support::{Reply, Session, TestApp, config_for};

const DOCS: &str = "/api/documents";
const ROLES: &str = "/api/roles";
const PUBLIC: &str = "/api/roles/public";
const GQL: &str = "/api/graphql";
const HEADER: &str = "x-cms-organization";

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "post", "fields": [
            { "name": "title", "type": "string", "indexed": true, "searchable": true },
            { "name": "secret", "type": "string", "indexed": true, "searchable": true,
              "access": { "read": ["owner", "admin", "editor"] } },
            { "name": "teaser", "type": "string", "access": { "read": ["owner", "public"] } },
            { "name": "author", "type": "reference", "to": ["author"] }
        ] },
        { "type": "document", "name": "author", "fields": [
            { "name": "name", "type": "string" }
        ] },
        { "type": "document", "name": "settings", "singleton": true, "fields": [
            { "name": "motto", "type": "string" }
        ] }
    ]))
    .unwrap()
}

async fn app_with(url: &str, customise: impl FnOnce(&mut cms::Config)) -> TestApp {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    customise(&mut config);
    TestApp::custom(config, |b| b.schemas(schemas())).await
}

/// The owner's organization id and slug.
async fn organization(app: &TestApp, owner: &Session) -> (String, String) {
    let id = app.active_organization(owner).await;
    let res = app
        .get(&format!("/api/organizations/{id}"))
        .cookie(owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let slug = res.body["data"]["slug"].as_str().unwrap().to_string();
    (id, slug)
}

async fn grant(app: &TestApp, who: &Session, capabilities: Value) -> Reply {
    app.req(Method::PATCH, PUBLIC)
        .json(json!({ "capabilities": capabilities }))
        .cookie(who)
        .send()
        .await
}

async fn create(app: &TestApp, s: &Session, doc_type: &str, data: Value, publish: bool) -> String {
    let res = app
        .post(
            DOCS,
            json!({"type": doc_type, "data": data, "publish": publish}),
        )
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

/// An anonymous request naming `slug` by header.
async fn anonymous(app: &TestApp, slug: &str, path: &str) -> Reply {
    app.get(path).header(HEADER, slug).send().await
}

/// The write doors an anonymous reader naming `slug` knocks on, each answer with its name: a
/// document of `doc_type` created, the document at `doc` changed, published and deleted, a
/// file uploaded, a key made, the assistant asked. Deletes and uploads name the organization
/// by query parameter, the rest by header, so both forms are refused.
pub(crate) async fn write_attempts(
    app: &TestApp,
    slug: &str,
    doc_type: &str,
    doc: &str,
) -> Vec<(&'static str, Reply)> {
    vec![
        (
            "create",
            app.post(DOCS, json!({"type": doc_type, "data": {"title": "Spam"}}))
                .header(HEADER, slug)
                .send()
                .await,
        ),
        (
            "update",
            app.req(Method::PUT, doc)
                .json(json!({"data": {"title": "Defaced"}}))
                .header(HEADER, slug)
                .send()
                .await,
        ),
        (
            "publish",
            app.post(&format!("{doc}/publish"), json!({}))
                .header(HEADER, slug)
                .send()
                .await,
        ),
        (
            "delete",
            app.req(Method::DELETE, &format!("{doc}?organization={slug}"))
                .send()
                .await,
        ),
        (
            "upload",
            app.req(Method::POST, &format!("{ASSETS}?organization={slug}"))
                .multipart(&[], Some(("file", "x.png", &png(2, 2, 0))))
                .send()
                .await,
        ),
        (
            "api key",
            app.post(
                "/api/settings/api-keys",
                json!({"name": "mine", "permissions": ["write"]}),
            )
            .header(HEADER, slug)
            .send()
            .await,
        ),
        (
            "assistant",
            app.post(
                "/api/agent/chat",
                json!({"messages": [{"role": "user", "content": "hi"}]}),
            )
            .header(HEADER, slug)
            .send()
            .await,
        ),
    ]
}

fn unauthorized(what: &str, res: &Reply) {
    let body: String = res.body.to_string().chars().take(300).collect();
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{what}: {body}");
    assert_eq!(res.body, json!({"error": "Unauthorized"}), "{what}");
}

fn ids(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {body}"))
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

/// No document in `body` carries a draft, and no hidden value appears.
fn published_only(what: &str, body: &Value) {
    let text = body.to_string();
    assert!(!text.contains("draftData"), "{what}: {text}");
    assert!(!text.contains("DRAFT-ONLY"), "{what}: {text}");
    assert!(!text.contains("S-SECRET"), "{what}: {text}");
}

async fn the_role_exists_and_only_reads_may_be_granted(url: String) {
    let app = app_with(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (org, _) = organization(&app, &ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "admin").await;
    let carol = app.sign_up("Carol", "carol@example.com").await;
    app.join(&carol, &org, "editor").await;

    // Every new organization has it, built in, holding nothing.
    let res = app.get(ROLES).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let public = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "public")
        .cloned()
        .expect("a public role");
    assert_eq!(public["isBuiltIn"], true);
    assert_eq!(public["capabilities"], json!([]));
    assert!(
        public["description"]
            .as_str()
            .unwrap()
            .contains("Anonymous")
    );

    // Owners and admins grant reads; anything else is 400 naming it.
    let res = grant(&app, &ada, json!(["document.read"])).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["capabilities"], json!(["document.read"]));
    let res = grant(&app, &bob, json!(["document.read", "asset.read"])).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"]["capabilities"],
        json!(["document.read", "asset.read"])
    );
    for other in [
        "document.create",
        "document.publish",
        "apiKey.manage",
        "role.manage",
    ] {
        let res = grant(&app, &ada, json!(["document.read", other])).await;
        let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert!(message.contains(other), "{other}: {message}");
    }
    // The role ceiling still applies: an editor may not manage roles at all.
    let res = grant(&app, &carol, json!(["document.read"])).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);
    let res = app.get(ROLES).cookie(&ada).send().await;
    let public = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "public")
        .cloned()
        .unwrap();
    assert_eq!(
        public["capabilities"],
        json!(["document.read", "asset.read"]),
        "refused edits changed nothing"
    );

    // It cannot be deleted, nor created again.
    app.req(Method::DELETE, PUBLIC)
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .post(ROLES, json!({"name": "public", "capabilities": []}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CONFLICT, "{}", res.body);

    // It is never a person's role: not a member's, not an invitation's.
    let res = app
        .req(Method::PATCH, "/api/organizations/members")
        .json(json!({"userId": carol.user["id"], "role": "public"}))
        .cookie(&ada)
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(message.contains("public"), "{message}");
    let res = app
        .post(
            "/api/organizations/invitations",
            json!({"email": "dan@example.com", "role": "public"}),
        )
        .cookie(&ada)
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(message.contains("public"), "{message}");
    let res = app
        .get("/api/organizations/members")
        .cookie(&ada)
        .send()
        .await;
    assert!(!res.body.to_string().contains("\"public\""), "{}", res.body);
    app.stop().await;
}

/// The fixture of the read tests: a published author, a post published then edited (its draft
/// differs), a draft-only post, and a published post in a child organization.
struct Content {
    org: String,
    slug: String,
    author: String,
    post: String,
    draft_only: String,
}

async fn content(app: &TestApp, ada: &Session) -> Content {
    let (org, slug) = organization(app, ada).await;
    let author = create(app, ada, "author", json!({"name": "Grace"}), true).await;
    let post = create(
        app,
        ada,
        "post",
        json!({"title": "Published", "secret": "S-SECRET", "teaser": "For all",
               "author": {"_ref": author}}),
        true,
    )
    .await;
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{post}"))
        .json(
            json!({"data": {"title": "DRAFT-ONLY edit", "secret": "S-SECRET", "teaser": "For all",
                              "author": {"_ref": author}}}),
        )
        .cookie(ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let draft_only = create(app, ada, "post", json!({"title": "DRAFT-ONLY post"}), false).await;
    Content {
        org,
        slug,
        author,
        post,
        draft_only,
    }
}

async fn anonymous_reads_serve_published_content(url: String) {
    let app = app_with(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let c = content(&app, &ada).await;
    let get_post = format!("{DOCS}/{}", c.post);

    // Nothing is public until granted: 401 as for any request without credentials, and an
    // unknown slug looks the same.
    unauthorized("ungranted", &anonymous(&app, &c.slug, &get_post).await);
    unauthorized(
        "unknown slug",
        &anonymous(&app, "no-such-organization", &get_post).await,
    );
    unauthorized("nothing named", &app.get(&get_post).send().await);
    let res = grant(&app, &ada, json!(["document.read"])).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    unauthorized(
        "unknown slug",
        &anonymous(&app, "no-such-organization", &get_post).await,
    );

    // By id, named by header or by query parameter: the published copy only.
    for res in [
        anonymous(&app, &c.slug, &get_post).await,
        app.get(&format!("{get_post}?organization={}", c.slug))
            .send()
            .await,
        anonymous(&app, &c.slug, &format!("{get_post}?perspective=published")).await,
    ] {
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        let doc = &res.body["data"];
        assert!(doc.get("draftData").is_none(), "{doc}");
        assert_eq!(doc["publishedData"]["title"], "Published");
        assert_eq!(
            doc["publishedData"]["teaser"], "For all",
            "a rule naming public"
        );
        assert!(doc["publishedData"].get("secret").is_none(), "{doc}");
        published_only("get", &res.body);
    }
    // A type it reads whole carries the digest of its published copy.
    let res = anonymous(&app, &c.slug, &format!("{DOCS}/{}", c.author)).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(
        res.body["data"]["publishedHash"].is_string(),
        "{}",
        res.body
    );
    assert!(res.body["data"].get("draftData").is_none());

    // Drafts are out of reach: asked for (403), or draft-only (404).
    let res = anonymous(&app, &c.slug, &format!("{get_post}?perspective=draft")).await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);
    let res = anonymous(&app, &c.slug, &format!("{DOCS}/{}", c.draft_only)).await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{}", res.body);

    // Lists, queries and by-ids leave draft-only documents out.
    let res = anonymous(&app, &c.slug, &format!("{DOCS}?type=post")).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(ids(&res.body), [c.post.as_str()]);
    assert_eq!(res.body["pagination"]["total"], 1);
    published_only("list", &res.body);
    let res = anonymous(&app, &c.slug, &format!("{DOCS}?type=post&status=draft")).await;
    assert_eq!(ids(&res.body), Vec::<String>::new());
    // Whether a draft differs from the published copy is the draft's to tell.
    let res = anonymous(&app, &c.slug, &format!("{DOCS}?type=post&status=changed")).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = anonymous(
        &app,
        &c.slug,
        &format!("{DOCS}/by-ids?ids={},{},{}", c.post, c.draft_only, c.author),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(ids(&res.body), [c.post.clone(), c.author.clone()]);
    published_only("by-ids", &res.body);
    let res = app
        .post(&format!("{DOCS}/query"), json!({"type": "post"}))
        .header(HEADER, &c.slug)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(ids(&res.body), [c.post.as_str()]);
    published_only("query", &res.body);

    // References resolve to published copies; back-references show the published side.
    let res = anonymous(&app, &c.slug, &format!("{get_post}?depth=1")).await;
    assert_eq!(
        res.body["data"]["publishedData"]["author"]["name"], "Grace",
        "{}",
        res.body
    );
    let res = anonymous(
        &app,
        &c.slug,
        &format!("{DOCS}/{}/back-references", c.author),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(ids(&res.body), [c.post.as_str()]);
    published_only("back-references", &res.body);
    let res = anonymous(
        &app,
        &c.slug,
        &format!("{DOCS}/{}/back-references", c.draft_only),
    )
    .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{}", res.body);

    // Versions hold drafts: not a delivery read.
    unauthorized(
        "versions",
        &anonymous(&app, &c.slug, &format!("{get_post}/versions")).await,
    );
    app.stop().await;
}

async fn hidden_fields_and_child_organizations_stay_out(url: String) {
    let app = app_with(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let c = content(&app, &ada).await;
    grant(&app, &ada, json!(["document.read"])).await;

    // A field hidden from `public` cannot be filtered, sorted or searched on: the right value
    // and a wrong one answer alike (the owner's filter does tell them apart).
    let query = |secret: &str| json!({"type": "post", "where": {"secret": {"equals": secret}}});
    let mut totals = Vec::new();
    for secret in ["S-SECRET", "WRONG"] {
        let owner = app
            .post(&format!("{DOCS}/query"), query(secret))
            .cookie(&ada)
            .send()
            .await;
        let public = app
            .post(&format!("{DOCS}/query"), query(secret))
            .header(HEADER, &c.slug)
            .send()
            .await;
        assert_eq!(public.status, StatusCode::OK, "{}", public.body);
        totals.push((
            owner.body["pagination"]["total"].clone(),
            public.body["pagination"]["total"].clone(),
        ));
    }
    assert_eq!(totals[0].0, 1);
    assert_eq!(totals[1].0, 0);
    assert_eq!(totals[0].1, totals[1].1, "no oracle: {totals:?}");
    let res = anonymous(&app, &c.slug, &format!("{DOCS}?type=post&search=S-SECRET")).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        ids(&res.body),
        Vec::<String>::new(),
        "search reads no hidden field"
    );
    let res = app
        .get(&format!("{DOCS}?type=post&search=S-SECRET"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(ids(&res.body).len(), 1, "the owner's search finds it");

    // A child organization's published post: the parent's owner reads it with
    // includeChildOrganizations, the parent's public readers never do.
    let child = "child-org";
    crate::support::insert_organization(&app, child, Some(&c.org), &[]).await;
    insert_published(
        &app,
        child,
        "child-post",
        json!({"title": "From the child"}),
    )
    .await;
    let res = app
        .get(&format!("{DOCS}?type=post&includeChildOrganizations=true"))
        .cookie(&ada)
        .send()
        .await;
    assert!(
        ids(&res.body).contains(&"child-post".to_string()),
        "{}",
        res.body
    );
    for path in [
        format!("{DOCS}?type=post&includeChildOrganizations=true"),
        format!("{DOCS}/child-post?includeChildOrganizations=true"),
        format!("{DOCS}/by-ids?ids=child-post&includeChildOrganizations=true"),
    ] {
        let res = anonymous(&app, &c.slug, &path).await;
        assert!(
            !res.body.to_string().contains("From the child"),
            "{path}: {}",
            res.body
        );
    }
    let res = anonymous(
        &app,
        &c.slug,
        &format!("{DOCS}/child-post?includeChildOrganizations=true"),
    )
    .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{}", res.body);

    // A singleton is neither created by an anonymous read nor shown before it is published.
    let res = anonymous(&app, &c.slug, &format!("{DOCS}?type=settings")).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(ids(&res.body), Vec::<String>::new());
    let res = app
        .get(&format!("{DOCS}?type=settings"))
        .cookie(&ada)
        .send()
        .await;
    let settings = ids(&res.body)[0].clone();
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{settings}"))
        .json(json!({"data": {"motto": "Hello"}, "publish": true}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = anonymous(&app, &c.slug, &format!("{DOCS}?type=settings")).await;
    assert_eq!(ids(&res.body), [settings]);
    assert_eq!(res.body["data"][0]["publishedData"]["motto"], "Hello");
    assert!(res.body["data"][0].get("draftData").is_none());
    app.stop().await;
}

/// A published document written straight to the store, in an organization without people.
async fn insert_published(app: &TestApp, org: &str, id: &str, data: Value) {
    let mut tx = app.app.cms.store().write_for(org).await.unwrap();
    tx.insert_document(&cms_store::documents::DocumentRecord {
        id: id.into(),
        organization_id: org.into(),
        doc_type: "post".into(),
        singleton: false,
        draft_data: cms_store::Json(data.clone()),
        published_data: Some(cms_store::Json(data)),
        published_hash: Some("h".into()),
        revision: 1,
        created_by: None,
        updated_by: None,
        created_at: 0,
        updated_at: 0,
        published_at: Some(0),
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
}

async fn graphql_queries_read_published_and_mutations_never(url: String) {
    let app = app_with(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let c = content(&app, &ada).await;
    let gql = |query: String| {
        app.post(GQL, json!({ "query": query }))
            .header(HEADER, &c.slug)
            .send()
    };
    let list = "{ allPost { id title teaser secret status } }".to_string();
    let res = gql(list.clone()).await;
    unauthorized("ungranted", &res);
    grant(&app, &ada, json!(["document.read"])).await;

    let res = gql(list).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"]["allPost"],
        json!([{"id": c.post, "title": "Published", "teaser": "For all", "secret": null,
                "status": "published"}]),
        "{}",
        res.body
    );
    let res = gql(format!("{{ Post(id: \"{}\") {{ title }} }}", c.post)).await;
    assert_eq!(
        res.body["data"]["Post"]["title"], "Published",
        "{}",
        res.body
    );
    let res = gql(format!("{{ Post(id: \"{}\") {{ title }} }}", c.draft_only)).await;
    assert_eq!(res.body["data"]["Post"], Value::Null, "{}", res.body);
    // Asking for drafts is refused.
    let res = gql("{ allPost(perspective: draft) { title } }".to_string()).await;
    assert!(res.body["errors"].is_array(), "{}", res.body);
    published_only("graphql draft", &res.body);
    // Mutations never: refused before anything is written.
    let res = gql(format!(
        "mutation {{ updatePost(id: \"{}\", data: {{title: \"Defaced\"}}) {{ id }} }}",
        c.post
    ))
    .await;
    assert_ne!(res.status, StatusCode::OK, "{}", res.body);
    let res = gql("mutation { createPost(data: {title: \"Spam\"}) { id } }".to_string()).await;
    assert_ne!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .get(&format!("{DOCS}/{}", c.post))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["draftData"]["title"], "DRAFT-ONLY edit");
    let res = app
        .get(&format!("{DOCS}?type=post"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 2, "nothing created");
    app.stop().await;
}

async fn every_write_door_refuses_the_public_reader(url: String) {
    // An assistant with a model, so that its refusal is about the caller.
    let model = crate::agent::Model::puppet().await;
    let app = app_with(&url, |c| {
        c.agent.base_url = Some(model.base_url.clone());
        c.agent.model = Some("puppet".into());
    })
    .await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let c = content(&app, &ada).await;
    let res = grant(&app, &ada, json!(["document.read", "asset.read"])).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let post = format!("{DOCS}/{}", c.post);
    let slug = c.slug.clone();
    let mut attempts = write_attempts(&app, &slug, "post", &post).await;
    attempts.extend(vec![
        (
            "unpublish",
            app.req(Method::DELETE, &format!("{post}/publish"))
                .header(HEADER, &slug)
                .send()
                .await,
        ),
        (
            "role edit",
            app.req(Method::PATCH, PUBLIC)
                .json(json!({"capabilities": ["document.read"]}))
                .header(HEADER, &slug)
                .send()
                .await,
        ),
        (
            "versions",
            anonymous(&app, &slug, &format!("{post}/versions")).await,
        ),
        (
            "organizations",
            anonymous(&app, &slug, "/api/organizations").await,
        ),
        ("roles", anonymous(&app, &slug, ROLES).await),
        (
            "members",
            anonymous(&app, &slug, "/api/organizations/members").await,
        ),
        ("events", anonymous(&app, &slug, "/api/events").await),
        ("jobs", anonymous(&app, &slug, "/api/jobs").await),
        (
            "profile",
            app.req(Method::PATCH, "/api/user")
                .json(json!({"name": "Mallory"}))
                .header(HEADER, &slug)
                .send()
                .await,
        ),
        (
            "preferences",
            anonymous(&app, &slug, "/api/user/cms-preference").await,
        ),
        ("access", anonymous(&app, &slug, "/api/user/access").await),
        (
            "api keys",
            anonymous(&app, &slug, "/api/settings/api-keys").await,
        ),
        ("openapi", anonymous(&app, &slug, "/api/openapi.json").await),
    ]);
    for (what, res) in &attempts {
        unauthorized(what, res);
    }
    // It is nobody signed in.
    let res = anonymous(&app, &slug, "/api/auth/get-session").await;
    assert_eq!(res.body, Value::Null, "{}", res.body);
    // Nothing changed.
    let res = app.get(&post).cookie(&ada).send().await;
    assert_eq!(res.body["data"]["draftData"]["title"], "DRAFT-ONLY edit");
    assert!(res.body["data"]["publishedData"].is_object());
    let res = app.get(ASSETS).cookie(&ada).send().await;
    assert_eq!(res.body["data"], json!([]), "nothing uploaded");
    app.stop().await;
}

async fn anonymous_asset_reads_need_asset_read(url: String) {
    let app = app_with(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (_, slug) = organization(&app, &ada).await;
    let res = app
        .req(Method::POST, ASSETS)
        .cookie(&ada)
        .multipart(
            &[("title", "Logo")],
            Some(("file", "logo.png", &png(4, 3, 0))),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let url_path = res.body["data"]["url"].as_str().unwrap().to_string();

    grant(&app, &ada, json!(["document.read"])).await;
    unauthorized("list", &anonymous(&app, &slug, ASSETS).await);
    unauthorized(
        "get",
        &anonymous(&app, &slug, &format!("{ASSETS}/{id}")).await,
    );
    grant(&app, &ada, json!(["asset.read"])).await;
    let res = anonymous(&app, &slug, ASSETS).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(ids(&res.body), [id.as_str()]);
    let res = app
        .get(&format!("{ASSETS}/{id}?organization={slug}"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["title"], "Logo");
    // What an asset's references are, signed links and counts are not delivery reads.
    unauthorized(
        "references",
        &anonymous(&app, &slug, &format!("{ASSETS}/{id}/references")).await,
    );
    unauthorized(
        "signed url",
        &anonymous(&app, &slug, &format!("{ASSETS}/{id}/signed-url")).await,
    );
    // With document.read gone, documents are closed again.
    unauthorized(
        "documents",
        &anonymous(&app, &slug, &format!("{DOCS}?type=post")).await,
    );
    // The bytes of a public asset are served to anyone, named organization or not.
    let path = url_path
        .find("/media/")
        .map(|at| url_path[at..].to_string())
        .unwrap();
    let res = anonymous(&app, &slug, &path).await;
    assert_eq!(res.status, StatusCode::OK, "{path}");
    app.stop().await;
}

async fn private_media_needs_a_person_or_a_signature(url: String) {
    let app = app_with(&url, |c| c.assets.private = true).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let (_, slug) = organization(&app, &ada).await;
    grant(&app, &ada, json!(["asset.read"])).await;
    let res = app
        .req(Method::POST, ASSETS)
        .cookie(&ada)
        .multipart(&[], Some(("file", "logo.png", &png(4, 3, 0))))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let url_path = res.body["data"]["url"].as_str().unwrap().to_string();
    let path = url_path
        .find("/media/")
        .map(|at| url_path[at..].to_string())
        .unwrap();
    let res = app.get(&path).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "the owner's session");
    let res = anonymous(&app, &slug, &path).await;
    assert_eq!(
        res.status,
        StatusCode::UNAUTHORIZED,
        "public readers count as nobody"
    );
    app.stop().await;
}

async fn anonymous_reads_are_limited_per_address(url: String) {
    let app = app_with(&url, |c| c.delivery.public_reads_per_minute = 3).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let c = content(&app, &ada).await;
    grant(&app, &ada, json!(["document.read"])).await;
    let key = app
        .create_key(&ada, json!({"name": "site", "permissions": ["read"]}))
        .await;
    let path = format!("{DOCS}/{}", c.post);
    let from = |peer: &str| app.get(&path).header(HEADER, &c.slug).peer(peer);

    for _ in 0..3 {
        let res = from("192.0.2.10").send().await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    }
    let res = from("192.0.2.10").send().await;
    assert_eq!(res.status, StatusCode::TOO_MANY_REQUESTS, "{}", res.body);
    assert_eq!(res.body["success"], false);
    assert_eq!(res.body["error"], "Too Many Requests");
    assert!(res.body["message"].is_string());
    let retry: u64 = res
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // An unknown slug is counted too (it cannot be used to probe past the limit).
    let res = app
        .get(&path)
        .header(HEADER, "no-such-organization")
        .peer("192.0.2.10")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::TOO_MANY_REQUESTS);

    // Another address has its own count; an IPv6 /64 is one address.
    let res = from("192.0.2.11").send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    for _ in 0..3 {
        let res = from("2001:db8:0:1::1").send().await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    }
    let res = from("2001:db8:0:1::ffff").send().await;
    assert_eq!(res.status, StatusCode::TOO_MANY_REQUESTS);

    // Keyed and signed-in requests from the limited address are not counted, nor refused.
    for _ in 0..5 {
        let res = app.get(&path).key(&key).peer("192.0.2.10").send().await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        let res = app.get(&path).cookie(&ada).peer("192.0.2.10").send().await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    }
    // The window ends.
    app.clock.advance_millis(61_000);
    let res = from("192.0.2.10").send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.stop().await;
}

async fn openapi_describes_anonymous_reads(url: String) {
    let app = app_with(&url, |_| {}).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app.get("/api/openapi.json").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK);
    let paths = &res.body["paths"];
    let names = |op: &Value| -> Vec<(String, String)> {
        op["parameters"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .map(|p| {
                        (
                            p["name"].as_str().unwrap().to_string(),
                            p["in"].as_str().unwrap().to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    for (path, method) in [
        ("/api/documents", "get"),
        ("/api/documents/query", "post"),
        ("/api/documents/by-ids", "get"),
        ("/api/documents/{id}", "get"),
        ("/api/documents/{id}/back-references", "get"),
        ("/api/assets", "get"),
        ("/api/assets/{id}", "get"),
        ("/api/graphql", "post"),
    ] {
        let op = &paths[path][method];
        let params = names(op);
        assert!(
            params.contains(&("x-cms-organization".into(), "header".into())),
            "{path}: {params:?}"
        );
        assert!(
            params.contains(&("organization".into(), "query".into())),
            "{path}: {params:?}"
        );
        let limit = op["responses"]["429"]["description"].as_str().unwrap();
        assert!(limit.contains("publicReadsPerMinute"), "{path}: {limit}");
    }
    // Writes and person-bound reads do not take it.
    for (path, method) in [
        ("/api/documents", "post"),
        ("/api/documents/{id}/versions", "get"),
    ] {
        let params = names(&paths[path][method]);
        assert!(
            !params.iter().any(|(n, _)| n == "x-cms-organization"),
            "{path}: {params:?}"
        );
    }
    app.stop().await;
}

/// What a frontend's cache is told (CONTRACT.md section 15): answers to the `public` role may be
/// shared, for `delivery.publicMaxAgeSeconds` and then stale while revalidating; they carry a
/// strong tag of their own (never the signed-in reader's) and revalidate with 304 until the
/// published copy changes. A preview token beside the organization wins, and is never stored.
async fn anonymous_answers_are_shared_and_revalidate(url: String) {
    let app = app_with(&url, |c| {
        c.delivery.public_max_age_seconds = 120;
        c.delivery.stale_while_revalidate_seconds = 30;
    })
    .await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let c = content(&app, &ada).await;
    let res = grant(&app, &ada, json!(["document.read"])).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let get_post = format!("{DOCS}/{}", c.post);
    let list = format!("{DOCS}?type=post");
    let shared = "public, max-age=120, stale-while-revalidate=30";

    for path in [get_post.as_str(), list.as_str()] {
        let res = anonymous(&app, &c.slug, path).await;
        assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
        assert_eq!(res.header("cache-control"), Some(shared), "{path}");
        let vary = res.header("vary").unwrap_or_default().to_ascii_lowercase();
        assert!(vary.contains("x-cms-organization"), "{path}: {vary}");
        let tag = res.header("etag").expect("a tag").to_string();
        assert!(!tag.starts_with("W/"), "a strong tag: {tag}");

        let again = app
            .get(path)
            .header(HEADER, &c.slug)
            .header("if-none-match", &tag)
            .send()
            .await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{path}");
        assert!(again.bytes.is_empty(), "{path}: a 304 has no body");
        assert_eq!(again.header("cache-control"), Some(shared), "{path}");
        assert_eq!(again.header("etag"), Some(tag.as_str()), "{path}");

        // The owner reads another body (the draft beside it): another tag, never a 304 from
        // the public one, and private.
        let owner = app
            .get(path)
            .cookie(&ada)
            .header("if-none-match", &tag)
            .send()
            .await;
        assert_eq!(owner.status, StatusCode::OK, "{path}");
        assert_ne!(owner.header("etag"), Some(tag.as_str()), "{path}");
        assert_eq!(owner.header("cache-control"), Some("private, no-cache"));
    }

    // Saving a draft changes nothing a visitor sees, but publishing it does.
    let res = anonymous(&app, &c.slug, &get_post).await;
    let before = res.header("etag").unwrap().to_string();
    let res = app
        .post(&format!("{get_post}/publish"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .get(&get_post)
        .header(HEADER, &c.slug)
        .header("if-none-match", &before)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"]["publishedData"]["title"],
        "DRAFT-ONLY edit"
    );
    assert_ne!(res.header("etag"), Some(before.as_str()));

    // A preview token beside the organization reads the draft, and no cache keeps it.
    let res = app
        .post(&format!("{get_post}/preview"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let token = res.body["data"]["token"].as_str().unwrap().to_string();
    let res = app
        .get(&get_post)
        .header(HEADER, &c.slug)
        .header("x-cms-preview", &token)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(res.body["data"].get("draftData").is_some(), "{}", res.body);
    assert_eq!(res.header("cache-control"), Some("private, no-store"));
    app.stop().await;
}

cms_store::both_engines!(
    anonymous_answers_are_shared_and_revalidate,
    openapi_describes_anonymous_reads,
    the_role_exists_and_only_reads_may_be_granted,
    anonymous_reads_serve_published_content,
    hidden_fields_and_child_organizations_stay_out,
    graphql_queries_read_published_and_mutations_never,
    every_write_door_refuses_the_public_reader,
    anonymous_asset_reads_need_asset_read,
    private_media_needs_a_person_or_a_signature,
    anonymous_reads_are_limited_per_address,
);
