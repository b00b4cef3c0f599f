//! The transports that serve [`McpServer`]: Streamable HTTP, with its sessions, for the HTTP
//! door to mount, and stdio for `cms mcp`.

use std::sync::Arc;
use std::time::Duration;

use cms_agent::Agent;
use cms_service::Cms;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::{Caller, McpServer};

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

/// How many MCP sessions one instance keeps, and for how long (`mcp.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// A session without a request for this long is closed.
    pub idle: Duration,
    /// Past this many open sessions, a new one is refused until one ends.
    pub max: usize,
}

/// The Streamable HTTP transport of `POST|GET|DELETE /api/mcp`, and the sessions it keeps in
/// this instance's memory.
#[derive(Clone)]
pub struct HttpTransport {
    service: StreamableHttpService<McpServer, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
}

impl HttpTransport {
    /// The transport of `cms` and `agent`: sessions closed after `limits.idle` without a
    /// request or when `open` ends them all; bodies up to `max_body_bytes`. The door in front
    /// of it resolves the caller and refuses a request without credentials; the host check is
    /// the door's too (CORS, and credentials that a browser never sends by itself), so the
    /// SDK's loopback-only host list is off.
    pub fn new(
        cms: Cms,
        agent: Arc<Agent>,
        limits: SessionLimits,
        max_body_bytes: usize,
        open: &Sessions,
    ) -> HttpTransport {
        let mut session = SessionConfig::default();
        session.keep_alive = Some(limits.idle);
        let mut sessions = LocalSessionManager::default();
        sessions.session_config = session;
        let sessions = Arc::new(sessions);
        let config = StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_max_request_body_bytes(max_body_bytes)
            .with_cancellation_token(open.stop.clone());
        let service = StreamableHttpService::new(
            move || Ok(McpServer::new(cms.clone(), agent.clone(), Caller::Http)),
            sessions.clone(),
            config,
        );
        HttpTransport {
            service,
            sessions,
            max_sessions: limits.max,
        }
    }

    /// The tower service answering the requests.
    pub fn service(&self) -> StreamableHttpService<McpServer, LocalSessionManager> {
        self.service.clone()
    }

    /// Whether another session may open: fewer than the limit are open (each costs about
    /// 55 KiB until it ends or idles out).
    pub async fn has_room(&self) -> bool {
        self.sessions.sessions.read().await.len() < self.max_sessions
    }
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
