//! The model backend: an OpenAI-compatible chat-completions endpoint, streamed (`agent.baseUrl`,
//! `agent.model`, `agent.apiKey`). The request and delta types are our own and lenient, so the
//! many "compatible" servers (vLLM, llama.cpp, Ollama, LiteLLM, ...) that leave fields out work.

use std::collections::BTreeMap;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};

use super::messages::{FunctionCall, Message, ToolCall};

/// Why a model round failed. The message is shown to the person (an `error` event): it names
/// what went wrong with the backend, never our internals.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BackendError(pub String);

/// One streamed model answer, as it arrives.
#[derive(Debug, PartialEq)]
pub enum Delta {
    Text(String),
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
}

/// The client of one configured backend. Cheap to clone.
#[derive(Clone)]
pub struct ModelBackend {
    http: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    /// The longest wait for the next piece of an answer.
    idle_timeout: Duration,
}

/// The model's answer once the stream ends: its text and the tool calls it makes.
#[derive(Debug, Default)]
pub struct Answer {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
}

impl ModelBackend {
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<&str>,
        idle_timeout: Duration,
    ) -> Result<ModelBackend, BackendError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| BackendError(format!("cannot build the model client: {e}")))?;
        Ok(ModelBackend {
            http,
            url: completions_url(base_url),
            model: model.to_string(),
            api_key: api_key.filter(|k| !k.is_empty()).map(str::to_string),
            idle_timeout,
        })
    }

    /// Asks for the next assistant message. `on_delta` receives text as it streams and the
    /// usage the backend reports; the tool calls arrive whole in the returned [`Answer`].
    pub async fn complete(
        &self,
        messages: &[Message],
        tools: &[Value],
        mut on_delta: impl FnMut(Delta) -> bool,
    ) -> Result<Answer, BackendError> {
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": true,
            "stream_options": { "include_usage": true },
        });
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools.to_vec());
        }
        let mut request = self.http.post(&self.url).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = tokio::time::timeout(self.idle_timeout, request.send())
            .await
            .map_err(|_| BackendError("the model backend did not answer in time".into()))?
            .map_err(|e| BackendError(format!("the model backend cannot be reached: {e}")))?;
        let status = response.status();
        if !status.is_success() {
            let detail = tokio::time::timeout(self.idle_timeout, response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(BackendError(format!(
                "the model backend answered {status}: {}",
                truncate(detail.trim(), 300)
            )));
        }
        read_stream(response.bytes_stream(), self.idle_timeout, &mut on_delta).await
    }
}

/// `{baseUrl}/chat/completions`, unless the base already names the endpoint.
fn completions_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/chat/completions") {
        base.to_string()
    } else {
        format!("{base}/chat/completions")
    }
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
    /// Some servers report failures inside the stream.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<ChunkDelta>,
}

#[derive(Debug, Deserialize)]
struct ChunkDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallDelta>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// A tool call being assembled from its streamed pieces.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Reads the server-sent events of one answer until `[DONE]` (or the end of the body after
/// at least one chunk). A body that stops early, a chunk that is not JSON, or silence longer
/// than `idle` is an error: the turn reports it rather than hang or act on half an answer.
async fn read_stream<S, B, E>(
    bytes: S,
    idle: Duration,
    on_delta: &mut impl FnMut(Delta) -> bool,
) -> Result<Answer, BackendError>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    let mut events = bytes.eventsource();
    let mut answer = Answer::default();
    let mut calls: BTreeMap<usize, PartialCall> = BTreeMap::new();
    let mut finished = false;
    loop {
        let next = tokio::time::timeout(idle, events.next())
            .await
            .map_err(|_| BackendError("the model backend stopped answering".into()))?;
        let event = match next {
            None => break,
            Some(Err(e)) => {
                return Err(BackendError(format!(
                    "the model backend's stream broke off: {e}"
                )));
            }
            Some(Ok(event)) => event,
        };
        let data = event.data.trim();
        if data.is_empty() {
            continue;
        }
        if data == "[DONE]" {
            finished = true;
            break;
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            BackendError(format!(
                "the model backend sent a chunk that is not JSON: {e}"
            ))
        })?;
        if let Some(error) = chunk.error {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| error.to_string());
            return Err(BackendError(format!(
                "the model backend failed: {}",
                truncate(&message, 300)
            )));
        }
        if let Some(usage) = chunk.usage
            && !on_delta(Delta::Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            })
        {
            return Err(BackendError("the client went away".into()));
        }
        for choice in chunk.choices {
            let Some(delta) = choice.delta else { continue };
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                answer.text.push_str(&text);
                if !on_delta(Delta::Text(text)) {
                    return Err(BackendError("the client went away".into()));
                }
            }
            for piece in delta.tool_calls {
                let index = piece.index.unwrap_or(calls.len());
                let call = calls.entry(index).or_default();
                if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
                    call.id = id;
                }
                if let Some(function) = piece.function {
                    if let Some(name) = function.name {
                        call.name.push_str(&name);
                    }
                    if let Some(arguments) = function.arguments {
                        call.arguments.push_str(&arguments);
                    }
                }
            }
        }
    }
    if !finished {
        return Err(BackendError(
            "the model backend's stream ended before the answer was complete".into(),
        ));
    }
    for (index, call) in calls {
        if call.name.is_empty() {
            return Err(BackendError(
                "the model backend sent a tool call without a name".into(),
            ));
        }
        answer.tool_calls.push(ToolCall {
            id: if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            },
            kind: "function".into(),
            function: FunctionCall {
                name: call.name,
                arguments: call.arguments,
            },
        });
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(parts: &[&str]) -> impl Stream<Item = Result<Vec<u8>, String>> + Unpin {
        futures_util::stream::iter(
            parts
                .iter()
                .map(|p| Ok(p.as_bytes().to_vec()))
                .collect::<Vec<_>>(),
        )
    }

    async fn read(parts: &[&str]) -> (Result<Answer, BackendError>, Vec<Delta>) {
        let mut deltas = Vec::new();
        let answer = read_stream(body(parts), Duration::from_secs(5), &mut |d| {
            deltas.push(d);
            true
        })
        .await;
        (answer, deltas)
    }

    #[tokio::test]
    async fn text_and_tool_calls_are_assembled_from_pieces_split_anywhere() {
        let (answer, deltas) = read(&[
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n",
            "\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"get_",
            "schema\",\"arguments\":\"{\\\"coll\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"\",\"arguments\":\"ection\\\":\\\"post\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}\n\n",
            "data: [DONE]\n\n",
        ])
        .await;
        let answer = answer.unwrap();
        assert_eq!(answer.text, "Hello");
        assert_eq!(answer.tool_calls.len(), 1);
        assert_eq!(answer.tool_calls[0].id, "c1");
        assert_eq!(answer.tool_calls[0].function.name, "get_schema");
        assert_eq!(
            answer.tool_calls[0].parsed_arguments().unwrap(),
            json!({"collection": "post"})
        );
        assert_eq!(
            deltas,
            [
                Delta::Text("Hel".into()),
                Delta::Text("lo".into()),
                Delta::Usage {
                    input_tokens: 7,
                    output_tokens: 3
                }
            ]
        );
    }

    #[tokio::test]
    async fn a_stream_that_stops_before_done_is_an_error() {
        let (answer, _) =
            read(&["data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"]).await;
        assert!(answer.unwrap_err().0.contains("ended before"));
        let (answer, _) = read(&["data: not json\n\n"]).await;
        assert!(answer.unwrap_err().0.contains("not JSON"));
        let (answer, _) = read(&["data: {\"error\":{\"message\":\"overloaded\"}}\n\n"]).await;
        assert!(answer.unwrap_err().0.contains("overloaded"));
    }

    #[test]
    fn the_endpoint_is_derived_from_the_base_url() {
        assert_eq!(
            completions_url("http://127.0.0.1:9/v1/"),
            "http://127.0.0.1:9/v1/chat/completions"
        );
        assert_eq!(
            completions_url("http://h/v1/chat/completions"),
            "http://h/v1/chat/completions"
        );
    }
}
