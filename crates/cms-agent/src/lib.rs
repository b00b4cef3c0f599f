//! The AI assistant (SPEC.md "AI assistant", CONTRACT.md section 8): one stateless chat turn
//! per request, driving an OpenAI-compatible model with the service's own tools as the caller,
//! pausing for the editor's workspace tools, and recording what it changed as a change set
//! that can be undone.
//!
//! Architecture invariant: a door, like the HTTP one. It parses the model's tool arguments and
//! talks to the model backend; a tool is a call into the service layer (`cms-service`'s public
//! API) with the caller's actor. The assistant decides nothing about access; it only leaves out
//! the tools the caller could not use anyway. What a turn changed is recorded, read and undone
//! by the service (`cms_service::change_sets`).

mod backend;
mod execute;
mod locale;
pub mod messages;
pub mod tools;
mod translate;
mod turn;

use std::time::Duration;

use cms_service::{Actor, Cms, Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

pub use backend::BackendError;
use backend::ModelBackend;
pub use execute::{Outcome, ToolResult};
pub use messages::Message;
pub use tools::{AgentTool, CORE_AGENT_TOOLS, Offered, ToolExecution, ToolHandler};

/// The assistant's configuration (`agent.*`).
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// The OpenAI-compatible endpoint; `None`: no assistant (404).
    pub base_url: Option<String>,
    /// The model id; `None` with a base URL: 501.
    pub model: Option<String>,
    pub api_key: Option<String>,
    /// Model rounds in one turn before it ends with `max_rounds`.
    pub max_rounds: u32,
    /// The longest wait for the backend's next piece of an answer.
    pub timeout: Duration,
    /// Turns one user may start per minute, on every instance together; 0: no limit.
    pub turns_per_minute: u32,
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            base_url: None,
            model: None,
            api_key: None,
            max_rounds: 10,
            timeout: Duration::from_secs(60),
            turns_per_minute: 20,
        }
    }
}

/// The assistant as the server holds it: the backend client, built once, and the plugins'
/// tools.
pub struct Agent {
    backend: Backend,
    max_rounds: u32,
    turns_per_minute: u32,
    tools: Vec<AgentTool>,
}

/// The assistant as configured: no backend (chat answers 404), a backend without a model
/// (501), or ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Availability {
    Off,
    NoModel,
    Ready,
}

enum Backend {
    None,
    NoModel,
    Ready(ModelBackend),
}

impl Agent {
    /// Builds the backend client of `settings` once, at start; `tools` are the plugins'.
    pub fn new(settings: &AgentSettings, tools: Vec<AgentTool>) -> Result<Agent> {
        let base = settings
            .base_url
            .as_deref()
            .filter(|u| !u.trim().is_empty());
        let model = settings.model.as_deref().filter(|m| !m.trim().is_empty());
        let backend = match (base, model) {
            (None, _) => Backend::None,
            (Some(_), None) => Backend::NoModel,
            (Some(url), Some(model)) => Backend::Ready(
                ModelBackend::new(url, model, settings.api_key.as_deref(), settings.timeout)
                    .map_err(|e| Error::Internal(e.to_string()))?,
            ),
        };
        Ok(Agent {
            backend,
            max_rounds: settings.max_rounds.max(1),
            turns_per_minute: settings.turns_per_minute,
            tools,
        })
    }
}

impl Agent {
    /// The tools the plugins added, as declared (the MCP door offers them too).
    pub fn plugin_tools(&self) -> &[AgentTool] {
        &self.tools
    }
}

/// The document open in the editor, which the workspace tools edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenDocument {
    pub collection: String,
    pub id: String,
}

/// One turn as the client sends it.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub document: Option<OpenDocument>,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    AwaitingWorkspaceTool,
    MaxRounds,
    Error,
}

/// A tool call the client has to run (a workspace tool).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct PendingCall {
    pub id: String,
    pub name: String,
    #[schema(value_type = Object)]
    pub arguments: Value,
}

/// One server-sent event of a turn (SPEC.md "Assistant stream events"); the event's name is
/// [`StreamEvent::kind`] and its data the JSON of the variant's fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
pub enum StreamEvent {
    Text {
        delta: String,
    },
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
    },
    ToolResult {
        id: String,
        name: String,
        ok: bool,
        result: Value,
    },
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    Error {
        message: String,
    },
    Done {
        finish_reason: FinishReason,
        messages: Vec<Message>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pending_tool_calls: Option<Vec<PendingCall>>,
    },
}

impl StreamEvent {
    pub fn kind(&self) -> &'static str {
        match self {
            StreamEvent::Text { .. } => "text",
            StreamEvent::ToolCall { .. } => "toolCall",
            StreamEvent::ToolResult { .. } => "toolResult",
            StreamEvent::Usage { .. } => "usage",
            StreamEvent::Error { .. } => "error",
            StreamEvent::Done { .. } => "done",
        }
    }
}

/// The assistant of `agent` in front of the service `cms`: the chat turns.
pub struct AgentService<'a> {
    cms: &'a Cms,
    agent: &'a Agent,
}

impl<'a> AgentService<'a> {
    /// `agent` (built once at start) serving turns on `cms`, whose access rules every tool
    /// call obeys.
    pub fn new(cms: &'a Cms, agent: &'a Agent) -> Self {
        AgentService { cms, agent }
    }

    /// Whether turns can run here: what a client shows before anyone chats.
    pub fn availability(&self) -> Availability {
        match &self.agent.backend {
            Backend::None => Availability::Off,
            Backend::NoModel => Availability::NoModel,
            Backend::Ready(_) => Availability::Ready,
        }
    }

    /// Starts a turn and returns its events as they happen; the last one is always `done`.
    /// Refusals come first, as errors rather than events: 404 without a backend, 501 without
    /// a model, 400 for a malformed message list, 404 for an open document the caller cannot
    /// read, 429 past `agent.turnsPerMinute` turns of the user. Dropping the receiver (the client went away) stops the turn after the tool call
    /// in progress.
    pub async fn chat(
        &self,
        actor: &Actor,
        request: ChatRequest,
    ) -> Result<mpsc::UnboundedReceiver<StreamEvent>> {
        let agent = self.agent;
        let backend = match &agent.backend {
            Backend::None => {
                return Err(Error::NotFound(
                    "the assistant has no model backend (agent.baseUrl)".into(),
                ));
            }
            Backend::NoModel => {
                return Err(Error::NotImplemented(
                    "the assistant's backend has no model configured (agent.model)".into(),
                ));
            }
            Backend::Ready(backend) => backend.clone(),
        };
        actor.require_all(&[])?;
        messages::check(&request.messages).map_err(Error::bad_request)?;
        if let Some(open) = &request.document {
            let document = self
                .cms
                .documents()
                .get(actor, &open.id, Default::default())
                .await?;
            if document.doc_type != open.collection {
                return Err(Error::not_found("document"));
            }
        }
        // Counted last, so a refused request spends none of the person's turns.
        self.cms
            .rate_limits()
            .hit_agent_turn(&actor.user.id, agent.turns_per_minute)
            .await?;
        let (events, receiver) = mpsc::unbounded_channel();
        let offered = tools::offered(actor, &agent.tools, request.document.is_some());
        let turn = turn::Turn {
            cms: self.cms.clone(),
            actor: actor.clone(),
            backend,
            max_rounds: agent.max_rounds,
            open: request.document,
            offered,
            events,
        };
        tokio::spawn(turn.run(request.messages));
        Ok(receiver)
    }
}
