//! `agent.*`: the AI assistant's model backend.

use serde::Deserialize;

/// The AI assistant's model backend (CONTRACT.md section 8).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentConfig {
    /// An OpenAI-compatible chat-completions endpoint (`https://host/v1`); unset, the
    /// assistant answers 404.
    pub base_url: Option<String>,
    /// The model id; unset with a base URL, the assistant answers 501.
    pub model: Option<String>,
    pub api_key: Option<String>,
    /// Model rounds in one turn before it ends with `max_rounds`.
    pub max_rounds: u32,
    /// The longest wait for the backend's next piece of an answer.
    pub timeout_ms: u64,
    /// Turns one user may start per minute (all instances together); 0: no limit.
    pub turns_per_minute: u32,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            base_url: None,
            model: None,
            api_key: None,
            max_rounds: 10,
            timeout_ms: 60_000,
            turns_per_minute: 20,
        }
    }
}
