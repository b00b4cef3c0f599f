//! Every field fast without declaring it (CONTRACT.md section 14): the service indexes the
//! short scalar fields of every type by itself, beside the service, says how far it has come in
//! /api/cms-health, and drops the indexes of fields no schema indexes any more.

use std::time::Duration;

use axum::http::StatusCode;
use cms::core::FieldKind;
use cms::core::schema::parse_schemas;
use serde_json::{Value, json};

use crate::support::{TestApp, config_for};

/// `rank` and `name` are indexed without asking; `note` (text) and `hidden` (opted out) not.
fn schemas(name_indexed: bool) -> Vec<cms::core::schema::Schema> {
    let mut name = json!({ "name": "name", "type": "string" });
    if !name_indexed {
        name["indexed"] = json!(false);
    }
    parse_schemas(&json!([{ "type": "document", "name": "item", "fields": [
        { "name": "rank", "type": "number" },
        name,
        { "name": "note", "type": "text" },
        { "name": "hidden", "type": "number", "indexed": false }
    ] }]))
    .unwrap()
}

/// Polls /api/cms-health until the field indexes are ready.
async fn indexes_ready(app: &TestApp) -> Value {
    for _ in 0..300 {
        let res = app.get("/api/cms-health").send().await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        let indexes = res.body["indexes"].clone();
        assert_ne!(indexes["state"], "failed", "{indexes}");
        if indexes["state"] == "ready" {
            return indexes;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the field indexes were not ready within 30 s");
}

fn path(name: &str) -> (Vec<String>, FieldKind) {
    let kind = if name == "rank" {
        FieldKind::Number
    } else {
        FieldKind::String
    };
    (vec![name.to_string()], kind)
}

async fn undeclared_fields_are_indexed_beside_the_service_and_dropped_with_their_schema(
    url: String,
) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(schemas(true))).await;
    let indexes = indexes_ready(&app).await;
    // `item` and the first-party plugins' types.
    assert_eq!(indexes["typesReady"], indexes["typesTotal"], "{indexes}");
    // rank and name, for the draft and the published copy, at least.
    assert!(indexes["built"].as_u64().unwrap() >= 4, "{indexes}");
    let store = app.app.cms.store();
    // What the service built is in place: building it again builds nothing.
    let again = store
        .ensure_field_indexes("item", &[path("rank"), path("name")])
        .await
        .unwrap();
    assert_eq!((again.built, again.present), (0, 4));

    // Queries on the undeclared fields answer as always.
    let ada = app.sign_up("Ada", "ada@example.com").await;
    for (rank, name) in [(3, "c"), (9, "a"), (7, "b"), (1, "d")] {
        let res = app
            .post(
                "/api/documents",
                json!({ "type": "item", "data": { "rank": rank, "name": name } }),
            )
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    }
    let res = app
        .post(
            "/api/documents/query",
            json!({ "type": "item", "where": { "rank": { "greater_than": 2 } }, "sort": "-rank" }),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let names: Vec<&Value> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["draftData"]["name"])
        .collect();
    assert_eq!(names, [&json!("a"), &json!("b"), &json!("c")]);
    assert_eq!(res.body["pagination"]["total"], 3);
    let res = app
        .post(
            "/api/documents/query",
            json!({ "type": "item", "where": { "name": { "in": ["b", "d"] } }, "sort": "rank" }),
        )
        .cookie(&ada)
        .send()
        .await;
    let ranks: Vec<&Value> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["draftData"]["rank"])
        .collect();
    assert_eq!(ranks, [&json!(1), &json!(7)], "{}", res.body);
    app.stop().await;

    // The next start no longer indexes `name`: its indexes are dropped, `rank`'s kept.
    let app = TestApp::custom(config_for(&url), |b| b.schemas(schemas(false))).await;
    let indexes = indexes_ready(&app).await;
    assert_eq!(indexes["built"], 0, "{indexes}");
    let store = app.app.cms.store();
    let rank = store
        .ensure_field_indexes("item", &[path("rank")])
        .await
        .unwrap();
    assert_eq!((rank.built, rank.present), (0, 2));
    let name = store
        .ensure_field_indexes("item", &[path("name")])
        .await
        .unwrap();
    assert_eq!(
        name.built, 2,
        "the name's indexes were dropped, so they are built again"
    );
    app.stop().await;
}

cms_store::both_engines!(
    undeclared_fields_are_indexed_beside_the_service_and_dropped_with_their_schema,
);
