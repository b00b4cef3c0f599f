//! References under load and at their edges (issue 21, points 6 and 7): a level of more
//! references than one statement binds resolves and validates whole; a response past
//! `MAX_EXPANDED_NODES` is a 400 naming it (REST and GraphQL); every create and update answer
//! carries `validation` (REST, GraphQL, the assistant); a GraphQL mutation by a read-only key
//! is 403 at the HTTP layer; a document still referenced is not deleted, on every door; and a
//! link from text to a document (a markDef with a `reference`) is a reference like the others.

use axum::http::{Method, StatusCode};
use cms::core::schema::parse_schemas;
use cms::service::Credentials;
use cms::service::documents::{MAX_EXPANDED_NODES, NewDocument};
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

const DOCS: &str = "/api/documents";
const GQL: &str = "/api/graphql";
/// More distinct references at one level than one statement binds (`ID_CHUNK` is 1000).
const MANY: usize = 1100;

async fn app(url: &str) -> TestApp {
    app_with(config_for(url)).await
}

async fn app_with(config: cms::Config) -> TestApp {
    let schemas = parse_schemas(&json!([
        { "type": "document", "name": "item", "fields": [
            { "name": "title", "type": "string", "required": true },
            { "name": "parent", "type": "reference", "to": ["item"] },
            { "name": "links", "type": "array", "of": [{ "type": "reference", "to": ["item"] }] },
            { "name": "cover", "type": "image" },
            { "name": "body", "type": "block" }
        ] }
    ]))
    .unwrap();
    TestApp::custom(config, |b| b.schemas(schemas)).await
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

/// `n` items titled `T0`, `T1`, ..., written through the service's bulk path; their ids.
async fn items(app: &TestApp, s: &Session, n: usize) -> Vec<String> {
    let actor = actor_of(app, s).await;
    let inputs = (0..n)
        .map(|i| NewDocument {
            doc_type: "item".into(),
            data: json!({"title": format!("T{i}")}),
            publish: false,
            locale: None,
        })
        .collect();
    app.app
        .cms
        .documents()
        .import(&actor, inputs)
        .await
        .unwrap()
        .into_iter()
        .map(|(view, _)| view.id)
        .collect()
}

fn refs(ids: &[String]) -> Value {
    Value::Array(ids.iter().map(|id| json!({"_ref": id})).collect())
}

async fn create(app: &TestApp, s: &Session, data: Value) -> Value {
    let res = app
        .post(DOCS, json!({"type": "item", "data": data}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body
}

fn id(body: &Value) -> String {
    body["data"]["id"].as_str().unwrap().to_string()
}

async fn gql(app: &TestApp, s: &Session, query: &str, variables: Value) -> Value {
    let res = app
        .post(GQL, json!({"query": query, "variables": variables}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body
}

async fn a_level_of_more_references_than_one_statement_binds(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let targets = items(&app, &ada, MANY).await;
    // Each target named twice: the ids are looked up once each.
    let mut named = targets.clone();
    named.extend(targets.iter().cloned());
    let hub = create(&app, &ada, json!({"title": "Hub", "links": refs(&named)})).await;
    assert_eq!(
        hub["validation"],
        json!({"isValid": true, "errors": []}),
        "every one of the {MANY} targets was found"
    );

    // One missing among them is reported at its path.
    let mut broken = targets.clone();
    broken.insert(700, "no-such-item".into());
    let res = create(
        &app,
        &ada,
        json!({"title": "Broken", "links": refs(&broken)}),
    )
    .await;
    assert_eq!(res["validation"]["isValid"], false);
    assert_eq!(
        res["validation"]["errors"],
        json!([{"path": "links[700]", "code": "reference", "message": "item 701 of links: the referenced document does not exist"}])
    );

    let res = app
        .get(&format!("{DOCS}/{}?depth=1", id(&hub)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let links = res.body["data"]["draftData"]["links"].as_array().unwrap();
    assert_eq!(links.len(), 2 * MANY);
    for (i, link) in links.iter().enumerate() {
        let n = i % MANY;
        assert_eq!(link["_id"], targets[n].as_str(), "links[{i}]");
        assert_eq!(link["title"], format!("T{n}"), "links[{i}]");
        assert_eq!(link["_type"], "item");
    }
    app.stop().await;
}

async fn a_page_shares_its_targets_through_depth_two(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let root = id(&create(&app, &ada, json!({"title": "Root"})).await);
    let mid = id(&create(
        &app,
        &ada,
        json!({"title": "Mid", "parent": {"_ref": root}}),
    )
    .await);
    for i in 0..20 {
        create(
            &app,
            &ada,
            json!({"title": format!("Leaf {i}"), "parent": {"_ref": mid}, "links": [{"_ref": mid}, {"_ref": root}]}),
        )
        .await;
    }
    let res = app
        .post(
            "/api/documents/query",
            json!({"type": "item", "where": {"title": {"like": "Leaf"}}, "depth": 2, "limit": 100}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let page = res.body["data"].as_array().unwrap();
    assert_eq!(page.len(), 20);
    for doc in page {
        let data = &doc["draftData"];
        assert_eq!(data["parent"]["title"], "Mid");
        assert_eq!(data["parent"]["parent"]["title"], "Root", "depth 2");
        assert_eq!(data["links"][0]["parent"]["_id"], root.as_str());
        assert_eq!(data["links"][1]["title"], "Root");
    }
    app.stop().await;
}

async fn a_response_past_the_expansion_cap_is_a_400(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let target = id(&create(&app, &ada, json!({"title": "Target"})).await);
    // One distinct target, named once more than a response may expand.
    let named = vec![target.clone(); MAX_EXPANDED_NODES + 1];
    let wide = id(&create(&app, &ada, json!({"title": "Wide", "links": refs(&named)})).await);
    let path = format!("{DOCS}/{wide}");
    let res = app
        .get(&format!("{path}?depth=1"))
        .cookie(&ada)
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(
        message.contains(&MAX_EXPANDED_NODES.to_string()) && message.contains("MAX_EXPANDED_NODES"),
        "{message}"
    );
    // Without resolution it reads as stored.
    let res = app.get(&path).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK);

    // GraphQL walks the same list through its loader: the same limit, as a field error.
    let body = gql(
        &app,
        &ada,
        "query($id: ID!) { Item(id: $id) { links { id } } }",
        json!({"id": wide}),
    )
    .await;
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "BAD_REQUEST",
        "{body}"
    );
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("MAX_EXPANDED_NODES")
    );
    app.stop().await;
}

async fn every_create_and_update_answers_with_validation(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let created = create(&app, &ada, json!({"parent": {"_ref": "gone"}})).await;
    let expected = json!({"isValid": false, "errors": [
        {"path": "title", "code": "required", "message": "title is required"},
        {"path": "parent", "code": "reference", "message": "parent: the referenced document does not exist"}
    ]});
    assert_eq!(created["validation"]["isValid"], false);
    let paths = |v: &Value| {
        let mut p: Vec<String> = v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().to_string())
            .collect();
        p.sort();
        p
    };
    assert_eq!(paths(&created["validation"]), paths(&expected));
    let doc = id(&created);

    // REST PUT.
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{doc}"))
        .json(json!({"data": {"title": "Now titled", "parent": {"_ref": "gone"}}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"]["title"], "Now titled");
    assert_eq!(paths(&res.body["validation"]), vec!["parent"]);
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{doc}"))
        .json(json!({"data": {"title": "Fine"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["validation"],
        json!({"isValid": true, "errors": []})
    );

    // GraphQL: `validation` on the saved document, null on reads.
    let body = gql(
        &app,
        &ada,
        "mutation { createItem(data: {parent: {_ref: \"gone\"}}) { id validation { isValid errors { path code message } } } }",
        json!({}),
    )
    .await;
    let v = &body["data"]["createItem"]["validation"];
    assert_eq!(v["isValid"], false, "{body}");
    assert_eq!(paths(v), paths(&expected));
    let body = gql(
        &app,
        &ada,
        "mutation($id: ID!) { updateItem(id: $id, data: {title: \"G\"}) { validation { isValid errors { path } } } }",
        json!({"id": doc}),
    )
    .await;
    assert_eq!(
        body["data"]["updateItem"]["validation"],
        json!({"isValid": true, "errors": []}),
        "{body}"
    );
    let body = gql(
        &app,
        &ada,
        "query($id: ID!) { Item(id: $id) { validation { isValid } } }",
        json!({"id": doc}),
    )
    .await;
    assert_eq!(body["data"]["Item"]["validation"], Value::Null, "{body}");
    app.stop().await;
}

async fn the_assistant_answers_its_saves_with_validation(url: String) {
    let model = crate::agent::Model::puppet().await;
    let mut config = config_for(&url);
    config.agent.base_url = Some(model.base_url.clone());
    config.agent.model = Some("puppet".into());
    let app = app_with(config).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = id(&create(&app, &ada, json!({"title": "Draft"})).await);
    let calls = json!([
        ["c1", "create_document", {"collection": "item", "data": {"parent": {"_ref": "gone"}}}],
        ["c2", "update_document", {"collection": "item", "id": doc, "data": {"parent": {"_ref": "gone"}}}],
        ["c3", "update_document", {"collection": "item", "id": doc, "data": {"parent": null}}],
    ]);
    let res = app
        .post(
            "/api/agent/chat",
            json!({"messages": [{"role": "user", "content": calls.to_string()}]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let events = crate::agent::events(&res.bytes);
    let results = crate::agent::of_kind(&events, "toolResult");
    assert_eq!(results.len(), 3, "{events:?}");
    for r in &results {
        assert_eq!(r["ok"], true, "{r}");
    }
    let created = &results[0]["result"];
    assert_eq!(created["validation"]["isValid"], false, "{created}");
    assert_eq!(created["document"]["type"], "item");
    let updated = &results[1]["result"];
    assert_eq!(updated["document"]["id"], doc.as_str(), "{updated}");
    assert_eq!(
        updated["validation"]["errors"],
        json!([{"path": "parent", "code": "reference", "message": "parent: the referenced document does not exist"}])
    );
    assert_eq!(
        results[2]["result"]["validation"],
        json!({"isValid": true, "errors": []})
    );
    app.stop().await;
}

async fn a_graphql_mutation_by_a_read_only_key_is_403(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = id(&create(&app, &ada, json!({"title": "Kept"})).await);
    let read = app
        .create_key(&ada, json!({"name": "read", "permissions": ["read"]}))
        .await;
    let write = app
        .create_key(&ada, json!({"name": "write", "permissions": ["write"]}))
        .await;
    let update = json!({
        "query": "mutation($id: ID!) { updateItem(id: $id, data: {title: \"K\"}) { id } }",
        "variables": {"id": doc}
    });
    let res = app.post(GQL, update.clone()).key(&read).send().await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // Named among several operations, with a query beside it: the one run decides.
    let named = json!({
        "query": "query Q { allItem { id } } mutation M { createItem(data: {title: \"K\"}) { id } }",
        "operationName": "M"
    });
    let res = app.post(GQL, named.clone()).key(&read).send().await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .post(GQL, json!({"query": named["query"], "operationName": "Q"}))
        .key(&read)
        .send()
        .await;
    assert_eq!(
        res.status,
        StatusCode::OK,
        "a read key may query: {}",
        res.body
    );
    assert!(res.body.get("errors").is_none(), "{}", res.body);
    let stored = app.get(&format!("{DOCS}/{doc}")).cookie(&ada).send().await;
    assert_eq!(stored.body["data"]["draftData"]["title"], "Kept");

    // A write key mutates; a session is not affected by the door check.
    let res = app.post(GQL, update.clone()).key(&write).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"]["updateItem"]["id"],
        doc.as_str(),
        "{}",
        res.body
    );
    let res = app.post(GQL, update).cookie(&ada).send().await;
    assert!(res.body.get("errors").is_none(), "{}", res.body);
    app.stop().await;
}

async fn a_referenced_document_is_not_deleted_on_any_door(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let target = id(&create(&app, &ada, json!({"title": "Target"})).await);
    let by_draft = id(&create(
        &app,
        &ada,
        json!({"title": "A", "parent": {"_ref": target}}),
    )
    .await);
    let res = app
        .post(
            DOCS,
            json!({"type": "item", "data": {"title": "B", "links": [{"_ref": target}]}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let by_published = id(&res.body);
    let mut referrers = vec![by_draft.clone(), by_published.clone()];
    referrers.sort();
    let path = format!("{DOCS}/{target}");

    // REST.
    let res = app.req(Method::DELETE, &path).cookie(&ada).send().await;
    let message = res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert_eq!(message, "2 documents still reference this document");
    assert_eq!(res.body["referencedBy"], json!(referrers));
    // GraphQL.
    let delete = "mutation($id: ID!) { deleteItem(id: $id) }";
    let body = gql(&app, &ada, delete, json!({"id": target})).await;
    let error = &body["errors"][0];
    assert_eq!(error["extensions"]["code"], "CONFLICT", "{body}");
    assert_eq!(error["extensions"]["referencedBy"], json!(referrers));
    assert_eq!(
        app.get(&path).cookie(&ada).send().await.status,
        StatusCode::OK,
        "nothing was deleted"
    );

    // A reference to itself does not hold a document back; removing the others frees it.
    let res = app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "Target", "parent": {"_ref": target}}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{by_draft}"))
        .json(json!({"data": {"title": "A"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app.req(Method::DELETE, &path).cookie(&ada).send().await;
    let message = res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert_eq!(message, "1 document still references this document");
    assert_eq!(res.body["referencedBy"], json!([by_published]));
    // The published copy still references it until it is published again without it.
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{by_published}"))
        .json(json!({"data": {"title": "B"}, "publish": true}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let body = gql(&app, &ada, delete, json!({"id": target})).await;
    assert_eq!(body["data"]["deleteItem"], true, "{body}");
    assert_eq!(
        app.get(&path).cookie(&ada).send().await.status,
        StatusCode::NOT_FOUND
    );
    app.stop().await;
}

/// A body of Portable Text whose word "see" links to `target` the way the admin's editor
/// writes a document link.
fn linking_body(target: &str) -> Value {
    json!([{
        "_type": "block", "_key": "b1", "style": "normal",
        "markDefs": [{ "_type": "internalLink", "_key": "d1", "reference": { "_type": "reference", "_ref": target } }],
        "children": [{ "_type": "span", "_key": "s1", "text": "see", "marks": ["d1"] }]
    }])
}

async fn a_document_linked_from_text_is_a_reference(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let target = id(&create(&app, &ada, json!({"title": "Target"})).await);
    let linking = create(
        &app,
        &ada,
        json!({"title": "Linking", "body": linking_body(&target)}),
    )
    .await;
    assert_eq!(
        linking["validation"],
        json!({"isValid": true, "errors": []})
    );
    let linking = id(&linking);

    // Expanded with depth, listed among the target's back-references, kept from deletion.
    let res = app
        .get(&format!("{DOCS}/{linking}?depth=1"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let reference = &res.body["data"]["draftData"]["body"][0]["markDefs"][0]["reference"];
    assert_eq!(reference["title"], "Target", "{}", res.body);
    assert_eq!(reference["_id"], json!(target));
    let res = app
        .get(&format!("{DOCS}/{target}/back-references"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let ids: Vec<&Value> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["id"])
        .collect();
    assert_eq!(ids, vec![&json!(linking)]);
    let res = app
        .req(Method::DELETE, &format!("{DOCS}/{target}"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert_eq!(res.body["referencedBy"], json!([linking]));

    // A link to nothing is an issue at the link, which refuses publishing.
    let broken = create(
        &app,
        &ada,
        json!({"title": "Broken", "body": linking_body("no-such-item")}),
    )
    .await;
    assert_eq!(broken["validation"]["isValid"], false, "{broken}");
    assert_eq!(
        broken["validation"]["errors"][0]["path"], "body[0].markDefs[0].reference",
        "{broken}"
    );
    let res = app
        .post(&format!("{DOCS}/{}/publish", id(&broken)), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    app.stop().await;
}

cms_store::both_engines!(
    a_level_of_more_references_than_one_statement_binds,
    a_page_shares_its_targets_through_depth_two,
    a_response_past_the_expansion_cap_is_a_400,
    every_create_and_update_answers_with_validation,
    the_assistant_answers_its_saves_with_validation,
    a_graphql_mutation_by_a_read_only_key_is_403,
    a_referenced_document_is_not_deleted_on_any_door,
    a_document_linked_from_text_is_a_reference,
);
