//! The relay's share of webhooks: each event of a batch becomes one delivery job per endpoint
//! that wants it (enabled, its filter matching, created at or before the event), plus one for
//! the settings form when it lists the event's type. An event nobody wants makes no job.
//!
//! Two reads per batch, whatever its size: the enabled endpoints of the batch's organizations,
//! and the settings form of those organizations.

use std::collections::BTreeSet;

use cms_store::Tx;
use cms_store::events::EventRecord;
use cms_store::jobs::JobRecord;
use cms_store::plugin_settings::PluginSettingsRecord;
use cms_store::webhooks::{WebhookDeliveryRecord, WebhookEndpointRecord};
use serde_json::json;

use super::input::wants;
use super::settings_form::{self, PLUGIN_ID};
use super::{DELIVER_JOB, delivery_key, is_on};
use crate::queue::{DEFAULT_MAX_ATTEMPTS, new_job};
use crate::{Inner, Result};

/// What the relay writes for webhooks: the delivery jobs, and the delivery-log rows of those
/// for endpoints (the settings form has no log).
#[derive(Default)]
pub(crate) struct FanOut {
    pub(crate) jobs: Vec<JobRecord>,
    pub(crate) deliveries: Vec<WebhookDeliveryRecord>,
}

/// The deliveries `events` make, read inside the relay's unit (instance-wide).
pub(crate) async fn fan_out(
    inner: &Inner,
    tx: &mut dyn Tx,
    events: &[EventRecord],
    now: i64,
) -> Result<FanOut> {
    if !is_on(inner) {
        return Ok(FanOut::default());
    }
    // Instance-wide events belong to no organization, so to no organization's webhooks.
    let organizations: Vec<String> = events
        .iter()
        .filter_map(|e| e.organization_id.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if organizations.is_empty() {
        return Ok(FanOut::default());
    }
    let endpoints = tx.enabled_webhook_endpoints(&organizations).await?;
    let forms = if inner
        .plugin_settings
        .iter()
        .any(|d| d.plugin_id == PLUGIN_ID)
    {
        tx.plugin_settings_in(&organizations, PLUGIN_ID).await?
    } else {
        Vec::new()
    };
    let mut out = FanOut::default();
    for event in events {
        let Some(organization) = event.organization_id.as_deref() else {
            continue;
        };
        for endpoint in endpoints
            .iter()
            .filter(|e| receives(e, organization, event))
        {
            out.push_endpoint_delivery(endpoint, event, now);
        }
        if form_sends(&forms, organization, &event.event_type) {
            out.jobs.push(new_job(
                Some(organization),
                DELIVER_JOB,
                json!({ "eventId": event.id, "settings": true }),
                DEFAULT_MAX_ATTEMPTS,
                now,
                Some(delivery_key(&event.id, "settings")),
                now,
            ));
        }
    }
    Ok(out)
}

impl FanOut {
    fn push_endpoint_delivery(
        &mut self,
        endpoint: &WebhookEndpointRecord,
        event: &EventRecord,
        now: i64,
    ) {
        let job = new_job(
            Some(&endpoint.organization_id),
            DELIVER_JOB,
            json!({ "eventId": event.id, "endpointId": endpoint.id }),
            DEFAULT_MAX_ATTEMPTS,
            now,
            Some(delivery_key(&event.id, &endpoint.id)),
            now,
        );
        self.deliveries.push(WebhookDeliveryRecord {
            job_id: job.id.clone(),
            endpoint_id: endpoint.id.clone(),
            organization_id: endpoint.organization_id.clone(),
            event_id: event.id.clone(),
            event_type: event.event_type.clone(),
            response_status: None,
            created_at: now,
        });
        self.jobs.push(job);
    }
}

/// An endpoint receives the events of its organization committed after it was created, of the
/// types its filter names.
fn receives(endpoint: &WebhookEndpointRecord, organization: &str, event: &EventRecord) -> bool {
    endpoint.organization_id == organization
        && endpoint.created_at <= event.created_at
        && wants(&endpoint.events.0, &event.event_type)
}

/// Whether the organization's settings form sends `event_type` (decided on the values as
/// stored: the URL and the list are plain; the secret is opened only when sending).
fn form_sends(forms: &[PluginSettingsRecord], organization: &str, event_type: &str) -> bool {
    forms
        .iter()
        .find(|f| f.organization_id == organization)
        .is_some_and(|f| settings_form::target(&f.values.0, event_type).is_some())
}
