//! The MCP server (CONTRACT.md section 21): the service as tools and resources for any Model
//! Context Protocol client, over Streamable HTTP (`POST /api/mcp`, mounted by `cms-server` in
//! the same axum app as the rest of the API) or over stdio (`cms mcp`).
//!
//! Architecture invariant: a door, like the HTTP one and the assistant. Its tools are the
//! assistant's catalog (`cms_agent::Offered`), not a copy: the same capability filtering, the
//! same argument checks, the same execution as the caller through the service layer. It decides
//! no access itself; it only finds who is asking ([`caller`]) and records each request's writes
//! as one change set.

mod caller;
mod resources;
mod tools;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use cms_agent::Agent;
use cms_service::Cms;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

pub use caller::Caller;
pub use tools::CHANGE_SET_META;

/// The protocol revisions served: those with the `initialize` handshake and `Mcp-Session-Id`
/// sessions the contract describes, newest first.
pub const PROTOCOL_VERSIONS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2025_06_18];

/// The MCP server of one session (HTTP) or one process (stdio): the service, the assistant's
/// plugin tools, and how each request's caller is found.
#[derive(Clone)]
pub struct McpServer {
    cms: Cms,
    agent: Arc<Agent>,
    caller: Caller,
}

impl McpServer {
    pub fn new(cms: Cms, agent: Arc<Agent>, caller: Caller) -> McpServer {
        McpServer { cms, agent, caller }
    }
}

/// The open MCP sessions of this instance, as a whole: a graceful shutdown ends them, since a
/// session's `GET` stream never ends by itself and would hold the drain open.
#[derive(Clone, Default)]
pub struct Sessions {
    stop: tokio_util::sync::CancellationToken,
}

impl Sessions {
    /// Ends every session and its streams; the transport answers nothing more.
    pub fn end_all(&self) {
        self.stop.cancel();
    }
}

/// The Streamable HTTP transport of `POST|GET|DELETE /api/mcp`: sessions kept in this
/// instance's memory, closed after `idle` without a request or when `open` ends them all;
/// bodies up to `max_body_bytes`.
/// The door in front of it resolves the caller and refuses a request without credentials; the
/// host check is the door's too (CORS, and credentials that a browser never sends by itself),
/// so the SDK's loopback-only host list is off.
pub fn http_service(
    cms: Cms,
    agent: Arc<Agent>,
    idle: Duration,
    max_body_bytes: usize,
    open: &Sessions,
) -> StreamableHttpService<McpServer, LocalSessionManager> {
    let mut session = SessionConfig::default();
    session.keep_alive = Some(idle);
    let mut sessions = LocalSessionManager::default();
    sessions.session_config = session;
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(max_body_bytes)
        .with_cancellation_token(open.stop.clone());
    StreamableHttpService::new(
        move || Ok(McpServer::new(cms.clone(), agent.clone(), Caller::Http)),
        Arc::new(sessions),
        config,
    )
}

/// Serves one client over standard input and output until it closes them, acting with
/// `api_key` (`cms mcp`, `CMS_MCP_API_KEY`). The key is checked before the first message, so a
/// wrong one stops the command with a message instead of failing every call.
pub async fn serve_stdio(cms: Cms, agent: Arc<Agent>, api_key: String) -> Result<(), StdioError> {
    let caller = Caller::ApiKey(api_key.into());
    caller.check(&cms).await.map_err(StdioError::Key)?;
    let server = McpServer::new(cms, agent, caller)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| StdioError::Transport(e.to_string()))?;
    server
        .waiting()
        .await
        .map_err(|e| StdioError::Transport(e.to_string()))?;
    Ok(())
}

/// Why `cms mcp` stopped.
#[derive(Debug)]
pub enum StdioError {
    /// `CMS_MCP_API_KEY` proves nothing.
    Key(String),
    /// Standard input or output failed, or the client broke the protocol at the start.
    Transport(String),
}

impl std::fmt::Display for StdioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StdioError::Key(message) => write!(f, "CMS_MCP_API_KEY: {message}"),
            StdioError::Transport(message) => write!(f, "MCP over stdio: {message}"),
        }
    }
}

impl std::error::Error for StdioError {}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_protocol_version(PROTOCOL_VERSIONS[0].clone())
            .with_server_info(Implementation::new("cms", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "A headless content management service. Tools read and write typed documents \
                 (drafts, publishing), schemas and assets with the caller's own rights; a tool \
                 that is not listed is one the caller may not use. Every write of one request \
                 is recorded as a change set that can be undone. Resources: \
                 cms://schemas/{type} and cms://documents/{id}.",
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&PROTOCOL_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let actor = self.caller.actor(&self.cms, &context).await?;
        Ok(ListToolsResult::with_all_items(tools::list(
            &actor,
            self.agent.plugin_tools(),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let actor = self.caller.actor(&self.cms, &context).await?;
        tools::call(&self.cms, &actor, self.agent.plugin_tools(), request)
            .await
            .map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let actor = self.caller.actor(&self.cms, &context).await?;
        Ok(ListResourcesResult::with_all_items(resources::list(
            &self.cms, &actor,
        )))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.caller.actor(&self.cms, &context).await?;
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let actor = self.caller.actor(&self.cms, &context).await?;
        resources::read(&self.cms, &actor, &request.uri)
            .await
            .map(Into::into)
    }
}
