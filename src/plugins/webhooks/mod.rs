//! The `webhooks` plugin (CONTRACT.md sections 11 and 16): it sends every webhook delivery.
//!
//! What is sent where is the service's (`cms.webhooks()`): the relay makes one delivery job
//! (`webhooks.deliver`) per event and endpoint that wants it, plus one per event the settings
//! form lists (the form this plugin declares: one URL per organization, the event types to
//! send there and a signing secret). An event nobody wants makes no job. This plugin is the
//! job handler: for each attempt it asks the service for the request (the event as the log
//! shows it, signed with Standard Webhooks headers for an endpoint, with the section-11
//! `x-cms-event`, `x-cms-delivery` and `x-cms-signature` for the form), sends it with its one
//! HTTP client (a timeout, no redirects, internal targets refused when configured), and tells
//! the service what the receiver answered. A non-2xx answer, a timeout or a refused target
//! fails the attempt, so the queue retries it with backoff and dead-letters it after
//! `maxAttempts`.
//!
//! While this plugin is off (`plugins.webhooks = false`) no handler is registered, so the
//! service has no endpoints and the relay makes no webhook job.

pub mod delivery;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cms_service::jobs::{HandlerContext, HandlerError, JobHandler, JobView};
use cms_service::webhooks::{DELIVER_JOB, DeliveryJob, PLUGIN_ID, settings_fields};

use crate::config::PluginsConfig;
use crate::plugin::{Plugin, PluginParts};
use delivery::{Deliverer, DeliveryPolicy};

/// The plugin's id, also the plugin whose settings hold the settings form.
pub const PLUGIN: &str = PLUGIN_ID;

/// The `webhooks` plugin.
pub struct Webhooks {
    /// Shared by every delivery (one client, one connection pool).
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
        parts.settings(
            "Webhooks",
            "Posts this organization's events, as JSON, to a URL of yours",
            settings_fields(),
        );
        parts.job_handler(
            DELIVER_JOB,
            Arc::new(Sender {
                deliverer: self.deliverer.clone(),
            }),
        );
    }
}

/// The job handler: one attempt of one delivery.
struct Sender {
    deliverer: Arc<Deliverer>,
}

#[async_trait]
impl JobHandler for Sender {
    async fn run(&self, ctx: &HandlerContext, job: &JobView) -> Result<(), HandlerError> {
        let webhooks = ctx.cms.webhooks();
        let delivery = DeliveryJob {
            id: &job.id,
            organization_id: job.organization_id.as_deref(),
            payload: &job.payload,
        };
        // Nothing to send any more (the endpoint was deleted or disabled, the form changed).
        let Some(outgoing) = webhooks.outgoing(delivery).await? else {
            return Ok(());
        };
        let attempt = self.deliverer.send(&outgoing).await;
        webhooks.record_attempt(delivery, attempt.status).await?;
        attempt.result.map_err(HandlerError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
