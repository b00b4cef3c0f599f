//! The `newsletter` plugin: what a host application adds to the service through the public
//! plugin API alone.
//!
//! - `cms/capabilities`: `newsletter.send`, grantable to custom roles and API keys;
//! - `cms/settings`: the mailing list id, the provider's API token (a secret, encrypted at
//!   rest) and whether publishing a post queues an issue;
//! - a custom event, `newsletter.issue.queued`, with its payload schema;
//! - `cms/event/consumer`: on `document.published`, queues an issue of the published post when
//!   the organization's settings ask for it;
//! - `cms/server/route`: `POST /api/newsletter/issues/{documentId}` queues one by hand
//!   (`newsletter.send`), and `GET /api/newsletter/admin.js` serves the admin tool's module;
//! - `cms/admin/tool`: the newsletter page of the admin.

use std::sync::Arc;

use async_trait::async_trait;
use axum::Json;
use axum::extract::Path;
use axum::http::{Method, StatusCode, header};
use axum::response::IntoResponse;
use cms::core::RequiredCapabilities;
use cms::core::plugin_settings::{SettingField, SettingKind};
use cms::plugin::{Plugin, PluginParts};
use cms::server::plugins::{Component, Placement, Service};
use cms::server::{ApiResult, Authed, Data, PluginRoute};
use cms::service::documents::{Perspective, ReadOptions};
use cms::service::jobs::{Consumer, EventHandler, EventView, HandlerContext, HandlerError};
use cms::service::{Actor, Cms, Error, EventDeclaration};
use serde_json::{Value, json};

pub const PLUGIN: &str = "newsletter";
pub const QUEUED: &str = "newsletter.issue.queued";

pub struct Newsletter;

impl Plugin for Newsletter {
    fn id(&self) -> &str {
        PLUGIN
    }

    fn register(&self, parts: &mut PluginParts) {
        parts.capability(
            "newsletter.send",
            "Send newsletters",
            "Queue a newsletter issue of a published post",
            "newsletter",
        );
        parts.settings(
            "Newsletter",
            "Where issues of published posts are sent.",
            vec![
                field("listId", SettingKind::String, "Mailing list id"),
                field("apiToken", SettingKind::Secret, "Provider API token"),
                field(
                    "sendOnPublish",
                    SettingKind::Boolean,
                    "Queue an issue when a post is published",
                ),
            ],
        );
        let payload = json!([
            { "name": "documentId", "type": "string", "required": true },
            { "name": "listId", "type": "string", "required": true },
        ]);
        match EventDeclaration::from_json(QUEUED, &payload) {
            Ok(declaration) => {
                parts.event_type(declaration);
            }
            Err(e) => unreachable!("a fixed, valid declaration: {e}"),
        }
        parts.consumer(Consumer {
            id: "newsletter-on-publish".into(),
            events: vec!["document.published".into()],
            max_attempts: Some(3),
            handler: Arc::new(OnPublish),
            settings: json!({}),
            plugin: None, // set to this plugin by `parts.consumer`
        });
        let senders = parts.required(&["newsletter.send"]);
        parts.route(PluginRoute::new(
            "queue-issue",
            Method::POST,
            "/newsletter/issues/{documentId}",
            senders,
            queue_issue,
        ));
        parts.route(PluginRoute::new(
            "admin-module",
            Method::GET,
            "/newsletter/admin.js",
            RequiredCapabilities::Public,
            admin_module,
        ));
        parts.admin_tool(
            "newsletter",
            "Newsletter",
            Component::new("newsletter-page", "/api/newsletter/admin.js"),
            Placement::Tab,
            Some("tools"),
        );
    }
}

fn field(name: &str, kind: SettingKind, title: &str) -> SettingField {
    SettingField {
        name: name.into(),
        kind,
        title: title.into(),
    }
}

/// Queues an issue: the event is the durable fact a delivery consumer (or an outside system
/// reading `/api/events`) acts on.
async fn queue(cms: &Cms, actor: &Actor, document_id: &str, list_id: &str) -> Result<(), Error> {
    cms.events()
        .emit(
            actor,
            QUEUED,
            json!({ "documentId": document_id, "listId": list_id }),
        )
        .await
        .map(|_| ())
}

/// On `document.published`: queue an issue of a published post when the organization's
/// settings say so. Delivery is at least once, so a redelivered event may queue twice; a real
/// sender dedupes by the event id.
struct OnPublish;

#[async_trait]
impl EventHandler for OnPublish {
    async fn handle(&self, ctx: &HandlerContext, event: &EventView) -> Result<(), HandlerError> {
        let settings = &ctx.settings;
        let wanted =
            settings["sendOnPublish"] == json!(true) && event.payload["documentType"] == "post";
        let (Some(list_id), Some(org)) = (
            settings["listId"].as_str().filter(|l| !l.is_empty()),
            event.organization_id.as_deref(),
        ) else {
            return Ok(());
        };
        if !wanted {
            return Ok(());
        }
        let document_id = event.payload["documentId"].as_str().unwrap_or_default();
        let actor = ctx.cms.plugin_actor(PLUGIN, org).await?;
        queue(&ctx.cms, &actor, document_id, list_id).await?;
        Ok(())
    }
}

/// `POST /api/newsletter/issues/{documentId}`: 202 with the list the issue goes to; 404 for a
/// document that is not published; 409 until a list id is set.
async fn queue_issue(
    Service(cms): Service,
    Authed(actor): Authed,
    Path(document_id): Path<String>,
) -> ApiResult<(StatusCode, Json<Data<Value>>)> {
    let published = ReadOptions {
        perspective: Perspective::Published,
        ..ReadOptions::default()
    };
    let document = cms.documents().get(&actor, &document_id, published).await?;
    let org = document.organization_id.clone();
    let settings = cms.plugin_settings().values_for(&org, PLUGIN).await?;
    let Some(list_id) = settings["listId"].as_str().filter(|l| !l.is_empty()) else {
        return Err(Error::Conflict(
            "set the mailing list id in the newsletter settings first".into(),
        )
        .into());
    };
    queue(&cms, &actor, &document.id, list_id).await?;
    let body = json!({ "queued": true, "documentId": document.id, "listId": list_id });
    Ok((StatusCode::ACCEPTED, cms::server::ok(body)))
}

/// The admin tool's module: a custom element the admin mounts on the plugin's page.
async fn admin_module() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        r#"class NewsletterPage extends HTMLElement {
  connectedCallback() {
    this.textContent = "Issues are queued when posts are published (see the plugin's settings).";
  }
}
customElements.define("newsletter-page", NewsletterPage);
"#,
    )
}
