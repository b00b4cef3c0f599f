//! Plugins: Rust values that contribute parts to the service's extension points (SPEC.md
//! "Extension points (plugin parts)"), registered on the [`Builder`](crate::Builder) by the host
//! application.
//!
//! ```no_run
//! use cms::plugin::{Plugin, PluginParts};
//! use cms::core::RequiredCapabilities;
//! use cms::server::{Authed, ApiResult, Data, ok};
//! use axum::http::Method;
//! use axum::Json;
//!
//! struct Hello;
//!
//! impl Plugin for Hello {
//!     fn id(&self) -> &str { "hello" }
//!     fn register(&self, parts: &mut PluginParts) {
//!         parts.capability("hello.greet", "Greet", "Be greeted by the hello plugin", "hello");
//!         let required = parts.required(&["hello.greet"]);
//!         parts.route(cms::server::PluginRoute::new("greet", Method::GET, "/hello", required,
//!             |Authed(actor): Authed| async move {
//!                 ApiResult::Ok(ok(format!("hello, {}", actor.user.name)))
//!             }));
//!     }
//! }
//! # async fn run(config: cms::Config) -> Result<(), cms::StartError> {
//! let app = cms::Builder::new(config).plugin(Hello).build().await?;
//! # Ok(()) }
//! ```
//!
//! Every declaration is checked when the service starts; a bad one (a duplicate id, an event
//! nobody declared, a capability outside the plugin's namespace, a route on a path the service
//! serves) stops the start with a message naming the plugin. The first-party plugins
//! (`forms`, `webhooks`, in [`crate::plugins`]) are built with nothing but this API.

use std::collections::BTreeSet;
use std::sync::Arc;

use cms_core::plugin_settings::{SettingField, SettingsDeclaration};
use cms_core::schema::Schema;
use cms_core::{Capability, CapabilityInfo, RequiredCapabilities};
use cms_server::plugins::{
    AdminTool, AgentToolInfo, Component, DocumentAction, FieldComponent, Placement, PluginManifest,
    RouteInfo,
};
use cms_server::{PluginRoute, RouteWrap};
use cms_service::events::{BUILT_IN_EVENT_TYPES, EventDeclaration, namespaced};
use cms_service::jobs::{Consumer, JobHandler};
use serde_json::Value;

pub use cms_server::plugins::{ADMIN_TOOL_GROUPS, Placement as ToolPlacement};

/// A plugin. `register` is called once, at start, in registration order.
pub trait Plugin: Send + Sync + 'static {
    /// The plugin's id: lowercase letters, digits, `-` and `_`, starting with a letter. Its
    /// capabilities are namespaced by it (`forms.export`).
    fn id(&self) -> &str;

    /// Contributes the plugin's parts.
    fn register(&self, parts: &mut PluginParts);
}

pub use cms_agent::{AgentTool, CORE_AGENT_TOOLS, ToolExecution, ToolHandler};

/// What one plugin contributes, collected by [`Plugin::register`].
pub struct PluginParts {
    id: String,
    pub(crate) schemas: Vec<Schema>,
    pub(crate) capabilities: Vec<CapabilityInfo>,
    pub(crate) event_types: Vec<EventDeclaration>,
    pub(crate) settings: Option<SettingsDeclaration>,
    pub(crate) consumers: Vec<Consumer>,
    pub(crate) job_handlers: Vec<(String, Arc<dyn JobHandler>)>,
    pub(crate) routes: Vec<PluginRoute>,
    pub(crate) wraps: Vec<RouteWrap>,
    pub(crate) openapi: Vec<utoipa::openapi::OpenApi>,
    pub(crate) agent_tools: Vec<AgentTool>,
    pub(crate) field_components: Vec<FieldComponent>,
    pub(crate) document_actions: Vec<DocumentAction>,
    pub(crate) admin_tools: Vec<AdminTool>,
    /// Event types known when this plugin registers: built-in, the host's, and those of the
    /// plugins registered before it.
    known_event_types: Vec<String>,
    /// Declarations that were wrong as given; reported together at start.
    errors: Vec<String>,
}

impl PluginParts {
    fn new(id: &str, known_event_types: Vec<String>) -> Self {
        PluginParts {
            id: id.to_string(),
            schemas: Vec::new(),
            capabilities: Vec::new(),
            event_types: Vec::new(),
            settings: None,
            known_event_types,
            consumers: Vec::new(),
            job_handlers: Vec::new(),
            routes: Vec::new(),
            wraps: Vec::new(),
            openapi: Vec::new(),
            agent_tools: Vec::new(),
            field_components: Vec::new(),
            document_actions: Vec::new(),
            admin_tools: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// The plugin's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn error(&mut self, message: String) {
        self.errors.push(message);
    }

    /// `cms/schema`: a document or object type, registered beside the host's.
    pub fn schema(&mut self, schema: Schema) -> &mut Self {
        self.schemas.push(schema);
        self
    }

    /// `cms/schema` in its JSON form (CONTRACT.md section 2).
    pub fn schema_json(&mut self, json: Value) -> &mut Self {
        match Schema::from_json(&json) {
            Ok(schema) => self.schemas.push(schema),
            Err(e) => self.error(format!("schema: {e}")),
        }
        self
    }

    /// `cms/capabilities`: a capability `<plugin id>.<action>`, grantable to roles and keys and
    /// held by every organization's `owner`.
    pub fn capability(
        &mut self,
        name: &str,
        title: &str,
        description: &str,
        group: &str,
    ) -> &mut Self {
        let namespace = format!("{}.", self.id);
        match name.parse::<Capability>() {
            Ok(cap @ Capability::Plugin(_)) if name.starts_with(&namespace) => {
                self.capabilities.push(CapabilityInfo {
                    name: cap,
                    title: title.to_string(),
                    description: description.to_string(),
                    group: group.to_string(),
                    plugin: Some(self.id.clone()),
                })
            }
            _ => self.error(format!(
                "capability `{name}` must be named `{namespace}<action>` (letters, digits, `_`, `-`)"
            )),
        }
        self
    }

    /// A `requiredCapabilities` list from names; a malformed name is reported at start (an
    /// undeclared one too, once every plugin has declared its own).
    pub fn required(&mut self, names: &[&str]) -> RequiredCapabilities {
        let mut list = Vec::new();
        for name in names {
            match name.parse::<Capability>() {
                Ok(cap) => list.push(cap),
                Err(e) => self.error(e.to_string()),
            }
        }
        RequiredCapabilities::all(list)
    }

    /// A custom event type (`<vendor>.<thing>.<happened>`) and its payload schema; emitted with
    /// `cms.events().emit(..)`, which parses the payload first.
    pub fn event_type(&mut self, declaration: EventDeclaration) -> &mut Self {
        add_known(&mut self.known_event_types, &declaration.name);
        self.event_types.push(declaration);
        self
    }

    /// Every event type a consumer of this plugin may subscribe to: the built-in ones, the
    /// host's, those of the plugins registered before this one, and this plugin's own so far,
    /// each once. A malformed name is left out: its declaration stops the start with its own
    /// message, which a subscription to it must not preempt.
    pub fn known_event_types(&self) -> &[String] {
        &self.known_event_types
    }

    /// `cms/settings`: the plugin's settings page. Values are kept per organization
    /// (`/api/plugin-settings`), secrets encrypted; the plugin's consumers and job handlers
    /// receive their organization's values, secrets decrypted, as `ctx.settings`.
    pub fn settings(
        &mut self,
        title: &str,
        description: &str,
        fields: Vec<SettingField>,
    ) -> &mut Self {
        if self.settings.is_some() {
            self.error("declares its settings twice".into());
        }
        self.settings = Some(SettingsDeclaration {
            plugin_id: self.id.clone(),
            title: title.to_string(),
            description: description.to_string(),
            fields,
        });
        self
    }

    /// `cms/event/consumer`. Its handler receives this plugin's settings of the event's
    /// organization.
    pub fn consumer(&mut self, mut consumer: Consumer) -> &mut Self {
        consumer.plugin = Some(self.id.clone());
        self.consumers.push(consumer);
        self
    }

    /// `cms/job/handler`: runs jobs of a namespaced type, with this plugin's settings of the
    /// job's organization.
    pub fn job_handler(&mut self, job_type: &str, handler: Arc<dyn JobHandler>) -> &mut Self {
        self.job_handlers.push((job_type.to_string(), handler));
        self
    }

    /// `cms/server/route`.
    pub fn route(&mut self, route: PluginRoute) -> &mut Self {
        self.routes.push(route);
        self
    }

    /// The configuration hook of SPEC.md's routing rule: wraps a built-in route inside the
    /// service's own router; the wrapper may chain to the built-in handler.
    pub fn wrap(&mut self, wrap: RouteWrap) -> &mut Self {
        self.wraps.push(wrap);
        self
    }

    /// An OpenAPI description (paths and components) of this plugin's routes, for example a
    /// `#[derive(utoipa::OpenApi)]` document of `#[utoipa::path]` handlers. Routes left
    /// undescribed get a generic description.
    pub fn openapi(&mut self, document: utoipa::openapi::OpenApi) -> &mut Self {
        self.openapi.push(document);
        self
    }

    /// `cms/agent/tool`.
    pub fn agent_tool(&mut self, tool: AgentTool) -> &mut Self {
        self.agent_tools.push(tool);
        self
    }

    /// `cms/field/component`: the input for fields declaring `input`.
    pub fn field_component(&mut self, input: &str, component: Component) -> &mut Self {
        self.field_components.push(FieldComponent {
            input: input.to_string(),
            component,
        });
        self
    }

    /// `cms/document/action`; `applies_to` `None` shows it on every type.
    pub fn document_action(
        &mut self,
        id: &str,
        title: &str,
        component: Component,
        applies_to: Option<Vec<String>>,
    ) -> &mut Self {
        self.document_actions.push(DocumentAction {
            id: id.to_string(),
            title: title.to_string(),
            component,
            applies_to,
        });
        self
    }

    /// `cms/admin/tool`: placed as a tab unless `Sidebar`; an unknown `group` falls back to
    /// the default `tools` group (logged).
    pub fn admin_tool(
        &mut self,
        id: &str,
        title: &str,
        component: Component,
        placement: Placement,
        group: Option<&str>,
    ) -> &mut Self {
        if let Some(g) = group.filter(|g| !ADMIN_TOOL_GROUPS.contains(g)) {
            tracing::warn!(plugin = %self.id, tool = id, group = g,
                "admin tool names an unknown group: it is shown under Tools");
        }
        self.admin_tools
            .push(AdminTool::new(id, title, component, placement, group));
        self
    }
}

/// What every plugin contributed, checked together.
#[derive(Default)]
pub(crate) struct Collected {
    pub(crate) schemas: Vec<Schema>,
    pub(crate) capabilities: Vec<CapabilityInfo>,
    pub(crate) event_types: Vec<EventDeclaration>,
    pub(crate) settings: Vec<SettingsDeclaration>,
    pub(crate) consumers: Vec<Consumer>,
    /// Job types with the plugin that handles them.
    pub(crate) job_handlers: Vec<(String, String, Arc<dyn JobHandler>)>,
    pub(crate) extensions: cms_server::Extensions,
    pub(crate) agent_tools: Vec<AgentTool>,
}

/// Why the plugins cannot start.
#[derive(Debug, thiserror::Error)]
#[error("plugin `{plugin}`: {message}")]
pub struct PluginError {
    pub plugin: String,
    pub message: String,
}

fn plugin_error(plugin: &str, message: impl Into<String>) -> PluginError {
    PluginError {
        plugin: plugin.to_string(),
        message: message.into(),
    }
}

/// Adds an event type to a list of known ones: once, and only when its name is well formed.
fn add_known(known: &mut Vec<String>, name: &str) {
    if namespaced(name) && !known.iter().any(|k| k == name) {
        known.push(name.to_string());
    }
}

/// Registers every plugin in order and checks what they declared, alone and together.
/// `types` are the host's document types (plugins' are added to them).
pub(crate) fn collect(
    plugins: &[Arc<dyn Plugin>],
    host_types: &[String],
    host_capabilities: &[Capability],
    host_event_types: &[EventDeclaration],
) -> Result<Collected, PluginError> {
    let mut all = Collected::default();
    let mut known_event_types = Vec::new();
    for name in BUILT_IN_EVENT_TYPES
        .iter()
        .copied()
        .chain(host_event_types.iter().map(|e| e.name.as_str()))
    {
        add_known(&mut known_event_types, name);
    }
    let mut ids = BTreeSet::new();
    let mut registered = Vec::new();
    for plugin in plugins {
        let id = plugin.id().to_string();
        if !is_plugin_id(&id) {
            return Err(plugin_error(
                &id,
                "an id is lowercase letters, digits, `-` and `_`, starting with a letter",
            ));
        }
        if !ids.insert(id.clone()) {
            return Err(plugin_error(&id, "is registered twice"));
        }
        let mut parts = PluginParts::new(&id, known_event_types.clone());
        plugin.register(&mut parts);
        for declaration in &parts.event_types {
            add_known(&mut known_event_types, &declaration.name);
        }
        if let Some(first) = parts.errors.first() {
            return Err(plugin_error(&id, first.clone()));
        }
        registered.push(parts);
    }
    let mut declared: BTreeSet<Capability> = host_capabilities.iter().cloned().collect();
    for parts in &registered {
        for info in &parts.capabilities {
            if !declared.insert(info.name.clone()) {
                return Err(plugin_error(
                    &parts.id,
                    format!("capability `{}` is declared twice", info.name),
                ));
            }
        }
    }
    let mut types: BTreeSet<String> = host_types.iter().cloned().collect();
    types.extend(
        registered
            .iter()
            .flat_map(|p| p.schemas.iter().map(|s| s.name.clone())),
    );
    let mut tool_names = BTreeSet::new();
    let mut inputs = BTreeSet::new();
    for parts in registered {
        let id = parts.id.clone();
        check_parts(&parts, &declared, &types, &mut tool_names, &mut inputs)?;
        all.extensions.manifest.push(manifest(&parts));
        let PluginParts {
            schemas,
            capabilities,
            event_types,
            settings,
            consumers,
            job_handlers,
            routes,
            wraps,
            openapi,
            agent_tools,
            ..
        } = parts;
        all.schemas.extend(schemas);
        all.capabilities.extend(capabilities);
        all.event_types.extend(event_types);
        all.settings.extend(settings);
        all.consumers.extend(consumers);
        all.job_handlers.extend(
            job_handlers
                .into_iter()
                .map(|(job_type, handler)| (id.clone(), job_type, handler)),
        );
        all.extensions
            .routes
            .extend(routes.into_iter().map(|r| (id.clone(), r)));
        all.extensions
            .wraps
            .extend(wraps.into_iter().map(|w| (id.clone(), w)));
        all.extensions.openapi.extend(openapi);
        all.agent_tools.extend(
            agent_tools
                .into_iter()
                .filter(|t| !CORE_AGENT_TOOLS.contains(&t.name.as_str())),
        );
    }
    Ok(all)
}

fn check_parts(
    parts: &PluginParts,
    declared: &BTreeSet<Capability>,
    types: &BTreeSet<String>,
    tool_names: &mut BTreeSet<String>,
    inputs: &mut BTreeSet<String>,
) -> Result<(), PluginError> {
    let id = parts.id.as_str();
    let undeclared = |required: &RequiredCapabilities| {
        required
            .capabilities()
            .iter()
            .find(|c| matches!(c, Capability::Plugin(_)) && !declared.contains(*c))
            .cloned()
    };
    let mut route_ids = BTreeSet::new();
    for route in &parts.routes {
        if !route_ids.insert(route.id()) {
            return Err(plugin_error(
                id,
                format!("route id `{}` is used twice", route.id()),
            ));
        }
        if let Some(cap) = undeclared(route.required()) {
            return Err(plugin_error(
                id,
                format!(
                    "route `{}` requires `{cap}`, which no plugin declares",
                    route.id()
                ),
            ));
        }
    }
    for tool in &parts.agent_tools {
        check_tool(tool)
            .map_err(|m| plugin_error(id, format!("agent tool `{}`: {m}", tool.name)))?;
        if let Some(cap) = undeclared(&tool.required_capabilities) {
            return Err(plugin_error(
                id,
                format!(
                    "agent tool `{}` requires `{cap}`, which no plugin declares",
                    tool.name
                ),
            ));
        }
        if CORE_AGENT_TOOLS.contains(&tool.name.as_str()) {
            tracing::warn!(plugin = id, tool = %tool.name,
                "an agent tool has the name of a core tool: the core tool wins");
        } else if !tool_names.insert(tool.name.clone()) {
            return Err(plugin_error(
                id,
                format!(
                    "agent tool `{}` is already declared by another plugin",
                    tool.name
                ),
            ));
        }
    }
    for field in &parts.field_components {
        field
            .component
            .check()
            .map_err(|m| plugin_error(id, format!("field component `{}`: {m}", field.input)))?;
        if field.input.trim().is_empty() || !inputs.insert(field.input.clone()) {
            return Err(plugin_error(
                id,
                format!(
                    "field component input `{}` is empty or already taken",
                    field.input
                ),
            ));
        }
    }
    let mut action_ids = BTreeSet::new();
    for action in &parts.document_actions {
        action
            .component
            .check()
            .map_err(|m| plugin_error(id, format!("document action `{}`: {m}", action.id)))?;
        if action.id.trim().is_empty() || !action_ids.insert(action.id.as_str()) {
            return Err(plugin_error(
                id,
                format!("document action id `{}` is empty or used twice", action.id),
            ));
        }
        if let Some(unknown) = action
            .applies_to
            .iter()
            .flatten()
            .find(|t| !types.contains(*t))
        {
            return Err(plugin_error(
                id,
                format!(
                    "document action `{}` applies to `{unknown}`, which is not a registered type",
                    action.id
                ),
            ));
        }
    }
    let mut tool_ids = BTreeSet::new();
    for tool in &parts.admin_tools {
        tool.component
            .check()
            .map_err(|m| plugin_error(id, format!("admin tool `{}`: {m}", tool.id)))?;
        if tool.id.trim().is_empty() || !tool_ids.insert(tool.id.as_str()) {
            return Err(plugin_error(
                id,
                format!("admin tool id `{}` is empty or used twice", tool.id),
            ));
        }
    }
    Ok(())
}

/// An assistant tool's definition as a chat-completions backend accepts it.
fn check_tool(tool: &AgentTool) -> Result<(), String> {
    let name_ok = !tool.name.is_empty()
        && tool.name.len() <= 64
        && tool
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !name_ok {
        return Err("a name is 1 to 64 letters, digits, `_` or `-`".into());
    }
    if tool.description.trim().is_empty() {
        return Err("a description tells the model when to use it".into());
    }
    if tool.required_capabilities.is_public() {
        return Err(
            "`public` is for routes: a tool runs for a signed-in caller ([] for any member)".into(),
        );
    }
    if tool.input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the input schema must be a JSON Schema of `type: object`".into());
    }
    Ok(())
}

fn is_plugin_id(id: &str) -> bool {
    id.len() <= 64
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn manifest(parts: &PluginParts) -> PluginManifest {
    PluginManifest {
        id: parts.id.clone(),
        schemas: parts.schemas.iter().map(|s| s.name.clone()).collect(),
        settings: parts.settings.is_some(),
        capabilities: parts
            .capabilities
            .iter()
            .map(|c| c.name.to_string())
            .collect(),
        events: parts.event_types.iter().map(|e| e.name.clone()).collect(),
        consumers: parts.consumers.iter().map(|c| c.id.clone()).collect(),
        job_types: parts.job_handlers.iter().map(|(t, _)| t.clone()).collect(),
        routes: parts
            .routes
            .iter()
            .map(|r| RouteInfo {
                id: r.id().to_string(),
                method: r.method().to_string(),
                path: r.full_path(),
                required_capabilities: r.required().clone(),
            })
            .collect(),
        wraps: parts
            .wraps
            .iter()
            .map(|w| format!("{} {}", w.method(), w.path()))
            .collect(),
        agent_tools: parts
            .agent_tools
            .iter()
            .filter(|t| !CORE_AGENT_TOOLS.contains(&t.name.as_str()))
            .map(|t| AgentToolInfo {
                name: t.name.clone(),
                description: t.description.clone(),
                mutates: t.mutates,
                execution: match t.execution {
                    ToolExecution::Server => "server".into(),
                    ToolExecution::Workspace => "workspace".into(),
                },
                required_capabilities: t.required_capabilities.clone(),
            })
            .collect(),
        field_components: parts.field_components.clone(),
        document_actions: parts.document_actions.clone(),
        admin_tools: parts.admin_tools.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Declares `declares`, and records the event types it was told were known.
    struct Probe {
        id: &'static str,
        declares: Vec<&'static str>,
        seen: Mutex<Vec<String>>,
    }

    impl Plugin for Probe {
        fn id(&self) -> &str {
            self.id
        }

        fn register(&self, parts: &mut PluginParts) {
            for name in &self.declares {
                let declaration = EventDeclaration::from_json(name, &serde_json::json!([]));
                if let Ok(declaration) = declaration {
                    parts.event_type(declaration);
                }
            }
            *self.seen.lock().unwrap() = parts.known_event_types().to_vec();
        }
    }

    fn probe(id: &'static str, declares: &[&'static str]) -> Arc<Probe> {
        Arc::new(Probe {
            id,
            declares: declares.to_vec(),
            seen: Mutex::default(),
        })
    }

    #[test]
    fn known_event_types_are_those_declared_before_each_once_and_well_formed() {
        let host = ["acme.thing.happened", "happened", "document.published"]
            .map(|name| EventDeclaration::from_json(name, &serde_json::json!([])).unwrap());
        let first = probe("first", &["first.thing.done", "first.thing.done"]);
        let last = probe("last", &[]);
        let plugins: Vec<Arc<dyn Plugin>> = vec![first.clone(), last.clone()];
        // The duplicates are refused later, by the event type checks; what matters here is
        // what each plugin is shown.
        let _ = collect(&plugins, &[], &[], &host);
        // Every built-in type, then the host's well-formed new one, then the plugins'.
        let expected = |extra: &[&str]| -> Vec<String> {
            BUILT_IN_EVENT_TYPES
                .iter()
                .chain(&["acme.thing.happened"])
                .chain(extra)
                .map(|s| s.to_string())
                .collect()
        };
        assert_eq!(*first.seen.lock().unwrap(), expected(&["first.thing.done"]));
        assert_eq!(*last.seen.lock().unwrap(), expected(&["first.thing.done"]));
    }
}
