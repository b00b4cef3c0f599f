//! The event log (SPEC.md "Events"): the built-in event types, the events of the log as doors
//! read them, custom event types declared at start (`custom.rs`) and the reads of the log
//! (`reads.rs`).
//!
//! Events are appended in the transaction of the change that causes them; the database writes
//! each event's outbox row with it. Delivering them to consumers is the job queue's work, above
//! this module: nothing here knows of jobs or documents.

mod custom;
mod reads;

use cms_core::{Timestamp, new_id};
use cms_store::events::EventRecord;
use serde::Serialize;
use serde_json::Value;

pub(crate) use custom::EventTypes;
pub use custom::{BUILT_IN_EVENT_TYPES, EventDeclaration, EventService, NewEvent, namespaced};
pub use reads::EventListRequest;
pub(crate) use reads::list_events;

/// Built-in event types.
pub const DOCUMENT_PUBLISHED: &str = "document.published";
pub const USER_DELETED: &str = "user.deleted";

/// A domain event of the log.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    pub id: String,
    /// `null` for an instance-wide event.
    pub organization_id: Option<String>,
    #[serde(rename = "type")]
    pub event_type: String,
    /// What the event carries, as its type defines it (any JSON value).
    pub payload: Value,
    pub created_at: Timestamp,
}

impl From<EventRecord> for EventView {
    fn from(e: EventRecord) -> Self {
        EventView {
            id: e.id,
            organization_id: e.organization_id,
            event_type: e.event_type,
            payload: e.payload.0,
            created_at: e.created_at.into(),
        }
    }
}

/// A new domain event, for the caller to append inside the unit of work of the change that
/// causes it (the database adds its outbox row).
pub(crate) fn event_record(
    organization: Option<&str>,
    event_type: &str,
    payload: Value,
    now: Timestamp,
) -> EventRecord {
    EventRecord {
        id: new_id(),
        organization_id: organization.map(str::to_string),
        event_type: event_type.to_string(),
        payload: cms_store::Json(payload),
        created_at: now.millis(),
    }
}
