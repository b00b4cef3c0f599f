//! One turn: model rounds and tool calls until the model stops, a workspace tool needs the
//! editor, the round limit is reached, or something fails. Every path ends with `usage` and
//! `done`, so a client never waits on a stream that will not finish.

use std::collections::HashMap;

use cms_service::change_sets::{ChangeSetSource, Operation, Recorder};
use cms_service::{Actor, Cms};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::backend::{Delta, ModelBackend};
use super::execute::{self, ToolResult, message};
use super::messages::{Message, Role, ToolCall};
use super::tools::{Core, Offered};
use super::{FinishReason, OpenDocument, PendingCall, StreamEvent};

/// Failures of one tool in a turn after which it is no longer offered or run.
const FAILURES_BEFORE_BLOCK: u32 = 3;

pub(crate) struct Turn {
    pub cms: Cms,
    pub actor: Actor,
    pub backend: ModelBackend,
    pub max_rounds: u32,
    pub open: Option<OpenDocument>,
    pub offered: Vec<Offered>,
    pub events: UnboundedSender<StreamEvent>,
}

/// The client went away: the turn stops.
struct Gone;

/// The usage of a turn, summed over its rounds.
#[derive(Default)]
struct Usage {
    input: u64,
    output: u64,
}

impl Turn {
    pub(crate) async fn run(self, mut messages: Vec<Message>) {
        let mut usage = Usage::default();
        let mut recorder = Recorder::new(ChangeSetSource::Assistant);
        let mut failures = failures_in_turn(&messages);
        let _ = self
            .run_rounds(&mut messages, &mut usage, &mut recorder, &mut failures)
            .await;
        if let Some(id) = recorder.id() {
            tracing::debug!(change_set = id, "assistant turn recorded");
        }
    }

    fn emit(&self, event: StreamEvent) -> Result<(), Gone> {
        self.events.send(event).map_err(|_| Gone)
    }

    fn finish(
        &self,
        usage: &Usage,
        reason: FinishReason,
        messages: &[Message],
        pending: Option<Vec<PendingCall>>,
    ) -> Result<(), Gone> {
        self.emit(StreamEvent::Usage {
            input_tokens: usage.input,
            output_tokens: usage.output,
        })?;
        self.emit(StreamEvent::Done {
            finish_reason: reason,
            messages: messages.to_vec(),
            pending_tool_calls: pending,
        })
    }

    async fn run_rounds(
        &self,
        messages: &mut Vec<Message>,
        usage: &mut Usage,
        recorder: &mut Recorder,
        failures: &mut HashMap<String, u32>,
    ) -> Result<(), Gone> {
        self.resume(messages, recorder, failures).await?;
        for _ in 0..self.max_rounds {
            let tools: Vec<Value> = self
                .offered
                .iter()
                .filter(|t| !blocked(failures, t.name()))
                .map(Offered::definition)
                .collect();
            let mut request = vec![self.system_prompt()];
            request.extend(messages.iter().cloned());
            let answer = self
                .backend
                .complete(&request, &tools, |delta| match delta {
                    Delta::Text(delta) => self.emit(StreamEvent::Text { delta }).is_ok(),
                    Delta::Usage {
                        input_tokens,
                        output_tokens,
                    } => {
                        usage.input += input_tokens;
                        usage.output += output_tokens;
                        true
                    }
                })
                .await;
            let answer = match answer {
                Ok(answer) => answer,
                Err(e) => {
                    if self.events.is_closed() {
                        return Err(Gone);
                    }
                    tracing::warn!(error = %e, "assistant: model round failed");
                    self.emit(StreamEvent::Error {
                        message: e.to_string(),
                    })?;
                    return self.finish(usage, FinishReason::Error, messages, None);
                }
            };
            let text = Some(answer.text).filter(|t| !t.is_empty());
            messages.push(Message::assistant(text, answer.tool_calls.clone()));
            if answer.tool_calls.is_empty() {
                return self.finish(usage, FinishReason::Stop, messages, None);
            }
            let mut pending = Vec::new();
            for call in &answer.tool_calls {
                if let Some(waiting) = self.call(call, messages, recorder, failures).await? {
                    pending.push(waiting);
                }
            }
            if !pending.is_empty() {
                return self.finish(
                    usage,
                    FinishReason::AwaitingWorkspaceTool,
                    messages,
                    Some(pending),
                );
            }
        }
        self.finish(usage, FinishReason::MaxRounds, messages, None)
    }

    /// Runs one tool call and appends its result, or returns it as pending when the editor has
    /// to run it.
    async fn call(
        &self,
        call: &ToolCall,
        messages: &mut Vec<Message>,
        recorder: &mut Recorder,
        failures: &mut HashMap<String, u32>,
    ) -> Result<Option<PendingCall>, Gone> {
        let name = call.function.name.as_str();
        let parsed = call.parsed_arguments();
        self.emit(StreamEvent::ToolCall {
            id: call.id.clone(),
            name: name.to_string(),
            arguments: parsed
                .clone()
                .unwrap_or_else(|_| Value::String(call.function.arguments.clone())),
        })?;
        let tool = self.offered.iter().find(|t| t.name() == name);
        let result: ToolResult = match (tool, parsed) {
            _ if blocked(failures, name) => Err(message(format!(
                "`{name}` failed {FAILURES_BEFORE_BLOCK} times in this turn and is blocked until the next one"
            ))),
            (None, _) => Err(message(format!("there is no tool `{name}`"))),
            (Some(_), Err(e)) => Err(message(e)),
            (Some(tool), Ok(args)) if tool.is_workspace() => {
                match self.check_workspace(tool, args.clone()).await {
                    Ok(()) => {
                        return Ok(Some(PendingCall {
                            id: call.id.clone(),
                            name: name.to_string(),
                            arguments: args,
                        }));
                    }
                    Err(e) => Err(e),
                }
            }
            (Some(tool), Ok(args)) => {
                let (result, operation) = self.execute(tool, args).await;
                if let Some(operation) = operation {
                    recorder.record(&self.cms, &self.actor, operation).await;
                }
                result
            }
        };
        if result.is_err() {
            *failures.entry(name.to_string()).or_default() += 1;
        }
        self.answer(messages, &call.id, name, result)?;
        Ok(None)
    }

    /// Reports a tool's result as a `toolResult` event and as the tool message the model reads.
    fn answer(
        &self,
        messages: &mut Vec<Message>,
        id: &str,
        name: &str,
        result: ToolResult,
    ) -> Result<(), Gone> {
        let (ok, value) = match result {
            Ok(v) => (true, v),
            Err(v) => (false, v),
        };
        messages.push(Message::tool(id, tool_content(ok, &value)));
        self.emit(StreamEvent::ToolResult {
            id: id.to_string(),
            name: name.to_string(),
            ok,
            result: value,
        })
    }

    async fn check_workspace(&self, tool: &Offered, args: Value) -> Result<(), Value> {
        let Some(open) = &self.open else {
            return Err(message("no document is open in the editor"));
        };
        match tool {
            Offered::Core(core) => {
                execute::check_workspace_call(&self.cms, &self.actor, *core, args, &open.id).await
            }
            // A plugin's workspace tool is the editor's to interpret; its arguments must be
            // an object, which parsing already made sure of.
            Offered::Plugin(_) => Ok(()),
        }
    }

    async fn execute(&self, tool: &Offered, args: Value) -> (ToolResult, Option<Operation>) {
        let names: Vec<String> = self.offered.iter().map(|t| t.name().to_string()).collect();
        let outcome = tool.run(&self.cms, &self.actor, args, &names).await;
        (outcome.result, outcome.operation)
    }

    /// Picks up a turn that paused for the editor: the tool messages the client appended
    /// answer the workspace calls of the last assistant message. Their results are reported
    /// (a successful patch as `persisted: false`), a successful save joins the change set, and
    /// a call the client left unanswered is answered as failed, so the model sees every call
    /// resolved.
    async fn resume(
        &self,
        messages: &mut Vec<Message>,
        recorder: &mut Recorder,
        failures: &mut HashMap<String, u32>,
    ) -> Result<(), Gone> {
        let Some(at) = messages
            .iter()
            .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
        else {
            return Ok(());
        };
        if messages[at + 1..].iter().any(|m| m.role != Role::Tool) {
            return Ok(());
        }
        let calls = messages[at].tool_calls.clone();
        for call in &calls {
            let answered = messages[at + 1..]
                .iter()
                .position(|m| m.tool_call_id.as_deref() == Some(call.id.as_str()))
                .map(|i| at + 1 + i);
            let name = call.function.name.as_str();
            let workspace = self
                .offered
                .iter()
                .find(|t| t.name() == name)
                .is_some_and(Offered::is_workspace);
            match answered {
                Some(index) if workspace => {
                    let (ok, mut result) = client_result(messages[index].content.as_deref());
                    if ok && name == Core::PatchFields.name() {
                        result = persisted_false(result);
                    }
                    if ok && name == Core::SaveDraft.name() {
                        self.record_save(recorder).await;
                    }
                    messages[index].content = Some(tool_content(ok, &result));
                    self.emit(StreamEvent::ToolResult {
                        id: call.id.clone(),
                        name: name.to_string(),
                        ok,
                        result,
                    })?;
                }
                Some(_) => {}
                None => {
                    *failures.entry(name.to_string()).or_default() += 1;
                    let failed = message("the editor did not run this call");
                    self.answer(messages, &call.id, name, Err(failed))?;
                }
            }
        }
        Ok(())
    }

    /// Records the editor's save of the open document: the version it wrote and the one
    /// before (version numbers grow by one per write of a document).
    async fn record_save(&self, recorder: &mut Recorder) {
        let Some(open) = &self.open else { return };
        let versions = self
            .cms
            .documents()
            .versions(&self.actor, &open.id, Some(2), Some(0), false)
            .await;
        let (after, before) = match versions {
            Ok((list, _)) => (
                list.first().map(|v| v.version_number),
                list.get(1).map(|v| v.version_number),
            ),
            Err(_) => (None, None),
        };
        let operation = Operation {
            tool: Core::SaveDraft.name().into(),
            collection: Some(open.collection.clone()),
            document_id: Some(open.id.clone()),
            success: true,
            version_before: before,
            version_after: after,
        };
        recorder.record(&self.cms, &self.actor, operation).await;
    }

    fn system_prompt(&self) -> Message {
        let mut text = String::from(
            "You are the assistant of a headless content management service. You work for the \
             signed-in person, in their organization, through the tools offered to you; a tool \
             that is not offered is one they may not use. Read before you change: look at the \
             schema and the current document first. Tool results are JSON objects with `ok`; \
             on `ok: false`, read `error` (and `issues`) and correct the call instead of \
             repeating it. Changes are drafts unless the person asks to publish.",
        );
        if self.cms.schemas().locales().is_multilingual() {
            // Told up front, so a model asked for German reads and writes German rather than
            // overwriting the default locale's text.
            text.push_str(
                " Content may be localized: describe_cms lists the locales and each type's \
                 localized fields. Pass `locale` to read or write one locale (other locales are \
                 kept); to translate, read the source locale and submit the translation with \
                 translate_document.",
            );
        }
        if let Some(open) = &self.open {
            text.push_str(&format!(
                " The person has the `{}` document `{}` open in the editor: change it with \
                 content_patch_fields (their form shows the change) and save it with \
                 content_save_draft only when they ask you to save.",
                open.collection, open.id
            ));
        }
        Message {
            role: Role::System,
            content: Some(text),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
}

fn blocked(failures: &HashMap<String, u32>, name: &str) -> bool {
    failures.get(name).copied().unwrap_or(0) >= FAILURES_BEFORE_BLOCK
}

/// A tool message's content: `{ "ok": true, "result": ... }` or `{ "ok": false, "error": ...,
/// "issues"? }`.
fn tool_content(ok: bool, value: &Value) -> String {
    let content = if ok {
        json!({ "ok": true, "result": value })
    } else {
        let mut failure = json!({ "ok": false });
        if let (Some(out), Some(fields)) = (failure.as_object_mut(), value.as_object()) {
            out.extend(fields.clone());
        } else {
            failure["error"] = value.clone();
        }
        failure
    };
    content.to_string()
}

/// How the editor answered a workspace call: its tool message's content, in the shape of
/// [`tool_content`] or, from a simpler client, any JSON or text (read as a success).
fn client_result(content: Option<&str>) -> (bool, Value) {
    let parsed = content
        .map(|c| serde_json::from_str::<Value>(c).unwrap_or_else(|_| Value::String(c.into())))
        .unwrap_or(Value::Null);
    match parsed.get("ok").and_then(Value::as_bool) {
        Some(true) => (true, parsed.get("result").cloned().unwrap_or(json!({}))),
        Some(false) => {
            let mut failure = parsed.clone();
            if let Some(fields) = failure.as_object_mut() {
                fields.remove("ok");
            }
            (false, failure)
        }
        None => (true, parsed),
    }
}

/// A successful patch's result says it is not saved.
fn persisted_false(result: Value) -> Value {
    match result {
        Value::Object(mut fields) => {
            fields.insert("persisted".into(), Value::Bool(false));
            Value::Object(fields)
        }
        Value::Null => json!({ "persisted": false }),
        other => json!({ "persisted": false, "detail": other }),
    }
}

/// The failures of each tool since the last user message: a turn paused for the editor keeps
/// counting when it resumes, as the turn is the same.
fn failures_in_turn(messages: &[Message]) -> HashMap<String, u32> {
    let start = messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .map_or(0, |i| i + 1);
    let names: HashMap<&str, &str> = messages[start..]
        .iter()
        .flat_map(|m| &m.tool_calls)
        .map(|c| (c.id.as_str(), c.function.name.as_str()))
        .collect();
    let mut failures = HashMap::new();
    for m in &messages[start..] {
        if m.role != Role::Tool {
            continue;
        }
        let failed = m
            .content
            .as_deref()
            .and_then(|c| serde_json::from_str::<Value>(c).ok())
            .and_then(|v| v.get("ok").and_then(Value::as_bool))
            == Some(false);
        let name = m.tool_call_id.as_deref().and_then(|id| names.get(id));
        if let (true, Some(name)) = (failed, name) {
            *failures.entry(name.to_string()).or_default() += 1;
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editors_answers_are_read_in_either_shape() {
        assert_eq!(
            client_result(Some(r#"{"ok":true,"result":{"a":1}}"#)),
            (true, json!({"a": 1}))
        );
        assert_eq!(
            client_result(Some(r#"{"ok":false,"error":"stale"}"#)),
            (false, json!({"error": "stale"}))
        );
        assert_eq!(client_result(Some("done")), (true, json!("done")));
        assert_eq!(
            persisted_false(json!({"a": 1})),
            json!({"a": 1, "persisted": false})
        );
    }

    #[test]
    fn failures_count_from_the_last_user_message() {
        let call = |id: &str, name: &str| ToolCall {
            id: id.into(),
            kind: "function".into(),
            function: super::super::messages::FunctionCall {
                name: name.into(),
                arguments: "{}".into(),
            },
        };
        let user = Message {
            role: Role::User,
            content: Some("hi".into()),
            tool_calls: vec![],
            tool_call_id: None,
            name: None,
        };
        let failed = r#"{"ok":false,"error":"x"}"#.to_string();
        let messages = vec![
            Message::assistant(None, vec![call("1", "get_schema")]),
            Message::tool("1", failed.clone()),
            user,
            Message::assistant(
                None,
                vec![call("2", "get_schema"), call("3", "get_document")],
            ),
            Message::tool("2", failed.clone()),
            Message::tool("3", r#"{"ok":true,"result":{}}"#.into()),
        ];
        let failures = failures_in_turn(&messages);
        assert_eq!(failures.get("get_schema"), Some(&1));
        assert_eq!(failures.get("get_document"), None);
    }
}
