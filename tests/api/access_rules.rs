//! Schema and field access rules (SPEC.md "Schema access rules", Authentication point 8):
//! role lists, policy functions, fallback to capabilities, field stripping on every read
//! path, dropped writes, and `where`/`sort` that cannot serve as an oracle.

use axum::http::{Method, StatusCode};
use cms::core::schema::{Operation, parse_schemas};
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

const DOCS: &str = "/api/documents";

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "memo",
          "access": { "read": ["owner", "editor", "reviewer"], "create": ["owner", "editor"],
                      "update": ["editor"], "delete": ["owner"] },
          "fields": [{ "name": "title", "type": "string" }] },
        { "type": "document", "name": "post",
          "fields": [{ "name": "title", "type": "string" }, { "name": "status", "type": "string" }] },
        { "type": "document", "name": "deal",
          "fields": [
            { "name": "title", "type": "string", "indexed": true },
            { "name": "secret", "type": "string", "indexed": true,
              "access": { "read": ["owner"], "update": ["owner"] } },
            { "name": "price", "type": "number", "access": { "update": ["owner"] } },
            { "name": "meta", "type": "object", "fields": [
                { "name": "note", "type": "string" },
                { "name": "internal", "type": "string", "access": { "read": ["owner"], "update": ["owner"] } }
            ] },
            { "name": "lines", "type": "array", "of": [{ "type": "object", "name": "line", "fields": [
                { "name": "label", "type": "string" },
                { "name": "cost", "type": "number", "access": { "read": ["owner"], "update": ["owner"] } }
            ] }] },
            { "name": "partner", "type": "reference", "to": ["deal"] }
          ] }
    ]))
    .unwrap()
}

/// Everybody a test needs: Ada (instance super admin and owner), Bob (editor), Carol
/// (viewer), Dan (custom `reviewer`: read, create, update, delete) and Erin (owner, no
/// instance role), all in Ada's organization.
struct People {
    ada: Session,
    bob: Session,
    carol: Session,
    dan: Session,
    erin: Session,
}

async fn start(url: &str) -> (TestApp, People) {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    let app = TestApp::custom(config, |b| {
        b.schemas(schemas())
            .access_policy("post", Operation::Publish, |_, doc| {
                doc.draft_data["status"] == "approved"
            })
            .access_policy("post", Operation::Read, |auth, doc| {
                doc.draft_data["status"] != "secret" || auth.role.name() == Some("owner")
            })
            .access_policy("post", Operation::Create, |auth, doc| {
                doc.draft_data["title"] != "forbidden"
                    && doc.created_by == Some(auth.user.id.as_str())
            })
    })
    .await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let res = app
        .post(
            "/api/roles",
            json!({"name": "reviewer", "capabilities": ["document.read", "document.create", "document.update", "document.delete"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let mut people = Vec::new();
    for (name, role) in [
        ("bob", "editor"),
        ("carol", "viewer"),
        ("dan", "reviewer"),
        ("erin", "owner"),
    ] {
        let s = app.sign_up(name, &format!("{name}@example.com")).await;
        app.join(&s, &org, role).await;
        people.push(s);
    }
    let [bob, carol, dan, erin] = people.try_into().ok().unwrap();
    (
        app,
        People {
            ada,
            bob,
            carol,
            dan,
            erin,
        },
    )
}

async fn create(app: &TestApp, s: &Session, doc_type: &str, data: Value) -> String {
    let res = app
        .post(DOCS, json!({"type": doc_type, "data": data}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

fn forbidden(res: crate::support::Reply) {
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
}

async fn schema_role_lists_rule_operations(url: String) {
    let (app, p) = start(&url).await;
    let memo = create(&app, &p.bob, "memo", json!({"title": "Plan"})).await;
    let path = format!("{DOCS}/{memo}");

    // create: ["owner", "editor"]. The reviewer holds document.create, the rule still says no.
    forbidden(
        app.post(DOCS, json!({"type": "memo", "data": {}}))
            .cookie(&p.dan)
            .send()
            .await,
    );

    // read: ["owner", "editor", "reviewer"]; a viewer holds document.read but is not listed.
    assert_eq!(
        app.get(&path).cookie(&p.dan).send().await.status,
        StatusCode::OK
    );
    forbidden(app.get(&path).cookie(&p.carol).send().await);
    forbidden(
        app.get("/api/documents?type=memo")
            .cookie(&p.carol)
            .send()
            .await,
    );
    forbidden(
        app.post("/api/documents/query", json!({"type": "memo"}))
            .cookie(&p.carol)
            .send()
            .await,
    );
    forbidden(
        app.get(&format!("{path}/versions"))
            .cookie(&p.carol)
            .send()
            .await,
    );
    forbidden(
        app.get(&format!("{path}/versions/1"))
            .cookie(&p.carol)
            .send()
            .await,
    );
    forbidden(
        app.get(&format!("{path}/back-references"))
            .cookie(&p.carol)
            .send()
            .await,
    );
    let res = app
        .get(&format!("{DOCS}/by-ids?ids={memo}"))
        .cookie(&p.carol)
        .send()
        .await;
    assert_eq!(res.body["data"], json!([]), "invisible ids are left out");
    let res = app
        .get(&format!("{DOCS}/by-ids?ids={memo}"))
        .cookie(&p.dan)
        .send()
        .await;
    assert_eq!(res.body["data"].as_array().unwrap().len(), 1);

    // update: ["editor"]. An owner member is not listed; an instance admin bypasses the rule.
    let put = |s: &Session| {
        app.req(Method::PUT, &path)
            .json(json!({"data": {"title": "Edited"}}))
            .cookie(s)
    };
    assert_eq!(put(&p.bob).send().await.status, StatusCode::OK);
    forbidden(put(&p.erin).send().await);
    assert_eq!(put(&p.ada).send().await.status, StatusCode::OK);

    // An API key acts with its creator's current role.
    let erin_key = app
        .create_key(&p.erin, json!({"name": "k", "permissions": ["write"]}))
        .await;
    forbidden(
        app.req(Method::PUT, &path)
            .json(json!({"data": {"title": "Key"}}))
            .key(&erin_key)
            .send()
            .await,
    );
    let res = app
        .req(Method::PATCH, "/api/roles/viewer")
        .json(json!({"capabilities": ["document.read", "apiKey.manage"]}))
        .cookie(&p.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let carol_key = app
        .create_key(&p.carol, json!({"name": "k", "permissions": ["read"]}))
        .await;
    forbidden(app.get(&path).key(&carol_key).send().await);

    // publish is not ruled: the capability check alone decides.
    let publish = |s: &Session| app.req(Method::POST, &format!("{path}/publish")).cookie(s);
    forbidden(publish(&p.carol).send().await);
    forbidden(publish(&p.dan).send().await);
    assert_eq!(publish(&p.bob).send().await.status, StatusCode::OK);
    let schedule = json!({"action": "unpublish", "runAt": "2999-01-01T00:00:00Z"});
    let res = app
        .post(&format!("{path}/schedule"), schedule)
        .cookie(&p.bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);

    // delete: ["owner"]. The editor holds document.delete; the owner's key is allowed.
    forbidden(app.req(Method::DELETE, &path).cookie(&p.bob).send().await);
    let res = app.req(Method::DELETE, &path).key(&erin_key).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.stop().await;
}

async fn policy_functions_decide_on_the_document(url: String) {
    let (app, p) = start(&url).await;
    let draft = create(
        &app,
        &p.bob,
        "post",
        json!({"title": "D", "status": "draft"}),
    )
    .await;
    let approved = create(
        &app,
        &p.bob,
        "post",
        json!({"title": "A", "status": "approved"}),
    )
    .await;
    let secret = create(
        &app,
        &p.erin,
        "post",
        json!({"title": "S", "status": "secret"}),
    )
    .await;

    // publish: only approved content.
    let publish = |id: &str, s: &Session| {
        app.req(Method::POST, &format!("{DOCS}/{id}/publish"))
            .cookie(s)
    };
    forbidden(publish(&draft, &p.bob).send().await);
    assert_eq!(
        publish(&approved, &p.bob).send().await.status,
        StatusCode::OK
    );
    forbidden(
        app.post(
            DOCS,
            json!({"type": "post", "data": {"title": "N", "status": "draft"}, "publish": true}),
        )
        .cookie(&p.bob)
        .send()
        .await,
    );
    forbidden(
        app.post(
            &format!("{DOCS}/{draft}/schedule"),
            json!({"action": "publish", "runAt": "2999-01-01T00:00:00Z"}),
        )
        .cookie(&p.bob)
        .send()
        .await,
    );
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{draft}"))
        .json(json!({"data": {"title": "D", "status": "approved"}}))
        .cookie(&p.bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(publish(&draft, &p.bob).send().await.status, StatusCode::OK);
    // An instance admin bypasses policies too.
    let other = create(
        &app,
        &p.ada,
        "post",
        json!({"title": "O", "status": "draft"}),
    )
    .await;
    assert_eq!(publish(&other, &p.ada).send().await.status, StatusCode::OK);

    // create: the policy sees the incoming data and the caller.
    forbidden(
        app.post(
            DOCS,
            json!({"type": "post", "data": {"title": "forbidden"}}),
        )
        .cookie(&p.bob)
        .send()
        .await,
    );

    // read: decided per document; lists leave out what it refuses, with exact totals.
    forbidden(
        app.get(&format!("{DOCS}/{secret}"))
            .cookie(&p.bob)
            .send()
            .await,
    );
    assert_eq!(
        app.get(&format!("{DOCS}/{secret}"))
            .cookie(&p.erin)
            .send()
            .await
            .status,
        StatusCode::OK
    );
    let res = app
        .get("/api/documents?type=post&pageSize=1&sort=title")
        .cookie(&p.bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["pagination"]["total"], 3, "{}", res.body);
    assert_eq!(res.body["pagination"]["totalPages"], 3);
    assert_eq!(res.body["data"][0]["draftData"]["title"], "A");
    let res = app
        .get("/api/documents?type=post&pageSize=2&page=2&sort=title")
        .cookie(&p.bob)
        .send()
        .await;
    let titles: Vec<&str> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["draftData"]["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["O"], "S is skipped: {}", res.body);
    let res = app
        .post("/api/documents/query", json!({"type": "post"}))
        .cookie(&p.erin)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 4);
    let res = app
        .get(&format!("{DOCS}/by-ids?ids={secret},{draft}"))
        .cookie(&p.bob)
        .send()
        .await;
    let ids: Vec<&str> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [draft.as_str()]);
    app.stop().await;
}

async fn policies_must_fit_the_schemas(url: String) {
    for (doc_type, op, why) in [
        ("memo", Operation::Read, "already rules this operation"),
        ("nope", Operation::Read, "not a document type"),
    ] {
        let err = cms::Builder::new(config_for(&url))
            .schemas(schemas())
            .access_policy(doc_type, op, |_, _| true)
            .build()
            .await
            .err()
            .expect("the start is refused");
        assert!(err.to_string().contains(why), "{err}");
        assert!(err.to_string().contains(doc_type), "{err}");
    }
}

/// The values only an owner may read, in a form no other part of a response can contain.
const HIDDEN: [&str; 4] = ["SECRET-1", "INTERNAL-1", "\"cost\"", "\"secret\""];

fn assert_stripped(what: &str, body: &Value) {
    let text = body.to_string();
    for hidden in HIDDEN {
        assert!(!text.contains(hidden), "{what} leaks {hidden}: {text}");
    }
}

async fn owner_deal(app: &TestApp, erin: &Session) -> (String, String) {
    let data = json!({
        "title": "One", "secret": "SECRET-1", "price": 10,
        "meta": { "note": "n", "internal": "INTERNAL-1" },
        "lines": [{ "_type": "line", "_key": "k1", "label": "a", "cost": 5 }]
    });
    let res = app
        .post(DOCS, json!({"type": "deal", "data": data, "publish": true}))
        .cookie(erin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let one = res.body["data"]["id"].as_str().unwrap().to_string();
    let two = create(
        app,
        erin,
        "deal",
        json!({"title": "Two", "secret": "SECRET-2", "partner": {"_ref": one}}),
    )
    .await;
    (one, two)
}

async fn field_read_rules_strip_every_read_path(url: String) {
    let (app, p) = start(&url).await;
    let (one, two) = owner_deal(&app, &p.erin).await;
    let path = format!("{DOCS}/{one}");

    let res = app.get(&path).cookie(&p.bob).send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_stripped("get", &res.body);
    let data = &res.body["data"];
    assert_eq!(data["draftData"]["price"], 10, "readable fields stay");
    assert_eq!(data["publishedData"]["meta"], json!({"note": "n"}));
    assert_eq!(
        data["draftData"]["lines"],
        json!([{"_type": "line", "_key": "k1", "label": "a"}])
    );
    for (what, url) in [
        ("list", "/api/documents?type=deal".to_string()),
        ("list depth", "/api/documents?type=deal&depth=2".to_string()),
        ("by-ids", format!("{DOCS}/by-ids?ids={one},{two}&depth=1")),
        ("back-references", format!("{path}/back-references")),
        ("versions", format!("{path}/versions")),
        ("version", format!("{path}/versions/1")),
        ("version published", format!("{path}/versions/2")),
        ("resolved reference", format!("{DOCS}/{two}?depth=1")),
        (
            "published perspective",
            format!("{path}?perspective=published"),
        ),
    ] {
        let res = app.get(&url).cookie(&p.bob).send().await;
        assert_eq!(res.status, StatusCode::OK, "{what}: {}", res.body);
        assert_stripped(what, &res.body);
    }
    // The reference was resolved (its readable fields are there), only stripped.
    let res = app
        .get(&format!("{DOCS}/{two}?depth=1"))
        .cookie(&p.bob)
        .send()
        .await;
    assert_eq!(
        res.body["data"]["draftData"]["partner"]["title"], "One",
        "{}",
        res.body
    );
    let res = app
        .get(&format!("{path}/back-references"))
        .cookie(&p.bob)
        .send()
        .await;
    assert_eq!(res.body["data"][0]["id"], two.as_str());
    let res = app
        .post("/api/documents/query", json!({"type": "deal", "depth": 1}))
        .cookie(&p.bob)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 2);
    assert_stripped("query", &res.body);

    // The owner, and an instance admin, read everything.
    for s in [&p.erin, &p.ada] {
        let res = app.get(&path).cookie(s).send().await;
        assert_eq!(res.body["data"]["draftData"]["secret"], "SECRET-1");
        assert_eq!(
            res.body["data"]["draftData"]["meta"]["internal"],
            "INTERNAL-1"
        );
        assert_eq!(res.body["data"]["draftData"]["lines"][0]["cost"], 5);
    }
    // Write responses are stripped too.
    let responses = [
        (
            "update",
            app.req(Method::PUT, &path)
                .json(json!({"data": {"title": "One"}}))
                .cookie(&p.bob)
                .send()
                .await,
        ),
        (
            "publish",
            app.req(Method::POST, &format!("{path}/publish"))
                .cookie(&p.bob)
                .send()
                .await,
        ),
        (
            "unpublish",
            app.req(Method::DELETE, &format!("{path}/publish"))
                .cookie(&p.bob)
                .send()
                .await,
        ),
        (
            "restore",
            app.req(Method::POST, &format!("{path}/versions/1/restore"))
                .cookie(&p.bob)
                .send()
                .await,
        ),
        (
            "create",
            app.post(
                DOCS,
                json!({"type": "deal", "data": {"title": "Mine", "secret": "SECRET-1"}}),
            )
            .cookie(&p.bob)
            .send()
            .await,
        ),
    ];
    for (what, res) in responses {
        assert!(res.status.is_success(), "{what}: {}", res.body);
        assert_stripped(what, &res.body);
    }

    app.stop().await;
}

async fn field_write_rules_drop_unwritable_writes(url: String) {
    let (app, p) = start(&url).await;
    let (one, _) = owner_deal(&app, &p.erin).await;
    let path = format!("{DOCS}/{one}");
    let stored = |s: &Session| {
        let req = app.get(&path).cookie(s);
        async move { req.send().await.body["data"]["draftData"].clone() }
    };

    let forged = json!({
        "title": "One*", "secret": "forged", "price": 0,
        "meta": { "note": "n2", "internal": "forged" },
        "lines": [{ "_type": "line", "_key": "k1", "label": "b", "cost": 0 }]
    });
    let res = app
        .req(Method::PUT, &path)
        .json(json!({"data": forged}))
        .cookie(&p.bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let seen = stored(&p.erin).await;
    assert_eq!(
        seen,
        json!({
            "title": "One*", "secret": "SECRET-1", "price": 10,
            "meta": { "note": "n2", "internal": "INTERNAL-1" },
            "lines": [{ "_type": "line", "_key": "k1", "label": "b", "cost": 5 }]
        })
    );
    // Leaving a field out is a write too: it stays as it was.
    let res = app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "Short"}}))
        .cookie(&p.bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let seen = stored(&p.erin).await;
    assert_eq!(
        (
            seen["title"].clone(),
            seen["secret"].clone(),
            seen["price"].clone()
        ),
        (json!("Short"), json!("SECRET-1"), json!(10))
    );
    assert_eq!(
        seen["meta"],
        json!({"internal": "INTERNAL-1"}),
        "meta is writable, the unwritable value inside it is kept"
    );
    assert_eq!(seen.get("lines"), None, "array items may be removed");

    // On create the unwritable fields are absent.
    let mine = create(
        &app,
        &p.bob,
        "deal",
        json!({"title": "Mine", "secret": "x", "price": 3}),
    )
    .await;
    let res = app
        .get(&format!("{DOCS}/{mine}"))
        .cookie(&p.erin)
        .send()
        .await;
    assert_eq!(res.body["data"]["draftData"], json!({"title": "Mine"}));

    // A restore cannot change what the restorer may not update.
    let res = app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "Latest", "secret": "SECRET-2", "price": 20}}))
        .cookie(&p.erin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let res = app
        .req(Method::POST, &format!("{path}/versions/1/restore"))
        .cookie(&p.bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let seen = stored(&p.erin).await;
    assert_eq!(seen["title"], "One", "the restorable fields come back");
    assert_eq!(seen["meta"]["note"], "n");
    assert_eq!(
        (seen["secret"].clone(), seen["price"].clone()),
        (json!("SECRET-2"), json!(20))
    );
    assert_eq!(
        seen["meta"].get("internal"),
        None,
        "absent before the restore, so absent after"
    );
    let res = app
        .req(Method::POST, &format!("{path}/versions/1/restore"))
        .cookie(&p.erin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let seen = stored(&p.erin).await;
    assert_eq!(
        (seen["secret"].clone(), seen["price"].clone()),
        (json!("SECRET-1"), json!(10))
    );
    app.stop().await;
}

async fn hidden_fields_are_no_filter_or_sort_oracle(url: String) {
    let (app, p) = start(&url).await;
    create(
        &app,
        &p.erin,
        "deal",
        json!({"title": "A", "secret": "alpha", "meta": {"internal": "i"}}),
    )
    .await;
    create(
        &app,
        &p.erin,
        "deal",
        json!({"title": "B", "secret": "zeta"}),
    )
    .await;
    let query = |s: &Session, body: Value| {
        let req = app.post("/api/documents/query", body).cookie(s);
        async move { req.send().await.body }
    };
    let total = |body: &Value| body["pagination"]["total"].clone();
    let titles = |body: &Value| -> Vec<String> {
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["draftData"]["title"].as_str().unwrap().to_string())
            .collect()
    };

    // The owner's filters work, so the editor's zeros are the rule, not the data.
    assert_eq!(
        total(
            &query(
                &p.erin,
                json!({"type": "deal", "where": {"secret": {"equals": "alpha"}}})
            )
            .await
        ),
        1
    );
    assert_eq!(
        total(
            &query(
                &p.erin,
                json!({"type": "deal", "where": {"meta.internal": {"exists": true}}})
            )
            .await
        ),
        1
    );
    for clause in [
        json!({"secret": {"equals": "alpha"}}),
        json!({"secret": {"equals": "nothing"}}),
        json!({"secret": {"not_equals": "nothing"}}),
        json!({"secret": {"exists": true}}),
        json!({"secret": {"exists": false}}),
        json!({"secret": {"like": "alp"}}),
        json!({"secret": {"unknownOperator": 1}}),
        json!({"meta.internal": {"exists": true}}),
        json!({"and": [{"title": {"equals": "A"}}, {"secret": {"equals": "alpha"}}]}),
    ] {
        let body = query(&p.bob, json!({"type": "deal", "where": clause})).await;
        assert_eq!(total(&body), 0, "{clause}: {body}");
    }
    // In an `or`, a hidden clause matches nothing whatever the value: same answer either way.
    for value in ["alpha", "nothing"] {
        let clause = json!({"or": [{"secret": {"equals": value}}, {"title": {"equals": "B"}}]});
        let body = query(&p.bob, json!({"type": "deal", "where": clause})).await;
        assert_eq!(titles(&body), ["B"], "{value}");
    }
    // A sort on a hidden field is ignored: the default order (newest first).
    let body = query(&p.erin, json!({"type": "deal", "sort": "secret"})).await;
    assert_eq!(titles(&body), ["A", "B"]);
    for sort in ["secret", "-secret"] {
        let body = query(&p.bob, json!({"type": "deal", "sort": sort})).await;
        assert_eq!(titles(&body), ["B", "A"], "{sort}");
        let res = app
            .get(&format!("/api/documents?type=deal&sort={sort}"))
            .cookie(&p.bob)
            .send()
            .await;
        assert_eq!(titles(&res.body), ["B", "A"], "{sort}");
    }
    app.stop().await;
}

/// A field with a read rule and no update rule: who may not read it may not write it either.
/// Their whole-draft saves (which cannot carry a value they never saw) leave it as it was.
async fn a_field_hidden_from_the_writer_survives_their_writes(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::custom(config, |b| {
        b.schemas(
            parse_schemas(&json!([{ "type": "document", "name": "note", "fields": [
                { "name": "title", "type": "string" },
                { "name": "private", "type": "string", "access": { "read": ["owner"] } }
            ] }]))
            .unwrap(),
        )
    })
    .await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "editor").await;
    let id = create(&app, &ada, "note", json!({"title": "T", "private": "P"})).await;
    let path = format!("{DOCS}/{id}");
    for (revision, data) in [
        (1, json!({"title": "Seen by Bob"})),
        (2, json!({"title": "Forged", "private": "forged"})),
    ] {
        let res = app
            .req(Method::PUT, &path)
            .json(json!({"data": data, "expectedRevision": revision}))
            .cookie(&bob)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert!(res.body["data"]["draftData"].get("private").is_none());
        let seen = app.get(&path).cookie(&ada).send().await;
        assert_eq!(
            seen.body["data"]["draftData"]["private"], "P",
            "{}",
            seen.body
        );
    }
    app.stop().await;
}

cms_store::both_engines!(
    schema_role_lists_rule_operations,
    a_field_hidden_from_the_writer_survives_their_writes,
    policy_functions_decide_on_the_document,
    policies_must_fit_the_schemas,
    field_read_rules_strip_every_read_path,
    field_write_rules_drop_unwritable_writes,
    hidden_fields_are_no_filter_or_sort_oracle,
);
