//! What a delivery job sends, and what it got back: for the job handler that sends (the
//! `webhooks` plugin's, with its HTTP client), below every access rule. The handler asks for
//! the request of each attempt ([`WebhookService::outgoing`]): the event as the log shows it,
//! signed anew with this attempt's timestamp under the endpoint's current secret; it then
//! records the receiver's answer ([`WebhookService::record_attempt`]) for the delivery log.

use cms_core::Timestamp;
use serde_json::{Value, json};

use super::settings_form::{self, PLUGIN_ID};
use super::signing::{settings_signature, standard_signature};
use super::{WebhookService, endpoint_slot};
use crate::error::{Error, Result};
use crate::events::{EventView, WEBHOOK_TEST};
use crate::plugin_settings::PluginSettingsService;

/// The job being run, as its handler received it.
#[derive(Debug, Clone, Copy)]
pub struct DeliveryJob<'a> {
    /// The job's id: the delivery's id (`webhook-id`, `x-cms-delivery`), the same on every
    /// retry.
    pub id: &'a str,
    pub organization_id: Option<&'a str>,
    pub payload: &'a Value,
}

/// One HTTP request to send: `POST url` with these headers (beside `content-type:
/// application/json`) and this body.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// Where a delivery job goes, from its payload.
enum Target<'a> {
    Endpoint {
        event_id: &'a str,
        endpoint_id: &'a str,
        /// For a test ping (an event that is in no log): when it was made.
        test_at: Option<i64>,
    },
    SettingsForm {
        event_id: &'a str,
    },
}

impl<'a> Target<'a> {
    fn of(payload: &'a Value) -> Result<Target<'a>> {
        let text = |name: &str| payload.get(name).and_then(Value::as_str);
        let event_id = text("eventId")
            .ok_or_else(|| Error::bad_request("a webhook delivery job names its eventId"))?;
        if let Some(endpoint_id) = text("endpointId") {
            let test_at = payload
                .get("test")
                .and_then(|t| t.get("createdAt"))
                .and_then(Value::as_i64);
            return Ok(Target::Endpoint {
                event_id,
                endpoint_id,
                test_at,
            });
        }
        if payload.get("settings") == Some(&Value::Bool(true)) {
            return Ok(Target::SettingsForm { event_id });
        }
        Err(Error::bad_request(
            "a webhook delivery job names its endpointId, or the settings form",
        ))
    }
}

/// A test ping's job payload: the endpoint, the id the test event gets and when it was made.
pub(crate) fn test_payload(event_id: &str, endpoint_id: &str, at: Timestamp) -> Value {
    json!({
        "eventId": event_id,
        "endpointId": endpoint_id,
        "test": { "createdAt": at.millis() },
    })
}

impl WebhookService<'_> {
    /// The request of this attempt of a delivery job, or `None` when there is nothing to send
    /// any more: the endpoint was deleted, or disabled (a test ping still goes), or the
    /// settings form no longer sends the event's type. An error (the secret does not open, the
    /// event cannot be read) fails the attempt.
    pub async fn outgoing(&self, job: DeliveryJob<'_>) -> Result<Option<Outgoing>> {
        let Some(organization) = job.organization_id else {
            return Ok(None);
        };
        match Target::of(job.payload)? {
            Target::Endpoint {
                event_id,
                endpoint_id,
                test_at,
            } => {
                self.to_endpoint(job.id, organization, event_id, endpoint_id, test_at)
                    .await
            }
            Target::SettingsForm { event_id } => {
                self.to_settings_form(job.id, organization, event_id).await
            }
        }
    }

    /// Records the HTTP status the receiver answered on this attempt (`None`: no answer, such
    /// as a timeout or a refused target), shown as the delivery's `responseStatus`.
    pub async fn record_attempt(&self, job: DeliveryJob<'_>, status: Option<u16>) -> Result<()> {
        let (Some(organization), Ok(Target::Endpoint { .. })) =
            (job.organization_id, Target::of(job.payload))
        else {
            // The settings form keeps no delivery log.
            return Ok(());
        };
        let mut tx = self.inner.store.write_for(organization).await?;
        tx.set_webhook_response_status(job.id, status.map(i32::from))
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn to_endpoint(
        &self,
        delivery_id: &str,
        organization: &str,
        event_id: &str,
        endpoint_id: &str,
        test_at: Option<i64>,
    ) -> Result<Option<Outgoing>> {
        let mut tx = self.inner.store.read_for(organization).await?;
        let Some(endpoint) = tx.webhook_endpoint(organization, endpoint_id).await? else {
            return Ok(None);
        };
        if !endpoint.enabled && test_at.is_none() {
            return Ok(None);
        }
        let event = match test_at {
            Some(at) => EventView {
                id: event_id.to_string(),
                organization_id: Some(organization.to_string()),
                event_type: WEBHOOK_TEST.to_string(),
                payload: json!({ "endpointId": endpoint_id }),
                created_at: at.into(),
            },
            None => logged_event(&mut *tx, event_id).await?,
        };
        drop(tx);
        let secret = self.open_secret(&endpoint.secret, organization, endpoint_id)?;
        let body = serde_json::to_vec(&event).map_err(|e| Error::Internal(e.to_string()))?;
        let timestamp = self.inner.clock.now().millis().div_euclid(1000);
        let signature =
            standard_signature(&secret, delivery_id, timestamp, &body).map_err(Error::Internal)?;
        Ok(Some(Outgoing {
            url: endpoint.url,
            headers: vec![
                ("webhook-id", delivery_id.to_string()),
                ("webhook-timestamp", timestamp.to_string()),
                ("webhook-signature", signature),
                ("x-cms-event", event.event_type),
            ],
            body,
        }))
    }

    async fn to_settings_form(
        &self,
        delivery_id: &str,
        organization: &str,
        event_id: &str,
    ) -> Result<Option<Outgoing>> {
        let values = PluginSettingsService::new(self.inner)
            .values_for(organization, PLUGIN_ID)
            .await?;
        let event = {
            let mut tx = self.inner.store.read_for(organization).await?;
            logged_event(&mut *tx, event_id).await?
        };
        // Read as the settings are now: a URL or list changed since the relay still counts.
        let Some(target) = settings_form::target(&values, &event.event_type) else {
            return Ok(None);
        };
        let body = serde_json::to_vec(&event).map_err(|e| Error::Internal(e.to_string()))?;
        let mut headers = vec![
            ("x-cms-event", event.event_type.clone()),
            ("x-cms-delivery", delivery_id.to_string()),
        ];
        if let Some(secret) = target.secret {
            headers.push(("x-cms-signature", settings_signature(secret, &body)));
        }
        Ok(Some(Outgoing {
            url: target.url.to_string(),
            headers,
            body,
        }))
    }

    /// The plaintext of an endpoint's sealed secret.
    fn open_secret(&self, sealed: &str, organization: &str, endpoint_id: &str) -> Result<String> {
        let secret_box = self.inner.secret_box.as_ref().ok_or_else(|| {
            Error::Internal(
                "the signing secret of a webhook endpoint cannot be opened: \
                 CMS_SECRET_ENCRYPTION_KEY is not configured"
                    .into(),
            )
        })?;
        secret_box
            .open(sealed, endpoint_slot(organization, endpoint_id))
            .map_err(Error::Internal)
    }
}

/// An event of the log, as the log shows it.
async fn logged_event(tx: &mut dyn cms_store::Tx, event_id: &str) -> Result<EventView> {
    tx.event(event_id)
        .await?
        .map(EventView::from)
        .ok_or_else(|| Error::NotFound(format!("event {event_id} does not exist")))
}
