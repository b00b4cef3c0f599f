//! Webhook endpoints for integrators (CONTRACT.md section 16), `cms.webhooks()`: an
//! organization's receivers of its events, managed by people and keys holding `org.settings`,
//! each signing its deliveries with a secret of its own (Standard Webhooks).
//!
//! - `input.rs` checks what a request sets (400 with `issues`);
//! - `fan_out.rs` is the relay's share: one delivery job per event and endpoint that wants it
//!   (and per event the settings form of section 11 lists), keyed `wh:{event}:{endpoint}`;
//! - `sending.rs` gives the job handler that sends (the `webhooks` plugin's) the request of
//!   each attempt, and records what the receiver answered;
//! - `signing.rs` makes secrets and signatures; `settings_form.rs` is the settings form.
//!
//! Endpoints exist only while something sends their deliveries: a handler of
//! [`DELIVER_JOB`] is registered (the `webhooks` plugin, `plugins.webhooks`). Otherwise every
//! operation answers 404, like other features that are off.

mod fan_out;
mod input;
mod sending;
mod settings_form;
mod signing;

use cms_core::{CoreCapability, JobStatus, Timestamp, new_id};
use cms_store::Json;
use cms_store::audit::AuditRecord;
use cms_store::webhooks::{WebhookDeliveryEntry, WebhookDeliveryRecord, WebhookEndpointRecord};
use serde::Serialize;

use crate::Inner;
use crate::actor::Actor;
use crate::audit::{self, AuditAction, AuditTarget};
use crate::error::{Error, Result};
use crate::events::WEBHOOK_TEST;
use crate::paging::{Pagination, page_or_default, page_window};
use crate::queue::{DEFAULT_MAX_ATTEMPTS, new_job};
use crate::secret_box::SecretSlot;

pub(crate) use fan_out::fan_out;
pub use input::{EVERY_EVENT, EndpointChange, NewEndpoint};
pub use sending::{DeliveryJob, Outgoing};
pub use settings_form::{PLUGIN_ID, settings_fields};
pub use signing::SECRET_PREFIX;

/// The job type of every webhook delivery. The job handler registered for it sends them; while
/// none is, webhooks are off.
pub const DELIVER_JOB: &str = "webhooks.deliver";
/// The most endpoints one organization may have.
pub const MAX_ENDPOINTS: usize = 20;

/// An endpoint as every answer shows it: never its secret.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEndpoint {
    pub id: String,
    pub organization_id: String,
    pub url: String,
    /// `["*"]` (every event type), or the event types it receives.
    pub events: Vec<String>,
    pub description: String,
    pub enabled: bool,
    pub created_by: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// The newest delivery to it; `null` before the first.
    pub last_delivery: Option<WebhookDelivery>,
}

/// A new endpoint with its signing secret: the only time the secret is shown.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CreatedWebhookEndpoint {
    #[serde(flatten)]
    pub endpoint: WebhookEndpoint,
    /// `whsec_` and the base64 of 32 random bytes, shown this once.
    pub secret: String,
}

/// A new signing secret, shown once.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct WebhookSecret {
    /// `whsec_` and the base64 of 32 random bytes.
    pub secret: String,
}

/// An endpoint deleted.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DeletedWebhookEndpoint {
    pub id: String,
    /// Always `true`.
    pub deleted: bool,
}

/// One delivery of an endpoint: one event sent (and retried) as one job.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    /// The delivery's id, which is its job's and the `webhook-id` of every attempt.
    pub id: String,
    pub endpoint_id: String,
    pub event_id: String,
    pub event_type: String,
    /// The job's status.
    #[schema(value_type = JobStatus)]
    pub status: String,
    pub attempts: i64,
    pub max_attempts: i64,
    pub last_error: Option<String>,
    /// The HTTP status the receiver answered on the last attempt; `null` before an answer, or
    /// when the last attempt got none (a timeout, a refused target).
    pub response_status: Option<i32>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub completed_at: Option<Timestamp>,
}

impl From<WebhookDeliveryEntry> for WebhookDelivery {
    fn from(e: WebhookDeliveryEntry) -> Self {
        WebhookDelivery {
            id: e.delivery.job_id,
            endpoint_id: e.delivery.endpoint_id,
            event_id: e.delivery.event_id,
            event_type: e.delivery.event_type,
            status: e.status,
            attempts: e.attempts,
            max_attempts: e.max_attempts,
            last_error: e.last_error,
            response_status: e.delivery.response_status,
            created_at: e.delivery.created_at.into(),
            updated_at: e.updated_at.into(),
            completed_at: e.completed_at.map(Into::into),
        }
    }
}

/// The webhook endpoints of the active organization (`org.settings`), and what the job
/// handler that sends their deliveries needs.
pub struct WebhookService<'a> {
    inner: &'a Inner,
}

impl<'a> WebhookService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        WebhookService { inner }
    }

    /// Whether webhooks are on: a handler sends their deliveries.
    pub fn is_on(&self) -> bool {
        is_on(self.inner)
    }

    /// The organization's endpoints, oldest first, each with its newest delivery.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<WebhookEndpoint>> {
        let org = self.manager_org(actor)?;
        let mut tx = self.inner.store.read_for(org).await?;
        let records = tx.webhook_endpoints(org).await?;
        let mut latest = tx.latest_webhook_deliveries(org).await?;
        Ok(records
            .into_iter()
            .map(|r| {
                let last = take_latest(&mut latest, &r.id);
                view(r, last)
            })
            .collect())
    }

    /// One endpoint of the organization (404 for another organization's).
    pub async fn get(&self, actor: &Actor, id: &str) -> Result<WebhookEndpoint> {
        let org = self.manager_org(actor)?;
        let mut tx = self.inner.store.read_for(org).await?;
        let record = found(tx.webhook_endpoint(org, id).await?)?;
        let mut latest = tx.latest_webhook_deliveries(org).await?;
        let last = take_latest(&mut latest, id);
        Ok(view(record, last))
    }

    /// Creates an endpoint with a new signing secret, shown in this answer only. An
    /// organization has at most [`MAX_ENDPOINTS`] (409 past it). The secret is stored sealed:
    /// without CMS_SECRET_ENCRYPTION_KEY nothing is created (422).
    pub async fn create(
        &self,
        actor: &Actor,
        input: NewEndpoint,
    ) -> Result<CreatedWebhookEndpoint> {
        let org = self.manager_org(actor)?;
        let checked = input::check_new(input, &self.inner.event_types)
            .map_err(|issues| Error::invalid(issues.into_vec()))?;
        let id = new_id();
        let secret = signing::new_secret();
        let sealed = self.seal(&secret, org, &id)?;
        let now = self.inner.clock.now().millis();
        let record = WebhookEndpointRecord {
            id,
            organization_id: org.to_string(),
            url: checked.url,
            events: Json(checked.events),
            description: checked.description,
            enabled: checked.enabled,
            secret: sealed,
            created_by: Some(actor.user.id.clone()),
            created_at: now,
            updated_at: now,
        };
        let mut tx = self.inner.store.write_for(org).await?;
        // Two creations at once must not both find room for one more.
        tx.hold_until_end(&format!("webhook-endpoints:{org}"))
            .await?;
        if tx.webhook_endpoints(org).await?.len() >= MAX_ENDPOINTS {
            return Err(Error::Conflict(format!(
                "an organization has at most {MAX_ENDPOINTS} webhook endpoints: delete one first"
            )));
        }
        tx.insert_webhook_endpoint(&record).await?;
        tx.append_audit(&[endpoint_audit(
            actor,
            org,
            AuditAction::WebhookCreated,
            &record.id,
            &record.url,
            now,
        )])
        .await?;
        tx.commit().await?;
        Ok(CreatedWebhookEndpoint {
            endpoint: view(record, None),
            secret,
        })
    }

    /// Changes the fields given; the secret changes only by [`WebhookService::rotate_secret`].
    /// Disabling an endpoint cancels its deliveries still waiting.
    pub async fn update(
        &self,
        actor: &Actor,
        id: &str,
        change: EndpointChange,
    ) -> Result<WebhookEndpoint> {
        let org = self.manager_org(actor)?;
        if change.is_empty() {
            return Err(Error::bad_request(
                "give at least one of url, events, description, enabled",
            ));
        }
        let mut tx = self.inner.store.write_for(org).await?;
        let mut record = found(tx.webhook_endpoint(org, id).await?)?;
        let current = input::Checked {
            url: record.url.clone(),
            events: record.events.0.clone(),
            description: record.description.clone(),
            enabled: record.enabled,
        };
        let checked = input::check_change(change, current, &self.inner.event_types)
            .map_err(|issues| Error::invalid(issues.into_vec()))?;
        let now = self.inner.clock.now().millis();
        if record.enabled && !checked.enabled {
            tx.cancel_webhook_deliveries(id, now).await?;
        }
        record.url = checked.url;
        record.events = Json(checked.events);
        record.description = checked.description;
        record.enabled = checked.enabled;
        record.updated_at = now;
        tx.update_webhook_endpoint(&record).await?;
        tx.append_audit(&[endpoint_audit(
            actor,
            org,
            AuditAction::WebhookUpdated,
            id,
            &record.url,
            now,
        )])
        .await?;
        let mut latest = tx.latest_webhook_deliveries(org).await?;
        tx.commit().await?;
        let last = take_latest(&mut latest, id);
        Ok(view(record, last))
    }

    /// Replaces the signing secret; the new one is shown in this answer only. Every attempt
    /// from now on, retries of earlier deliveries included, is signed with it.
    pub async fn rotate_secret(&self, actor: &Actor, id: &str) -> Result<WebhookSecret> {
        let org = self.manager_org(actor)?;
        let secret = signing::new_secret();
        let sealed = self.seal(&secret, org, id)?;
        let mut tx = self.inner.store.write_for(org).await?;
        let mut record = found(tx.webhook_endpoint(org, id).await?)?;
        record.secret = sealed;
        record.updated_at = self.inner.clock.now().millis();
        tx.update_webhook_endpoint(&record).await?;
        let summary = format!("{}: signing secret rotated", record.url);
        tx.append_audit(&[endpoint_audit(
            actor,
            org,
            AuditAction::WebhookUpdated,
            id,
            &summary,
            record.updated_at,
        )])
        .await?;
        tx.commit().await?;
        Ok(WebhookSecret { secret })
    }

    /// Deletes an endpoint and its delivery log; its deliveries still waiting are cancelled
    /// (their jobs stay in the queue's history).
    pub async fn delete(&self, actor: &Actor, id: &str) -> Result<DeletedWebhookEndpoint> {
        let org = self.manager_org(actor)?;
        let now = self.inner.clock.now().millis();
        let mut tx = self.inner.store.write_for(org).await?;
        let record = found(tx.webhook_endpoint(org, id).await?)?;
        tx.cancel_webhook_deliveries(id, now).await?;
        tx.delete_webhook_endpoint(org, id).await?;
        tx.append_audit(&[endpoint_audit(
            actor,
            org,
            AuditAction::WebhookDeleted,
            id,
            &record.url,
            now,
        )])
        .await?;
        tx.commit().await?;
        Ok(DeletedWebhookEndpoint {
            id: id.to_string(),
            deleted: true,
        })
    }

    /// Enqueues a `webhook.test` delivery to this endpoint only (disabled or not): an event of
    /// that type, made for the test and kept in no log, with payload `{ endpointId }`.
    pub async fn test(&self, actor: &Actor, id: &str) -> Result<WebhookDelivery> {
        let org = self.manager_org(actor)?;
        let now = self.inner.clock.now();
        let event_id = new_id();
        let job = new_job(
            Some(org),
            DELIVER_JOB,
            sending::test_payload(&event_id, id, now),
            DEFAULT_MAX_ATTEMPTS,
            now.millis(),
            Some(delivery_key(&event_id, id)),
            now.millis(),
        );
        let row = WebhookDeliveryRecord {
            job_id: job.id.clone(),
            endpoint_id: id.to_string(),
            organization_id: org.to_string(),
            event_id,
            event_type: WEBHOOK_TEST.to_string(),
            response_status: None,
            created_at: now.millis(),
        };
        let mut tx = self.inner.store.write_for(org).await?;
        found(tx.webhook_endpoint(org, id).await?)?;
        tx.enqueue_job(&job).await?;
        tx.insert_webhook_deliveries(std::slice::from_ref(&row))
            .await?;
        tx.commit().await?;
        Ok(WebhookDelivery {
            id: job.id,
            endpoint_id: row.endpoint_id,
            event_id: row.event_id,
            event_type: row.event_type,
            status: job.status,
            attempts: job.attempts,
            max_attempts: job.max_attempts,
            last_error: None,
            response_status: None,
            created_at: now,
            updated_at: now,
            completed_at: None,
        })
    }

    /// A page of an endpoint's deliveries, newest first.
    pub async fn deliveries(
        &self,
        actor: &Actor,
        id: &str,
        page: Option<i64>,
        page_size: Option<i64>,
    ) -> Result<(Vec<WebhookDelivery>, Pagination)> {
        let org = self.manager_org(actor)?;
        let (page, page_size) = page_or_default(page, page_size);
        let (limit, offset) = page_window(page, page_size)?;
        let mut tx = self.inner.store.read_for(org).await?;
        found(tx.webhook_endpoint(org, id).await?)?;
        let (entries, total) = tx.webhook_deliveries(id, limit, offset).await?;
        Ok((
            entries.into_iter().map(Into::into).collect(),
            Pagination::new(total, page, page_size),
        ))
    }

    /// The organization whose endpoints the actor manages: 404 while webhooks are off, then
    /// `org.settings` in the active organization (sessions and keys alike).
    fn manager_org<'b>(&self, actor: &'b Actor) -> Result<&'b str> {
        if !self.is_on() {
            return Err(Error::NotFound(
                "webhooks are off (plugins.webhooks)".into(),
            ));
        }
        actor.require(CoreCapability::OrgSettings)
    }

    /// The stored form of an endpoint's secret; 422 without an encryption key, since a secret
    /// is never stored in plaintext.
    fn seal(&self, secret: &str, organization: &str, endpoint_id: &str) -> Result<String> {
        let secret_box = self.inner.secret_box.as_ref().ok_or_else(|| {
            Error::Unprocessable(
                "webhook endpoints sign with a secret that is stored only encrypted: configure \
                 CMS_SECRET_ENCRYPTION_KEY (plugins.secretEncryptionKey) to create one"
                    .into(),
            )
        })?;
        secret_box
            .seal(secret, endpoint_slot(organization, endpoint_id))
            .map_err(Error::Internal)
    }
}

/// Whether webhooks are on: decided at start, from the handlers registered.
pub(crate) fn is_on(inner: &Inner) -> bool {
    inner.webhooks_on
}

/// The idempotency key of a delivery: one per event and endpoint (`settings` for the settings
/// form), so a relay that ran twice enqueues nothing twice.
pub(crate) fn delivery_key(event_id: &str, endpoint: &str) -> String {
    format!("wh:{event_id}:{endpoint}")
}

fn endpoint_slot<'b>(organization: &'b str, endpoint_id: &'b str) -> SecretSlot<'b> {
    SecretSlot::WebhookEndpoint {
        organization_id: organization,
        endpoint_id,
    }
}

fn found(record: Option<WebhookEndpointRecord>) -> Result<WebhookEndpointRecord> {
    record.ok_or_else(|| Error::not_found("webhook endpoint"))
}

/// Takes the newest delivery of `endpoint_id` out of the organization's newest deliveries.
fn take_latest(
    latest: &mut Vec<WebhookDeliveryEntry>,
    endpoint_id: &str,
) -> Option<WebhookDelivery> {
    let at = latest
        .iter()
        .position(|d| d.delivery.endpoint_id == endpoint_id)?;
    Some(latest.swap_remove(at).into())
}

fn view(r: WebhookEndpointRecord, last_delivery: Option<WebhookDelivery>) -> WebhookEndpoint {
    WebhookEndpoint {
        id: r.id,
        organization_id: r.organization_id,
        url: r.url,
        events: r.events.0,
        description: r.description,
        enabled: r.enabled,
        created_by: r.created_by,
        created_at: r.created_at.into(),
        updated_at: r.updated_at.into(),
        last_delivery,
    }
}

/// The audit entry of a change to endpoint `id` (its URL as the summary: never the secret).
fn endpoint_audit(
    actor: &Actor,
    org: &str,
    action: AuditAction,
    id: &str,
    summary: &str,
    now: i64,
) -> AuditRecord {
    audit::entry(
        actor,
        Some(org),
        action,
        Some(AuditTarget::new("webhook", id)),
        summary,
        now,
    )
}
