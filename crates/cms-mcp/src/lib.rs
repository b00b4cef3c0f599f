//! The MCP server (CONTRACT.md section 21): the service as tools and resources for any Model
//! Context Protocol client, over Streamable HTTP (`POST /api/mcp`, mounted by `cms-server` in
//! the same axum app as the rest of the API) or over stdio (`cms mcp`). This module is the
//! protocol handler; `transport` serves it.
//!
//! Architecture invariant: a door, like the HTTP one and the assistant. Its tools are the
//! assistant's catalog (`cms_agent::Offered`), not a copy: the same capability filtering, the
//! same argument checks, the same execution as the caller through the service layer. It decides
//! no access itself; it only finds who is asking ([`caller`]) and records each request's writes
//! as one change set.

mod caller;
mod resources;
mod tools;
mod transport;

use std::borrow::Cow;
use std::sync::Arc;

use cms_agent::Agent;
use cms_service::Cms;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

pub use caller::Caller;
pub use tools::CHANGE_SET_META;
pub use transport::{HttpTransport, SessionLimits, Sessions, StdioError, serve_stdio};

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
