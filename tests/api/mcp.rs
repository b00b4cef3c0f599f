//! The MCP server (CONTRACT.md section 21), driven by real MCP clients (the official Rust SDK,
//! `rmcp`, over Streamable HTTP against a served instance and over stdio against `cms mcp`;
//! the official Python SDK once, an implementation the server does not share):
//! the handshake, tools filtered by the caller's rights, calls as the caller with hidden
//! fields stripped, resources, change sets undone through REST; and the door's refusals (no
//! credentials, unknown or idle session, a client that cannot take the answer).

use std::collections::HashMap;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ErrorCode, ProtocolVersion,
    ReadResourceRequestParams,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::people_support::member;
use crate::support::{Reply, Session, TestApp, config_for, serve};

const MCP: &str = "/api/mcp";
/// The value only an `admin` may read: it may never reach anyone else's MCP answers.
const INTERNAL: &str = "INTERNAL-ONLY";

/// The document types, as a schema file: a `cms mcp` process on the same database reads the
/// same one.
fn schemas() -> Value {
    json!([
        { "type": "document", "name": "post", "fields": [
            { "name": "title", "type": "string", "required": true },
            { "name": "internal", "type": "string",
              "access": { "read": ["admin"], "update": ["admin"] } }
        ] }
    ])
}

/// An instance with an owner, an editor and a viewer of one organization, and a post whose
/// admin-only field holds [`INTERNAL`].
struct Org {
    app: TestApp,
    owner: Session,
    editor_key: String,
    viewer_key: String,
    post: String,
}

async fn org(url: &str, configure: impl FnOnce(&mut cms::Config)) -> Org {
    let mut config = config_for(url);
    std::fs::create_dir_all(&config.data_dir).unwrap();
    let schema_file = config.data_dir.join("schemas.json");
    std::fs::write(&schema_file, schemas().to_string()).unwrap();
    config.schemas.paths = vec![schema_file.to_string_lossy().into_owned()];
    configure(&mut config);
    let app = TestApp::custom(config, |b| b.plugin(crate::agent::Acme)).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    // Editors and viewers here may make their own keys (the built-in roles do not).
    let roles = app.get("/api/roles").cookie(&owner).send().await;
    for role in ["editor", "viewer"] {
        let mut capabilities = roles.body["data"]
            .as_array()
            .expect("the roles")
            .iter()
            .find(|r| r["name"] == role)
            .expect("a built-in role")["capabilities"]
            .clone();
        capabilities
            .as_array_mut()
            .expect("the role's capabilities")
            .push(json!("apiKey.manage"));
        let res = app
            .req(Method::PATCH, &format!("/api/roles/{role}"))
            .json(json!({"capabilities": capabilities}))
            .cookie(&owner)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    }
    let editor = member(&app, &owner, "Eve", "eve@example.com", "editor").await;
    let viewer = member(&app, &owner, "Vic", "vic@example.com", "viewer").await;
    let editor_key = app
        .create_key(
            &editor,
            json!({"name": "mcp", "permissions": ["read", "write"]}),
        )
        .await;
    let viewer_key = app
        .create_key(&viewer, json!({"name": "mcp", "permissions": ["read"]}))
        .await;

    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello", "internal": INTERNAL}}),
        )
        .cookie(&owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let post = res.body["data"]["id"].as_str().unwrap().to_string();
    Org {
        app,
        owner,
        editor_key,
        viewer_key,
        post,
    }
}

type Client = RunningService<RoleClient, ClientConfig>;

/// A client of `origin`'s MCP server, sending `key` as `Authorization: Bearer` (or as
/// `x-api-key` with `as_header`), asking for `version` in `initialize`.
async fn connect(origin: &str, key: &str, as_header: bool, version: ProtocolVersion) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("{origin}{MCP}"));
    config = if as_header {
        config.custom_headers(HashMap::from([(
            "x-api-key".parse().unwrap(),
            key.parse().unwrap(),
        )]))
    } else {
        config.auth_header(key)
    };
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let mut info = ClientConfig::default();
    info.protocol_version = version;
    info.serve(transport).await.expect("the client initializes")
}

async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// A successful result's JSON, checked to be the same as text and as `structuredContent`.
fn structured(result: &CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let value = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let text = result.content[0].as_text().expect("text content");
    assert_eq!(serde_json::from_str::<Value>(&text.text).unwrap(), value);
    value
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

async fn tools_act_with_the_callers_rights(url: String) {
    let org = org(&url, |_| {}).await;
    let served = serve(&org.app).await;
    let editor = connect(
        &served.origin,
        &org.editor_key,
        false,
        ClientConfig::default().protocol_version,
    )
    .await;
    let viewer = connect(
        &served.origin,
        &org.viewer_key,
        true,
        ProtocolVersion::V_2025_06_18,
    )
    .await;
    // The newest revision with a handshake, or the one the client asked for when served.
    let info = editor.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    assert_eq!(info.server_info.as_ref().unwrap().name, "cms");
    assert!(info.capabilities.tools.is_some() && info.capabilities.resources.is_some());
    assert_eq!(
        viewer.peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2025_06_18
    );

    // The catalog as each may use it: the editor writes and publishes, the viewer reads; the
    // editor's workspace pair is never offered outside the editor.
    let editor_tools = editor.list_all_tools().await.unwrap();
    let viewer_tools = viewer.list_all_tools().await.unwrap();
    let (editor_names, viewer_names) = (names(&editor_tools), names(&viewer_tools));
    for tool in [
        "get_document",
        "query_documents",
        "create_document",
        "update_document",
        "publish_document",
    ] {
        assert!(editor_names.contains(&tool.to_string()), "{editor_names:?}");
    }
    for tool in ["content_patch_fields", "content_save_draft"] {
        assert!(
            !editor_names.contains(&tool.to_string()),
            "{editor_names:?}"
        );
    }
    assert!(viewer_names.contains(&"get_document".to_string()));
    for tool in ["create_document", "update_document", "publish_document"] {
        assert!(
            !viewer_names.contains(&tool.to_string()),
            "{viewer_names:?}"
        );
    }
    // The assistant's argument schemas, not a copy: `create_document` requires what it does.
    let create = editor_tools
        .iter()
        .find(|t| t.name == "create_document")
        .unwrap();
    assert_eq!(
        create.input_schema["required"],
        json!(["collection", "data"])
    );
    assert_eq!(
        create.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(false)
    );

    // Plugin tools are in the catalog for those who may use them (the owner, signed in, with
    // the session token as the bearer); one named like a core tool is the core tool.
    assert!(!editor_names.contains(&"acme_report".to_string()));
    let owner = connect(
        &served.origin,
        &org.owner.token,
        false,
        ClientConfig::default().protocol_version,
    )
    .await;
    let owner_names = names(&owner.list_all_tools().await.unwrap());
    assert!(
        owner_names.contains(&"acme_report".to_string()),
        "{owner_names:?}"
    );
    assert_eq!(
        owner_names.iter().filter(|n| *n == "get_schema").count(),
        1,
        "{owner_names:?}"
    );
    let report = call(&owner, "acme_report", json!({})).await;
    assert_eq!(structured(&report), json!({"posts": 1}));
    owner.cancel().await.unwrap();

    // Reads as the caller: the admin-only field is never there.
    let got = call(
        &editor,
        "get_document",
        json!({"collection": "post", "id": org.post}),
    )
    .await;
    let document = structured(&got);
    assert_eq!(document["draftData"]["title"], "Hello");
    assert!(!document.to_string().contains(INTERNAL), "{document}");
    let found = call(&viewer, "query_documents", json!({"collection": "post"})).await;
    let found = structured(&found);
    assert_eq!(found["pagination"]["total"], 1, "{found}");
    assert!(!found.to_string().contains(INTERNAL), "{found}");
    let by_hidden = call(
        &viewer,
        "query_documents",
        json!({"collection": "post", "where": {"internal": {"equals": INTERNAL}}}),
    )
    .await;
    assert_eq!(structured(&by_hidden)["pagination"]["total"], 0);

    // Writes as the editor, each request its own change set.
    let created = call(
        &editor,
        "create_document",
        json!({"collection": "post", "data": {"title": "From MCP"}}),
    )
    .await;
    let created_id = structured(&created)["document"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let published = call(
        &editor,
        "publish_document",
        json!({"collection": "post", "id": created_id}),
    )
    .await;
    assert_eq!(structured(&published)["publishedData"]["title"], "From MCP");
    let updated = call(
        &editor,
        "update_document",
        json!({"collection": "post", "id": org.post, "data": {"title": "Changed by MCP"}}),
    )
    .await;
    structured(&updated);
    let change_set = |result: &CallToolResult| {
        result.meta.as_ref().expect("_meta")[cms_mcp::CHANGE_SET_META]
            .as_str()
            .expect("a change set id")
            .to_string()
    };
    let update_set = change_set(&updated);
    assert_ne!(change_set(&created), change_set(&published));

    // A failure is a result the client reads, not a protocol error.
    let missing = call(
        &editor,
        "get_document",
        json!({"collection": "post", "id": "no-such-document"}),
    )
    .await;
    assert_eq!(missing.is_error, Some(true));
    let text = &missing.content[0].as_text().unwrap().text;
    assert!(text.contains("not found"), "{text}");
    let malformed = call(
        &editor,
        "get_document",
        json!({"collection": "post", "id": 7}),
    )
    .await;
    assert_eq!(malformed.is_error, Some(true), "{malformed:?}");

    // A tool the viewer is not offered is refused as absent: -32602, and nothing is written.
    let Value::Object(arguments) = json!({"collection": "post", "data": {"title": "Nope"}}) else {
        unreachable!()
    };
    let refused = viewer
        .call_tool(CallToolRequestParams::new("create_document").with_arguments(arguments))
        .await;
    match refused {
        Err(ServiceError::McpError(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
        other => panic!("a viewer's create_document: {other:?}"),
    }

    // Resources: the schemas the caller may read, and documents by id as get_document has them.
    let resources = viewer.list_all_resources().await.unwrap();
    assert!(
        resources.iter().any(|r| r.uri == "cms://schemas/post"),
        "{resources:?}"
    );
    let schema = viewer
        .read_resource(ReadResourceRequestParams::new("cms://schemas/post"))
        .await
        .unwrap();
    let schema_json = resource_json(&schema);
    assert_eq!(schema_json["name"], "post");
    let read = viewer
        .read_resource(ReadResourceRequestParams::new(format!(
            "cms://documents/{}",
            org.post
        )))
        .await
        .unwrap();
    let read = resource_json(&read);
    assert_eq!(read["id"], org.post.as_str());
    assert!(!read.to_string().contains(INTERNAL), "{read}");
    match viewer
        .read_resource(ReadResourceRequestParams::new(
            "cms://documents/no-such-document",
        ))
        .await
    {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND)
        }
        other => panic!("a missing document: {other:?}"),
    }

    // The change sets are the assistant's, marked as coming through MCP, and undo works
    // through REST: the update's undo brings the title back.
    let sets = org
        .app
        .get("/api/agent/change-sets")
        .cookie(&org.owner)
        .send()
        .await;
    assert_eq!(sets.status, StatusCode::OK, "{}", sets.body);
    let listed = sets.body["data"].as_array().unwrap();
    assert_eq!(listed.len(), 3, "{}", sets.body);
    assert!(listed.iter().all(|s| s["source"] == "mcp"), "{}", sets.body);
    let undo = org
        .app
        .post(
            &format!("/api/agent/change-sets/{update_set}/undo"),
            json!({}),
        )
        .cookie(&org.owner)
        .send()
        .await;
    assert_eq!(undo.status, StatusCode::OK, "{}", undo.body);
    assert_eq!(undo.body["data"]["restored"], json!([org.post]));
    let stored = org
        .app
        .get(&format!("/api/documents/{}", org.post))
        .cookie(&org.owner)
        .send()
        .await;
    assert_eq!(stored.body["data"]["draftData"]["title"], "Hello");
    assert_eq!(stored.body["data"]["draftData"]["internal"], INTERNAL);

    editor.cancel().await.unwrap();
    viewer.cancel().await.unwrap();
    org.app.stop().await;
}

fn resource_json(result: &rmcp::model::ReadResourceResult) -> Value {
    match &result.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
            serde_json::from_str(text).unwrap()
        }
        other => panic!("a text resource: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The protocol by hand, for the door's refusals and the security table's rows
// ---------------------------------------------------------------------------------------------

/// An MCP session spoken by hand through the app's router, with a credential sent as
/// `Authorization: Bearer` (an API key or a session token).
pub(crate) struct Raw<'a> {
    app: &'a TestApp,
    key: String,
    pub id: String,
}

const ACCEPT: &str = "application/json, text/event-stream";

impl<'a> Raw<'a> {
    /// `initialize` with `key` (an API key or a session token), then
    /// `notifications/initialized`.
    pub(crate) async fn open(app: &'a TestApp, key: &str) -> Raw<'a> {
        let res = post(app, Some(key), None, initialize()).await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.text());
        let id = res
            .header("mcp-session-id")
            .expect("a session id")
            .to_string();
        let raw = Raw {
            app,
            key: key.to_string(),
            id,
        };
        let res = post(
            app,
            Some(key),
            Some(&raw.id),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        assert_eq!(res.status, StatusCode::ACCEPTED, "{}", res.text());
        raw
    }

    /// A request's JSON-RPC answer (`result` or `error`).
    pub(crate) async fn request(&self, method: &str, params: Value) -> Value {
        let res = post(
            self.app,
            Some(&self.key),
            Some(&self.id),
            json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}),
        )
        .await;
        assert_eq!(res.status, StatusCode::OK, "{method}: {}", res.text());
        message(&res)
    }

    /// A `tools/call`'s answer.
    pub(crate) async fn call(&self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }})
}

pub(crate) async fn post(
    app: &TestApp,
    key: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> Reply {
    let mut call = app
        .req(Method::POST, MCP)
        .header("accept", ACCEPT)
        .json(body);
    if let Some(key) = key {
        call = call.bearer(key);
    }
    if let Some(session) = session {
        call = call.header("mcp-session-id", session);
    }
    call.send().await
}

/// The JSON-RPC message of an answer: the body itself, or the event of a stream that holds one.
pub(crate) fn message(res: &Reply) -> Value {
    if !res.body.is_null() {
        return res.body.clone();
    }
    res.text()
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|m| m.get("jsonrpc").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {}", res.text()))
}

async fn the_door_refuses_what_it_cannot_serve(url: String) {
    let org = org(&url, |config| config.mcp.session_idle_seconds = 2).await;
    let app = &org.app;

    // No credentials: 401 with the challenge a client looks for.
    let res = post(app, None, None, initialize()).await;
    res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    assert_eq!(res.header("www-authenticate"), Some("Bearer"));
    let res = post(
        app,
        Some("cms_not-a-real-key-0000000000000000"),
        None,
        initialize(),
    )
    .await;
    res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");

    // A session id this instance never issued (a restart, another instance): 404 in the
    // envelope, telling the client to initialize again.
    let res = post(
        app,
        Some(&org.editor_key),
        Some("no-such-session"),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    )
    .await;
    let message = res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    assert!(message.contains("initialize"), "{message}");

    // A client that cannot take an event stream, a body that is no JSON-RPC message.
    let res = app
        .req(Method::POST, MCP)
        .header("accept", "application/json")
        .json(initialize())
        .key(&org.editor_key)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_ACCEPTABLE, "Not Acceptable");
    let res = post(app, Some(&org.editor_key), None, json!({"hello": "world"})).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    // A session works with the credentials of each request: the viewer's key on the editor's
    // session gets the viewer's tools.
    let session = Raw::open(app, &org.editor_key).await;
    let listed = session.request("tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "create_document"));
    let borrowed = Raw {
        app,
        key: org.viewer_key.clone(),
        id: session.id.clone(),
    };
    let listed = borrowed.request("tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert!(!tools.iter().any(|t| t["name"] == "create_document"));

    // DELETE ends a session; the id is then unknown.
    let res = app
        .req(Method::DELETE, MCP)
        .header("mcp-session-id", &session.id)
        .key(&org.editor_key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::NO_CONTENT, "{}", res.text());
    let res = post(
        app,
        Some(&org.editor_key),
        Some(&session.id),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    )
    .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    // A session left idle past `mcp.sessionIdleSeconds` is closed.
    let idle = Raw::open(app, &org.editor_key).await;
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    let res = post(
        app,
        Some(&org.editor_key),
        Some(&idle.id),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
    )
    .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    org.app.stop().await;
}

/// `mcp.maxSessions` bounds the memory sessions hold: past it a new session waits, and one
/// ending makes room.
async fn past_the_cap_a_new_session_is_429(url: String) {
    let org = org(&url, |config| config.mcp.max_sessions = 1).await;
    let app = &org.app;
    let first = Raw::open(app, &org.editor_key).await;
    let res = post(app, Some(&org.viewer_key), None, initialize()).await;
    let message = res.assert_handler_error(StatusCode::TOO_MANY_REQUESTS, "Too Many Requests");
    assert!(message.contains("mcp.maxSessions"), "{message}");
    assert_eq!(res.header("retry-after"), Some("60"));
    // Requests on an open session are not new sessions.
    let listed = first.request("tools/list", json!({})).await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let res = app
        .req(Method::DELETE, MCP)
        .header("mcp-session-id", &first.id)
        .key(&org.editor_key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::NO_CONTENT, "{}", res.text());
    Raw::open(app, &org.viewer_key).await;
    org.app.stop().await;
}

async fn the_door_is_off_when_turned_off(url: String) {
    let org = org(&url, |config| config.mcp.enabled = false).await;
    let res = post(&org.app, Some(&org.editor_key), None, initialize()).await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    org.app.stop().await;
}

/// `cms mcp`: the same server over stdio, acting with `CMS_MCP_API_KEY`.
async fn stdio_serves_one_client_with_the_key(url: String) {
    let org = org(&url, |_| {}).await;
    let command = |key: &str| {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_cms")).configure(|c| {
            c.arg("mcp")
                .env_remove("CMS_CONFIG")
                .env("CMS_DATABASE_URL", &url)
                .env("CMS_DATA_DIR", org.app.data_dir())
                .env("CMS_SCHEMAS_PATHS", org.app.data_dir().join("schemas.json"))
                .env("CMS_AUTH_SECRET", crate::support::AUTH_SECRET)
                .env("CMS_MCP_API_KEY", key)
                .env("NO_COLOR", "1");
        })
    };
    let transport = TokioChildProcess::new(command(&org.viewer_key)).unwrap();
    let client = ClientConfig::default().serve(transport).await.unwrap();
    let tools = names(&client.list_all_tools().await.unwrap());
    assert!(tools.contains(&"get_document".to_string()), "{tools:?}");
    assert!(!tools.contains(&"create_document".to_string()), "{tools:?}");
    let got = call(
        &client,
        "get_document",
        json!({"collection": "post", "id": org.post}),
    )
    .await;
    let document = structured(&got);
    assert_eq!(document["draftData"]["title"], "Hello");
    assert!(!document.to_string().contains(INTERNAL));
    client.cancel().await.unwrap();

    // A key that proves nothing stops the command at once, saying why.
    let out = command("cms_not-a-real-key-0000000000000000")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("CMS_MCP_API_KEY"), "{stderr}");
    org.app.stop().await;
}

/// The official Python SDK (`mcp` from PyPI), an implementation independent of the one the
/// server is built on, holds a whole session: handshake, tools, a call, a resource, and the
/// `DELETE` that ends it (which it expects answered 200 or 204).
async fn the_python_sdk_holds_a_session(url: String) {
    let org = org(&url, |_| {}).await;
    let served = serve(&org.app).await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/api/mcp_client.py");
    let arguments = [
        script.to_string(),
        format!("{}{MCP}", served.origin),
        org.viewer_key.clone(),
        org.post.clone(),
    ];
    let out = tokio::process::Command::new("python3")
        .args(&arguments)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("the Python client finishes")
        .expect("python3 runs (.ci/run installs the `mcp` package)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{stderr}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(seen["protocolVersion"], "2025-11-25", "{seen}");
    assert_eq!(seen["server"], "cms");
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tools.contains(&"get_document"), "{tools:?}");
    assert!(!tools.contains(&"create_document"), "{tools:?}");
    assert_eq!(seen["isError"], false, "{seen}");
    assert_eq!(seen["structured"]["draftData"]["title"], "Hello");
    assert_eq!(seen["resource"]["id"], org.post.as_str());
    assert!(!seen.to_string().contains(INTERNAL), "{seen}");
    assert_eq!(seen["warnings"], json!([]), "the session ended cleanly");
    org.app.stop().await;
}

/// A session's `GET` stream, left open by its client, neither holds a shutdown nor outlives it.
async fn a_draining_server_ends_its_mcp_sessions_and_stops(url: String) {
    let org = org(&url, |_| {}).await;
    let port = crate::support::free_port();
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_cms"))
        .args(["serve", "--port", &port.to_string()])
        .current_dir(org.app.data_dir())
        .env_remove("CMS_CONFIG")
        .env("CMS_DATABASE_URL", &url)
        .env("CMS_DATA_DIR", org.app.data_dir())
        .env("CMS_AUTH_SECRET", crate::support::AUTH_SECRET)
        .env("CMS_SCHEMAS_PATHS", org.app.data_dir().join("schemas.json"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let base = format!("http://127.0.0.1:{port}");
    crate::support::wait_healthy(&base).await;
    let client = reqwest::Client::new();
    let post = |session: Option<&str>, body: Value| {
        let mut request = client
            .post(format!("{base}{MCP}"))
            .header("accept", ACCEPT)
            .bearer_auth(&org.editor_key)
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialized = post(None, initialize()).await.unwrap();
    assert_eq!(initialized.status(), 200);
    let session = initialized.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let notified = post(
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .unwrap();
    assert_eq!(notified.status(), 202);
    let mut stream = client
        .get(format!("{base}{MCP}"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .bearer_auth(&org.editor_key)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let status = crate::event_stream::stop(&mut server, "TERM").await;
    assert!(status.success(), "{status:?}");
    // The stream was ended by the server, not left hanging.
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(_)) = stream.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the session's stream outlived the server");
    org.app.stop().await;
}

cms_store::both_engines!(
    a_draining_server_ends_its_mcp_sessions_and_stops,
    the_python_sdk_holds_a_session,
    past_the_cap_a_new_session_is_429,
    tools_act_with_the_callers_rights,
    the_door_refuses_what_it_cannot_serve,
    the_door_is_off_when_turned_off,
    stdio_serves_one_client_with_the_key,
);
