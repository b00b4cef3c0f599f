//! The assistant's tools: the core ones of SPEC.md "AI assistant" point 2, the workspace tools
//! of point 3, and the ones plugins add (`cms/agent/tool`). A tool is offered to the model only
//! when the caller may use it (absent, not refused), and checked again when it runs.

use std::sync::Arc;

use cms_core::{CoreCapability, RequiredCapabilities};
use cms_service::change_sets::Operation;
use cms_service::jobs::HandlerError;
use cms_service::{Actor, Cms, Error};
use serde_json::{Value, json};

use crate::execute::{self, Outcome};
use crate::locale;

/// How an assistant tool runs (`cms/agent/tool` `execution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolExecution {
    /// The service runs it.
    Server,
    /// The admin's open document runs it: the turn pauses for the client.
    Workspace,
}

/// Runs a plugin's assistant tool as the caller: `actor` is the person chatting, so every
/// service call the handler makes holds their access rules.
#[async_trait::async_trait]
pub trait ToolHandler: Send + Sync + 'static {
    async fn execute(
        &self,
        cms: &Cms,
        actor: &Actor,
        arguments: Value,
    ) -> Result<Value, HandlerError>;
}

/// `cms/agent/tool`: a tool a plugin adds to the assistant.
#[derive(Clone)]
pub struct AgentTool {
    pub name: String,
    pub description: String,
    /// Whether it changes data (recorded in the turn's change set).
    pub mutates: bool,
    /// Who is offered the tool; checked again when it runs. Never `Public`: a chat has a
    /// signed-in caller.
    pub required_capabilities: RequiredCapabilities,
    pub execution: ToolExecution,
    /// The JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    pub handler: Arc<dyn ToolHandler>,
}

/// The names of the core tools (SPEC.md "AI assistant" points 2 and 3): a plugin tool of the
/// same name is shadowed by the core one.
pub const CORE_AGENT_TOOLS: &[&str] = &[
    "describe_cms",
    "list_collections",
    "get_schema",
    "query_documents",
    "get_document",
    "validate_document",
    "validate_schema",
    "create_document",
    "update_document",
    "publish_document",
    "get_singleton",
    "update_singleton",
    "list_assets",
    "upload_asset",
    "content_patch_fields",
    "content_save_draft",
    "translate_document",
];

/// A core tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Core {
    DescribeCms,
    ListCollections,
    GetSchema,
    QueryDocuments,
    GetDocument,
    ValidateDocument,
    ValidateSchema,
    CreateDocument,
    UpdateDocument,
    PublishDocument,
    GetSingleton,
    UpdateSingleton,
    ListAssets,
    UploadAsset,
    PatchFields,
    SaveDraft,
    TranslateDocument,
}

impl Core {
    pub const ALL: [Core; 17] = [
        Core::DescribeCms,
        Core::ListCollections,
        Core::GetSchema,
        Core::QueryDocuments,
        Core::GetDocument,
        Core::ValidateDocument,
        Core::ValidateSchema,
        Core::CreateDocument,
        Core::UpdateDocument,
        Core::PublishDocument,
        Core::GetSingleton,
        Core::UpdateSingleton,
        Core::ListAssets,
        Core::UploadAsset,
        Core::PatchFields,
        Core::SaveDraft,
        Core::TranslateDocument,
    ];

    pub fn name(self) -> &'static str {
        CORE_AGENT_TOOLS[self as usize]
    }

    pub fn parse(name: &str) -> Option<Core> {
        Core::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The capability the caller needs to be offered the tool; `None`: any member.
    pub fn requires(self) -> Option<CoreCapability> {
        use CoreCapability as C;
        match self {
            Core::DescribeCms | Core::ListCollections | Core::GetSchema | Core::ValidateSchema => {
                None
            }
            Core::QueryDocuments
            | Core::GetDocument
            | Core::ValidateDocument
            | Core::GetSingleton => Some(C::DocumentRead),
            Core::CreateDocument => Some(C::DocumentCreate),
            Core::UpdateDocument
            | Core::UpdateSingleton
            | Core::PatchFields
            | Core::SaveDraft
            | Core::TranslateDocument => Some(C::DocumentUpdate),
            Core::PublishDocument => Some(C::DocumentPublish),
            Core::ListAssets => Some(C::AssetRead),
            Core::UploadAsset => Some(C::AssetUpload),
        }
    }

    pub fn is_workspace(self) -> bool {
        matches!(self, Core::PatchFields | Core::SaveDraft)
    }

    /// Whether a successful call changes stored data (and so joins the change set).
    pub fn mutates(self) -> bool {
        matches!(
            self,
            Core::CreateDocument
                | Core::UpdateDocument
                | Core::PublishDocument
                | Core::UpdateSingleton
                | Core::UploadAsset
                | Core::SaveDraft
                | Core::TranslateDocument
        )
    }

    pub fn description(self) -> &'static str {
        match self {
            Core::DescribeCms => {
                "What this content service holds for the caller: the organization, the document types and the tools available."
            }
            Core::ListCollections => {
                "The document types (collections), with titles and whether each is a singleton."
            }
            Core::GetSchema => {
                "The schema of one document type: its fields, their types, options and which are required."
            }
            Core::QueryDocuments => {
                "Find documents of one type. `where` maps field names to one operator each (equals, not_equals, in, not_in, exists, greater_than, greater_than_equal, less_than, less_than_equal, like, contains, starts_with, ends_with); `and`/`or` take arrays; dot notation reaches nested fields. `sort` is a field name, `-` prefix for descending."
            }
            Core::GetDocument => {
                "One document by id, with its draft and published copies and `_meta.revision`."
            }
            Core::ValidateDocument => {
                "Check data against a document type without saving: what a save would refuse and what would block publishing."
            }
            Core::ValidateSchema => {
                "Check a schema definition (the JSON form of a document or object type) without registering it."
            }
            Core::CreateDocument => {
                "Create a document of a type as a draft, or published with `publish: true`."
            }
            Core::UpdateDocument => {
                "Change fields of a document's draft: each top-level field named in `data` takes the given value, `null` removes it, the others stay. Pass `expectedRevision` from get_document to avoid overwriting someone else's edit."
            }
            Core::PublishDocument => "Publish a document's current draft after validating it.",
            Core::GetSingleton => "The one document of a singleton type.",
            Core::UpdateSingleton => {
                "Change fields of a singleton's draft: each top-level field named in `data` takes the given value, `null` removes it."
            }
            Core::ListAssets => {
                "Uploaded files and images, newest first, optionally searched by title or description."
            }
            Core::UploadAsset => {
                "Upload a file (base64 content) as an asset; reference it from an image or file field as { \"asset\": { \"_ref\": id } }."
            }
            Core::PatchFields => {
                "Change fields of the document open in the editor: each top-level field named in `fields` takes the given value (`null` removes it). The change goes to the editor's form and is not saved until content_save_draft."
            }
            Core::SaveDraft => {
                "Save the editor's open document as a draft, guarded by its revision."
            }
            Core::TranslateDocument => {
                "Translate a document's localized fields from locale `from` to locale `to`. Read the source first with get_document (`locale`: from); `translations` holds the translated top-level fields in the shape get_document shows them (for an object or array holding localized fields, the whole value with only its localized parts translated). Only the `to` values change; every other locale and every shared value stay. The result lists the localized fields still `untranslated`."
            }
        }
    }

    /// The JSON Schema of the arguments (an object schema).
    pub fn parameters(self) -> Value {
        let collection = json!({ "type": "string", "description": "A document type name" });
        let perspective = json!({ "type": "string", "enum": ["draft", "published"] });
        let revision = json!({ "type": "integer", "description": "The `_meta.revision` the change is based on" });
        let locale = locale::parameter();
        let (properties, required): (Value, &[&str]) = match self {
            Core::DescribeCms | Core::ListCollections => (json!({}), &[]),
            Core::GetSchema => (json!({ "collection": collection }), &["collection"]),
            Core::GetSingleton => (
                json!({ "collection": collection, "locale": locale }),
                &["collection"],
            ),
            Core::QueryDocuments => (
                json!({
                    "collection": collection,
                    "where": { "type": "object" },
                    "sort": { "anyOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" } }] },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100 },
                    "page": { "type": "integer", "minimum": 1 },
                    "perspective": perspective,
                    "locale": locale,
                }),
                &["collection"],
            ),
            Core::GetDocument => (
                json!({ "collection": collection, "id": { "type": "string" }, "perspective": perspective, "locale": locale }),
                &["collection", "id"],
            ),
            Core::ValidateDocument => (
                json!({ "collection": collection, "data": { "type": "object" } }),
                &["collection", "data"],
            ),
            Core::ValidateSchema => (json!({ "schema": { "type": "object" } }), &["schema"]),
            Core::CreateDocument => (
                json!({ "collection": collection, "data": { "type": "object" }, "publish": { "type": "boolean" }, "locale": locale }),
                &["collection", "data"],
            ),
            Core::UpdateDocument => (
                json!({
                    "collection": collection,
                    "id": { "type": "string" },
                    "data": { "type": "object" },
                    "expectedRevision": revision,
                    "locale": locale,
                }),
                &["collection", "id", "data"],
            ),
            Core::PublishDocument => (
                json!({ "collection": collection, "id": { "type": "string" }, "expectedRevision": revision }),
                &["collection", "id"],
            ),
            Core::UpdateSingleton => (
                json!({ "collection": collection, "data": { "type": "object" }, "locale": locale }),
                &["collection", "data"],
            ),
            Core::ListAssets => (
                json!({
                    "search": { "type": "string" },
                    "assetType": { "type": "string", "enum": ["image", "file"] },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100 },
                    "offset": { "type": "integer", "minimum": 0 },
                }),
                &[],
            ),
            Core::UploadAsset => (
                json!({
                    "filename": { "type": "string" },
                    "contentBase64": { "type": "string" },
                    "title": { "type": "string" },
                    "alt": { "type": "string" },
                }),
                &["filename", "contentBase64"],
            ),
            Core::PatchFields => (json!({ "fields": { "type": "object" } }), &["fields"]),
            Core::SaveDraft => (json!({ "expectedRevision": revision }), &[]),
            Core::TranslateDocument => (
                json!({
                    "collection": collection,
                    "id": { "type": "string" },
                    "from": locale::tag_parameter("The locale translated from"),
                    "to": locale::tag_parameter("The locale written"),
                    "translations": { "type": "object", "description": "Translated top-level fields, as plain values in `to`" },
                    "expectedRevision": revision,
                }),
                &["collection", "id", "from", "to", "translations"],
            ),
        };
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }

    /// The definition a chat-completions backend takes.
    pub fn definition(self) -> Value {
        function_definition(self.name(), self.description(), self.parameters())
    }
}

pub(crate) fn function_definition(name: &str, description: &str, parameters: Value) -> Value {
    json!({
        "type": "function",
        "function": { "name": name, "description": description, "parameters": parameters },
    })
}

/// A tool offered in one turn.
#[derive(Clone)]
pub enum Offered {
    Core(Core),
    Plugin(AgentTool),
}

impl Offered {
    pub fn name(&self) -> &str {
        match self {
            Offered::Core(c) => c.name(),
            Offered::Plugin(t) => &t.name,
        }
    }

    pub fn is_workspace(&self) -> bool {
        match self {
            Offered::Core(c) => c.is_workspace(),
            Offered::Plugin(t) => t.execution == ToolExecution::Workspace,
        }
    }

    pub fn mutates(&self) -> bool {
        match self {
            Offered::Core(c) => c.mutates(),
            Offered::Plugin(t) => t.mutates,
        }
    }

    pub fn description(&self) -> &str {
        match self {
            Offered::Core(c) => c.description(),
            Offered::Plugin(t) => &t.description,
        }
    }

    /// The JSON Schema of the arguments (an object schema).
    pub fn input_schema(&self) -> Value {
        match self {
            Offered::Core(c) => c.parameters(),
            Offered::Plugin(t) => t.input_schema.clone(),
        }
    }

    /// The definition a chat-completions backend takes.
    pub fn definition(&self) -> Value {
        function_definition(self.name(), self.description(), self.input_schema())
    }

    /// Runs a server tool as `actor`: its arguments checked, the call made through the service
    /// layer, and the operation it performed when it changed something (for the change set).
    /// `offered` names the tools offered beside it (what `describe_cms` reports). A workspace
    /// tool runs in the editor, never here: it answers a failure.
    pub async fn run(&self, cms: &Cms, actor: &Actor, args: Value, offered: &[String]) -> Outcome {
        match self {
            Offered::Core(core) => execute::run(cms, actor, *core, args, offered).await,
            Offered::Plugin(plugin) if plugin.execution == ToolExecution::Workspace => {
                Outcome::read(Err(execute::message("a workspace tool runs in the editor")))
            }
            Offered::Plugin(plugin) => {
                // Checked again as it runs, whatever the list offered.
                if !may_use(actor, &plugin.required_capabilities) {
                    return Outcome::read(Err(execute::failure(Error::Forbidden)));
                }
                let result =
                    plugin.handler.execute(cms, actor, args).await.map_err(|e| {
                        match e.downcast::<Error>() {
                            Ok(service) => execute::failure(*service),
                            Err(other) => execute::message(other.to_string()),
                        }
                    });
                let operation = plugin.mutates.then(|| Operation {
                    tool: plugin.name.clone(),
                    collection: None,
                    document_id: None,
                    success: result.is_ok(),
                    version_before: None,
                    version_after: None,
                });
                Outcome { result, operation }
            }
        }
    }
}

/// Whether the actor may use a plugin tool: a member of the active organization holding every
/// listed capability.
pub fn may_use(actor: &Actor, required: &RequiredCapabilities) -> bool {
    match required {
        // A declaration never says public (the plugin registry refuses it); read it as members.
        RequiredCapabilities::Public | RequiredCapabilities::Members => {
            actor.require_all(&[]).is_ok()
        }
        RequiredCapabilities::All(list) => actor.require_all(list).is_ok(),
    }
}

/// The tools a client outside the editor is offered (the MCP door, CONTRACT.md section 21):
/// the server tools the actor may use, core and plugin, never a workspace tool.
pub fn offered_outside_editor(actor: &Actor, plugin_tools: &[AgentTool]) -> Vec<Offered> {
    offered(actor, plugin_tools, false)
        .into_iter()
        .filter(|t| !t.is_workspace())
        .collect()
}

/// The tools the actor is offered in a turn: the core tools they may use (the workspace pair
/// instead of `update_document` when a document is open), then the plugins' tools they may
/// use. A plugin tool named like a core tool is never offered.
pub fn offered(actor: &Actor, plugin_tools: &[AgentTool], workspace: bool) -> Vec<Offered> {
    let core = Core::ALL.into_iter().filter(|c| {
        let placement_ok = match c {
            // Edits of stored documents stay out of the editor's way while it has one open: its
            // form would no longer match the draft it saves over.
            Core::UpdateDocument | Core::TranslateDocument => !workspace,
            Core::PatchFields | Core::SaveDraft => workspace,
            _ => true,
        };
        placement_ok && c.requires().is_none_or(|cap| actor.require(cap).is_ok())
    });
    let plugins = plugin_tools
        .iter()
        .filter(|t| !CORE_AGENT_TOOLS.contains(&t.name.as_str()))
        .filter(|t| may_use(actor, &t.required_capabilities))
        .cloned()
        .map(Offered::Plugin);
    core.map(Offered::Core).chain(plugins).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_tool_has_its_name_and_an_object_schema() {
        for core in Core::ALL {
            assert_eq!(Core::parse(core.name()), Some(core));
            let definition = core.definition();
            assert_eq!(definition["function"]["name"], core.name());
            assert_eq!(definition["function"]["parameters"]["type"], "object");
            for required in definition["function"]["parameters"]["required"]
                .as_array()
                .unwrap()
            {
                assert!(
                    definition["function"]["parameters"]["properties"]
                        .get(required.as_str().unwrap())
                        .is_some(),
                    "{} requires an undeclared {required}",
                    core.name()
                );
            }
        }
        assert_eq!(Core::ALL.len(), CORE_AGENT_TOOLS.len());
    }
}
