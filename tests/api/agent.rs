//! The AI assistant (SPEC.md "AI assistant", CONTRACT.md section 8), driven against a scripted
//! OpenAI-compatible server on a loopback port: streaming, tool round trips as the caller,
//! capability filtering, the workspace pause and resume, change sets and undo, the third-failure
//! block, the round limit, backends that break off, stall or fail, and the 404/501 cases.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use cms::core::RequiredCapabilities;
use cms::plugin::{Plugin, PluginParts, ToolExecution};
use serde_json::{Value, json};

use crate::people_support::{member, sign_in};
use crate::support::{Session, TestApp, config_for};

/// What the scripted model answers to one completion request.
#[derive(Clone)]
pub(crate) enum Answer {
    /// Text in pieces, then usage (input, output tokens).
    Text(Vec<&'static str>, (u64, u64)),
    /// Tool calls: (id, name, arguments), each streamed in two pieces.
    Calls(Vec<(&'static str, &'static str, Value)>),
    /// Some text, then the connection breaks off.
    BreakOff(&'static str),
    /// Nothing for this long.
    Stall(Duration),
    /// An HTTP error.
    Status(u16),
}

#[derive(Default)]
struct Script {
    answers: VecDeque<Answer>,
    /// With no scripted answer left: play the puppet (see [`Model::puppet`]) instead of
    /// answering a fixed text.
    puppet: bool,
    /// Every request body and its `authorization` header, in order.
    requests: Vec<(Value, Option<String>)>,
}

/// An OpenAI-compatible chat-completions server on a loopback port, answering as scripted.
pub(crate) struct Model {
    pub base_url: String,
    script: Arc<Mutex<Script>>,
    server: tokio::task::JoinHandle<()>,
}

impl Model {
    pub(crate) async fn start(answers: Vec<Answer>) -> Model {
        Model::serve(Script {
            answers: answers.into(),
            ..Script::default()
        })
        .await
    }

    /// A model with no script of its own, safe to share between concurrent tests: when the
    /// last message is the user's, it makes the tool calls that message spells as JSON
    /// (`[[id, name, arguments], ...]`); after tool results, it answers "done".
    pub(crate) async fn puppet() -> Model {
        Model::serve(Script {
            puppet: true,
            ..Script::default()
        })
        .await
    }

    async fn serve(script: Script) -> Model {
        let script = Arc::new(Mutex::new(script));
        let router = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(complete))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Model {
            base_url,
            script,
            server,
        }
    }

    pub(crate) fn push(&self, answers: Vec<Answer>) {
        self.script.lock().unwrap().answers.extend(answers);
    }

    pub(crate) fn requests(&self) -> Vec<Value> {
        let script = self.script.lock().unwrap();
        script
            .requests
            .iter()
            .map(|(body, _)| body.clone())
            .collect()
    }

    fn last_request(&self) -> Value {
        self.requests().pop().expect("the model was asked")
    }

    /// The tool names offered in request `n`.
    fn offered(&self, n: usize) -> Vec<String> {
        self.requests()[n]["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn chunk(value: Value) -> String {
    format!("data: {value}\n\n")
}

async fn complete(
    State(script): State<Arc<Mutex<Script>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let answer = {
        let mut script = script.lock().unwrap();
        let request = serde_json::from_slice(&body).expect("a JSON request");
        let auth = headers
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_string());
        script.requests.push((request, auth));
        let next = script.answers.pop_front();
        match next {
            Some(answer) => answer,
            None if script.puppet => puppet_answer(&script.requests.last().unwrap().0),
            None => Answer::Text(vec!["(no more script)"], (0, 0)),
        }
    };
    let sse = |parts: Vec<String>| {
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from(parts.concat()))
            .unwrap()
    };
    match answer {
        Answer::Text(pieces, (input, output)) => {
            let mut parts: Vec<String> = pieces
                .iter()
                .map(|p| chunk(json!({"choices": [{"index": 0, "delta": {"content": p}}]})))
                .collect();
            parts.push(chunk(
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            ));
            parts.push(chunk(
                json!({"choices": [], "usage": {"prompt_tokens": input, "completion_tokens": output}}),
            ));
            parts.push("data: [DONE]\n\n".into());
            sse(parts)
        }
        Answer::Calls(calls) => {
            let mut parts = Vec::new();
            for (index, (id, name, arguments)) in calls.iter().enumerate() {
                let text = arguments.to_string();
                let (first, rest) = text.split_at(text.len() / 2);
                parts.push(chunk(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": first}}
                ]}}]})));
                parts.push(chunk(
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                        {"index": index, "function": {"arguments": rest}}
                    ]}}]}),
                ));
            }
            parts.push(chunk(
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ));
            parts.push(chunk(
                json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2}}),
            ));
            parts.push("data: [DONE]\n\n".into());
            sse(parts)
        }
        Answer::BreakOff(text) => {
            let first = chunk(json!({"choices": [{"index": 0, "delta": {"content": text}}]}));
            // The first piece goes out; a moment later the connection breaks.
            let stream = futures_util::stream::unfold(Some(first), |piece| async move {
                match piece {
                    Some(first) => Some((Ok(Bytes::from(first)), None)),
                    None => {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        Some((
                            Err(std::io::Error::other("the model server went away")),
                            None,
                        ))
                    }
                }
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        Answer::Stall(delay) => {
            tokio::time::sleep(delay).await;
            sse(vec!["data: [DONE]\n\n".into()])
        }
        Answer::Status(code) => (
            StatusCode::from_u16(code).unwrap(),
            "the model is overloaded",
        )
            .into_response(),
    }
}

/// The puppet's answer to a request: the calls its last user message spells, or "done".
fn puppet_answer(request: &Value) -> Answer {
    let last = request["messages"].as_array().and_then(|m| m.last());
    match last {
        Some(m) if m["role"] == "user" => {
            let spelled: Vec<(String, String, Value)> =
                serde_json::from_str(m["content"].as_str().unwrap_or("[]"))
                    .expect("a puppet's instruction: [[id, name, arguments], ...]");
            // The script's types are static: leak the few short strings of a test.
            Answer::Calls(
                spelled
                    .into_iter()
                    .map(|(id, name, args)| {
                        let id: &'static str = Box::leak(id.into_boxed_str());
                        let name: &'static str = Box::leak(name.into_boxed_str());
                        (id, name, args)
                    })
                    .collect(),
            )
        }
        _ => Answer::Text(vec!["done"], (1, 1)),
    }
}

/// One server-sent event of a turn.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub kind: String,
    pub data: Value,
}

pub(crate) fn events(bytes: &[u8]) -> Vec<Event> {
    let text = std::str::from_utf8(bytes).expect("an SSE body is text");
    text.split("\n\n")
        .filter_map(|block| {
            let mut kind = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    kind = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            Some(Event {
                kind: kind?,
                data: serde_json::from_str(&data).expect("event data is JSON"),
            })
        })
        .collect()
}

fn kinds(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

pub(crate) fn done(events: &[Event]) -> &Value {
    let last = events.last().expect("events");
    assert_eq!(last.kind, "done", "the last event is done: {events:?}");
    &last.data
}

pub(crate) fn of_kind<'a>(events: &'a [Event], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| &e.data)
        .collect()
}

/// Asserts which tools a request offered.
fn assert_offered(offered: &[String], present: &[&str], absent: &[&str]) {
    for name in present {
        assert!(offered.iter().any(|t| t == name), "{name} in {offered:?}");
    }
    for name in absent {
        assert!(!offered.iter().any(|t| t == name), "{name} in {offered:?}");
    }
}

pub(crate) fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// A plugin with one tool for holders of `acme.report`, and one named like a core tool.
/// A plugin with an assistant tool of its own (`acme_report`, needing `acme.report`) and one
/// named like a core tool (never offered).
pub(crate) struct Acme;

impl Plugin for Acme {
    fn id(&self) -> &str {
        "acme"
    }

    fn register(&self, parts: &mut PluginParts) {
        parts.capability("acme.report", "Run reports", "Runs acme reports", "acme");
        parts.agent_tool(cms::plugin::AgentTool {
            name: "acme_report".into(),
            description: "Counts the posts of the organization".into(),
            mutates: false,
            required_capabilities: RequiredCapabilities::all(["acme.report".parse().unwrap()]),
            execution: ToolExecution::Server,
            input_schema: json!({"type": "object", "properties": {}}),
            handler: Arc::new(Report),
        });
        parts.agent_tool(cms::plugin::AgentTool {
            name: "get_schema".into(),
            description: "A plugin's get_schema, shadowed by the core tool".into(),
            mutates: false,
            required_capabilities: RequiredCapabilities::Members,
            execution: ToolExecution::Server,
            input_schema: json!({"type": "object"}),
            handler: Arc::new(Report),
        });
    }
}

struct Report;

#[async_trait::async_trait]
impl cms::plugin::ToolHandler for Report {
    async fn execute(
        &self,
        cms: &cms::service::Cms,
        actor: &cms::service::Actor,
        _: Value,
    ) -> Result<Value, cms::service::jobs::HandlerError> {
        // Through the service as the caller, like any door.
        let page = cms
            .documents()
            .list(
                actor,
                cms::service::documents::ListRequest {
                    doc_type: "post".into(),
                    where_: Value::Null,
                    sort: vec![],
                    published: None,
                    page: Some(1),
                    page_size: Some(1),
                    read: Default::default(),
                    search: None,
                },
            )
            .await?;
        Ok(json!({ "posts": page.pagination.total }))
    }
}

struct Harness {
    app: TestApp,
    model: Model,
    owner: Session,
}

async fn harness(url: &str, answers: Vec<Answer>) -> Harness {
    harness_with(url, answers, |_| {}).await
}

async fn harness_with(
    url: &str,
    answers: Vec<Answer>,
    configure: impl FnOnce(&mut cms::Config),
) -> Harness {
    let model = Model::start(answers).await;
    let mut config = config_for(url);
    config.agent.base_url = Some(model.base_url.clone());
    config.agent.model = Some("test-model".into());
    config.agent.api_key = Some("sk-test-key".into());
    configure(&mut config);
    let app = TestApp::custom(config, |b| b.plugin(Acme)).await;
    let owner = app.sign_up("Ada", "ada@example.com").await;
    Harness { app, model, owner }
}

impl Harness {
    async fn chat(&self, session: &Session, body: Value) -> Vec<Event> {
        let res = self
            .app
            .post("/api/agent/chat", body)
            .cookie(session)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(res.header("content-type"), Some("text/event-stream"));
        events(&res.bytes)
    }

    async fn create_post(&self, title: &str) -> String {
        let res = self
            .app
            .post(
                "/api/documents",
                json!({"type": "post", "data": {"title": title}}),
            )
            .cookie(&self.owner)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
        res.body["data"]["id"].as_str().unwrap().to_string()
    }

    async fn draft_title(&self, id: &str) -> Value {
        let res = self
            .app
            .get(&format!("/api/documents/{id}"))
            .cookie(&self.owner)
            .send()
            .await;
        res.body["data"]["draftData"]["title"].clone()
    }

    async fn change_sets(&self) -> Value {
        let res = self
            .app
            .get("/api/agent/change-sets")
            .cookie(&self.owner)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        res.body
    }
}

async fn text_streams_and_the_turn_ends_with_usage_and_done(url: String) {
    let h = harness(&url, vec![Answer::Text(vec!["Hel", "lo!"], (12, 3))]).await;
    let events = h.chat(&h.owner, json!({"messages": [user("Hi")]})).await;
    assert_eq!(kinds(&events), ["text", "text", "usage", "done"]);
    assert_eq!(events[0].data, json!({"delta": "Hel"}));
    assert_eq!(events[1].data, json!({"delta": "lo!"}));
    assert_eq!(
        events[2].data,
        json!({"inputTokens": 12, "outputTokens": 3})
    );
    let first = done(&events);
    assert_eq!(first["finishReason"], "stop");
    assert!(first.get("pendingToolCalls").is_none());
    assert_eq!(
        first["messages"],
        json!([user("Hi"), {"role": "assistant", "content": "Hello!"}]),
        "the running list the client resends: no system prompt in it"
    );

    // What the backend was asked: the model, streaming, our system prompt first, the key.
    let request = h.model.last_request();
    assert_eq!(request["model"], "test-model");
    assert_eq!(request["stream"], true);
    assert_eq!(request["messages"][0]["role"], "system");
    assert_eq!(request["messages"][1], user("Hi"));
    let auth = h.model.script.lock().unwrap().requests[0].1.clone();
    assert_eq!(auth.as_deref(), Some("Bearer sk-test-key"));

    // The client resends the list with its next message: stateless, the server keeps nothing.
    h.model.push(vec![Answer::Text(vec!["Again."], (20, 2))]);
    let mut messages = first["messages"].as_array().unwrap().clone();
    messages.push(user("And?"));
    let events = h.chat(&h.owner, json!({"messages": messages})).await;
    assert_eq!(done(&events)["messages"].as_array().unwrap().len(), 4);
    assert_eq!(
        h.model.last_request()["messages"].as_array().unwrap().len(),
        4,
        "the system prompt and the three messages sent"
    );
    h.app.stop().await;
}

async fn a_tool_round_trip_runs_as_the_caller_and_records_its_change(url: String) {
    let h = harness(&url, vec![]).await;
    let post = h.create_post("First").await;
    h.model.push(vec![
        Answer::Calls(vec![(
            "call-1",
            "get_document",
            json!({"collection": "post", "id": post}),
        )]),
        Answer::Calls(vec![(
            "call-2",
            "create_document",
            json!({"collection": "post", "data": {"title": "Second"}}),
        )]),
        Answer::Text(vec!["Created."], (5, 1)),
    ]);
    let events = h
        .chat(&h.owner, json!({"messages": [user("Copy my post")]}))
        .await;
    assert_eq!(
        kinds(&events),
        [
            "toolCall",
            "toolResult",
            "toolCall",
            "toolResult",
            "text",
            "usage",
            "done"
        ]
    );
    assert_eq!(
        events[0].data,
        json!({"id": "call-1", "name": "get_document", "arguments": {"collection": "post", "id": post}})
    );
    let read = &events[1].data;
    assert_eq!((&read["id"], &read["ok"]), (&json!("call-1"), &json!(true)));
    assert_eq!(read["result"]["draftData"]["title"], "First");
    assert_eq!(read["result"]["_meta"]["revision"], 1);
    let created = &events[3].data;
    assert_eq!(created["ok"], true, "{created}");
    let new_id = created["result"]["document"]["id"].as_str().unwrap();
    assert_eq!(h.draft_title(new_id).await, "Second");
    // Usage is summed over the three rounds.
    assert_eq!(
        of_kind(&events, "usage")[0],
        &json!({"inputTokens": 25, "outputTokens": 5})
    );

    // The model read the tool's result as a tool message.
    let second_round = &h.model.requests()[1]["messages"];
    let answer = second_round.as_array().unwrap().last().unwrap();
    assert_eq!(answer["role"], "tool");
    assert_eq!(answer["tool_call_id"], "call-1");
    let content: Value = serde_json::from_str(answer["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["ok"], true);
    assert_eq!(content["result"]["id"], post.as_str());

    // One change set for the turn, with the create (no version before).
    let sets = h.change_sets().await;
    assert_eq!(sets["pagination"]["total"], 1);
    let set = &sets["data"][0];
    assert_eq!(set["userId"], h.owner.user["id"]);
    assert!(set["undoneAt"].is_null());
    assert_eq!(
        set["operations"],
        json!([{
            "tool": "create_document", "collection": "post", "documentId": new_id,
            "success": true, "versionBefore": null, "versionAfter": 1
        }])
    );
    let one = h
        .app
        .get(&format!(
            "/api/agent/change-sets/{}",
            set["id"].as_str().unwrap()
        ))
        .cookie(&h.owner)
        .send()
        .await;
    assert_eq!(one.body["data"]["operations"], set["operations"]);
    h.app.stop().await;
}

async fn tools_are_offered_and_run_by_the_callers_capabilities(url: String) {
    let h = harness(&url, vec![]).await;
    let viewer = member(&h.app, &h.owner, "Vic", "vic@example.com", "viewer").await;

    // The viewer: read tools only; the plugin tool needs acme.report, which viewers lack.
    h.model.push(vec![
        Answer::Calls(vec![(
            "c1",
            "create_document",
            json!({"collection": "post", "data": {"title": "Sneaky"}}),
        )]),
        Answer::Text(vec!["ok"], (1, 1)),
    ]);
    let events = h
        .chat(&viewer, json!({"messages": [user("Write a post")]}))
        .await;
    let offered = h.model.offered(0);
    assert_offered(
        &offered,
        &[
            "describe_cms",
            "list_collections",
            "get_schema",
            "query_documents",
            "get_document",
            "validate_document",
            "get_singleton",
            "list_assets",
        ],
        &[
            "create_document",
            "update_document",
            "publish_document",
            "update_singleton",
            "upload_asset",
            "acme_report",
            "content_patch_fields",
        ],
    );
    // A call of a tool that was not offered is refused, and nothing is written.
    let refused = of_kind(&events, "toolResult")[0];
    assert_eq!(refused["ok"], false);
    assert!(
        refused["result"]["error"]
            .as_str()
            .unwrap()
            .contains("no tool")
    );
    let list = h
        .app
        .get("/api/documents?type=post")
        .cookie(&h.owner)
        .send()
        .await;
    assert_eq!(list.body["pagination"]["total"], 0);

    // The owner holds every capability, the plugin's included; the core get_schema wins over
    // the plugin's.
    h.create_post("One").await;
    h.model.push(vec![
        Answer::Calls(vec![
            ("c2", "acme_report", json!({})),
            ("c3", "get_schema", json!({"collection": "post"})),
        ]),
        Answer::Text(vec!["ok"], (1, 1)),
    ]);
    let events = h
        .chat(&h.owner, json!({"messages": [user("Report")]}))
        .await;
    let offered = h.model.offered(2);
    assert_offered(
        &offered,
        &[
            "create_document",
            "update_document",
            "publish_document",
            "upload_asset",
            "acme_report",
        ],
        &[],
    );
    assert_eq!(offered.iter().filter(|t| *t == "get_schema").count(), 1);
    let get_schema = h.model.requests()[2]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "get_schema")
        .cloned()
        .unwrap();
    assert!(
        !get_schema["function"]["description"]
            .as_str()
            .unwrap()
            .contains("plugin")
    );
    let results = of_kind(&events, "toolResult");
    assert_eq!(results[0]["result"], json!({"posts": 1}));
    assert_eq!(
        results[1]["result"]["name"], "post",
        "the core tool ran: {}",
        results[1]
    );

    // An API key with document.read only: the same filtering.
    let key = h
        .app
        .create_key(
            &h.owner,
            json!({"name": "reader", "capabilities": ["document.read"]}),
        )
        .await;
    h.model.push(vec![Answer::Text(vec!["ok"], (1, 1))]);
    let res = h
        .app
        .post("/api/agent/chat", json!({"messages": [user("hi")]}))
        .key(&key)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let offered = h.model.offered(4);
    assert_offered(
        &offered,
        &["get_document"],
        &["create_document", "list_assets"],
    );
    h.app.stop().await;
}

async fn the_workspace_pauses_for_the_editor_and_resumes(url: String) {
    let h = harness(&url, vec![]).await;
    let post = h.create_post("Draft title").await;
    let open = json!({"collection": "post", "id": post});
    h.model.push(vec![Answer::Calls(vec![
        (
            "p1",
            "content_patch_fields",
            json!({"fields": {"title": "Better title"}}),
        ),
        ("p2", "content_patch_fields", json!({"fields": {"nope": 1}})),
        (
            "p3",
            "content_patch_fields",
            json!({"fields": {"title": 7}}),
        ),
    ])]);
    let events = h
        .chat(
            &h.owner,
            json!({"messages": [user("Improve the title")], "document": open}),
        )
        .await;
    let offered = h.model.offered(0);
    assert_offered(
        &offered,
        &["content_patch_fields", "content_save_draft"],
        &["update_document"],
    );
    // The structurally invalid patches go back to the model as failures; the valid one waits.
    let results = of_kind(&events, "toolResult");
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["ok"] == false));
    assert_eq!(results[0]["id"], "p2");
    assert_eq!(results[1]["id"], "p3");
    assert!(results[1]["result"]["issues"].is_array(), "{}", results[1]);
    let paused = done(&events);
    assert_eq!(paused["finishReason"], "awaiting_workspace_tool");
    assert_eq!(
        paused["pendingToolCalls"],
        json!([{"id": "p1", "name": "content_patch_fields", "arguments": {"fields": {"title": "Better title"}}}])
    );
    assert_eq!(
        h.draft_title(&post).await,
        "Draft title",
        "a patch is not saved"
    );

    // The editor applies the patch to its form and answers; the turn goes on.
    h.model.push(vec![Answer::Calls(vec![(
        "s1",
        "content_save_draft",
        json!({"expectedRevision": 1}),
    )])]);
    let mut messages = paused["messages"].as_array().unwrap().clone();
    messages.push(json!({"role": "tool", "tool_call_id": "p1", "content": "{\"ok\":true}"}));
    let events = h
        .chat(&h.owner, json!({"messages": messages, "document": open}))
        .await;
    let patched = of_kind(&events, "toolResult")[0];
    assert_eq!(
        patched,
        &json!({"id": "p1", "name": "content_patch_fields", "ok": true, "result": {"persisted": false}})
    );
    let paused = done(&events);
    assert_eq!(paused["finishReason"], "awaiting_workspace_tool");
    assert_eq!(paused["pendingToolCalls"][0]["name"], "content_save_draft");

    // The editor saves its form (revision-guarded) and reports it.
    let saved = h
        .app
        .req(axum::http::Method::PUT, &format!("/api/documents/{post}"))
        .json(json!({"data": {"title": "Better title"}, "expectedRevision": 1}))
        .cookie(&h.owner)
        .send()
        .await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    h.model.push(vec![Answer::Text(vec!["Saved."], (1, 1))]);
    let mut messages = paused["messages"].as_array().unwrap().clone();
    messages.push(json!({"role": "tool", "tool_call_id": "s1", "content": "{\"ok\":true,\"result\":{\"revision\":2}}"}));
    let events = h
        .chat(&h.owner, json!({"messages": messages, "document": open}))
        .await;
    assert_eq!(done(&events)["finishReason"], "stop");
    assert_eq!(of_kind(&events, "toolResult")[0]["ok"], true);
    // The model read the patch's result with persisted: false.
    let request = h.model.last_request();
    let contents: Vec<String> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert!(
        contents.iter().any(|c| c.contains("\"persisted\":false")),
        "{contents:?}"
    );

    // The editor's save joined a change set, with the versions around it.
    let sets = h.change_sets().await;
    assert_eq!(
        sets["data"][0]["operations"],
        json!([{
            "tool": "content_save_draft", "collection": "post", "documentId": post,
            "success": true, "versionBefore": 1, "versionAfter": 2
        }])
    );

    // An open document of another type, or none the caller can read, is refused up front.
    let res = h
        .app
        .post(
            "/api/agent/chat",
            json!({"messages": [user("x")], "document": {"collection": "page", "id": post}}),
        )
        .cookie(&h.owner)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    h.app.stop().await;
}

async fn undo_restores_each_document_and_leaves_changed_ones_alone(url: String) {
    let h = harness(&url, vec![]).await;
    let a = h.create_post("A").await;
    let b = h.create_post("B").await;
    h.model.push(vec![
        Answer::Calls(vec![
            (
                "u1",
                "update_document",
                json!({"collection": "post", "id": a, "data": {"title": "A2", "views": 5}}),
            ),
            (
                "u2",
                "update_document",
                json!({"collection": "post", "id": b, "data": {"title": "B2"}}),
            ),
            (
                "u3",
                "create_document",
                json!({"collection": "post", "data": {"title": "C"}}),
            ),
        ]),
        Answer::Calls(vec![(
            "u4",
            "update_document",
            json!({"collection": "post", "id": a, "data": {"title": "A3"}}),
        )]),
        Answer::Text(vec!["Done."], (1, 1)),
    ]);
    let events = h
        .chat(&h.owner, json!({"messages": [user("Rename")]}))
        .await;
    assert!(
        of_kind(&events, "toolResult")
            .iter()
            .all(|r| r["ok"] == true),
        "{events:?}"
    );
    assert_eq!(h.draft_title(&a).await, "A3");
    let sets = h.change_sets().await;
    let set = &sets["data"][0];
    let id = set["id"].as_str().unwrap().to_string();
    let ops = set["operations"].as_array().unwrap();
    assert_eq!(ops.len(), 4);
    assert_eq!(
        (&ops[0]["versionBefore"], &ops[0]["versionAfter"]),
        (&json!(1), &json!(2))
    );
    assert_eq!(
        (&ops[3]["versionBefore"], &ops[3]["versionAfter"]),
        (&json!(2), &json!(3))
    );
    let c = ops[2]["documentId"].as_str().unwrap().to_string();

    // Someone edits B after the turn.
    let res = h
        .app
        .req(axum::http::Method::PUT, &format!("/api/documents/{b}"))
        .json(json!({"data": {"title": "B by hand"}}))
        .cookie(&h.owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);

    // A viewer may read change sets but not undo them.
    let viewer = member(&h.app, &h.owner, "Vic", "vic@example.com", "viewer").await;
    let res = h
        .app
        .post(&format!("/api/agent/change-sets/{id}/undo"), json!({}))
        .cookie(&viewer)
        .send()
        .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");

    let res = h
        .app
        .post(&format!("/api/agent/change-sets/{id}/undo"), json!({}))
        .cookie(&h.owner)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"],
        json!({"restored": [a], "skipped": [c], "conflicts": [b]})
    );
    // A is back to its version before the turn (both of the turn's edits undone), as a new
    // draft version; B keeps the human edit; C stays.
    let doc = h
        .app
        .get(&format!("/api/documents/{a}"))
        .cookie(&h.owner)
        .send()
        .await;
    assert_eq!(doc.body["data"]["draftData"], json!({"title": "A"}));
    assert_eq!(doc.body["data"]["_meta"]["revision"], 4);
    assert_eq!(h.draft_title(&b).await, "B by hand");
    assert_eq!(h.draft_title(&c).await, "C");
    let sets = h.change_sets().await;
    assert!(sets["data"][0]["undoneAt"].is_string());

    // Once only.
    let res = h
        .app
        .post(&format!("/api/agent/change-sets/{id}/undo"), json!({}))
        .cookie(&h.owner)
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");

    // An unknown change set is 404 like a missing document.
    let res = h
        .app
        .get("/api/agent/change-sets/no-such-id")
        .cookie(&h.owner)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    h.app.stop().await;
}

async fn a_tool_is_blocked_after_its_third_failure(url: String) {
    let missing = |id: &'static str| {
        Answer::Calls(vec![(
            id,
            "get_document",
            json!({"collection": "post", "id": "missing"}),
        )])
    };
    let h = harness(
        &url,
        vec![
            missing("f1"),
            missing("f2"),
            missing("f3"),
            missing("f4"),
            Answer::Text(vec!["I give up."], (1, 1)),
        ],
    )
    .await;
    let events = h
        .chat(&h.owner, json!({"messages": [user("Find it")]}))
        .await;
    let results = of_kind(&events, "toolResult");
    assert_eq!(results.len(), 4);
    for r in &results[..3] {
        assert_eq!(r["result"]["error"], "document not found", "{r}");
    }
    assert!(
        results[3]["result"]["error"]
            .as_str()
            .unwrap()
            .contains("blocked"),
        "{}",
        results[3]
    );
    // After the third failure the tool is no longer offered.
    assert!(h.model.offered(2).iter().any(|t| t == "get_document"));
    assert!(!h.model.offered(3).iter().any(|t| t == "get_document"));
    assert!(!h.model.offered(4).iter().any(|t| t == "get_document"));
    assert_eq!(done(&events)["finishReason"], "stop");
    h.app.stop().await;
}

async fn a_turn_ends_after_the_round_limit(url: String) {
    let call = |id: &'static str| Answer::Calls(vec![(id, "list_collections", json!({}))]);
    let h = harness_with(&url, vec![call("r1"), call("r2"), call("r3")], |c| {
        c.agent.max_rounds = 2;
    })
    .await;
    let events = h.chat(&h.owner, json!({"messages": [user("Loop")]})).await;
    assert_eq!(of_kind(&events, "toolCall").len(), 2);
    assert_eq!(done(&events)["finishReason"], "max_rounds");
    assert_eq!(h.model.requests().len(), 2);
    h.app.stop().await;
}

async fn a_failing_backend_ends_the_stream_with_an_error(url: String) {
    let h = harness_with(
        &url,
        vec![
            Answer::BreakOff("Half an ans"),
            Answer::Status(503),
            Answer::Stall(Duration::from_secs(5)),
        ],
        |c| c.agent.timeout_ms = 400,
    )
    .await;
    // The connection breaks off mid-answer.
    let events = h.chat(&h.owner, json!({"messages": [user("Hi")]})).await;
    assert_eq!(kinds(&events), ["text", "error", "usage", "done"]);
    assert!(
        events[1].data["message"]
            .as_str()
            .unwrap()
            .contains("broke off")
            || events[1].data["message"]
                .as_str()
                .unwrap()
                .contains("ended before"),
        "{}",
        events[1].data
    );
    assert_eq!(done(&events)["finishReason"], "error");
    // An error status.
    let events = h.chat(&h.owner, json!({"messages": [user("Hi")]})).await;
    assert_eq!(kinds(&events), ["error", "usage", "done"]);
    assert!(
        events[0].data["message"].as_str().unwrap().contains("503"),
        "{}",
        events[0].data
    );
    // Silence past agent.timeoutMs.
    let started = std::time::Instant::now();
    let events = h.chat(&h.owner, json!({"messages": [user("Hi")]})).await;
    assert_eq!(kinds(&events), ["error", "usage", "done"]);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the stream did not hang"
    );
    assert_eq!(done(&events)["finishReason"], "error");
    h.app.stop().await;
}

async fn each_person_has_a_turn_limit_per_minute(url: String) {
    let h = harness_with(&url, vec![], |c| c.agent.turns_per_minute = 2).await;
    let viewer = member(&h.app, &h.owner, "Vic", "vic@example.com", "viewer").await;
    let body = json!({"messages": [user("Hi")]});
    for _ in 0..2 {
        h.chat(&h.owner, body.clone()).await;
    }
    let res = h
        .app
        .post("/api/agent/chat", body.clone())
        .cookie(&h.owner)
        .send()
        .await;
    res.assert_handler_error(StatusCode::TOO_MANY_REQUESTS, "Too Many Requests");
    let wait: u64 = res.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(
        h.model.requests().len(),
        2,
        "the refused turn reached no model"
    );
    // Per person: another member still chats.
    h.chat(&viewer, body.clone()).await;
    // A refused request (a malformed list) spends none of the person's turns.
    h.app.clock.advance_millis(61_000);
    let res = h
        .app
        .post("/api/agent/chat", json!({"messages": []}))
        .cookie(&h.owner)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // A minute later the window is new.
    for _ in 0..2 {
        h.chat(&h.owner, body.clone()).await;
    }
    h.app.stop().await;
}

async fn without_a_backend_404_without_a_model_501(url: String) {
    // Configured: signed-in callers only, and a well-formed message list.
    let h = harness(&url, vec![]).await;
    let body = json!({"messages": [user("Hi")]});
    let res = h.app.post("/api/agent/chat", body.clone()).send().await;
    res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    for bad in [
        json!({"messages": []}),
        json!({"messages": [{"role": "tool", "content": "x"}]}),
        json!({"messages": [{"role": "wizard", "content": "x"}]}),
        json!({"messages": [{"role": "user", "content": "x", "extra": 1}]}),
        json!({"messages": [user("x")], "document": {"collection": "post"}}),
        json!({"messages": [user("x")], "unknown": true}),
    ] {
        let res = h
            .app
            .post("/api/agent/chat", bad.clone())
            .cookie(&h.owner)
            .send()
            .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    assert!(h.model.requests().is_empty(), "nothing reached the model");
    h.app.stop().await;

    // The same database without a backend: 404.
    let app = TestApp::start(&url).await;
    let owner = sign_in(&app, "ada@example.com").await;
    let res = app
        .post("/api/agent/chat", body.clone())
        .cookie(&owner)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;

    // A backend without a model: 501.
    let mut config = config_for(&url);
    config.agent.base_url = Some("http://127.0.0.1:9/v1".into());
    let app = TestApp::with(config, None).await;
    let owner = sign_in(&app, "ada@example.com").await;
    let res = app
        .post("/api/agent/chat", body)
        .cookie(&owner)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_IMPLEMENTED, "Not Implemented");
    app.stop().await;
}

cms_store::both_engines!(
    text_streams_and_the_turn_ends_with_usage_and_done,
    a_tool_round_trip_runs_as_the_caller_and_records_its_change,
    tools_are_offered_and_run_by_the_callers_capabilities,
    the_workspace_pauses_for_the_editor_and_resumes,
    undo_restores_each_document_and_leaves_changed_ones_alone,
    a_tool_is_blocked_after_its_third_failure,
    a_turn_ends_after_the_round_limit,
    a_failing_backend_ends_the_stream_with_an_error,
    each_person_has_a_turn_limit_per_minute,
    without_a_backend_404_without_a_model_501,
);
