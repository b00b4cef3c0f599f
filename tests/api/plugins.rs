//! Plugins through HTTP: the route gate (401, 403, public, members), plugin capabilities on a
//! custom role and on an API key, wrapping a built-in route, the plugin and capability lists,
//! plugin routes in the OpenAPI document, and start-up refusals of bad declarations (SPEC.md
//! "Extension points (plugin parts)", "Plugin-contributed routes", the routing rule).

use axum::Json;
use axum::extract::{Path, Request};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cms::core::RequiredCapabilities;
use cms::plugin::{Plugin, PluginParts, ToolExecution};
use cms::server::plugins::{Component, Placement};
use cms::server::{ApiJson, ApiResult, Authed, Data, PluginRoute, RouteWrap, created, ok};
use serde_json::{Value, json};

use std::sync::{Arc, Mutex};

use cms::core::plugin_settings::{SettingField, SettingKind};
use cms::service::jobs::{HandlerContext, HandlerError, JobHandler, JobView};

use crate::support::{TestApp, config_for};

/// A host's plugin touching every extension point. Its job handler records the settings it
/// receives.
#[derive(Default, Clone)]
struct Acme {
    synced: Arc<Mutex<Vec<Value>>>,
}

struct Sync(Arc<Mutex<Vec<Value>>>);

#[async_trait::async_trait]
impl JobHandler for Sync {
    async fn run(&self, ctx: &HandlerContext, _: &JobView) -> Result<(), HandlerError> {
        self.0.lock().unwrap().push(ctx.settings.clone());
        Ok(())
    }
}

impl Plugin for Acme {
    fn id(&self) -> &str {
        "acme"
    }

    fn register(&self, parts: &mut PluginParts) {
        parts.schema_json(json!({"type": "document", "name": "acmeReport",
            "fields": [{"name": "title", "type": "string", "required": true}]}));
        parts.settings(
            "Acme",
            "Where reports sync to",
            vec![SettingField {
                name: "region".into(),
                kind: SettingKind::String,
                title: "Region".into(),
            }],
        );
        parts.job_handler("acme.sync", Arc::new(Sync(self.synced.clone())));
        parts.capability(
            "acme.report",
            "Run reports",
            "Create reports of the acme plugin",
            "acme",
        );
        parts.route(PluginRoute::new(
            "ping",
            Method::GET,
            "/acme/ping",
            RequiredCapabilities::Public,
            || async { ok("pong") },
        ));
        parts.route(PluginRoute::new(
            "whoami",
            Method::GET,
            "/acme/whoami",
            RequiredCapabilities::Members,
            |Authed(actor): Authed| async move { ok(actor.user.email) },
        ));
        let report = parts.required(&["acme.report"]);
        parts.route(PluginRoute::new(
            "report",
            Method::POST,
            "/acme/reports",
            report.clone(),
            |ApiJson(body): ApiJson<Value>| async move { created(json!({ "received": body })) },
        ));
        parts.route(PluginRoute::new(
            "report-get",
            Method::GET,
            "/acme/reports/{id}",
            report,
            |Path(id): Path<String>| async move { ok(json!({ "id": id })) },
        ));
        parts.wrap(RouteWrap::new(
            Method::GET,
            "/api/schemas/{name}",
            |req: Request, next: Next| async move {
                if req.headers().contains_key("x-acme-block") {
                    let body: ApiResult<Json<Data<()>>> =
                        Err(cms::service::Error::Conflict("blocked by acme".into()).into());
                    return body.into_response();
                }
                let mut response: Response = next.run(req).await;
                response
                    .headers_mut()
                    .insert("x-acme-wrapped", HeaderValue::from_static("1"));
                response
            },
        ));
        parts.admin_tool(
            "reports",
            "Reports",
            Component::new("acme-reports", "/api/acme/reports.js"),
            Placement::Sidebar,
            Some("no-such-group"),
        );
        parts.document_action(
            "share",
            "Share",
            Component::new("acme-share", "/api/acme/share.js"),
            Some(vec!["post".into()]),
        );
        parts.field_component(
            "acme-color",
            Component::new("acme-color", "/api/acme/color.js"),
        );
        parts.agent_tool(cms::plugin::AgentTool {
            name: "acme_report".into(),
            description: "Runs an acme report".into(),
            mutates: false,
            required_capabilities: RequiredCapabilities::all(["acme.report".parse().unwrap()]),
            execution: ToolExecution::Server,
            input_schema: json!({"type": "object", "properties": {}}),
            handler: Arc::new(NoTool),
        });
        // A core tool's name: the core tool wins, so this one is not offered.
        parts.agent_tool(tool("get_document", RequiredCapabilities::Members));
    }
}

struct NoTool;

#[async_trait::async_trait]
impl cms::plugin::ToolHandler for NoTool {
    async fn execute(
        &self,
        _: &cms::service::Cms,
        _: &cms::service::Actor,
        arguments: Value,
    ) -> Result<Value, cms::service::jobs::HandlerError> {
        Ok(arguments)
    }
}

async fn app(url: &str) -> TestApp {
    app_with(url, Acme::default()).await
}

async fn app_with(url: &str, acme: Acme) -> TestApp {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    TestApp::custom(config, |b| b.plugin(acme)).await
}

async fn the_gate_runs_before_the_handler(url: String) {
    let app = app(&url).await;
    // Public: anyone.
    let res = app.get("/api/acme/ping").send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], "pong");
    // []: any signed-in member; 401 signed out.
    app.get("/api/acme/whoami")
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app.get("/api/acme/whoami").cookie(&ada).send().await;
    assert_eq!(res.body["data"], "ada@example.com", "{}", res.body);
    // A signed-in user of no organization is no member.
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.get("/api/acme/whoami")
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // A capability: 401 signed out, 403 without it, the handler with it (the owner holds
    // every declared capability).
    let body = json!({"title": "Q3"});
    app.post("/api/acme/reports", body.clone())
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    let org = app.active_organization(&ada).await;
    app.join(&bob, &org, "editor").await;
    app.post("/api/acme/reports", body.clone())
        .cookie(&bob)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .post("/api/acme/reports", body.clone())
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert_eq!(res.body["data"]["received"], body);
    // Path captures reach the handler; another method on a plugin path is 405.
    let res = app.get("/api/acme/reports/r-1").cookie(&ada).send().await;
    assert_eq!(res.body["data"]["id"], "r-1", "{}", res.body);
    let res = app
        .req(Method::DELETE, "/api/acme/reports/r-1")
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
    // The gate runs first: a body the handler would refuse never reaches it without the
    // capability.
    app.req(Method::POST, "/api/acme/reports")
        .cookie(&bob)
        .raw("application/json", "{not json")
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

async fn plugin_capabilities_work_on_custom_roles_and_keys(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let res = app
        .post(
            "/api/roles",
            json!({"name": "reporter", "capabilities": ["acme.report"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "reporter").await;
    let res = app
        .post("/api/acme/reports", json!({}))
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    // Built-in roles other than owner do not get plugin capabilities automatically.
    let roles = app.get("/api/roles").cookie(&ada).send().await;
    let admin = roles.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "admin")
        .unwrap()
        .clone();
    assert!(
        !admin["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("acme.report")),
        "{admin}"
    );
    // A key listing the capability may call the route; one without it may not.
    let key = app
        .create_key(
            &ada,
            json!({"name": "reports", "capabilities": ["acme.report"]}),
        )
        .await;
    let res = app
        .post("/api/acme/reports", json!({"via": "key"}))
        .key(&key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let reader = app
        .create_key(&ada, json!({"name": "reader", "permissions": ["read"]}))
        .await;
    app.post("/api/acme/reports", json!({}))
        .key(&reader)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // An organization owner who is no instance administrator holds it too (owners hold every
    // declared capability).
    let cy = app.sign_up("Cy", "cy@example.com").await;
    app.join(&cy, &org, "owner").await;
    let res = app
        .post("/api/acme/reports", json!({}))
        .cookie(&cy)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    // A member-only route takes any key of the organization.
    let res = app.get("/api/acme/whoami").key(&reader).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.stop().await;
}

async fn a_wrapper_chains_to_or_replaces_the_built_in_route(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app.get("/api/schemas/post").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["name"], "post");
    assert_eq!(res.header("x-acme-wrapped"), Some("1"));
    // The caller was resolved before the wrapper: the built-in still refuses the signed out.
    let res = app.get("/api/schemas/post").send().await;
    res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    assert_eq!(res.header("x-acme-wrapped"), Some("1"));
    let res = app
        .get("/api/schemas/post")
        .cookie(&ada)
        .header("x-acme-block", "1")
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    // Other routes, even on a neighbouring path, are not wrapped.
    let res = app.get("/api/schemas").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.header("x-acme-wrapped"), None);
    app.stop().await;
}

async fn plugins_and_capabilities_are_listed(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    app.get("/api/plugins")
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    let res = app.get("/api/plugins").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let acme = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "acme")
        .expect("acme is listed")
        .clone();
    assert_eq!(acme["capabilities"], json!(["acme.report"]));
    assert_eq!(
        acme["routes"][0],
        json!({"id": "ping", "method": "GET", "path": "/api/acme/ping", "requiredCapabilities": "public"})
    );
    assert_eq!(acme["routes"][1]["requiredCapabilities"], json!([]));
    assert_eq!(
        acme["routes"][2]["requiredCapabilities"],
        json!(["acme.report"])
    );
    assert_eq!(acme["wraps"], json!(["GET /api/schemas/{name}"]));
    assert_eq!(
        acme["adminTools"][0],
        json!({"id": "reports", "title": "Reports", "placement": "sidebar", "group": "tools",
               "component": {"element": "acme-reports", "module": "/api/acme/reports.js"}})
    );
    assert_eq!(acme["documentActions"][0]["appliesTo"], json!(["post"]));
    assert_eq!(acme["fieldComponents"][0]["input"], "acme-color");
    assert_eq!(acme["agentTools"].as_array().unwrap().len(), 1);
    assert_eq!(
        acme["agentTools"][0],
        json!({"name": "acme_report", "description": "Runs an acme report", "mutates": false,
               "execution": "server", "requiredCapabilities": ["acme.report"]})
    );
    let res = app.get("/api/capabilities").cookie(&ada).send().await;
    let catalog = res.body["data"].as_array().unwrap();
    assert_eq!(catalog.len(), 16, "{}", res.body);
    assert_eq!(catalog[0]["name"], "document.read");
    assert_eq!(catalog[0]["group"], "documents");
    assert_eq!(
        catalog[15],
        json!({"name": "acme.report", "title": "Run reports",
               "description": "Create reports of the acme plugin", "group": "acme", "plugin": "acme"})
    );
    app.stop().await;
}

async fn plugin_routes_are_in_the_openapi_document(url: String) {
    let app = app(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app.get("/api/openapi.json").cookie(&ada).send().await;
    let paths = &res.body["paths"];
    let ping = &paths["/api/acme/ping"]["get"];
    assert_eq!(ping["operationId"], "acme_ping", "{ping}");
    assert_eq!(ping["security"], json!([{}]));
    assert!(ping["responses"].get("401").is_none());
    let report = &paths["/api/acme/reports"]["post"];
    assert!(report.get("security").is_none(), "{report}");
    assert!(report["responses"].get("403").is_some());
    assert!(report["requestBody"].is_object());
    let one = &paths["/api/acme/reports/{id}"]["get"];
    assert_eq!(one["parameters"][0]["name"], "id");
    assert!(paths["/api/plugins"]["get"].is_object());
    assert!(paths["/api/capabilities"]["get"].is_object());
    app.stop().await;
}

async fn schemas_settings_and_job_handlers_of_a_plugin(url: String) {
    let acme = Acme::default();
    let app = app_with(&url, acme.clone()).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    // cms/schema: a type like the host's.
    let res = app
        .post(
            "/api/documents",
            json!({"type": "acmeReport", "data": {"title": "Q3"}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    // cms/settings and cms/job/handler: the handler runs with its organization's settings.
    let res = app
        .req(Method::PUT, "/api/plugin-settings/acme")
        .cookie(&ada)
        .json(json!({"values": {"region": "eu"}}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let worker = app.app.cms.worker();
    // The events so far (the owner's membership, the report's create) go to the webhooks
    // plugin's consumer first, so the next tick runs the sync alone.
    worker.tick().await.unwrap();
    worker
        .enqueue(Some(&org), "acme.sync", json!({}), None, None)
        .await
        .unwrap();
    let report = worker.tick().await.unwrap();
    assert_eq!(report.completed, 1, "{report:?}");
    assert_eq!(*acme.synced.lock().unwrap(), vec![json!({"region": "eu"})]);
    app.stop().await;
}

cms_store::both_engines!(
    schemas_settings_and_job_handlers_of_a_plugin,
    the_gate_runs_before_the_handler,
    plugin_capabilities_work_on_custom_roles_and_keys,
    a_wrapper_chains_to_or_replaces_the_built_in_route,
    plugins_and_capabilities_are_listed,
    plugin_routes_are_in_the_openapi_document,
);

/// A plugin whose `register` is a closure, for the refusal cases.
struct Declares(&'static str, fn(&mut PluginParts));

impl Plugin for Declares {
    fn id(&self) -> &str {
        self.0
    }
    fn register(&self, parts: &mut PluginParts) {
        (self.1)(parts)
    }
}

fn tool(name: &str, required: RequiredCapabilities) -> cms::plugin::AgentTool {
    cms::plugin::AgentTool {
        name: name.into(),
        description: "A tool".into(),
        mutates: true,
        required_capabilities: required,
        execution: ToolExecution::Workspace,
        input_schema: json!({"type": "object"}),
        handler: Arc::new(NoTool),
    }
}

async fn start_error(plugins: Vec<Declares>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut config = cms::Config {
        data_dir: dir.path().to_path_buf(),
        ..cms::Config::default()
    };
    config.auth.secret = Some("a test secret of at least thirty-two characters".into());
    let mut builder = cms::Builder::new(config);
    for plugin in plugins {
        builder = builder.plugin(plugin);
    }
    match builder.build().await {
        Ok(_) => panic!("the start should have been refused"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn bad_declarations_stop_the_start() {
    let cases: Vec<(Vec<Declares>, &str)> = vec![
        (
            vec![Declares("Bad Id", |_| {})],
            "plugin `Bad Id`: an id is lowercase",
        ),
        (
            vec![Declares("twice", |_| {}), Declares("twice", |_| {})],
            "plugin `twice`: is registered twice",
        ),
        (
            vec![Declares("acme", |p| {
                p.capability("other.thing", "", "", "");
            })],
            "capability `other.thing` must be named `acme.<action>`",
        ),
        (
            vec![Declares("acme", |p| {
                p.capability("document.read", "", "", "");
            })],
            "capability `document.read` must be named `acme.<action>`",
        ),
        (
            vec![Declares("acme", |p| {
                p.required(&["not a capability"]);
            })],
            "is not a capability",
        ),
        (
            vec![Declares("acme", |p| {
                let required = p.required(&["acme.undeclared"]);
                p.route(PluginRoute::new(
                    "r",
                    Method::GET,
                    "/acme",
                    required,
                    || async { "x" },
                ));
            })],
            "route `r` requires `acme.undeclared`, which no plugin declares",
        ),
        (
            vec![Declares("acme", |p| {
                p.route(PluginRoute::new(
                    "r",
                    Method::GET,
                    "/documents/{key}",
                    RequiredCapabilities::Public,
                    || async { "x" },
                ));
            })],
            "is a path the service serves",
        ),
        (
            vec![
                Declares("one", |p| {
                    p.route(PluginRoute::new(
                        "r",
                        Method::GET,
                        "/shared",
                        RequiredCapabilities::Public,
                        || async { "x" },
                    ));
                }),
                Declares("two", |p| {
                    p.route(PluginRoute::new(
                        "r",
                        Method::GET,
                        "/shared",
                        RequiredCapabilities::Public,
                        || async { "x" },
                    ));
                }),
            ],
            "plugin `two`: route `r` (GET /api/shared) is already declared by `one/r`",
        ),
        (
            vec![Declares("acme", |p| {
                p.route(PluginRoute::new(
                    "r",
                    Method::GET,
                    "/has space",
                    RequiredCapabilities::Public,
                    || async { "x" },
                ));
            })],
            "must be `/`-separated names",
        ),
        (
            vec![Declares("acme", |p| {
                p.wrap(RouteWrap::new(
                    Method::PATCH,
                    "/api/schemas/{name}",
                    |r: Request, n: Next| async move { n.run(r).await },
                ));
            })],
            "wraps PATCH /api/schemas/{name}, which is not a built-in route",
        ),
        (
            vec![Declares("acme", |p| {
                p.document_action(
                    "a",
                    "A",
                    Component::new("acme-a", "/api/acme/a.js"),
                    Some(vec!["nosuchtype".into()]),
                );
            })],
            "applies to `nosuchtype`, which is not a registered type",
        ),
        (
            vec![Declares("acme", |p| {
                p.field_component("x", Component::new("nodash", "/api/x.js"));
            })],
            "is not a custom element name",
        ),
        (
            vec![Declares("acme", |p| {
                p.admin_tool(
                    "t",
                    "T",
                    Component::new("acme-t", "https://cdn.example/t.js"),
                    Placement::Tab,
                    None,
                );
            })],
            "must be a path on this instance",
        ),
        (
            vec![Declares("acme", |p| {
                p.schema_json(json!({"type": "document", "name": "post", "fields": []}));
            })],
            "post",
        ),
        (
            vec![Declares("acme", |p| {
                p.agent_tool(tool("has space", RequiredCapabilities::Members));
            })],
            "agent tool `has space`: a name is 1 to 64 letters",
        ),
        (
            vec![Declares("acme", |p| {
                p.agent_tool(tool("acme_tool", RequiredCapabilities::Public));
            })],
            "agent tool `acme_tool`: `public` is for routes",
        ),
        (
            vec![
                Declares("one", |p| {
                    p.agent_tool(tool("shared_tool", RequiredCapabilities::Members));
                }),
                Declares("two", |p| {
                    p.agent_tool(tool("shared_tool", RequiredCapabilities::Members));
                }),
            ],
            "plugin `two`: agent tool `shared_tool` is already declared by another plugin",
        ),
    ];
    let duplicate = vec![Declares("acme", |p| {
        for _ in 0..2 {
            p.route(PluginRoute::new(
                "same",
                Method::GET,
                "/acme/x",
                RequiredCapabilities::Public,
                || async { "x" },
            ));
        }
    })];
    assert!(
        start_error(duplicate)
            .await
            .contains("route id `same` is used twice")
    );
    for (plugins, expected) in cases {
        let error = start_error(plugins).await;
        assert!(error.contains(expected), "`{error}` lacks `{expected}`");
    }
}
