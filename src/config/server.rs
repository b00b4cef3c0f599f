//! `server.*`, `graphql.*` and `openapi.*`: where the instance listens and what it serves.

use serde::Deserialize;

use super::{Config, ConfigError};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerConfig {
    pub host: String,
    pub port: u16,
    pub public_url: Option<String>,
    pub max_json_bytes: usize,
    /// Proxies (addresses or CIDR blocks) whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            host: "127.0.0.1".into(),
            port: 3000,
            public_url: None,
            max_json_bytes: 10 * 1024 * 1024,
            trusted_proxies: Vec::new(),
        }
    }
}

/// The GraphQL endpoint.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GraphqlConfig {
    /// Where `POST` GraphQL requests are served; `/api/graphql` by default.
    pub path: String,
}

impl Default for GraphqlConfig {
    fn default() -> Self {
        GraphqlConfig {
            path: cms_server::DEFAULT_GRAPHQL_PATH.into(),
        }
    }
}

/// The self-description: `/api/openapi.json` is always served; `/api/docs` when `docsUi`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OpenapiConfig {
    /// Serve the rendered reference at `/api/docs` (default true).
    pub docs_ui: bool,
}

impl Default for OpenapiConfig {
    fn default() -> Self {
        OpenapiConfig { docs_ui: true }
    }
}

impl Config {
    pub fn trusted_proxies(&self) -> Result<Vec<cms_server::TrustedProxy>, ConfigError> {
        self.server
            .trusted_proxies
            .iter()
            .map(|p| {
                cms_server::TrustedProxy::parse(p)
                    .map_err(|why| ConfigError(format!("server.trustedProxies: {why}")))
            })
            .collect()
    }

    /// The address people reach the instance at, without a trailing slash: `server.publicUrl`,
    /// else the listen address. Links in e-mails start with it.
    pub fn public_base_url(&self) -> String {
        match self
            .server
            .public_url
            .as_deref()
            .map(|u| u.trim_end_matches('/'))
        {
            Some(url) if !url.is_empty() => url.to_string(),
            _ => format!("http://{}:{}", self.server.host, self.server.port),
        }
    }
}

/// The MCP server at `/api/mcp` (CONTRACT.md section 21).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct McpConfig {
    /// Serve `/api/mcp` (default true); off, it answers 404 like any unknown path.
    pub enabled: bool,
    /// Seconds without a request after which a session is closed (the client then initializes
    /// again).
    pub session_idle_seconds: u64,
    /// Open sessions one instance keeps (about 55 KiB each); past it, `initialize` is 429.
    pub max_sessions: u32,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            enabled: true,
            session_idle_seconds: 1800,
            max_sessions: 1000,
        }
    }
}
