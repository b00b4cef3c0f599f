//! The HTTP door: routes, middleware, envelopes and the one mapping of errors to responses.
//!
//! Architecture invariant: no handler decides access, writes SQL or emits events. Handlers
//! parse the request, call the service layer with the actor the middleware resolved, and render
//! the result.

mod client_address;
mod csrf;
mod delivery;
mod error;
mod extract;
mod graphql;
mod middleware;
mod openapi;
pub mod plugins;
mod request_metrics;
mod routes;
mod security_headers;
mod session_cookie;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::middleware as axum_middleware;
use axum::response::Response;
use cms_agent::{Agent, AgentService};
use cms_service::Cms;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::openapi::OpenApi;
use utoipa_axum::router::OpenApiRouter;

pub use axum::Router;
pub use client_address::TrustedProxy;
pub use delivery::{CacheSettings, CorsOrigins, CorsSettings};
pub use error::{ApiError, ApiResult, error_name};
pub use extract::{ApiJson, ApiQuery, Authed, Client, MaybeAuthed};
pub use plugins::{ExtensionError, Extensions, PluginRoute, RouteWrap};
pub use routes::{Data, Paged, created, ok, paged};

/// Settings of the HTTP door.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// The largest JSON body accepted (413 past it).
    pub max_json_bytes: usize,
    /// The address the instance is reached at, when it is behind a proxy (`https://cms.example`).
    /// When set, it is the only origin the CSRF check accepts.
    pub public_url: Option<String>,
    /// Proxies whose `X-Forwarded-For` names the client (`server.trustedProxies`); from any
    /// other peer the header is ignored.
    pub trusted_proxies: Vec<TrustedProxy>,
    /// Where the GraphQL endpoint is served (`graphql.path`).
    pub graphql_path: String,
    /// Whether `/api/docs` serves the rendered reference (`openapi.docsUi`); the document at
    /// `/api/openapi.json` is served either way.
    pub docs_ui: bool,
    /// Which origins may call the API from a browser (`cors.*`).
    pub cors: CorsSettings,
    /// `Cache-Control` of answers to the `public` role (`delivery.*`).
    pub caching: CacheSettings,
    /// How many MCP sessions this instance keeps, and how long an idle one lives
    /// (`mcp.maxSessions`, `mcp.sessionIdleSeconds`); `None`: `/api/mcp` is not served
    /// (`mcp.enabled = false`).
    pub mcp: Option<cms_mcp::SessionLimits>,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            max_json_bytes: 10 * 1024 * 1024,
            public_url: None,
            trusted_proxies: Vec::new(),
            graphql_path: DEFAULT_GRAPHQL_PATH.to_string(),
            docs_ui: true,
            cors: CorsSettings::default(),
            caching: CacheSettings::default(),
            mcp: Some(cms_mcp::SessionLimits {
                idle: std::time::Duration::from_secs(1800),
                max: 1000,
            }),
        }
    }
}

/// The default of `graphql.path`.
pub const DEFAULT_GRAPHQL_PATH: &str = "/api/graphql";

/// The tracing target of the one event per service call a GraphQL request makes.
pub use graphql::CALL_TARGET as GRAPHQL_CALL_TARGET;
pub use graphql::{MAX_COMPLEXITY as GRAPHQL_MAX_COMPLEXITY, MAX_DEPTH as GRAPHQL_MAX_DEPTH};

#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) cms: Cms,
    /// The assistant, built once at start (`/api/agent/chat`).
    pub(crate) agent: Arc<Agent>,
    pub(crate) settings: Arc<ServerSettings>,
    /// The origin of `public_url`, for the CSRF check.
    pub(crate) public_origin: Option<csrf::Origin>,
    /// The GraphQL schema, built once from the registered document types.
    pub(crate) graphql: graphql::Built,
    /// The OpenAPI document as served, built once with the router.
    pub(crate) openapi: Arc<[u8]>,
    /// What the plugins declared (`GET /api/plugins`).
    pub(crate) plugins: Arc<[plugins::PluginManifest]>,
    /// CORS and the cache headers (CONTRACT.md section 15).
    pub(crate) delivery: Arc<delivery::Delivery>,
    /// The MCP server's transport (`/api/mcp`), with its sessions; `None` when turned off.
    pub(crate) mcp: Option<cms_mcp::HttpTransport>,
    /// The admin pages' Content-Security-Policy, with the preview origins of the document
    /// types in `frame-src` (built once: the types are fixed for the life of the router).
    pub(crate) admin_policy: axum::http::HeaderValue,
}

impl AppState {
    /// The assistant in front of the service: chat turns as the caller.
    pub(crate) fn agent(&self) -> AgentService<'_> {
        AgentService::new(&self.cms, &self.agent)
    }

    /// Whether cookies must be `Secure`: the instance is served over https.
    pub(crate) fn is_secure(&self, headers: &HeaderMap) -> bool {
        self.settings
            .public_url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"))
            || headers
                .get("x-forwarded-proto")
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"))
    }
}

impl AppState {
    /// Where links the service hands out start when `server.publicUrl` is unset: the origin
    /// this request was made to (its `Host`, over https when the request came that way), so an
    /// invitation's `acceptUrl` opens the instance the inviter is using. `None` with
    /// `publicUrl` set (the service uses it) or without a well-formed `Host`.
    pub(crate) fn request_origin(&self, headers: &HeaderMap) -> Option<String> {
        if self.settings.public_url.is_some() {
            return None;
        }
        let host = headers.get(axum::http::header::HOST)?.to_str().ok()?;
        let authority: axum::http::uri::Authority = host.parse().ok()?;
        if authority.as_str().contains('@') {
            return None;
        }
        let scheme = if self.is_secure(headers) {
            "https"
        } else {
            "http"
        };
        Some(format!("{scheme}://{authority}"))
    }
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The whole HTTP API, without plugins.
pub fn router(cms: Cms, agent: Arc<Agent>, settings: ServerSettings) -> Router {
    match build(cms, agent, settings, Extensions::default()) {
        Ok(built) => built.router,
        // Without extensions nothing can conflict.
        Err(e) => unreachable!("{e}"),
    }
}

/// A router and the OpenAPI document it serves.
pub struct Built {
    pub router: Router,
    pub openapi: OpenApi,
    /// The MCP sessions `/api/mcp` opens: end them as the server shuts down (their streams do
    /// not end by themselves).
    pub mcp_sessions: cms_mcp::Sessions,
}

/// The document of `/api/openapi.json`, pretty-printed (`cms openapi`).
pub fn openapi_pretty(document: &OpenApi) -> Vec<u8> {
    to_bytes(document, true)
}

/// The whole HTTP API with what plugins add: their routes, behind their gates, and their
/// wrappers around built-in routes. A plugin route on a path the service serves, two plugins
/// declaring one route, or a wrapper of a route that does not exist is refused here. `agent`
/// answers `/api/agent/chat` (with the plugins' tools it was built with).
pub fn build(
    cms: Cms,
    agent: Arc<Agent>,
    settings: ServerSettings,
    extensions: Extensions,
) -> Result<Built, ExtensionError> {
    let body_limit = settings.max_json_bytes;
    let max_upload_bytes = cms.settings().assets.max_upload_bytes;
    let public_origin = settings.public_url.as_deref().and_then(|url| {
        let origin = csrf::Origin::of_url(url);
        if origin.is_none() {
            tracing::warn!(%url, "server.publicUrl is not an http(s) URL: the CSRF check uses each request's Host");
        }
        origin
    });
    let graphql_path = settings.graphql_path.clone();
    let security_headers =
        security_headers::SecurityHeaders::new(settings.public_url.as_deref(), &graphql_path);
    let delivery = Arc::new(delivery::Delivery::new(&settings.cors, &settings.caching));
    let cors = delivery.cors.clone();
    let (routes, mut collected) = api(max_upload_bytes, &graphql_path).split_for_parts();
    extensions.check(&collected, &graphql_path)?;
    extensions.describe(&mut collected);
    let openapi = openapi::finish(collected, cms.schemas(), &graphql_path);
    let mcp_sessions = cms_mcp::Sessions::default();
    let mcp = settings.mcp.map(|limits| {
        cms_mcp::HttpTransport::new(
            cms.clone(),
            agent.clone(),
            limits,
            body_limit,
            &mcp_sessions,
        )
    });
    let counted = cms.clone();
    let state = AppState {
        mcp,
        graphql: graphql::build(cms.schemas()),
        admin_policy: routes::admin::page_policy(cms.schemas()),
        openapi: to_bytes(&openapi, false).into(),
        plugins: extensions.manifest.clone().into(),
        cms,
        agent,
        settings: Arc::new(settings),
        public_origin,
        delivery,
    };
    let router = extensions
        .mount(routes, &state.cms)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum_middleware::from_fn_with_state(state.clone(), middleware::resolve_actor))
        // The admin's files are the same for everyone: merged inside the resolution of the
        // caller, so a page's two dozen modules cost no session lookups.
        .merge(routes::admin::files())
        .layer(axum_middleware::from_fn(middleware::refuse_nul))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
            let id = req.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("");
            tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
        }))
        // A bug that panics in a handler answers 500 in the envelope, and is logged, instead of
        // dropping the connection.
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(delivery::compression::layer())
        // Outside the compression, which sets the coding the tag is suffixed with.
        .layer(axum_middleware::from_fn(delivery::compression::tag_coding))
        // Outside the caller's resolution: a preflight never reaches authentication, CSRF or
        // a rate limit. Inside the security headers, which every answer carries.
        .layer(axum_middleware::from_fn_with_state(cors, delivery::cors::gate))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        // Around everything the service answers, refusals and panics included.
        .layer(axum_middleware::from_fn_with_state(
            security_headers,
            security_headers::add,
        ))
        // Outermost: a client's own x-request-id is kept, otherwise a UUID is made.
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        // Around all of it, so the time and status are what the client gets; after routing
        // (each route is wrapped), so the route's template is known (see `request_metrics`).
        .layer(request_metrics::RecordLayer::new(counted))
        .with_state(state);
    Ok(Built {
        router,
        openapi,
        mcp_sessions,
    })
}

fn panic_response(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic without a message");
    tracing::error!(panic = %detail, "a handler panicked");
    error::handler_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "an internal error occurred",
        &[],
    )
}

async fn not_found() -> Response {
    error::no_such_endpoint()
}

async fn method_not_allowed() -> Response {
    error::handler_error(
        StatusCode::METHOD_NOT_ALLOWED,
        "this endpoint does not accept that method",
        &[],
    )
}

/// Every route of the HTTP API. Each handler carries its own description, so the OpenAPI
/// document is collected from exactly what is mounted.
fn api(max_upload_bytes: u64, graphql_path: &str) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(routes::documents::routes())
        .merge(routes::preview::routes())
        .merge(routes::presence::routes())
        .merge(routes::docs::routes())
        .merge(routes::admin::routes())
        .merge(routes::health::routes())
        .merge(routes::metrics::routes())
        .merge(routes::auth::routes())
        .merge(routes::account::routes())
        .merge(routes::two_factor::routes())
        .merge(routes::oidc::routes())
        .merge(routes::organizations::routes())
        .merge(routes::locales::routes())
        .merge(routes::api_keys::routes())
        .merge(routes::assets::routes(max_upload_bytes))
        .merge(routes::media::routes())
        .merge(routes::schemas::routes())
        .merge(routes::jobs::routes())
        .merge(routes::audit::routes())
        .merge(routes::event_stream::routes())
        .merge(routes::instance_settings::routes())
        .merge(routes::roles::routes())
        .merge(routes::plugins::routes())
        .merge(routes::plugin_settings::routes())
        .merge(routes::webhooks::routes())
        .merge(routes::agent::routes())
        .merge(routes::mcp::routes())
        .merge(graphql::routes(graphql_path).into())
}

fn to_bytes(document: &OpenApi, pretty: bool) -> Vec<u8> {
    let bytes = if pretty {
        serde_json::to_vec_pretty(document)
    } else {
        serde_json::to_vec(document)
    };
    // The document is made of types this crate defines: failing to serialize it is a bug,
    // reported where it is served rather than taking the service down.
    bytes.unwrap_or_else(|e| {
        tracing::error!(error = %e, "the OpenAPI document does not serialize");
        b"{}".to_vec()
    })
}

/// Serves the API on `listener` until `shutdown` resolves, then lets in-flight requests finish.
/// Event streams (GET /api/events/stream) and MCP sessions' streams (GET /api/mcp) never finish
/// by themselves: let `shutdown` call `Cms::end_event_streams` and `Built::mcp_sessions`'
/// `end_all` as it resolves, or the drain waits for their clients to leave.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    // A streamed answer (an MCP request's one-event stream, an assistant turn) ends with a small
    // write of its own; with Nagle's algorithm on, that write waits for the client's delayed
    // ACK, 40 ms on Linux, on every reused connection.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set");
        }
    });
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}
