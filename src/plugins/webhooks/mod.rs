//! The `webhooks` plugin (CONTRACT.md section 11): each organization may name a URL, the event
//! types to send there and a signing secret (plugin settings); every matching event is POSTed
//! to the URL as JSON by a delivery job of the queue, so a failed attempt is retried with
//! backoff and dead-lettered after `maxAttempts` like any other.
//!
//! The plugin's one consumer subscribes to every event type known when it registers: the
//! built-in ones, the host's, and those of every plugin registered before it (`first_party`
//! registers it last). Each event therefore gets one delivery job for it, in every
//! organization; where no webhook is set, or the event's type is not in the organization's
//! list, that job does nothing and completes.
//!
//! A request carries the event `{ id, type, organizationId, payload, createdAt }` and the
//! headers `x-cms-event` (the type), `x-cms-delivery` (the delivery job's id, the same on every
//! retry: receivers dedupe by it or by the event id) and, when a secret is set,
//! `x-cms-signature: sha256=<hex HMAC-SHA-256 of the raw body under the secret>`. Without a
//! secret the signature header is left out.

pub mod delivery;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cms_core::plugin_settings::{SettingField, SettingKind};
use cms_service::jobs::{Consumer, EventHandler, EventView, HandlerContext, HandlerError};
use serde_json::Value;

use crate::config::PluginsConfig;
use crate::plugin::{Plugin, PluginParts};
use delivery::{Deliverer, Delivery, DeliveryPolicy};

/// The plugin's id, also the id of its consumer.
pub const PLUGIN: &str = "webhooks";

/// The `webhooks` plugin.
pub struct Webhooks {
    /// Shared by every delivery of the plugin's consumer (one client, one connection pool).
    deliverer: Arc<Deliverer>,
}

impl Webhooks {
    /// The plugin as the configuration sets it up: `plugins.webhooksTimeoutMs` bounds each
    /// attempt, `plugins.webhooksDenyPrivateTargets` refuses internal targets.
    pub fn new(config: &PluginsConfig) -> Self {
        Webhooks {
            deliverer: Arc::new(Deliverer::new(DeliveryPolicy {
                timeout: Duration::from_millis(config.webhooks_timeout_ms),
                deny_private_targets: config.webhooks_deny_private_targets,
            })),
        }
    }
}

impl Plugin for Webhooks {
    fn id(&self) -> &str {
        PLUGIN
    }

    fn register(&self, parts: &mut PluginParts) {
        let field = |name: &str, kind: SettingKind, title: &str| SettingField {
            name: name.into(),
            kind,
            title: title.into(),
        };
        parts.settings(
            "Webhooks",
            "Posts this organization's events, as JSON, to a URL of yours",
            vec![
                field(
                    "url",
                    SettingKind::String,
                    "Target URL (http or https); empty sends nothing",
                ),
                field(
                    "events",
                    SettingKind::String,
                    "Event types to send, comma-separated (for example document.published)",
                ),
                field(
                    "secret",
                    SettingKind::Secret,
                    "Signing secret: requests carry x-cms-signature, an HMAC-SHA-256 of the body",
                ),
            ],
        );
        let events = parts.known_event_types().to_vec();
        parts.consumer(Consumer {
            id: PLUGIN.into(),
            events,
            max_attempts: None,
            handler: Arc::new(Sender {
                deliverer: self.deliverer.clone(),
            }),
            settings: Value::Object(Default::default()),
            plugin: None,
        });
    }
}

/// The consumer's handler: one delivery per event, when the organization's settings ask for it.
struct Sender {
    deliverer: Arc<Deliverer>,
}

/// What an organization's settings make of one event.
#[derive(Debug, PartialEq, Eq)]
enum Target<'a> {
    /// Nothing to send: no URL, or the type is not in the list.
    None,
    Send {
        url: &'a str,
        secret: Option<&'a str>,
    },
}

/// Where `event_type` goes under `settings` (the plugin's values, secrets decrypted).
fn target<'a>(settings: &'a Value, event_type: &str) -> Target<'a> {
    let text = |name: &str| {
        settings
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let Some(url) = text("url") else {
        return Target::None;
    };
    let listed = text("events")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .any(|listed| !listed.is_empty() && listed == event_type);
    if !listed {
        return Target::None;
    }
    // The secret is used as saved (not trimmed): it is the receiver's key.
    let secret = settings
        .get("secret")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    Target::Send { url, secret }
}

#[async_trait]
impl EventHandler for Sender {
    async fn handle(&self, ctx: &HandlerContext, event: &EventView) -> Result<(), HandlerError> {
        // An instance-wide event belongs to no organization, so to no organization's webhook.
        if event.organization_id.is_none() {
            return Ok(());
        }
        let Target::Send { url, secret } = target(&ctx.settings, &event.event_type) else {
            return Ok(());
        };
        let body = serde_json::to_vec(event)?;
        self.deliverer
            .send(Delivery {
                url,
                secret,
                event_type: &event.event_type,
                delivery_id: &ctx.job_id,
                body,
            })
            .await
            .map_err(HandlerError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_settings_decide_what_is_sent_where() {
        let settings = json!({
            "url": " https://hooks.example.com/in ",
            "events": " document.published, ,forms.submission.created ,",
            "secret": "s3cret",
        });
        assert_eq!(
            target(&settings, "document.published"),
            Target::Send {
                url: "https://hooks.example.com/in",
                secret: Some("s3cret")
            }
        );
        assert!(matches!(
            target(&settings, "forms.submission.created"),
            Target::Send { .. }
        ));
        // Exact names only: no prefixes, no empty entry matching an empty type.
        assert_eq!(target(&settings, "document"), Target::None);
        assert_eq!(target(&settings, ""), Target::None);
        assert_eq!(target(&settings, "user.deleted"), Target::None);

        // No secret: sent unsigned.
        let unsigned = json!({"url": "http://h/", "events": "user.deleted", "secret": null});
        assert_eq!(
            target(&unsigned, "user.deleted"),
            Target::Send {
                url: "http://h/",
                secret: None
            }
        );
        // No URL, or an empty or missing list: nothing.
        for settings in [
            json!({"url": null, "events": "user.deleted", "secret": null}),
            json!({"url": "  ", "events": "user.deleted"}),
            json!({"url": "http://h/", "events": null}),
            json!({"url": "http://h/", "events": " , "}),
            json!({}),
        ] {
            assert_eq!(
                target(&settings, "user.deleted"),
                Target::None,
                "{settings}"
            );
        }
    }

    #[test]
    fn the_configuration_sets_the_delivery_policy() {
        let plugin = Webhooks::new(&PluginsConfig {
            webhooks_timeout_ms: 1500,
            ..PluginsConfig::default()
        });
        assert_eq!(
            plugin.deliverer.policy().timeout,
            Duration::from_millis(1500)
        );
        assert!(!plugin.deliverer.policy().deny_private_targets);
    }
}
