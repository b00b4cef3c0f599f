//! The event log (SPEC.md "Events"): the built-in event types and their payloads
//! (`built_in.rs`), the events of the log as doors read them, custom event types declared at
//! start (`custom.rs`), the reads of the log (`reads.rs`), what a reader sees of an event
//! (`visibility.rs`), which every read of the log applies, and the live stream of new events
//! (`stream.rs`, fed by the process's one reader of the feed, `hub.rs`).
//!
//! Events are appended in the transaction of the change that causes them; the database writes
//! each event's outbox row with it. Delivering them to consumers is the job queue's work, above
//! this module: nothing here knows of jobs or documents.

mod built_in;
mod custom;
mod hub;
mod reads;
mod stream;
mod visibility;

use cms_core::{Timestamp, new_id};
use cms_store::events::EventRecord;
use serde::Serialize;
use serde_json::Value;

pub use built_in::{
    AssetPayload, DocumentPayload, MemberPayload, PublishedPayload, UserDeletedPayload,
};
pub(crate) use built_in::{
    asset_event, document_event, member_event, published_event, user_deleted_event,
};
pub(crate) use custom::EventTypes;
pub use custom::{BUILT_IN_EVENT_TYPES, EventDeclaration, EventService, NewEvent, namespaced};
pub use hub::EventStreamSettings;
pub(crate) use hub::Hub;
pub use reads::EventListRequest;
pub(crate) use reads::list_events;
pub(crate) use stream::open as open_stream;
pub use stream::{EventStream, EventStreamRequest};
pub use visibility::TypeVisibility;
pub(crate) use visibility::{left_out, visible};

/// Built-in event types (CONTRACT.md section 16). Payloads: `documentId`, `documentType` for
/// the document events (`document.published` adds `publishedHash`); `assetId` for the asset
/// events; `userId`, `role` for the member events; `userId`, `email`, `image` for
/// `user.deleted`.
pub const DOCUMENT_CREATED: &str = "document.created";
pub const DOCUMENT_UPDATED: &str = "document.updated";
pub const DOCUMENT_DELETED: &str = "document.deleted";
pub const DOCUMENT_PUBLISHED: &str = "document.published";
pub const DOCUMENT_UNPUBLISHED: &str = "document.unpublished";
pub const ASSET_CREATED: &str = "asset.created";
pub const ASSET_UPDATED: &str = "asset.updated";
pub const ASSET_DELETED: &str = "asset.deleted";
pub const MEMBER_ADDED: &str = "member.added";
pub const MEMBER_REMOVED: &str = "member.removed";
pub const USER_DELETED: &str = "user.deleted";
/// Sent by POST /api/webhooks/{id}/test to that endpoint only; never in the log's consumers.
pub const WEBHOOK_TEST: &str = "webhook.test";

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
