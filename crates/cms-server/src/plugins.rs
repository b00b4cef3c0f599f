//! What plugins add to the HTTP door: their own routes under `/api` (SPEC.md "Plugin-contributed
//! routes"), wrappers around built-in routes (the configuration hook of SPEC.md's routing rule),
//! their OpenAPI descriptions, and the admin UI parts they declare (`cms/field/component`,
//! `cms/document/action`, `cms/admin/tool`), listed by `GET /api/plugins`.
//!
//! A plugin route is an ordinary axum handler. It is mounted in the service's own router, so
//! the same middleware resolves the caller (use [`Authed`](crate::Authed) or
//! [`MaybeAuthed`](crate::MaybeAuthed)), and its `requiredCapabilities` gate runs before it:
//! 401 without a credential, 403 without the capabilities. The gate is the service's
//! [`Actor::require_all`]; the handler then calls the service layer with the actor, like every
//! built-in handler.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::extract::{MatchedPath, Request, State};
use axum::handler::Handler;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::middleware::{self as axum_middleware, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, MethodRouter};
use cms_core::RequiredCapabilities;
use cms_service::{Actor, Cms, Error};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::path::{
    HttpMethod, Operation, OperationBuilder, ParameterBuilder, ParameterIn,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, OpenApi, PathItem, Required, ResponseBuilder};

use crate::error::{ApiError, handler_error};

/// A route a plugin adds under `/api` (`cms/server/route`).
#[derive(Clone)]
pub struct PluginRoute {
    id: String,
    method: Method,
    path: String,
    required: RequiredCapabilities,
    handler: MethodRouter,
}

impl PluginRoute {
    /// `path` is relative to `/api` (`/forms/{formId}/submissions` is served at
    /// `/api/forms/{formId}/submissions`), with axum's `{param}` captures.
    pub fn new<H, T>(
        id: impl Into<String>,
        method: Method,
        path: impl Into<String>,
        required: RequiredCapabilities,
        handler: H,
    ) -> Self
    where
        H: Handler<T, ()>,
        T: 'static,
    {
        // An unsupported method (an extension method) is kept and refused at start by
        // `check`, so the declaration's error names the route.
        let filter = MethodFilter::try_from(method.clone()).unwrap_or(MethodFilter::GET);
        PluginRoute {
            id: id.into(),
            method,
            path: path.into(),
            required,
            handler: axum::routing::on(filter, handler),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The path relative to `/api`.
    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn required(&self) -> &RequiredCapabilities {
        &self.required
    }

    /// The path as mounted: `/api` + the declared path.
    pub fn full_path(&self) -> String {
        format!("/api{}", self.path)
    }

    /// What is wrong with the declaration, if anything.
    fn check(&self) -> Result<(), String> {
        if MethodFilter::try_from(self.method.clone()).is_err() {
            return Err(format!("method {} cannot be routed", self.method));
        }
        if !self.path.starts_with('/') || self.path.len() < 2 {
            return Err(format!(
                "path `{}` must start with `/` and name something below /api",
                self.path
            ));
        }
        let segments_ok = self.path[1..].split('/').all(|segment| {
            !segment.is_empty()
                && match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Some(name) => is_identifier(name.strip_prefix('*').unwrap_or(name)),
                    None => segment
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.~".contains(c)),
                }
        });
        if !segments_ok {
            return Err(format!(
                "path `{}` must be `/`-separated names and `{{param}}` captures",
                self.path
            ));
        }
        Ok(())
    }
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The service, for plugin handlers and wrappers: `Service(cms): Service` as an extractor (or
/// `request.extensions().get::<Cms>()` in a wrapper).
pub struct Service(pub Cms);

impl<S: Send + Sync> FromRequestParts<S> for Service {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Cms>()
            .cloned()
            .map(Service)
            // Only a handler mounted outside the plugin router could ask: a bug, not input.
            .ok_or_else(|| ApiError::from(Error::Internal("no service for this route".into())))
    }
}

/// The future a [`RouteWrap`] returns.
pub type WrapFuture = Pin<Box<dyn Future<Output = Response> + Send>>;

/// A wrapper around a built-in route: it receives the request (with the caller already
/// resolved) and `next`, the built-in handler, which it may call (`next.run(request)`) or not.
#[derive(Clone)]
pub struct RouteWrap {
    method: Method,
    path: String,
    wrapper: Arc<dyn Fn(Request, Next) -> WrapFuture + Send + Sync>,
}

impl RouteWrap {
    /// Wraps the built-in route `method` `path`, as the OpenAPI document names it
    /// (`/api/documents/{id}`).
    pub fn new<F, Fut>(method: Method, path: impl Into<String>, wrapper: F) -> Self
    where
        F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        RouteWrap {
            method,
            path: path.into(),
            wrapper: Arc::new(move |req, next| Box::pin(wrapper(req, next))),
        }
    }

    pub fn method(&self) -> &Method {
        &self.method
    }

    pub fn path(&self) -> &str {
        &self.path
    }
}

/// Everything plugins add to the router, gathered by the `cms` crate's plugin registry.
#[derive(Clone, Default)]
pub struct Extensions {
    /// Each route with the id of the plugin that declared it.
    pub routes: Vec<(String, PluginRoute)>,
    /// Wrappers of built-in routes, applied in order (the first is outermost).
    pub wraps: Vec<(String, RouteWrap)>,
    /// OpenAPI descriptions of plugin routes (paths and components), merged into the document;
    /// a route without one is described generically.
    pub openapi: Vec<OpenApi>,
    /// What `GET /api/plugins` lists.
    pub manifest: Vec<PluginManifest>,
}

/// Why plugins' additions cannot be mounted: a start-up error.
#[derive(Debug, thiserror::Error)]
#[error("plugin `{plugin}`: {message}")]
pub struct ExtensionError {
    pub plugin: String,
    pub message: String,
}

impl Extensions {
    /// Checks routes and wraps against each other and against the built-in routes (`built_in`,
    /// the collected document).
    pub(crate) fn check(
        &self,
        built_in: &OpenApi,
        graphql_path: &str,
    ) -> Result<(), ExtensionError> {
        let error = |plugin: &str, message: String| ExtensionError {
            plugin: plugin.to_string(),
            message,
        };
        let mut seen: BTreeMap<(String, String), String> = BTreeMap::new();
        for (plugin, route) in &self.routes {
            route
                .check()
                .map_err(|m| error(plugin, format!("route `{}`: {m}", route.id)))?;
            let shape = path_shape(&route.full_path());
            let taken = built_in.paths.paths.keys().any(|p| path_shape(p) == shape)
                || path_shape(graphql_path) == shape;
            if taken {
                return Err(error(
                    plugin,
                    format!(
                        "route `{}` at {} is a path the service serves: wrap the built-in route instead",
                        route.id,
                        route.full_path()
                    ),
                ));
            }
            let key = (shape, route.method.to_string());
            if let Some(other) = seen.insert(key, format!("{plugin}/{}", route.id)) {
                return Err(error(
                    plugin,
                    format!(
                        "route `{}` ({} {}) is already declared by `{other}`",
                        route.id,
                        route.method,
                        route.full_path()
                    ),
                ));
            }
        }
        // Two routes may share a path only with the same capture names (the router keys paths
        // by their text).
        let mut texts: BTreeMap<String, String> = BTreeMap::new();
        for (plugin, route) in &self.routes {
            let full = route.full_path();
            if let Some(other) = texts.insert(path_shape(&full), full.clone())
                && other != full
            {
                return Err(error(
                    plugin,
                    format!(
                        "route `{}`: {full} and {other} name their captures differently",
                        route.id
                    ),
                ));
            }
        }
        for (plugin, wrap) in &self.wraps {
            let served = built_in
                .paths
                .paths
                .get(&wrap.path)
                .is_some_and(|item| has_method(item, &wrap.method))
                || (wrap.path == graphql_path && wrap.method == Method::POST);
            if !served {
                return Err(error(
                    plugin,
                    format!(
                        "wraps {} {}, which is not a built-in route",
                        wrap.method, wrap.path
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Adds the wrappers around the built-in routes already in `router`, then the plugin
    /// routes, each behind its gate.
    pub(crate) fn mount<S>(&self, mut router: axum::Router<S>, cms: &Cms) -> axum::Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        if !self.wraps.is_empty() {
            let wraps: Arc<[RouteWrap]> = self.wraps.iter().map(|(_, w)| w.clone()).collect();
            router = router.route_layer(axum_middleware::from_fn_with_state(
                (wraps, cms.clone()),
                wrapped,
            ));
        }
        let mut by_path: BTreeMap<String, MethodRouter> = BTreeMap::new();
        for (_, route) in &self.routes {
            let gated = route
                .handler
                .clone()
                .layer(axum_middleware::from_fn_with_state(
                    (Arc::new(route.required.clone()), cms.clone()),
                    gate,
                ));
            let merged = match by_path.remove(&route.full_path()) {
                Some(existing) => existing.merge(gated),
                None => gated,
            };
            by_path.insert(route.full_path(), merged);
        }
        for (path, methods) in by_path {
            router = router.route_service(&path, methods.fallback(method_not_allowed));
        }
        router
    }

    /// Adds the plugin routes to the collected document: a plugin's own description when it
    /// gave one, a generic one otherwise; either way the security the gate enforces.
    pub(crate) fn describe(&self, doc: &mut OpenApi) {
        for fragment in &self.openapi {
            doc.merge(fragment.clone());
        }
        for (plugin, route) in &self.routes {
            let path = openapi_path(&route.full_path());
            let Ok(method) = http_method(&route.method) else {
                continue;
            };
            let item = doc
                .paths
                .paths
                .entry(path.clone())
                .or_insert_with(|| PathItem::new(method.clone(), Operation::new()));
            let operation = operation_mut(item, &method);
            let described = operation
                .as_ref()
                .is_some_and(|o| !o.responses.responses.is_empty());
            let mut operation = match operation.take() {
                Some(op) if described => op,
                _ => generic_operation(plugin, route, &path),
            };
            if operation.tags.as_ref().is_none_or(Vec::is_empty) {
                operation.tags = Some(vec![plugin.clone()]);
            }
            if operation.operation_id.is_none() {
                operation.operation_id = Some(route.id.clone());
            }
            operation.security = route
                .required
                .is_public()
                .then(|| vec![SecurityRequirement::default()]);
            *operation_mut(item, &method) = Some(operation);
        }
    }
}

/// The gate of a plugin route: SPEC.md's `requiredCapabilities`, decided by the service.
async fn gate(
    State((required, cms)): State<(Arc<RequiredCapabilities>, Cms)>,
    mut req: Request,
    next: Next,
) -> Response {
    if !required.is_public() {
        let Some(actor) = req.extensions().get::<Actor>() else {
            return ApiError::from(Error::Unauthorized).into_response();
        };
        if let Err(e) = actor.require_all(required.capabilities()) {
            return ApiError::from(e).into_response();
        }
    }
    req.extensions_mut().insert(cms);
    next.run(req).await
}

/// Runs the wrapper of the matched built-in route, if one was registered; otherwise the route.
async fn wrapped(
    State((wraps, cms)): State<(Arc<[RouteWrap]>, Cms)>,
    mut req: Request,
    next: Next,
) -> Response {
    let matched = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string());
    let wrap = matched.and_then(|path| {
        wraps
            .iter()
            .find(|w| w.path == path && w.method == req.method())
    });
    match wrap {
        Some(wrap) => {
            req.extensions_mut().insert(cms);
            (wrap.wrapper)(req, next).await
        }
        None => next.run(req).await,
    }
}

async fn method_not_allowed() -> Response {
    handler_error(
        StatusCode::METHOD_NOT_ALLOWED,
        "this endpoint does not accept that method",
        &[],
    )
}

/// A path with its capture names erased, so `/a/{id}` and `/a/{key}` compare equal.
fn path_shape(path: &str) -> String {
    path.split('/')
        .map(|s| if s.starts_with('{') { "{}" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

/// The OpenAPI form of a route path: `{*rest}` is `{rest}`.
fn openapi_path(path: &str) -> String {
    path.replace("{*", "{")
}

fn captures(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
}

fn http_method(method: &Method) -> Result<HttpMethod, ()> {
    Ok(match *method {
        Method::GET => HttpMethod::Get,
        Method::POST => HttpMethod::Post,
        Method::PUT => HttpMethod::Put,
        Method::DELETE => HttpMethod::Delete,
        Method::PATCH => HttpMethod::Patch,
        Method::HEAD => HttpMethod::Head,
        Method::OPTIONS => HttpMethod::Options,
        Method::TRACE => HttpMethod::Trace,
        _ => return Err(()),
    })
}

fn has_method(item: &PathItem, method: &Method) -> bool {
    let mut item = item.clone();
    http_method(method).is_ok_and(|m| operation_mut(&mut item, &m).is_some())
}

fn operation_mut<'a>(item: &'a mut PathItem, method: &HttpMethod) -> &'a mut Option<Operation> {
    match method {
        HttpMethod::Get => &mut item.get,
        HttpMethod::Post => &mut item.post,
        HttpMethod::Put => &mut item.put,
        HttpMethod::Delete => &mut item.delete,
        HttpMethod::Patch => &mut item.patch,
        HttpMethod::Head => &mut item.head,
        HttpMethod::Options => &mut item.options,
        HttpMethod::Trace => &mut item.trace,
    }
}

/// What is known of a route its plugin did not describe: its path parameters, a JSON body for
/// writes, and whatever the handler answers.
fn generic_operation(plugin: &str, route: &PluginRoute, path: &str) -> Operation {
    let any = || {
        ContentBuilder::new()
            .schema(Some(utoipa::openapi::schema::Schema::default()))
            .build()
    };
    let mut builder = OperationBuilder::new()
        .summary(Some(format!("`{}` (plugin `{plugin}`)", route.id)))
        .description(Some(
            "A route contributed by a plugin, which did not describe it further.",
        ))
        .response(
            "default",
            ResponseBuilder::new()
                .description("The plugin's answer")
                .content("application/json", any())
                .build(),
        );
    for name in captures(path) {
        builder = builder.parameter(
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Path)
                .required(Required::True)
                .schema(Some(
                    utoipa::openapi::schema::ObjectBuilder::new()
                        .schema_type(utoipa::openapi::schema::Type::String),
                )),
        );
    }
    if matches!(route.method, Method::POST | Method::PUT | Method::PATCH) {
        builder = builder.request_body(Some(
            RequestBodyBuilder::new()
                .content("application/json", any())
                .build(),
        ));
    }
    builder.build()
}

/// One plugin as `GET /api/plugins` lists it: what it declared, by extension point.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginManifest {
    pub id: String,
    /// `cms/schema`: the types it registered.
    pub schemas: Vec<String>,
    /// `cms/settings`: whether it has settings (`/api/plugin-settings`).
    pub settings: bool,
    /// `cms/capabilities`.
    pub capabilities: Vec<String>,
    /// Custom event types it declared.
    pub events: Vec<String>,
    /// `cms/event/consumer`: consumer ids.
    pub consumers: Vec<String>,
    /// `cms/job/handler`: job types.
    pub job_types: Vec<String>,
    /// `cms/server/route`.
    pub routes: Vec<RouteInfo>,
    /// Built-in routes it wraps (`METHOD /path`).
    pub wraps: Vec<String>,
    /// `cms/agent/tool`.
    pub agent_tools: Vec<AgentToolInfo>,
    /// `cms/field/component`.
    pub field_components: Vec<FieldComponent>,
    /// `cms/document/action`.
    pub document_actions: Vec<DocumentAction>,
    /// `cms/admin/tool`.
    pub admin_tools: Vec<AdminTool>,
}

/// A plugin route as listed.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteInfo {
    pub id: String,
    pub method: String,
    /// The mounted path, `/api/...`.
    pub path: String,
    pub required_capabilities: RequiredCapabilities,
}

/// An assistant tool as listed (`definition` of `cms/agent/tool`, without its input schema).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentToolInfo {
    pub name: String,
    pub description: String,
    pub mutates: bool,
    /// `server` or `workspace`.
    pub execution: String,
    pub required_capabilities: RequiredCapabilities,
}

/// An admin UI part: a custom element and the ES module that defines it, served by the plugin
/// (usually from one of its own public routes), so the admin needs no build step per plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Component {
    /// The custom element's tag name (it contains a `-`, as custom elements must).
    pub element: String,
    /// The module's URL: a path on this instance (`/api/...`).
    pub module: String,
}

impl Component {
    pub fn new(element: impl Into<String>, module: impl Into<String>) -> Self {
        Component {
            element: element.into(),
            module: module.into(),
        }
    }

    /// What is wrong with it, if anything.
    pub fn check(&self) -> Result<(), String> {
        let element_ok = self.element.contains('-')
            && self.element.starts_with(|c: char| c.is_ascii_lowercase())
            && self
                .element
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._".contains(c));
        if !element_ok {
            return Err(format!(
                "`{}` is not a custom element name (lowercase, starting with a letter, with a `-`)",
                self.element
            ));
        }
        if !self.module.starts_with('/') || self.module.starts_with("//") {
            return Err(format!(
                "module `{}` must be a path on this instance (`/api/...`): the admin loads nothing from elsewhere",
                self.module
            ));
        }
        Ok(())
    }
}

/// `cms/field/component`: an input for fields whose schema names `input`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldComponent {
    pub input: String,
    pub component: Component,
}

/// `cms/document/action`: a button on the document editor.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocumentAction {
    pub id: String,
    pub title: String,
    pub component: Component,
    /// The document types it shows on; absent for every type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applies_to: Option<Vec<String>>,
}

/// Where an admin tool shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Placement {
    #[default]
    Tab,
    Sidebar,
}

/// The admin's tool groups; a tool naming another group falls back to `tools`.
pub const ADMIN_TOOL_GROUPS: &[&str] = &["content", "assets", "settings", "tools"];

/// `cms/admin/tool`: a page of the admin.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdminTool {
    pub id: String,
    pub title: String,
    pub component: Component,
    pub placement: Placement,
    /// One of [`ADMIN_TOOL_GROUPS`]; an unknown group was replaced by `tools`.
    pub group: String,
}

impl AdminTool {
    /// A tool in `group`, or in the default `tools` group when the admin has no such group.
    pub fn new(
        id: impl Into<String>,
        title: impl Into<String>,
        component: Component,
        placement: Placement,
        group: Option<&str>,
    ) -> Self {
        let group = group
            .filter(|g| ADMIN_TOOL_GROUPS.contains(g))
            .unwrap_or("tools");
        AdminTool {
            id: id.into(),
            title: title.into(),
            component,
            placement,
            group: group.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_ignore_capture_names() {
        assert_eq!(path_shape("/api/a/{id}/b"), path_shape("/api/a/{key}/b"));
        assert_ne!(path_shape("/api/a/{id}"), path_shape("/api/a/b"));
        assert_eq!(openapi_path("/api/files/{*rest}"), "/api/files/{rest}");
    }

    #[test]
    fn components_must_be_custom_elements_served_here() {
        assert!(
            Component::new("acme-rating", "/api/acme/rating.js")
                .check()
                .is_ok()
        );
        assert!(
            Component::new("rating", "/api/acme/rating.js")
                .check()
                .is_err()
        );
        assert!(Component::new("Acme-Rating", "/api/x.js").check().is_err());
        assert!(
            Component::new("acme-rating", "https://cdn.example/x.js")
                .check()
                .is_err()
        );
        assert!(
            Component::new("acme-rating", "//cdn.example/x.js")
                .check()
                .is_err()
        );
    }

    #[test]
    fn unknown_admin_groups_fall_back_to_tools() {
        let c = Component::new("acme-report", "/api/acme/report.js");
        let known = AdminTool::new("r", "Report", c.clone(), Placement::Tab, Some("settings"));
        assert_eq!(known.group, "settings");
        let unknown = AdminTool::new("r", "Report", c.clone(), Placement::Sidebar, Some("nope"));
        assert_eq!(unknown.group, "tools");
        assert_eq!(
            AdminTool::new("r", "R", c, Placement::Tab, None).group,
            "tools"
        );
    }
}
