//! `tools/list` and `tools/call`: the assistant's catalog outside the editor (core server tools
//! and plugin tools the caller may use), each call run as the caller and its write recorded as
//! the request's change set.

use cms_agent::tools::offered_outside_editor;
use cms_agent::{AgentTool, Offered};
use cms_service::change_sets::{ChangeSetSource, Recorder};
use cms_service::{Actor, Cms};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, MetaObject, Tool,
    ToolAnnotations,
};
use serde_json::{Value, json};

/// The `_meta` key of a call's result naming the change set its write was recorded in.
pub const CHANGE_SET_META: &str = "cms/changeSetId";

/// The tools the caller may use, with their argument schemas.
pub(crate) fn list(actor: &Actor, plugin_tools: &[AgentTool]) -> Vec<Tool> {
    offered_outside_editor(actor, plugin_tools)
        .iter()
        .map(definition)
        .collect()
}

fn definition(tool: &Offered) -> Tool {
    let schema: JsonObject = match tool.input_schema() {
        Value::Object(schema) => schema,
        // Plugin schemas are checked to be objects when declared; an empty object schema
        // keeps a client working should one not be.
        _ => JsonObject::from_iter([("type".to_string(), json!("object"))]),
    };
    Tool::new(
        tool.name().to_string(),
        tool.description().to_string(),
        schema,
    )
    .with_annotations(ToolAnnotations::new().read_only(!tool.mutates()))
}

/// Runs one tool call as `actor`. A tool the caller is not offered is a JSON-RPC error
/// (`-32602`, as for a name that does not exist); anything the tool itself refuses or fails at
/// is a result with `isError: true`.
pub(crate) async fn call(
    cms: &Cms,
    actor: &Actor,
    plugin_tools: &[AgentTool],
    request: CallToolRequestParams,
) -> Result<CallToolResult, ErrorData> {
    let offered = offered_outside_editor(actor, plugin_tools);
    let Some(tool) = offered.iter().find(|t| t.name() == request.name) else {
        return Err(ErrorData::invalid_params(
            format!("there is no tool `{}`", request.name),
            None,
        ));
    };
    let names: Vec<String> = offered.iter().map(|t| t.name().to_string()).collect();
    let arguments = Value::Object(request.arguments.unwrap_or_default());
    let outcome = tool.run(cms, actor, arguments, &names).await;
    let mut recorder = Recorder::new(ChangeSetSource::Mcp);
    if let Some(operation) = outcome.operation {
        recorder.record(cms, actor, operation).await;
    }
    let mut result = match outcome.result {
        Ok(value) => success(value),
        Err(value) => failure(value),
    };
    if let Some(id) = recorder.id() {
        result.meta = Some(MetaObject(JsonObject::from_iter([(
            CHANGE_SET_META.to_string(),
            json!(id),
        )])));
    }
    Ok(result)
}

/// A result: its JSON as text, and as `structuredContent` when it is an object (the only shape
/// the protocol allows there).
fn success(value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    if value.is_object() {
        result.structured_content = Some(value);
    }
    result
}

/// A failure (`{ error, issues? }`): the message in words, each issue on a line of its own, and
/// the failure's JSON as `structuredContent`.
fn failure(value: Value) -> CallToolResult {
    let mut text = value["error"]
        .as_str()
        .unwrap_or("the tool failed")
        .to_string();
    for issue in value["issues"].as_array().into_iter().flatten() {
        let path = issue["path"].as_str().unwrap_or("");
        let message = issue["message"].as_str().unwrap_or("");
        text.push_str(&format!("\n- {path}: {message}"));
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}
