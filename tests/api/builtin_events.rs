//! The built-in events of CONTRACT.md section 16, one per change and from every door: REST,
//! GraphQL, the assistant's tools, the scheduler run by the worker, `DocumentService::import`
//! and `create_emitting`, restore; assets and memberships. Each is read from the database
//! itself, with its outbox row, its organization and its payload; and what a reader who may not
//! read a type sees of its events in GET /api/events.

use axum::http::{Method, StatusCode};
use cms::core::schema::{Operation, parse_schemas};
use cms::service::documents::NewDocument;
use cms::service::{Credentials, EventDeclaration, NewEvent};
use serde_json::{Value, json};

use crate::agent::{Answer, Model, user};
use crate::assets::{mp4, png, uploaded};
use crate::people_support::{invitation_token, invite, user_id};
use crate::support::{PASSWORD, Session, TestApp, config_for};

const DOCS: &str = "/api/documents";

/// One event as stored, with whether its outbox row exists.
#[derive(Debug, Clone)]
pub(crate) struct Logged {
    pub id: String,
    pub organization: Option<String>,
    pub event_type: String,
    pub payload: Value,
    pub outboxed: bool,
}

/// Every event of the log, in id order (creation order), read through a connection of the
/// test's own: the rows as the database holds them, with their outbox rows.
pub(crate) async fn logged(url: &str) -> Vec<Logged> {
    use sqlx::Connection;
    type Row = (String, Option<String>, String, String, Option<String>);
    let rows: Vec<Row> = if url.starts_with("sqlite:") {
        let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query_as(
            "SELECT e.id, e.organization_id, e.type, e.payload, o.event_id \
             FROM events e LEFT JOIN outbox o ON o.event_id = e.id ORDER BY e.id",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap()
    } else {
        let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query_as(
            "SELECT e.id, e.organization_id, e.type, e.payload::text, o.event_id \
             FROM events e LEFT JOIN outbox o ON o.event_id = e.id ORDER BY e.id",
        )
        .fetch_all(&mut conn)
        .await
        .unwrap()
    };
    rows.into_iter()
        .map(|(id, organization, event_type, payload, outbox)| Logged {
            id,
            organization,
            event_type,
            payload: serde_json::from_str(&payload).unwrap(),
            outboxed: outbox.is_some(),
        })
        .collect()
}

/// Reads the log a change at a time: each [`Log::next`] answers the events appended since the
/// last one, as (type, payload), after checking that each has its outbox row and belongs to
/// the expected organization.
pub(crate) struct Log {
    url: String,
    organization: String,
    seen: usize,
}

impl Log {
    /// A reader of the events of `organization` from now on.
    pub(crate) async fn from_now(url: &str, organization: &str) -> Log {
        Log {
            url: url.to_string(),
            organization: organization.to_string(),
            seen: logged(url).await.len(),
        }
    }

    pub(crate) async fn next(&mut self) -> Vec<(String, Value)> {
        self.next_logged()
            .await
            .into_iter()
            .map(|e| (e.event_type, e.payload))
            .collect()
    }

    /// Asserts that nothing was appended since the last look.
    pub(crate) async fn nothing_new(&mut self) {
        let new = self.next_logged().await;
        assert!(new.is_empty(), "unexpected events: {new:?}");
    }

    /// The new events as stored.
    pub(crate) async fn next_logged(&mut self) -> Vec<Logged> {
        let all = logged(&self.url).await;
        let new = all[self.seen..].to_vec();
        self.seen = all.len();
        for e in &new {
            assert!(e.outboxed, "{e:?} has its outbox row");
            assert_eq!(
                e.organization.as_deref(),
                Some(self.organization.as_str()),
                "{e:?}"
            );
        }
        new
    }
}

pub(crate) fn document(event_type: &str, id: &str, doc_type: &str) -> (String, Value) {
    (
        event_type.to_string(),
        json!({ "documentId": id, "documentType": doc_type }),
    )
}

fn published(id: &str, doc_type: &str, hash: &Value) -> (String, Value) {
    assert!(hash.is_string(), "a published hash: {hash}");
    (
        "document.published".to_string(),
        json!({ "documentId": id, "documentType": doc_type, "publishedHash": hash }),
    )
}

fn asset(event_type: &str, id: &str) -> (String, Value) {
    (event_type.to_string(), json!({ "assetId": id }))
}

fn member(event_type: &str, user: &str, role: &str) -> (String, Value) {
    (
        event_type.to_string(),
        json!({ "userId": user, "role": role }),
    )
}

fn id_of(body: &Value) -> String {
    body["data"]["id"].as_str().unwrap().to_string()
}

async fn send(app: &TestApp, s: &Session, method: Method, path: &str, body: Value) -> Value {
    let res = app.req(method, path).json(body).cookie(s).send().await;
    assert!(
        res.status.is_success(),
        "{path}: {} {}",
        res.status,
        res.body
    );
    res.body
}

async fn actor_of(app: &TestApp, session: &Session) -> cms::service::Actor {
    app.app
        .cms
        .auth()
        .authenticate(&Credentials {
            bearer: Some(session.token.clone()),
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("a signed-in actor")
        .actor
}

async fn document_writes_through_rest_emit_one_event_each(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let mut log = Log::from_now(&url, &org).await;

    let body = send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "post", "data": {"title": "One"}}),
    )
    .await;
    let id = id_of(&body);
    assert_eq!(
        log.next().await,
        [document("document.created", &id, "post")]
    );
    let path = format!("{DOCS}/{id}");
    send(
        &app,
        &ada,
        Method::PUT,
        &path,
        json!({"data": {"title": "Two"}}),
    )
    .await;
    assert_eq!(
        log.next().await,
        [document("document.updated", &id, "post")]
    );
    // A publish alone is a publish, not an update.
    let body = send(
        &app,
        &ada,
        Method::POST,
        &format!("{path}/publish"),
        json!({}),
    )
    .await;
    let hash = body["data"]["publishedHash"].clone();
    assert_eq!(log.next().await, [published(&id, "post", &hash)]);
    send(
        &app,
        &ada,
        Method::DELETE,
        &format!("{path}/publish"),
        json!({}),
    )
    .await;
    assert_eq!(
        log.next().await,
        [document("document.unpublished", &id, "post")]
    );
    // Unpublishing a draft-only document changes nothing, and says nothing.
    send(
        &app,
        &ada,
        Method::DELETE,
        &format!("{path}/publish"),
        json!({}),
    )
    .await;
    log.nothing_new().await;
    // An update that publishes: the draft changed, then it was published.
    let body = send(
        &app,
        &ada,
        Method::PUT,
        &path,
        json!({"data": {"title": "Three"}, "publish": true}),
    )
    .await;
    let hash = body["data"]["publishedHash"].clone();
    assert_eq!(
        log.next().await,
        [
            document("document.updated", &id, "post"),
            published(&id, "post", &hash)
        ]
    );
    // A restore rewrites the draft: `document.updated`, and only that.
    send(
        &app,
        &ada,
        Method::POST,
        &format!("{path}/versions/1/restore"),
        json!({}),
    )
    .await;
    assert_eq!(
        log.next().await,
        [document("document.updated", &id, "post")]
    );

    // Born published: created, then published, in id order.
    let body = send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "post", "data": {"title": "Four"}, "publish": true}),
    )
    .await;
    let born = id_of(&body);
    let events = log.next_logged().await;
    assert_eq!(
        events
            .iter()
            .map(|e| (e.event_type.clone(), e.payload.clone()))
            .collect::<Vec<_>>(),
        [
            document("document.created", &born, "post"),
            published(&born, "post", &body["data"]["publishedHash"])
        ]
    );
    assert!(events[0].id < events[1].id, "created has the smaller id");

    send(&app, &ada, Method::DELETE, &path, json!({})).await;
    assert_eq!(
        log.next().await,
        [document("document.deleted", &id, "post")]
    );
    // A refused write emits nothing.
    let res = app.req(Method::DELETE, &path).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{born}"))
        .json(json!({"data": {"title": 5}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST);
    log.nothing_new().await;

    // A singleton's lazily created row: `singletons.rs`.
    app.stop().await;
}

async fn asset_changes_emit_one_event_each(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let mut log = Log::from_now(&url, &org).await;

    let image = uploaded(&app, &ada, "a.png", &png(4, 4, 10)).await;
    let image = image["id"].as_str().unwrap().to_string();
    assert_eq!(log.next().await, [asset("asset.created", &image)]);
    let path = format!("/api/assets/{image}");
    send(
        &app,
        &ada,
        Method::PATCH,
        &path,
        json!({"title": "A square"}),
    )
    .await;
    assert_eq!(log.next().await, [asset("asset.updated", &image)]);

    // A poster is an asset of its own, and changes the video's record.
    let video = uploaded(&app, &ada, "v.mp4", &mp4()).await;
    let video = video["id"].as_str().unwrap().to_string();
    assert_eq!(log.next().await, [asset("asset.created", &video)]);
    let res = app
        .req(Method::POST, &format!("/api/assets/{video}/poster"))
        .cookie(&ada)
        .multipart(&[], Some(("file", "poster.png", &png(8, 8, 10))))
        .send()
        .await;
    assert!(res.status.is_success(), "{}", res.body);
    let poster = res.body["data"]["posterId"].as_str().unwrap().to_string();
    assert_eq!(
        log.next().await,
        [
            asset("asset.created", &poster),
            asset("asset.updated", &video)
        ]
    );

    send(&app, &ada, Method::DELETE, &path, json!({})).await;
    assert_eq!(log.next().await, [asset("asset.deleted", &image)]);
    // A bulk delete: one event per asset deleted, none for an id that names nothing.
    let body = send(
        &app,
        &ada,
        Method::DELETE,
        "/api/assets/bulk",
        json!({"ids": [video, poster, "no-such-asset"]}),
    )
    .await;
    assert_eq!(body["data"]["deleted"], 2, "{body}");
    let mut deleted = log.next().await;
    deleted.sort_by_key(|a| a.1.to_string());
    let mut expected = vec![
        asset("asset.deleted", &video),
        asset("asset.deleted", &poster),
    ];
    expected.sort_by_key(|a| a.1.to_string());
    assert_eq!(deleted, expected);
    app.stop().await;
}

async fn graphql_mutations_emit_like_rest(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let mut log = Log::from_now(&url, &org).await;
    let run = |query: String| {
        let app = &app;
        let ada = &ada;
        async move {
            let res = app
                .post("/api/graphql", json!({"query": query}))
                .cookie(ada)
                .send()
                .await;
            assert_eq!(res.status, StatusCode::OK, "{}", res.body);
            assert!(res.body.get("errors").is_none(), "{}", res.body);
            res.body["data"].clone()
        }
    };

    let data = run(
        r#"mutation { createPost(data: {title: "G"}, publish: true) { id publishedHash } }"#.into(),
    )
    .await;
    let id = data["createPost"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        log.next().await,
        [
            document("document.created", &id, "post"),
            published(&id, "post", &data["createPost"]["publishedHash"])
        ]
    );
    run(format!(
        r#"mutation {{ updatePost(id: "{id}", data: {{title: "H"}}) {{ id }} }}"#
    ))
    .await;
    assert_eq!(
        log.next().await,
        [document("document.updated", &id, "post")]
    );
    let data = run(format!(
        r#"mutation {{ publishPost(id: "{id}") {{ publishedHash }} }}"#
    ))
    .await;
    assert_eq!(
        log.next().await,
        [published(
            &id,
            "post",
            &data["publishPost"]["publishedHash"]
        )]
    );
    run(format!(
        r#"mutation {{ unpublishPost(id: "{id}") {{ id }} }}"#
    ))
    .await;
    assert_eq!(
        log.next().await,
        [document("document.unpublished", &id, "post")]
    );
    run(format!(r#"mutation {{ deletePost(id: "{id}") }}"#)).await;
    assert_eq!(
        log.next().await,
        [document("document.deleted", &id, "post")]
    );
    app.stop().await;
}

async fn the_assistants_tools_emit_their_events(url: String) {
    let model = Model::start(vec![]).await;
    let mut config = config_for(&url);
    config.agent.base_url = Some(model.base_url.clone());
    config.agent.model = Some("test-model".into());
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let body = send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "post", "data": {"title": "Mine"}}),
    )
    .await;
    let id = id_of(&body);
    let mut log = Log::from_now(&url, &org).await;

    model.push(vec![
        Answer::Calls(vec![(
            "c1",
            "update_document",
            json!({"collection": "post", "id": id, "data": {"title": "Edited"}}),
        )]),
        Answer::Calls(vec![(
            "c2",
            "publish_document",
            json!({"collection": "post", "id": id}),
        )]),
        Answer::Calls(vec![(
            "c3",
            "create_document",
            json!({"collection": "post", "data": {"title": "Theirs"}, "publish": true}),
        )]),
        Answer::Calls(vec![(
            "c4",
            "upload_asset",
            // "plain words", base64.
            json!({"filename": "note.txt", "contentBase64": "cGxhaW4gd29yZHM="}),
        )]),
        Answer::Text(vec!["Done."], (1, 1)),
    ]);
    let res = app
        .post("/api/agent/chat", json!({"messages": [user("Go")]}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let results: Vec<Value> = crate::agent::events(&res.bytes)
        .into_iter()
        .filter(|e| e.kind == "toolResult")
        .map(|e| e.data)
        .collect();
    assert_eq!(results.len(), 4, "{results:?}");
    let events = log.next().await;
    let types: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        types,
        [
            "document.updated",
            "document.published",
            "document.created",
            "document.published",
            "asset.created"
        ],
        "{events:?}"
    );
    assert_eq!(events[0], document("document.updated", &id, "post"));
    assert_eq!(events[1].1["documentId"], json!(id));
    let created = events[2].1["documentId"].as_str().unwrap().to_string();
    assert_ne!(created, id);
    assert_eq!(events[2], document("document.created", &created, "post"));
    assert_eq!(events[3].1["documentId"], json!(created));
    let res = app.get("/api/assets").cookie(&ada).send().await;
    let picture_id = res.body["data"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(events[4], asset("asset.created", &picture_id));
    app.stop().await;
}

async fn scheduled_publish_and_unpublish_emit_from_the_worker(url: String) {
    const HOUR: i64 = 3_600_000;
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let body = send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "post", "data": {"title": "Later"}}),
    )
    .await;
    let id = id_of(&body);
    let path = format!("{DOCS}/{id}/schedule");
    let mut log = Log::from_now(&url, &org).await;
    let at = |ms: i64| {
        use cms::Clock;
        app.clock.now().plus_millis(ms).to_rfc3339()
    };

    send(
        &app,
        &ada,
        Method::POST,
        &path,
        json!({"action": "publish", "runAt": at(HOUR)}),
    )
    .await;
    log.nothing_new().await;
    app.clock.advance_millis(2 * HOUR);
    app.app.cms.worker().tick().await.unwrap();
    let res = app.get(&format!("{DOCS}/{id}")).cookie(&ada).send().await;
    let hash = res.body["data"]["publishedHash"].clone();
    assert_eq!(log.next().await, [published(&id, "post", &hash)]);

    send(
        &app,
        &ada,
        Method::POST,
        &path,
        json!({"action": "unpublish", "runAt": at(HOUR)}),
    )
    .await;
    app.clock.advance_millis(2 * HOUR);
    app.app.cms.worker().tick().await.unwrap();
    assert_eq!(
        log.next().await,
        [document("document.unpublished", &id, "post")]
    );
    app.stop().await;
}

async fn import_and_create_emitting_emit_created_first(url: String) {
    const THING: &str = "acme.thing.happened";
    let config = config_for(&url);
    let app = TestApp::custom(config, |b| {
        b.event_type(
            EventDeclaration::from_json(
                THING,
                &json!([{ "name": "documentId", "type": "string" }]),
            )
            .unwrap(),
        )
    })
    .await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let actor = actor_of(&app, &ada).await;
    let mut log = Log::from_now(&url, &org).await;
    let new = |title: &str, publish: bool| NewDocument {
        doc_type: "post".into(),
        data: json!({ "title": title }),
        publish,
        locale: None,
    };

    let imported = app
        .app
        .cms
        .documents()
        .import(
            &actor,
            vec![new("a", false), new("b", true), new("c", false)],
        )
        .await
        .unwrap();
    let ids: Vec<String> = imported.iter().map(|(d, _)| d.id.clone()).collect();
    let hash = json!(imported[1].0.published_hash.clone().unwrap());
    assert_eq!(
        log.next().await,
        [
            document("document.created", &ids[0], "post"),
            document("document.created", &ids[1], "post"),
            published(&ids[1], "post", &hash),
            document("document.created", &ids[2], "post"),
        ]
    );
    // A refused import writes no event.
    let refused = app
        .app
        .cms
        .documents()
        .import(
            &actor,
            vec![
                new("d", false),
                NewDocument {
                    data: json!({"title": 1}),
                    ..new("e", false)
                },
            ],
        )
        .await;
    assert!(refused.is_err());
    log.nothing_new().await;

    // A plugin's create with its own event: the document's event first, then the plugin's.
    let (doc, _) = app
        .app
        .cms
        .documents()
        .create_emitting(&actor, new("f", false), |id| {
            vec![NewEvent::new(THING, json!({ "documentId": id }))]
        })
        .await
        .unwrap();
    assert_eq!(
        log.next().await,
        [
            document("document.created", &doc.id, "post"),
            (THING.to_string(), json!({ "documentId": doc.id })),
        ]
    );
    app.stop().await;
}

async fn memberships_emit_added_and_removed(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    // The first user owns the default organization.
    let first = logged(&url).await;
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(
        (first[0].event_type.clone(), first[0].payload.clone()),
        member("member.added", &user_id(&ada), "owner")
    );
    assert_eq!(first[0].organization.as_deref(), Some(org.as_str()));
    let mut log = Log::from_now(&url, &org).await;

    // Joining at sign-up with an invitation's secret.
    let invitation = invite(&app, &ada, "bob@example.com", "editor").await;
    let res = crate::people_support::sign_up_invited(
        &app,
        "Bob",
        "bob@example.com",
        &invitation_token(&invitation),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let bob = Session::from(&res);
    assert_eq!(
        log.next().await,
        [member("member.added", &user_id(&bob), "editor")]
    );
    // Accepting an invitation once signed up.
    let carol = app.sign_up("Carol", "carol@example.com").await;
    // A sign-up without an invitation joins nothing.
    log.nothing_new().await;
    let invitation = invite(&app, &ada, "carol@example.com", "viewer").await;
    let accept = format!(
        "/api/organizations/invitations/{}/accept",
        invitation["id"].as_str().unwrap()
    );
    send(
        &app,
        &carol,
        Method::POST,
        &accept,
        json!({"token": invitation_token(&invitation)}),
    )
    .await;
    assert_eq!(
        log.next().await,
        [member("member.added", &user_id(&carol), "viewer")]
    );

    send(
        &app,
        &ada,
        Method::DELETE,
        "/api/organizations/members",
        json!({"userId": user_id(&bob)}),
    )
    .await;
    assert_eq!(
        log.next().await,
        [member("member.removed", &user_id(&bob), "editor")]
    );

    // Carol leaves by deleting her account: the membership ends, then the user is gone.
    send(
        &app,
        &carol,
        Method::DELETE,
        "/api/user",
        json!({"password": PASSWORD}),
    )
    .await;
    assert_eq!(
        log.next().await,
        [
            member("member.removed", &user_id(&carol), "viewer"),
            (
                "user.deleted".to_string(),
                json!({"userId": user_id(&carol), "email": "carol@example.com", "image": null})
            ),
        ]
    );

    // A new organization has its owner as its first member, in that organization.
    let body = send(
        &app,
        &ada,
        Method::POST,
        "/api/organizations",
        json!({"name": "Acme", "slug": "acme"}),
    )
    .await;
    let acme = id_of(&body);
    let events = logged(&url).await;
    let last = events.last().unwrap();
    assert!(last.outboxed);
    assert_eq!(last.organization.as_deref(), Some(acme.as_str()));
    assert_eq!(
        (last.event_type.clone(), last.payload.clone()),
        member("member.added", &user_id(&ada), "owner")
    );
    app.stop().await;
}

fn guarded_schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "post",
          "fields": [{ "name": "title", "type": "string" }] },
        { "type": "document", "name": "memo", "access": { "read": ["owner"] },
          "fields": [{ "name": "title", "type": "string" }] },
        { "type": "document", "name": "deal",
          "fields": [
            { "name": "title", "type": "string" },
            { "name": "secret", "type": "string", "access": { "read": ["owner"] } }
          ] },
        { "type": "document", "name": "note",
          "fields": [{ "name": "title", "type": "string" }] }
    ]))
    .unwrap()
}

/// GET /api/events as `session`, with `query`: the events of the page and the total.
async fn listed(app: &TestApp, session: &Session, query: &str) -> (Vec<Value>, i64) {
    let res = app
        .get(&format!("/api/events?{query}"))
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    (
        res.body["data"].as_array().unwrap().clone(),
        res.body["pagination"]["total"].as_i64().unwrap(),
    )
}

async fn a_reader_sees_the_events_of_what_it_may_read(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::custom(config, |b| {
        // A read policy decides per document; an event is not the document, so its events are
        // kept from everyone the policy rules (DECISIONS.md).
        b.schemas(guarded_schemas())
            .access_policy("note", Operation::Read, |_, _| true)
    })
    .await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "editor").await;
    for doc_type in ["post", "memo", "deal", "note"] {
        send(
            &app,
            &ada,
            Method::POST,
            DOCS,
            json!({"type": doc_type, "data": {"title": doc_type}, "publish": true}),
        )
        .await;
    }
    let of_documents = |events: &[Value]| -> Vec<(String, String, bool)> {
        events
            .iter()
            .filter(|e| e["type"].as_str().unwrap().starts_with("document."))
            .map(|e| {
                (
                    e["type"].as_str().unwrap().to_string(),
                    e["payload"]["documentType"].as_str().unwrap().to_string(),
                    e["payload"].get("publishedHash").is_some(),
                )
            })
            .rev()
            .collect()
    };
    let both = |t: &str, hash: bool| {
        vec![
            ("document.created".to_string(), t.to_string(), false),
            ("document.published".to_string(), t.to_string(), hash),
        ]
    };

    // Ada (an instance administrator) sees everything, digests included.
    let (events, total) = listed(&app, &ada, "pageSize=100").await;
    assert_eq!(
        of_documents(&events),
        [
            both("post", true),
            both("memo", true),
            both("deal", true),
            both("note", true)
        ]
        .concat()
    );
    assert_eq!(total, events.len() as i64);
    // Bob, an editor: not the memo's (the type is closed to him) nor the note's (ruled by a
    // policy), the deal's without its digest (a field is hidden from him).
    let (events, total) = listed(&app, &bob, "pageSize=100").await;
    assert_eq!(
        of_documents(&events),
        [both("post", true), both("deal", false)].concat()
    );
    // The total counts what he may see, and pages are full.
    assert_eq!(total, events.len() as i64, "{events:?}");
    let (first, paged_total) = listed(&app, &bob, "pageSize=2").await;
    assert_eq!((first.len(), paged_total), (2, total));
    let (only, _) = listed(&app, &bob, "type=document.published&pageSize=100").await;
    assert_eq!(
        of_documents(&only),
        [
            ("document.published".to_string(), "post".to_string(), true),
            ("document.published".to_string(), "deal".to_string(), false),
        ]
    );
    // Other events pass: Bob sees the owner's membership.
    assert!(
        events.iter().any(|e| e["type"] == "member.added"),
        "{events:?}"
    );
    app.stop().await;
}

cms_store::both_engines!(
    document_writes_through_rest_emit_one_event_each,
    asset_changes_emit_one_event_each,
    graphql_mutations_emit_like_rest,
    the_assistants_tools_emit_their_events,
    scheduled_publish_and_unpublish_emit_from_the_worker,
    import_and_create_emitting_emit_created_first,
    memberships_emit_added_and_removed,
    a_reader_sees_the_events_of_what_it_may_read,
);
