//! Custom events (SPEC.md "Events", Extension points: "Custom events"), the document create
//! that emits them in its own unit of work, the cross-organization `locate`, and the plugin
//! actor: what the forms plugin builds on, tested here without it.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::http::StatusCode;
use cms::core::schema::parse_schemas;
use cms::service::documents::NewDocument;
use cms::service::jobs::{Consumer, EventHandler, EventView, HandlerContext, HandlerError};
use cms::service::{
    Actor, BUILT_IN_EVENT_TYPES, Credentials, DocumentLocation, Error, EventDeclaration, NewApiKey,
    NewEvent, NewOrganization, Registry,
};
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for, insert_organization};

/// These tests build what the forms plugin does out of the bare API, with types and an event
/// of the same names: the real plugin stays off.
fn without_forms(url: &str) -> cms::Config {
    let mut config = config_for(url);
    config.plugins.forms = false;
    config
}

const THING: &str = "acme.thing.happened";
const OTHER: &str = "acme.other.happened";
const SUBMITTED: &str = "forms.submission.created";

/// A consumer that records every event it receives.
#[derive(Default)]
struct Recorder(Mutex<Vec<EventView>>);

#[async_trait]
impl EventHandler for Recorder {
    async fn handle(&self, _: &HandlerContext, event: &EventView) -> Result<(), HandlerError> {
        self.0.lock().unwrap().push(event.clone());
        Ok(())
    }
}

impl Recorder {
    fn seen(&self) -> Vec<EventView> {
        self.0.lock().unwrap().clone()
    }
}

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "form",
          "fields": [{ "name": "title", "type": "string", "required": true }] },
        // Nobody may create a submission by hand: only the plugin stores them.
        { "type": "document", "name": "formSubmission", "access": { "create": [] },
          "fields": [
            { "name": "form", "type": "string", "required": true },
            { "name": "values", "type": "json" }
          ] }
    ]))
    .unwrap()
}

fn declarations() -> Vec<EventDeclaration> {
    vec![
        EventDeclaration::from_json(
            THING,
            &json!([
                { "name": "thingId", "type": "string", "required": true },
                { "name": "count", "type": "number", "integer": true, "min": 0 }
            ]),
        )
        .unwrap(),
        EventDeclaration::from_json(OTHER, &json!([])).unwrap(),
        EventDeclaration::from_json(
            SUBMITTED,
            &json!([
                { "name": "submissionId", "type": "string", "required": true },
                { "name": "formId", "type": "string", "required": true }
            ]),
        )
        .unwrap(),
    ]
}

fn consumer(id: &str, event: &str, recorder: &Arc<Recorder>) -> Consumer {
    Consumer {
        id: id.into(),
        events: vec![event.into()],
        max_attempts: None,
        handler: recorder.clone(),
        settings: json!({}),
        plugin: None,
    }
}

/// Consumers: `things` on THING, `others` on OTHER, `forms` on SUBMITTED.
struct Consumers {
    things: Arc<Recorder>,
    others: Arc<Recorder>,
    forms: Arc<Recorder>,
}

async fn start(url: &str) -> (TestApp, Consumers) {
    let consumers = Consumers {
        things: Arc::default(),
        others: Arc::default(),
        forms: Arc::default(),
    };
    let registry = Registry::default()
        .consumer(consumer("things", THING, &consumers.things))
        .unwrap()
        .consumer(consumer("others", OTHER, &consumers.others))
        .unwrap()
        .consumer(consumer("forms", SUBMITTED, &consumers.forms))
        .unwrap();
    let mut config = without_forms(url);
    config.auth.invite_only = false;
    let app = TestApp::custom(config, |b| {
        declarations()
            .into_iter()
            .fold(b.schemas(schemas()).registry(registry), |b, d| {
                b.event_type(d)
            })
    })
    .await;
    (app, consumers)
}

/// The actor behind a session, as the HTTP door resolves it.
async fn actor(app: &TestApp, session: &Session) -> Actor {
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

/// GET /api/events with a session, as a list of (type, payload): the custom events only (the
/// built-in ones, such as the owner's `member.added` of the sign-up, are
/// `builtin_events.rs`'s).
async fn logged(app: &TestApp, session: &Session) -> Vec<(String, Value)> {
    let res = app
        .get("/api/events?pageSize=100")
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !BUILT_IN_EVENT_TYPES.contains(&e["type"].as_str().unwrap()))
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_string(),
                e["payload"].clone(),
            )
        })
        .collect()
}

async fn tick(app: &TestApp) {
    app.app.cms.worker().tick().await.expect("a tick");
}

fn issue_paths(error: Error) -> Vec<String> {
    match error {
        Error::BadRequest { issues, .. } => issues.into_iter().map(|i| i.path).collect(),
        other => panic!("expected a 400 with issues, got {other:?}"),
    }
}

async fn a_declared_event_is_logged_and_reaches_its_subscribers_only(url: String) {
    let (app, consumers) = start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let as_ada = actor(&app, &ada).await;
    let events = app.app.cms.events();

    let event = events
        .emit(&as_ada, THING, json!({ "thingId": "t1", "count": 2 }))
        .await
        .unwrap();
    assert_eq!(event.event_type, THING);
    assert_eq!(event.organization_id.as_deref(), Some(org.as_str()));
    assert_eq!(
        logged(&app, &ada).await,
        [(THING.to_string(), json!({ "thingId": "t1", "count": 2 }))]
    );
    tick(&app).await;
    let seen = consumers.things.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].id.as_str(), &seen[0].payload),
        (event.id.as_str(), &event.payload)
    );
    assert!(
        consumers.others.seen().is_empty(),
        "a subscription matches the type exactly"
    );
    assert!(consumers.forms.seen().is_empty());

    // An invalid payload: 400 with the issues, nothing appended.
    let refused = events
        .emit(&as_ada, THING, json!({ "count": -1.5, "extra": true }))
        .await
        .unwrap_err();
    assert_eq!(issue_paths(refused), ["extra", "thingId", "count", "count"]);
    let not_an_object = events.emit(&as_ada, THING, json!("t1")).await.unwrap_err();
    assert_eq!(issue_paths(not_an_object), [""]);
    // Undeclared and built-in types cannot be emitted.
    for event_type in ["acme.never.declared", "document.published", "user.deleted"] {
        let refused = events
            .emit(&as_ada, event_type, json!({}))
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, Error::BadRequest { issues, .. } if issues.is_empty()),
            "{event_type}: {refused:?}"
        );
        assert!(refused.to_string().contains(event_type), "{refused}");
    }
    assert_eq!(
        logged(&app, &ada).await.len(),
        1,
        "nothing more was appended"
    );

    // A payload-less type takes the empty object, and its own subscriber gets it.
    events.emit(&as_ada, OTHER, json!({})).await.unwrap();
    tick(&app).await;
    assert_eq!(consumers.others.seen().len(), 1);
    assert_eq!(consumers.things.seen().len(), 1);
    app.stop().await;
}

async fn the_start_refuses_bad_declarations_and_unknown_subscriptions(url: String) {
    let plain = |name: &str| EventDeclaration::from_json(name, &json!([])).unwrap();
    let cases: Vec<(Vec<EventDeclaration>, Registry, &str)> = vec![
        (
            vec![plain("happened")],
            Registry::default(),
            "`happened`: the name must be namespaced",
        ),
        (
            vec![plain("document.published")],
            Registry::default(),
            "`document.published` is built in",
        ),
        (
            vec![plain(THING), plain(THING)],
            Registry::default(),
            "`acme.thing.happened` is declared twice",
        ),
        (
            vec![
                EventDeclaration::from_json(
                    THING,
                    &json!([{ "name": "form", "type": "reference", "to": ["nope"] }]),
                )
                .unwrap(),
            ],
            Registry::default(),
            "event type `acme.thing.happened`, field `form`: to: unknown document type",
        ),
        (
            vec![plain(THING)],
            Registry::default()
                .consumer(consumer("mailer", OTHER, &Arc::default()))
                .unwrap(),
            "event consumer `mailer` subscribes to `acme.other.happened`, which is neither",
        ),
    ];
    for (declarations, registry, expected) in cases {
        let err = declarations
            .into_iter()
            .fold(
                cms::Builder::new(without_forms(&url))
                    .schemas(schemas())
                    .registry(registry),
                |b, d| b.event_type(d),
            )
            .build()
            .await
            .err()
            .expect("the start is refused");
        assert!(err.to_string().contains(expected), "{expected}: {err}");
    }
}

/// What the forms plugin does on a public route: locate the form by its bare id, act in its
/// organization as the plugin, store the submission and its event together.
async fn a_document_and_its_events_commit_together_or_not_at_all(url: String) {
    let (app, consumers) = start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let res = app
        .post(
            "/api/documents",
            json!({ "type": "form", "data": { "title": "Contact" }, "publish": true }),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let form_id = res.body["data"]["id"].as_str().unwrap().to_string();
    // An editor may create documents, but not submissions: the schema says nobody may.
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "editor").await;
    let res = app
        .post(
            "/api/documents",
            json!({ "type": "formSubmission", "data": { "form": form_id } }),
        )
        .cookie(&bob)
        .send()
        .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");

    let cms = &app.app.cms;
    let located = cms.documents().locate(&form_id).await.unwrap();
    assert_eq!(
        located,
        Some(DocumentLocation {
            organization_id: org.clone(),
            doc_type: "form".into()
        })
    );
    let plugin = cms.plugin_actor("forms", &org).await.unwrap();
    let submission = |form: &str| NewDocument {
        doc_type: "formSubmission".into(),
        data: json!({ "form": form, "values": { "email": "x@example.com" } }),
        publish: false,
        locale: None,
    };
    let (doc, validation) = cms
        .documents()
        .create_emitting(&plugin, submission(&form_id), |id| {
            vec![NewEvent::new(
                SUBMITTED,
                json!({ "submissionId": id, "formId": form_id }),
            )]
        })
        .await
        .unwrap();
    assert!(validation.is_valid, "{:?}", validation.errors);
    let stored = app
        .get(&format!("/api/documents/{}", doc.id))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
    assert_eq!(
        stored.body["data"]["createdBy"], "plugin:forms",
        "{}",
        stored.body
    );
    let expected = json!({ "submissionId": doc.id, "formId": form_id });
    assert!(
        logged(&app, &ada)
            .await
            .contains(&(SUBMITTED.to_string(), expected.clone()))
    );
    tick(&app).await;
    let seen = consumers.forms.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].payload, expected);
    assert_eq!(seen[0].organization_id.as_deref(), Some(org.as_str()));

    // An invalid event leaves no document and no event; so does an undeclared one.
    let before = logged(&app, &ada).await.len();
    let bad_payload = cms
        .documents()
        .create_emitting(&plugin, submission("second"), |id| {
            vec![
                NewEvent::new(OTHER, json!({})),
                NewEvent::new(SUBMITTED, json!({ "submissionId": id })),
            ]
        })
        .await
        .unwrap_err();
    assert_eq!(issue_paths(bad_payload), ["formId"]);
    let undeclared = cms
        .documents()
        .create_emitting(&plugin, submission("second"), |_| {
            vec![NewEvent::new("acme.never.declared", json!({}))]
        })
        .await
        .unwrap_err();
    assert!(
        matches!(undeclared, Error::BadRequest { .. }),
        "{undeclared:?}"
    );
    let res = app
        .get("/api/documents?type=formSubmission")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let forms: Vec<&str> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["draftData"]["form"].as_str().unwrap())
        .collect();
    assert_eq!(forms, [form_id.as_str()], "no second submission was stored");
    assert_eq!(
        logged(&app, &ada).await.len(),
        before,
        "no event was appended"
    );
    app.stop().await;
}

async fn locate_crosses_organizations_and_reveals_only_where(url: String) {
    let (app, _) = start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    insert_organization(
        &app,
        "elsewhere",
        None,
        &[("form-elsewhere", "form", json!({ "title": "Theirs" }))],
    )
    .await;
    let documents = app.app.cms.documents();
    assert_eq!(
        documents.locate("form-elsewhere").await.unwrap(),
        Some(DocumentLocation {
            organization_id: "elsewhere".into(),
            doc_type: "form".into()
        })
    );
    assert_eq!(documents.locate("no-such-document").await.unwrap(), None);
    assert_eq!(documents.locate("").await.unwrap(), None);
    // The id alone gives Ada nothing of the other organization: reads still say 404.
    let res = app
        .get("/api/documents/form-elsewhere")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND, "{}", res.body);
    // A plugin actor of the owning organization reads it; one of Ada's does not.
    let theirs = app
        .app
        .cms
        .plugin_actor("forms", "elsewhere")
        .await
        .unwrap();
    let read = cms::service::documents::ReadOptions::default();
    let doc = documents
        .get(&theirs, "form-elsewhere", read.clone())
        .await
        .unwrap();
    assert_eq!(doc.draft_data, json!({ "title": "Theirs" }));
    let ours = app
        .app
        .cms
        .plugin_actor("forms", &app.active_organization(&ada).await)
        .await
        .unwrap();
    assert!(matches!(
        documents.get(&ours, "form-elsewhere", read).await,
        Err(Error::NotFound(_))
    ));
    app.stop().await;
}

async fn a_plugin_actor_is_refused_what_belongs_to_a_person(url: String) {
    let (app, _) = start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let cms = &app.app.cms;
    assert!(matches!(
        cms.plugin_actor("forms", "no-such-organization").await,
        Err(Error::NotFound(_))
    ));
    let plugin = cms.plugin_actor("forms", &org).await.unwrap();
    assert_eq!(plugin.user.id, "plugin:forms");
    assert_eq!(plugin.plugin_id(), Some("forms"));
    let key = NewApiKey {
        name: Some("sneaky".into()),
        permissions: None,
        capabilities: None,
        expires_in_days: None,
    };
    let refusals = [
        (
            "create an API key",
            cms.api_keys().create(&plugin, key).await.err(),
        ),
        ("list API keys", cms.api_keys().list(&plugin).await.err()),
        (
            "read preferences",
            cms.account().preferences(&plugin).await.err(),
        ),
        (
            "save preferences",
            cms.account()
                .update_preferences(&plugin, json!({ "theme": "dark" }))
                .await
                .err(),
        ),
        (
            "create an organization",
            cms.organizations()
                .create(
                    &plugin,
                    NewOrganization {
                        name: Some("Plugin Org".into()),
                        slug: Some("plugin-org".into()),
                        metadata: None,
                        parent_id: None,
                    },
                )
                .await
                .err(),
        ),
        (
            "invite someone",
            cms.invitations()
                .create(&plugin, Some("eve@example.com"), Some("editor"), None)
                .await
                .err(),
        ),
        ("list roles", cms.roles().list(&plugin).await.err()),
        (
            "switch organization",
            cms.organizations().switch(&plugin, Some(&org)).await.err(),
        ),
    ];
    for (what, refusal) in refusals {
        assert!(
            matches!(refusal, Some(Error::Forbidden)),
            "{what}: {refusal:?}"
        );
    }
    // Its reach is its organization: it lists that one only, and reads no other.
    let listed = cms.organizations().list(&plugin).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, org);
    insert_organization(&app, "elsewhere", None, &[]).await;
    assert!(cms.organizations().get(&plugin, "elsewhere").await.is_err());
    assert!(cms.organizations().get(&plugin, &org).await.is_ok());
    // And nothing reached the store under its name.
    let res = app.get("/api/settings/api-keys").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!([]));
    app.stop().await;
}

cms_store::both_engines!(
    a_declared_event_is_logged_and_reaches_its_subscribers_only,
    the_start_refuses_bad_declarations_and_unknown_subscriptions,
    a_document_and_its_events_commit_together_or_not_at_all,
    locate_crosses_organizations_and_reveals_only_where,
    a_plugin_actor_is_refused_what_belongs_to_a_person,
);
