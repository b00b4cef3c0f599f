//! Queries without cliffs, point 3 (CONTRACT.md section 14): `datetime` values stored in UTC
//! with milliseconds whatever offset they were written with, through every write door, so
//! ranges and sorts compare instants; and the text operators folding case with Unicode simple
//! case folding, with the same answers on both engines.

use axum::http::{Method, StatusCode};
use cms::core::schema::parse_schemas;
use cms::service::Credentials;
use cms::service::documents::NewDocument;
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

const DOCS: &str = "/api/documents";

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "object", "name": "window", "fields": [
            { "name": "opens", "type": "datetime" }
        ] },
        { "type": "document", "name": "event", "fields": [
            { "name": "title", "type": "string" },
            { "name": "at", "type": "datetime" },
            { "name": "day", "type": "date" },
            { "name": "window", "type": "window" },
            { "name": "slots", "type": "array", "of": [{ "type": "datetime" }] },
            { "name": "tags", "type": "array", "of": [{ "type": "string" }] }
        ] }
    ]))
    .unwrap()
}

async fn start(url: &str) -> (TestApp, Session) {
    let app = TestApp::custom(config_for(url), |b| b.schemas(schemas())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    (app, ada)
}

async fn create(app: &TestApp, s: &Session, data: Value) -> Value {
    let res = app
        .post(DOCS, json!({"type": "event", "data": data}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"].clone()
}

/// The titles a query on `event` answers, in its order.
async fn titles(app: &TestApp, s: &Session, where_: Value, sort: Value) -> Vec<String> {
    let res = app
        .post(
            "/api/documents/query",
            json!({"type": "event", "where": where_, "sort": sort, "limit": 100}),
        )
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{where_}: {}", res.body);
    res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["draftData"]["title"].as_str().unwrap().to_string())
        .collect()
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

async fn datetimes_are_stored_in_utc_through_every_write_door(url: String) {
    let (app, ada) = start(&url).await;
    // Create: every datetime of the document, nested and in arrays; dates stay as they are.
    let created = create(
        &app,
        &ada,
        json!({
            "title": "created",
            "at": "2026-11-26T10:00:00+01:00",
            "day": "2026-11-26",
            "window": {"opens": "2026-11-26t04:00:00.5-05:00"},
            "slots": ["2026-11-26 09:00:00Z", "later"]
        }),
    )
    .await;
    assert_eq!(
        created["draftData"],
        json!({
            "title": "created",
            "at": "2026-11-26T09:00:00.000Z",
            "day": "2026-11-26",
            "window": {"opens": "2026-11-26T09:00:00.500Z"},
            "slots": ["2026-11-26T09:00:00.000Z", "later"]
        })
    );
    let path = format!("{DOCS}/{}", created["id"].as_str().unwrap());
    let res = app.get(&path).cookie(&ada).send().await;
    assert_eq!(
        res.body["data"]["draftData"]["at"],
        "2026-11-26T09:00:00.000Z"
    );

    // Update, published in the same call: the published copy is the stored form too.
    let res = app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "updated", "at": "2026-11-26T12:30:00.123456+05:30"}, "publish": true}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"]["draftData"]["at"],
        "2026-11-26T07:00:00.123Z"
    );
    assert_eq!(
        res.body["data"]["publishedData"]["at"],
        "2026-11-26T07:00:00.123Z"
    );

    // A value that is no date-time is kept in a draft and refused at publishing.
    let res = app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "vague", "at": "next week"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"]["at"], "next week");
    assert_eq!(res.body["validation"]["errors"][0]["code"], "format");
    // So is one whose instant has no four-digit year in UTC.
    let res = app
        .post(
            DOCS,
            json!({"type": "event", "data": {"at": "0000-01-01T00:30:00+01:00"}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    assert_eq!(res.body["issues"][0]["path"], "at", "{}", res.body);

    // Restore: a version written before datetimes were stored in UTC comes back normalized.
    let org = app.active_organization(&ada).await;
    let id = created["id"].as_str().unwrap().to_string();
    let mut tx = app.app.cms.store().write_for(&org).await.unwrap();
    let number = tx
        .append_version(&cms_store::versions::VersionRecord {
            id: "v-old".into(),
            document_id: id.clone(),
            organization_id: org.clone(),
            version_number: 0,
            event_type: "draft".into(),
            data: cms_store::Json(json!({"title": "old", "at": "2026-11-26T10:00:00+01:00"})),
            created_by: None,
            created_by_name: None,
            created_at: 0,
        })
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let res = app
        .post(&format!("{path}/versions/{number}/restore"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"]["draftData"]["at"],
        "2026-11-26T09:00:00.000Z"
    );

    // GraphQL's mutations go through the same service.
    let res = app
        .post(
            "/api/graphql",
            json!({"query": "mutation { createEvent(data: {title: \"gql\", at: \"2026-11-26T11:00:00+02:00\"}) { at } }"}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"]["createEvent"]["at"], "2026-11-26T09:00:00.000Z",
        "{}",
        res.body
    );

    // The Rust host API's bulk import.
    let actor = actor_of(&app, &ada).await;
    let imported = app
        .app
        .cms
        .documents()
        .import(
            &actor,
            vec![NewDocument {
                doc_type: "event".into(),
                data: json!({"title": "imported", "at": "2026-11-26T09:00:00Z"}),
                publish: false,
                locale: None,
            }],
        )
        .await
        .expect("the import");
    let imported = serde_json::to_value(&imported[0].0).unwrap();
    assert_eq!(imported["draftData"]["at"], "2026-11-26T09:00:00.000Z");
    app.stop().await;
}

async fn datetime_ranges_and_sorts_compare_instants(url: String) {
    let (app, ada) = start(&url).await;
    // In instant order: 08:30Z, 08:59Z, 09:00Z, 09:00:00.001Z, 10:00Z. Written in other
    // offsets, their texts order differently.
    for (title, at) in [
        ("d", "2026-11-26T09:00:00.001Z"),
        ("b", "2026-11-26T03:59:00-05:00"),
        ("e", "2026-11-26T11:00:00+01:00"),
        ("a", "2026-11-26T08:30:00Z"),
        ("c", "2026-11-26T10:00:00+01:00"),
    ] {
        create(&app, &ada, json!({"title": title, "at": at})).await;
    }
    create(&app, &ada, json!({"title": "none"})).await;
    assert_eq!(
        titles(&app, &ada, json!({}), json!(["at"])).await,
        ["a", "b", "c", "d", "e", "none"]
    );
    assert_eq!(
        titles(&app, &ada, json!({}), json!(["-at"])).await,
        ["none", "e", "d", "c", "b", "a"]
    );
    let range = |op: &str, at: &str| json!({"at": {op: at}});
    for (where_, expected) in [
        (
            range("greater_than", "2026-11-26T10:00:00+01:00"),
            vec!["d", "e"],
        ),
        (
            range("greater_than_equal", "2026-11-26T04:00:00-05:00"),
            vec!["c", "d", "e"],
        ),
        (range("less_than", "2026-11-26T09:00:00Z"), vec!["a", "b"]),
        (
            range("less_than_equal", "2026-11-26T10:29:00.000+01:30"),
            vec!["a", "b"],
        ),
        (
            json!({"at": {"equals": "2026-11-26T10:00:00+01:00"}}),
            vec!["c"],
        ),
        (
            json!({"at": {"in": ["2026-11-26T09:30:00+01:00", "2026-11-26t10:00:00Z"]}}),
            vec!["a", "e"],
        ),
        (
            json!({"at": {"not_equals": "2026-11-26T08:30:00.000+00:00"}}),
            vec!["b", "c", "d", "e", "none"],
        ),
        // A prefix is no instant: it compares as text, with the stored form.
        (
            range("greater_than_equal", "2026-11-26T09"),
            vec!["c", "d", "e"],
        ),
        (
            json!({"at": {"starts_with": "2026-11-26T08"}}),
            vec!["a", "b"],
        ),
    ] {
        assert_eq!(
            titles(&app, &ada, where_.clone(), json!(["at"])).await,
            expected,
            "{where_}"
        );
    }
    app.stop().await;
}

async fn text_operators_fold_case_alike_on_both_engines(url: String) {
    let (app, ada) = start(&url).await;
    for (title, tags) in [
        ("L'ÉCOLE des femmes", json!(["Théâtre"])),
        ("ΣΊΣΥΦΟΣ", json!(["ΜΎΘΟΣ"])),
        ("ο σίσυφος", json!([])),
        ("Straße", json!([])),
        ("STRAẞE", json!([])),
        ("STRASSE", json!([])),
        ("МОСКВА", json!(["Город"])),
        ("İstanbul", json!([])),
        ("Istanbul", json!([])),
        ("300 \u{212A}", json!([])),
        ("50%_off*", json!([])),
    ] {
        create(&app, &ada, json!({"title": title, "tags": tags})).await;
    }
    let w = |op: &str, value: &str| json!({"title": {op: value}});
    for (where_, expected) in [
        (w("contains", "école"), vec!["L'ÉCOLE des femmes"]),
        (w("starts_with", "l'école"), vec!["L'ÉCOLE des femmes"]),
        (w("contains", "σίσυφος"), vec!["ΣΊΣΥΦΟΣ", "ο σίσυφος"]),
        (w("ends_with", "ς"), vec!["ΣΊΣΥΦΟΣ", "ο σίσυφος"]),
        (w("like", "σΊσυφοσ ο"), vec!["ΣΊΣΥΦΟΣ", "ο σίσυφος"]),
        (w("contains", "ß"), vec!["STRAẞE", "Straße"]),
        (w("contains", "STRAẞE"), vec!["STRAẞE", "Straße"]),
        (w("contains", "strasse"), vec!["STRASSE"]),
        (w("contains", "москва"), vec!["МОСКВА"]),
        (w("starts_with", "i"), vec!["Istanbul"]),
        (w("starts_with", "İ"), vec!["İstanbul"]),
        (w("starts_with", "ı"), vec![]),
        (w("ends_with", "k"), vec!["300 \u{212A}"]),
        (w("contains", "%_OFF*"), vec!["50%_off*"]),
        (w("contains", "_"), vec!["50%_off*"]),
        (
            json!({"tags": {"contains": "théâtre"}}),
            vec!["L'ÉCOLE des femmes"],
        ),
        (json!({"tags": {"starts_with": "μύ"}}), vec!["ΣΊΣΥΦΟΣ"]),
        (json!({"tags": {"like": "ГОРОД"}}), vec!["МОСКВА"]),
    ] {
        let mut got = titles(&app, &ada, where_.clone(), json!([])).await;
        got.sort();
        assert_eq!(got, expected, "{where_}");
    }
    // Past the filter's text budget a clause matches nothing (never an error).
    let long = "a".repeat(cms::core::filter::MAX_TEXT_CHARS + 1);
    assert!(
        titles(&app, &ada, w("contains", &long), json!([]))
            .await
            .is_empty()
    );
    app.stop().await;
}

cms_store::both_engines!(
    datetimes_are_stored_in_utc_through_every_write_door,
    datetime_ranges_and_sorts_compare_instants,
    text_operators_fold_case_alike_on_both_engines,
);
