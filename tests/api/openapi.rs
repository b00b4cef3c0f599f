//! The instance describing itself: the OpenAPI 3.1 document (validated by
//! `openapi-spec-validator`, exercised by `schemathesis` against a running server) and the
//! rendered reference at `/api/docs` (in headless Chromium, with no network beyond the server).

use std::path::Path;
use std::process::Command;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for, serve};

/// A Python tool the test command installs (`.ci/run`); missing, the test fails loudly.
fn python_tool(args: &[&str]) -> std::process::Output {
    Command::new("python3")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("python3 {args:?} could not start: {e}"))
}

fn write_document(dir: &Path, document: &Value) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("openapi.json");
    std::fs::write(&path, serde_json::to_vec_pretty(document).unwrap()).unwrap();
    path
}

async fn the_document_describes_the_instance(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;

    // Authentication is required; a key counts, and so does a session.
    let anonymous = app.get("/api/openapi.json").send().await;
    anonymous.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    let by_session = app.get("/api/openapi.json").cookie(&ada).send().await;
    assert_eq!(by_session.status, StatusCode::OK);
    let res = app.get("/api/openapi.json").key(&key).send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.header("content-type"), Some("application/json"));
    let doc = res.body;
    assert_eq!(doc["openapi"], "3.1.0");

    // Every endpoint family is described, GraphQL at its configured path included.
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/api/documents",
        "/api/documents/{id}",
        "/api/documents/{id}/versions/{number}/restore",
        "/api/openapi.json",
        "/api/docs",
        "/api/graphql",
        "/api/mcp",
    ] {
        assert!(paths.contains_key(path), "{path} is not described");
    }
    let ids: Vec<&str> = paths
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .filter_map(|op| op["operationId"].as_str())
        .collect();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "operation ids are unique: {ids:?}");

    // The request contracts are the handlers' own: the update body names expectedRevision,
    // and every operation shares the error envelope.
    let schemas = &doc["components"]["schemas"];
    assert!(schemas["UpdateBody"]["properties"]["expectedRevision"].is_object());
    let update = &doc["paths"]["/api/documents/{id}"]["put"]["responses"];
    assert_eq!(
        update["409"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorBody"
    );
    assert!(update["401"].is_object() && update["400"].is_object());

    // A schema per registered document type, built from its definition.
    let post = &schemas["PostData"];
    assert_eq!(post["type"], "object");
    assert_eq!(post["required"], json!(["title"]));
    assert_eq!(post["properties"]["slug"]["required"], json!(["current"]));
    assert_eq!(post["properties"]["tags"]["items"]["type"], "string");
    assert_eq!(post["properties"]["publishedOn"]["format"], "date");
    assert!(schemas["SiteSettingsData"].is_object());
    // The document type named in a list or a new document is one of this instance's (the
    // demo schemas, then the forms plugin's).
    let types = json!([
        "post",
        "author",
        "page",
        "siteSettings",
        "form",
        "formSubmission"
    ]);
    assert_eq!(schemas["CreateBody"]["properties"]["type"]["enum"], types);
    let list = doc["paths"]["/api/documents"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "type")
        .unwrap()
        .clone();
    assert_eq!(list["schema"]["enum"], types);

    // Security schemes for both credentials.
    assert_eq!(
        doc["components"]["securitySchemes"]["apiKey"]["name"],
        "x-api-key"
    );

    // The document is valid OpenAPI 3.1.
    let file = write_document(&app.data_dir().join("openapi"), &doc);
    let out = python_tool(&["-m", "openapi_spec_validator", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "openapi-spec-validator: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Checks instances against a component of the OpenAPI document at argv[1] (JSON Schema
/// 2020-12, as OpenAPI 3.1 says); argv[2] is `{"component": name, "valid": [..], "invalid":
/// [..]}`. Prints the instances judged wrongly, one a line.
const JUDGE: &str = r##"
import json, sys
from jsonschema import Draft202012Validator
doc = json.load(open(sys.argv[1]))
case = json.loads(sys.argv[2])
schema = {"$ref": "#/components/schemas/" + case["component"], "components": doc["components"]}
validator = Draft202012Validator(schema)
for instance in case["valid"]:
    if not validator.is_valid(instance):
        print("refused:", json.dumps(instance))
for instance in case["invalid"]:
    if validator.is_valid(instance):
        print("accepted:", json.dumps(instance))
"##;

/// A localized field is described both ways (CONTRACT.md section 17): its plain value (a read
/// or write in one locale) or an object keyed by the instance's locale tags (`locale=*`), with
/// the field's constraints on every locale's value.
async fn localized_fields_are_described_both_ways(url: String) {
    let mut config = config_for(&url);
    config.locales.available = ["en", "de", "fr"].map(String::from).to_vec();
    let schemas = cms::core::schema::parse_schemas(&json!([
        { "type": "object", "name": "seo", "fields": [
            { "name": "description", "type": "text", "localized": true, "maxLength": 12 },
            { "name": "noindex", "type": "boolean" }
        ] },
        { "type": "document", "name": "article", "fields": [
            { "name": "title", "type": "string", "localized": true, "required": true,
              "maxLength": 10, "title": "Title" },
            { "name": "cover", "type": "image", "localized": true },
            { "name": "seo", "type": "seo" },
            { "name": "views", "type": "number" }
        ] }
    ]))
    .unwrap();
    let app = crate::support::TestApp::custom(config, |b| b.schemas(schemas)).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = app.get("/api/openapi.json").cookie(&ada).send().await.body;
    let components = &doc["components"]["schemas"];

    // The shape: `anyOf` of the plain schema and an object keyed by the instance's tags.
    let title = &components["ArticleData"]["properties"]["title"];
    let both = title["anyOf"].as_array().expect("anyOf");
    assert_eq!(both.len(), 2, "{title}");
    assert_eq!(both[0]["type"], "string");
    assert_eq!(both[0]["maxLength"], 10);
    assert_eq!(both[0]["title"], "Title");
    assert_eq!(both[1]["type"], "object");
    assert_eq!(both[1]["propertyNames"]["enum"], json!(["en", "de", "fr"]));
    assert_eq!(both[1]["additionalProperties"], both[0]);
    let said = title["description"].as_str().unwrap();
    assert!(
        said.contains("locale=*") && said.contains("fallbackLocales"),
        "{said}"
    );
    assert_eq!(
        components["ArticleData"]["properties"]["views"]["type"],
        "number"
    );
    assert!(components["Seo"]["properties"]["description"]["anyOf"].is_array());
    // `_meta` names the locale read and the fallbacks served.
    let meta = &components["Meta"]["properties"];
    assert!(
        meta["locale"].is_object() && meta["fallbackLocales"].is_object(),
        "{meta}"
    );

    // Both shapes validate, and so do the constraints inside each.
    let file = write_document(&app.data_dir().join("openapi"), &doc);
    let case = json!({
        "component": "ArticleData",
        "valid": [
            {"title": "Hi"},
            {"title": {"en": "Hi", "de": "Hallo"}},
            {"title": "Hi", "views": 3, "seo": {"description": "About", "noindex": true}},
            {"title": "Hi", "seo": {"description": {"fr": "Sur", "en": "About"}}},
            {"title": "Hi", "cover": {"asset": {"_ref": "a1"}}},
            {"title": "Hi", "cover": {"de": {"asset": {"_ref": "a1"}}}},
        ],
        "invalid": [
            {},
            {"title": 5},
            {"title": {"en": 5}},
            {"title": {"it": "Ciao"}},
            {"title": "Far too long a title"},
            {"title": {"de": "Far too long a title"}},
            {"title": "Hi", "seo": {"description": {"en": "Much too long for SEO"}}},
            {"title": "Hi", "views": {"en": 1}},
        ],
    });
    let out = python_tool(&["-c", JUDGE, file.to_str().unwrap(), &case.to_string()]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && printed.trim().is_empty(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The document stays valid OpenAPI 3.1.
    let out = python_tool(&["-m", "openapi_spec_validator", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "openapi-spec-validator: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    app.stop().await;
}

/// Each event type is described with its payload (CONTRACT.md section 16): `EventView` is one
/// of a component per built-in type, or `CustomEvent`; the events the log really holds
/// validate, events whose payload does not fit their type do not.
async fn events_are_described_per_type(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hi"}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    crate::assets::uploaded(&app, &ada, "a.png", &crate::assets::png(4, 4, 10)).await;
    let doc = app.get("/api/openapi.json").cookie(&ada).send().await.body;
    let components = &doc["components"]["schemas"];
    let variants = components["EventView"]["oneOf"].as_array().expect("oneOf");
    assert_eq!(
        variants.len(),
        12,
        "eleven built-in types and the custom ones"
    );
    let created = &components["DocumentCreatedEvent"];
    assert_eq!(
        created["properties"]["type"]["enum"],
        json!(["document.created"])
    );
    assert_eq!(
        created["properties"]["payload"]["$ref"],
        "#/components/schemas/DocumentPayload"
    );
    assert_eq!(
        components["DocumentPayload"]["required"],
        json!(["documentId", "documentType"])
    );
    assert!(
        created["description"]
            .as_str()
            .unwrap()
            .contains("POST /api/documents")
    );
    assert_eq!(
        components["MemberRemovedEvent"]["properties"]["payload"]["$ref"],
        "#/components/schemas/MemberPayload"
    );

    let logged = app
        .get("/api/events?pageSize=100")
        .cookie(&ada)
        .send()
        .await;
    let mut valid = logged.body["data"].as_array().unwrap().clone();
    let kinds: Vec<&str> = valid.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "asset.created",
            "document.published",
            "document.created",
            "member.added"
        ]
    );
    let like = |event_type: &str, payload: Value| {
        let mut event = valid[0].clone();
        event["type"] = json!(event_type);
        event["payload"] = payload;
        event
    };
    let extra = vec![
        like(
            "document.published",
            json!({"documentId": "d", "documentType": "post"}),
        ),
        like(
            "user.deleted",
            json!({"userId": "u", "email": "u@example.com", "image": null}),
        ),
        like("acme.thing.done", json!({"anything": [1, 2]})),
        like(
            "forms.submission.created",
            json!({"submissionId": "s", "formId": "f"}),
        ),
    ];
    let invalid = vec![
        like("document.created", json!({"assetId": "a"})),
        like("document.deleted", json!({"documentId": "d"})),
        like(
            "document.published",
            json!({"documentType": "post", "publishedHash": "h"}),
        ),
        like("asset.deleted", json!({})),
        like("member.added", json!({"userId": "u"})),
        like(
            "user.deleted",
            json!({"userId": "u", "email": "u@example.com"}),
        ),
        like("acme.thing.done", json!("not an object")),
    ];
    valid.extend(extra);
    let file = write_document(&app.data_dir().join("openapi"), &doc);
    let case = json!({ "component": "EventView", "valid": valid, "invalid": invalid });
    let out = python_tool(&["-c", JUDGE, file.to_str().unwrap(), &case.to_string()]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && printed.trim().is_empty(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = python_tool(&["-m", "openapi_spec_validator", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "openapi-spec-validator: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    app.stop().await;
}

async fn the_docs_page_needs_a_session_and_can_be_turned_off(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;

    // Signed out, and with a key (which a browser never carries): to sign-in.
    for res in [
        app.get("/api/docs").send().await,
        app.get("/api/docs/").send().await,
        app.get("/api/docs/swagger-ui.css").send().await,
        app.get("/api/docs").key(&key).send().await,
    ] {
        assert_eq!(res.status, StatusCode::SEE_OTHER);
        assert_eq!(
            res.header("location"),
            Some("/admin/sign-in?redirect=/api/docs")
        );
    }

    // Signed in: the reference, served from the binary, pointing at the document.
    let res = app.get("/api/docs").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::SEE_OTHER);
    assert_eq!(res.header("location"), Some("/api/docs/"));
    let index = app.get("/api/docs/").cookie(&ada).send().await;
    assert_eq!(index.status, StatusCode::OK);
    assert!(
        index
            .header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    let html = String::from_utf8_lossy(&index.bytes);
    assert!(html.contains("swagger-ui"), "{html}");
    assert!(!html.contains("https://"), "no outside address: {html}");
    let init = app
        .get("/api/docs/swagger-initializer.js")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(init.status, StatusCode::OK);
    let script = String::from_utf8_lossy(&init.bytes);
    assert!(script.contains("/api/openapi.json"), "{script}");
    let missing = app.get("/api/docs/nope.js").cookie(&ada).send().await;
    missing.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    // `openapi.docsUi = false`: 404 for everyone; the document is still served.
    let mut config = config_for(&url);
    config.openapi.docs_ui = false;
    // A second instance on the same database: Ada's session holds there too.
    let off = TestApp::with(config, None).await;
    for path in ["/api/docs", "/api/docs/", "/api/docs/index.html"] {
        let res = off.get(path).cookie(&ada).send().await;
        res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
        let res = off.get(path).send().await;
        res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    }
    let doc = off.get("/api/openapi.json").cookie(&ada).send().await;
    assert_eq!(doc.status, StatusCode::OK);
}

/// A bounded schemathesis run against a served instance, as an owner's write key: no 5xx, and
/// every status, content type and body as the document says. Path parameters are drawn mostly
/// from ids that exist, so operations get past 404 to their real work.
async fn schemathesis_finds_no_contradiction(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let key = app
        .create_key(
            &ada,
            json!({"name": "fuzz", "permissions": ["read", "write"]}),
        )
        .await;
    let known = seed(&app, &ada).await;
    let doc = app.get("/api/openapi.json").key(&key).send().await.body;
    let dir = app.data_dir().join("openapi");
    let file = write_document(&dir, &doc);
    let config = dir.join("schemathesis.toml");
    std::fs::write(&config, known.toml()).unwrap();
    let served = serve(&app).await;
    // Bounded and repeatable for CI; `CMS_SCHEMATHESIS_EXAMPLES=200` and another
    // `CMS_SCHEMATHESIS_SEED` dig deeper on demand.
    let examples = std::env::var("CMS_SCHEMATHESIS_EXAMPLES").unwrap_or_else(|_| "15".to_string());
    let seed = std::env::var("CMS_SCHEMATHESIS_SEED").unwrap_or_else(|_| "20261123".to_string());

    let args: Vec<String> = [
        "--config-file",
        config.to_str().unwrap(),
        "--no-color",
        "run",
        file.to_str().unwrap(),
        "--url",
        &served.origin,
        "--header",
        &format!("x-api-key: {key}"),
        "--checks",
        "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        &examples,
        "--seed",
        &seed,
        // One worker: the generator's Python is not reliable across threads.
        "--workers",
        "1",
        "--request-timeout",
        "10",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    // Schemathesis keeps its caches in the working directory: the test's, not the checkout.
    let work = dir.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("schemathesis")
            .current_dir(&work)
            .args(&args)
            .output()
            .unwrap_or_else(|e| panic!("schemathesis could not start (.ci/run installs it): {e}"))
    })
    .await
    .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: String = report.chars().take(20_000).collect();
    assert!(
        out.status.success(),
        "schemathesis found problems:\n{shown}"
    );
    // The run did test operations; a run that checked nothing would pass too.
    assert!(report.contains("passed"), "{shown}");
    println!("{shown}");
}

/// Values that exist, for schemathesis to draw path parameters and types from.
#[derive(Default)]
struct Known {
    ids: Vec<String>,
    types: Vec<String>,
    files: Vec<String>,
    names: Vec<String>,
}

impl Known {
    fn toml(&self) -> String {
        let list = |values: &[String]| {
            values
                .iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "[dictionaries.ids]\nvalues = [{}]\n\n[dictionaries.types]\nvalues = [{}]\n\n\
             [dictionaries.files]\nvalues = [{}]\n\n[dictionaries.names]\nvalues = [{}]\n\n\
             [dictionaries.numbers]\nvalues = [1, 2]\n\n\
             [parameters]\n\
             \"path.id\" = {{ dictionary = \"ids\", probability = 0.8 }}\n\
             \"path.number\" = {{ dictionary = \"numbers\", probability = 0.8 }}\n\
             \"path.filename\" = {{ dictionary = \"files\", probability = 0.8 }}\n\
             \"path.name\" = {{ dictionary = \"names\", probability = 0.8 }}\n\
             \"query.type\" = {{ dictionary = \"types\", probability = 0.8 }}\n\
             \"body.type\" = {{ dictionary = \"types\", probability = 0.8 }}\n",
            list(&self.ids),
            list(&self.types),
            list(&self.files),
            list(&self.names),
        )
    }
}

/// A little content so reads have something to return.
async fn seed(app: &TestApp, session: &Session) -> Known {
    let mut known = Known {
        types: ["post", "page", "author", "siteSettings"]
            .map(String::from)
            .to_vec(),
        ..Known::default()
    };
    for i in 0..6 {
        let res = app
            .post(
                "/api/documents",
                json!({"type": "post", "data": {"title": format!("Post {i}"), "tags": ["a"]}, "publish": i % 2 == 0}),
            )
            .cookie(session)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
        known
            .ids
            .push(res.body["data"]["id"].as_str().unwrap().to_string());
    }
    for (i, bytes) in [crate::assets::png(8, 8, 100), b"plain words".to_vec()]
        .iter()
        .enumerate()
    {
        let name = format!("file-{i}.{}", if i == 0 { "png" } else { "txt" });
        let asset = crate::assets::uploaded(app, session, &name, bytes).await;
        known.ids.push(asset["id"].as_str().unwrap().to_string());
        known
            .files
            .push(asset["filename"].as_str().unwrap().to_string());
    }
    let role = app
        .post(
            "/api/roles",
            json!({"name": "reviewer", "capabilities": ["document.read"]}),
        )
        .cookie(session)
        .send()
        .await;
    assert_eq!(role.status, StatusCode::CREATED, "{}", role.body);
    known.names.push("reviewer".into());
    known
}

/// The reference renders in headless Chromium from this server alone: every resource the page
/// loads comes from the server's origin, and outside hosts do not even resolve.
async fn the_docs_page_renders_in_chromium(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let served = serve(&app).await;
    let browser = crate::browser::Browser::start().await;
    let client = &browser.client;

    // Signed out: to the sign-in page.
    client
        .goto(&format!("{}/api/docs", served.origin))
        .await
        .unwrap();
    let landed = client.current_url().await.unwrap();
    assert_eq!(landed.path(), "/admin/sign-in", "{landed}");

    // With the session cookie: the reference, listing the operations.
    // The session cookie as sign-in would have set it (WebDriver's cookie API refuses an IP
    // address as a cookie domain).
    client
        .execute(
            "document.cookie = arguments[0] + '; path=/'",
            vec![json!(ada.cookie)],
        )
        .await
        .unwrap();
    client
        .goto(&format!("{}/api/docs", served.origin))
        .await
        .unwrap();
    let operation = client
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(fantoccini::Locator::Css(".opblock-summary-path"))
        .await
        .expect("Swagger UI rendered the operations");
    assert!(!operation.text().await.unwrap().is_empty());
    let title = client
        .find(fantoccini::Locator::Css(".info .title"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(title.starts_with("cms"), "{title}");
    let paths = client
        .find_all(fantoccini::Locator::Css(".opblock-summary-path"))
        .await
        .unwrap();
    let mut described = Vec::new();
    for path in paths {
        described.push(path.text().await.unwrap());
    }
    assert!(
        described.iter().any(|p| p.contains("/api/documents/query")),
        "{described:?}"
    );

    let resources = client
        .execute(
            "return performance.getEntriesByType('resource').map(e => e.name)",
            vec![],
        )
        .await
        .unwrap();
    let resources: Vec<String> = serde_json::from_value(resources).unwrap();
    assert!(
        resources.iter().any(|r| r.ends_with("/api/openapi.json")),
        "{resources:?}"
    );
    for resource in &resources {
        assert!(
            resource.starts_with(&served.origin) || resource.starts_with("data:"),
            "a resource from outside the server: {resource}"
        );
    }
    browser.stop().await;
}

cms_store::both_engines!(
    the_document_describes_the_instance,
    localized_fields_are_described_both_ways,
    events_are_described_per_type,
    the_docs_page_needs_a_session_and_can_be_turned_off,
    schemathesis_finds_no_contradiction,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_page_renders_in_chromium_sqlite() {
    cms_store::testing::with_database(
        cms_store::Dialect::Sqlite,
        the_docs_page_renders_in_chromium,
    )
    .await;
}
