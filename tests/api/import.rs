//! `DocumentService::import`, the bulk path of the Local API (the scale bench seeds through it):
//! a document it writes is indistinguishable through HTTP from one `POST /api/documents`
//! created, and a batch that `create` would refuse in part writes nothing.

use axum::http::{Method, StatusCode};
use cms::service::Credentials;
use cms::service::documents::NewDocument;
use serde_json::{Value, json};

use crate::assets::{png, uploaded};
use crate::support::{Session, TestApp};

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

async fn get(app: &TestApp, s: &Session, path: &str) -> Value {
    let res = app.get(path).cookie(s).send().await;
    assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
    res.body
}

/// What may differ between two documents written apart: the id and the times.
fn without_identity(mut doc: Value) -> Value {
    let map = doc.as_object_mut().unwrap();
    for key in ["id", "createdAt", "updatedAt", "publishedAt"] {
        assert!(map.remove(key).is_some() || key == "publishedAt", "{key}");
    }
    doc
}

fn versions_without_identity(body: &Value) -> Vec<Value> {
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let mut v = v.clone();
            let map = v.as_object_mut().unwrap();
            map.remove("id");
            map.remove("documentId");
            map.remove("createdAt");
            v
        })
        .collect()
}

fn ids(body: &Value) -> Vec<String> {
    let mut ids: Vec<String> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

async fn an_imported_document_is_indistinguishable_from_a_created_one(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let cover = uploaded(&app, &ada, "cover.png", &png(4, 3, 50)).await;
    let cover_id = cover["id"].as_str().unwrap().to_string();
    let author = app
        .post(
            "/api/documents",
            json!({"type": "author", "data": {"name": "Grace"}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(author.status, StatusCode::CREATED, "{}", author.body);
    let author_id = author.body["data"]["id"].as_str().unwrap().to_string();
    let data = json!({
        "title": "Same",
        "views": 42,
        "publishedOn": "2024-05-06",
        "tags": ["a", "b"],
        "author": {"_ref": author_id},
        "cover": {"asset": {"_ref": cover_id}, "alt": "A cover"},
    });

    let created = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": data, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let created_id = created.body["data"]["id"].as_str().unwrap().to_string();

    let actor = actor_of(&app, &ada).await;
    let imported = app
        .app
        .cms
        .documents()
        .import(
            &actor,
            vec![
                NewDocument {
                    doc_type: "post".into(),
                    data: data.clone(),
                    publish: true,
                    locale: None,
                },
                // A draft that references a document imported before it in the same call.
                NewDocument {
                    doc_type: "author".into(),
                    data: json!({"bio": "no name yet"}),
                    publish: false,
                    locale: None,
                },
            ],
        )
        .await
        .expect("the import");
    assert_eq!(imported.len(), 2);
    let (view, validation) = &imported[0];
    assert!(validation.is_valid);
    let (_, draft_validation) = &imported[1];
    assert!(!draft_validation.is_valid, "the name is missing");
    assert_eq!(draft_validation.errors[0].path, "name");
    let imported_id = view.id.clone();

    // GET by id, `_meta` included: the same but for id and times.
    for perspective in ["draft", "published"] {
        let a = get(
            &app,
            &ada,
            &format!("/api/documents/{created_id}?perspective={perspective}&depth=1"),
        )
        .await;
        let b = get(
            &app,
            &ada,
            &format!("/api/documents/{imported_id}?perspective={perspective}&depth=1"),
        )
        .await;
        assert_eq!(
            without_identity(a["data"].clone()),
            without_identity(b["data"].clone())
        );
    }
    // The versions list.
    let a = get(&app, &ada, &format!("/api/documents/{created_id}/versions")).await;
    let b = get(
        &app,
        &ada,
        &format!("/api/documents/{imported_id}/versions"),
    )
    .await;
    assert_eq!(a["total"], 2);
    assert_eq!(versions_without_identity(&a), versions_without_identity(&b));
    // Back-references of the author, and the asset's reference count.
    let back = get(
        &app,
        &ada,
        &format!("/api/documents/{author_id}/back-references"),
    )
    .await;
    let mut expected = vec![created_id.clone(), imported_id.clone()];
    expected.sort();
    assert_eq!(ids(&back), expected);
    let asset = get(&app, &ada, &format!("/api/assets/{cover_id}")).await;
    assert_eq!(asset["data"]["referenceCount"], 2);
    // Both publishes are in the event log, each with its document's hash.
    let events = get(
        &app,
        &ada,
        "/api/events?type=document.published&pageSize=100",
    )
    .await;
    for (id, doc) in [
        (&created_id, &created.body["data"]),
        (&imported_id, &json!(view)),
    ] {
        let event = events["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["payload"]["documentId"] == json!(id))
            .unwrap_or_else(|| panic!("an event for {id}: {events}"));
        assert_eq!(event["payload"]["publishedHash"], doc["publishedHash"]);
    }
    // The imported document is a document like any other: it updates with its revision.
    let res = app
        .req(Method::PUT, &format!("/api/documents/{imported_id}"))
        .json(json!({"data": {"title": "Changed"}, "expectedRevision": 1}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["_meta"]["revision"], 2);
    app.stop().await;
}

async fn an_import_that_create_would_refuse_in_part_writes_nothing(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let actor = actor_of(&app, &ada).await;
    let documents = app.app.cms.documents();
    let post = |data: Value, publish: bool| NewDocument {
        doc_type: "post".into(),
        data,
        publish,
        locale: None,
    };
    let count = |body: Value| body["pagination"]["total"].as_i64().unwrap();

    // Published with a missing reference (the second), a structural error (the third): refused
    // with the index in the issue's path, and the first document is not written either.
    for (batch, path) in [
        (
            vec![
                post(json!({"title": "fine"}), true),
                post(
                    json!({"title": "x", "author": {"_ref": "no-such-author"}}),
                    true,
                ),
            ],
            "[1].author",
        ),
        (
            vec![
                post(json!({"title": "fine"}), true),
                post(json!({"title": "fine"}), false),
                post(json!({"title": 5}), false),
            ],
            "[2].title",
        ),
        // The second publishes a slug the first published in the same call.
        (
            vec![
                post(json!({"title": "a", "slug": {"current": "same"}}), true),
                post(json!({"title": "b", "slug": {"current": "same"}}), true),
            ],
            "[1].slug",
        ),
    ] {
        let err = documents.import(&actor, batch).await.unwrap_err();
        match err {
            cms::service::Error::BadRequest { issues, .. } => {
                assert_eq!(issues[0].path, path, "{issues:?}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(count(get(&app, &ada, "/api/documents?type=post").await), 0);
    }
    // A singleton type is created, never imported.
    let err = documents
        .import(
            &actor,
            vec![NewDocument {
                doc_type: "siteSettings".into(),
                data: json!({"siteName": "x"}),
                publish: false,
                locale: None,
            }],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, cms::service::Error::BadRequest { .. }),
        "{err:?}"
    );
    // A draft with a dangling reference is saved, as `create` saves it, with its validation.
    let saved = documents
        .import(
            &actor,
            vec![post(
                json!({"title": "x", "author": {"_ref": "no-such-author"}}),
                false,
            )],
        )
        .await
        .unwrap();
    assert_eq!(saved[0].1.errors[0].path, "author");
    assert_eq!(count(get(&app, &ada, "/api/documents?type=post").await), 1);
    // A reader may not import.
    let reader_key = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    let reader = app
        .app
        .cms
        .auth()
        .authenticate(&Credentials {
            api_key: Some(reader_key),
            ..Default::default()
        })
        .await
        .unwrap()
        .unwrap()
        .actor;
    let err = documents
        .import(&reader, vec![post(json!({"title": "no"}), false)])
        .await
        .unwrap_err();
    assert!(matches!(err, cms::service::Error::Forbidden), "{err:?}");
    app.stop().await;
}

cms_store::both_engines!(
    an_imported_document_is_indistinguishable_from_a_created_one,
    an_import_that_create_would_refuse_in_part_writes_nothing,
);
