//! What a reader sees of an event of the log: the one decision that GET /api/events and the
//! event stream (CONTRACT.md section 16: "events about a type or field the caller may not read
//! are left out (or stripped as in REST)") both apply, so that the two can never disagree.
//!
//! The caller's access rules are above this module (the documents' rules decide them); it gets
//! them as a function from a document type to a [`TypeVisibility`]:
//! - a document event (`document.*`, which names its `documentType`) of a type the reader may
//!   not read at all is left out: its id, its type and its timing are facts of a document the
//!   reader may not know of;
//! - a `document.published` event of a type with fields hidden from the reader keeps everything
//!   but its `publishedHash`, which digests the whole published copy (document reads leave it
//!   out for that reader too: it would confirm guesses of the hidden values);
//! - every other event (assets, members, users, custom events) passes as it is: its payload
//!   names no document type and carries identifiers only.
//!
//! A read of pages of the log also asks the store to leave out what [`visible`] would
//! ([`left_out`]), so that its pages stay full and its total counts what the reader sees; it
//! still passes every event it shows through [`visible`], the one place that decides.

use cms_store::events::LeftOut;
use serde_json::Value;

use super::{
    DOCUMENT_CREATED, DOCUMENT_DELETED, DOCUMENT_PUBLISHED, DOCUMENT_UNPUBLISHED, DOCUMENT_UPDATED,
    EventView,
};

/// How much of a document type a reader may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeVisibility {
    /// The reader may not read documents of the type at all.
    Hidden,
    /// The reader may read documents of the type, but some of their fields are hidden.
    Partial,
    /// The reader may read every field of every document of the type.
    Whole,
}

/// The event types whose payload names a `documentType`.
const DOCUMENT_EVENTS: &[&str] = &[
    DOCUMENT_CREATED,
    DOCUMENT_UPDATED,
    DOCUMENT_DELETED,
    DOCUMENT_PUBLISHED,
    DOCUMENT_UNPUBLISHED,
];

/// `event` as a reader for whom `readable_type` answers sees it: `None` when it is left out,
/// else the event, stripped of what the reader may not see (see the module documentation).
pub(crate) fn visible(
    event: EventView,
    readable_type: impl Fn(&str) -> TypeVisibility,
) -> Option<EventView> {
    if !DOCUMENT_EVENTS.contains(&event.event_type.as_str()) {
        return Some(event);
    }
    let visibility = match event.payload.get("documentType").and_then(Value::as_str) {
        Some(doc_type) => readable_type(doc_type),
        // Every document event the service appends names its type; one that does not (a row
        // written by hand) says nothing the reader could be kept from.
        None => TypeVisibility::Whole,
    };
    match visibility {
        TypeVisibility::Hidden => None,
        TypeVisibility::Partial => Some(without_digest(event)),
        TypeVisibility::Whole => Some(event),
    }
}

/// What a read of the log asks the store to leave out for a reader: the document events of
/// every type among `document_types` that `readable_type` says is [`TypeVisibility::Hidden`]
/// (exactly what [`visible`] leaves out, for the types named).
pub(crate) fn left_out<'a>(
    document_types: impl IntoIterator<Item = &'a str>,
    readable_type: impl Fn(&str) -> TypeVisibility,
) -> LeftOut {
    LeftOut {
        event_types: DOCUMENT_EVENTS.iter().map(|t| t.to_string()).collect(),
        document_types: document_types
            .into_iter()
            .filter(|t| readable_type(t) == TypeVisibility::Hidden)
            .map(str::to_string)
            .collect(),
    }
}

/// The event without its `publishedHash` (only `document.published` carries one).
fn without_digest(mut event: EventView) -> EventView {
    if event.event_type == DOCUMENT_PUBLISHED
        && let Some(payload) = event.payload.as_object_mut()
    {
        payload.remove("publishedHash");
    }
    event
}

#[cfg(test)]
mod tests {
    use cms_core::Timestamp;
    use serde_json::json;

    use super::*;
    use crate::events::{ASSET_UPDATED, MEMBER_ADDED};

    fn event(event_type: &str, payload: Value) -> EventView {
        EventView {
            id: "e1".into(),
            organization_id: Some("o1".into()),
            event_type: event_type.into(),
            payload,
            created_at: Timestamp::from_millis(0),
        }
    }

    fn published(doc_type: &str) -> EventView {
        event(
            DOCUMENT_PUBLISHED,
            json!({ "documentId": "d1", "documentType": doc_type, "publishedHash": "h" }),
        )
    }

    /// `secret` is hidden, `guarded` has hidden fields, anything else is whole.
    fn rules(doc_type: &str) -> TypeVisibility {
        match doc_type {
            "secret" => TypeVisibility::Hidden,
            "guarded" => TypeVisibility::Partial,
            _ => TypeVisibility::Whole,
        }
    }

    #[test]
    fn document_events_of_a_hidden_type_are_left_out() {
        for event_type in DOCUMENT_EVENTS {
            let e = event(
                event_type,
                json!({ "documentId": "d1", "documentType": "secret" }),
            );
            assert!(visible(e, rules).is_none(), "{event_type}");
        }
        assert!(visible(published("secret"), rules).is_none());
    }

    #[test]
    fn a_partial_reader_loses_the_published_hash_only() {
        let seen = visible(published("guarded"), rules).expect("the event is kept");
        assert_eq!(
            seen.payload,
            json!({ "documentId": "d1", "documentType": "guarded" })
        );
        let updated = event(
            DOCUMENT_UPDATED,
            json!({ "documentId": "d1", "documentType": "guarded" }),
        );
        assert_eq!(
            visible(updated.clone(), rules).map(|e| e.payload),
            Some(updated.payload)
        );
    }

    #[test]
    fn a_whole_reader_sees_the_event_as_it_is() {
        let seen = visible(published("post"), rules).expect("the event is kept");
        assert_eq!(seen.payload["publishedHash"], "h");
    }

    #[test]
    fn the_store_leaves_out_the_hidden_types_only() {
        let hidden = left_out(["post", "secret", "guarded"], rules);
        assert_eq!(hidden.document_types, ["secret"]);
        assert_eq!(hidden.event_types, DOCUMENT_EVENTS);
        assert!(left_out(["post"], rules).document_types.is_empty());
    }

    #[test]
    fn other_events_pass_whatever_the_rules() {
        let hide_all = |_: &str| TypeVisibility::Hidden;
        for e in [
            event(ASSET_UPDATED, json!({ "assetId": "a1" })),
            event(MEMBER_ADDED, json!({ "userId": "u1", "role": "editor" })),
            // A custom event may carry a `documentType` of its own: its type decides nothing.
            event("acme.thing.done", json!({ "documentType": "secret" })),
        ] {
            let payload = e.payload.clone();
            assert_eq!(visible(e, hide_all).map(|e| e.payload), Some(payload));
        }
    }
}
