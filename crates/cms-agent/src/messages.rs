//! The running message list of a chat, in the OpenAI chat-completions shape the client sends
//! and receives back on `done` (CONTRACT.md section 8).

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One message. Unknown keys are refused: a client that sends something else than this shape
/// gets a 400 naming the key, not a silently different conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: Option<String>,
    /// The calls an assistant message makes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    pub fn assistant(content: Option<String>, tool_calls: Vec<ToolCall>) -> Message {
        Message {
            role: Role::Assistant,
            content,
            tool_calls,
            tool_call_id: None,
            name: None,
        }
    }

    pub fn tool(call_id: &str, content: String) -> Message {
        Message {
            role: Role::Tool,
            content: Some(content),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.to_string()),
            name: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function")]
    pub kind: String,
    pub function: FunctionCall,
}

fn function() -> String {
    "function".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FunctionCall {
    pub name: String,
    /// The arguments as the model wrote them: a JSON text, not always valid.
    pub arguments: String,
}

impl ToolCall {
    /// The arguments as a JSON object; an empty text is `{}`.
    pub fn parsed_arguments(&self) -> Result<Value, String> {
        let text = self.function.arguments.trim();
        if text.is_empty() {
            return Ok(Value::Object(Default::default()));
        }
        match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(_) => Err("the arguments must be a JSON object".into()),
            Err(e) => Err(format!("the arguments are not valid JSON: {e}")),
        }
    }
}

/// The most messages one request may carry.
pub const MAX_MESSAGES: usize = 500;

/// Checks the list a client sent: not empty, bounded, and each message shaped for its role.
pub fn check(messages: &[Message]) -> Result<(), String> {
    if messages.is_empty() {
        return Err("`messages` must hold at least one message".into());
    }
    if messages.len() > MAX_MESSAGES {
        return Err(format!("`messages` holds at most {MAX_MESSAGES} messages"));
    }
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::Tool if m.tool_call_id.as_deref().is_none_or(str::is_empty) => {
                return Err(format!(
                    "messages[{i}]: a tool message needs `tool_call_id`"
                ));
            }
            Role::Assistant => {}
            _ if !m.tool_calls.is_empty() => {
                return Err(format!(
                    "messages[{i}]: only assistant messages carry `tool_calls`"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}
