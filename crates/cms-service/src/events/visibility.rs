//! What a reader of the log sees of an event (CONTRACT.md section 16: "events about a type or
//! field the caller may not read are left out, or stripped as in REST"): the one decision both
//! the list (GET /api/events) and the stream use. How far the caller may read each document type
//! is decided above this module, from the documents' access rules, and handed in.

use serde_json::Value;

use super::EventView;

/// How far a caller may read the documents of one type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeVisibility {
    /// Not at all: events about the type are left out.
    Hidden,
    /// Some fields are hidden: digests of the data (`publishedHash`) are left out, since they
    /// would confirm guesses of the hidden values.
    Partial,
    /// Every field.
    Whole,
}

/// The event as this caller may see it, or `None` when it is about a document type the caller
/// may not read. An event is about the type its payload names as `documentType`; other events
/// pass unchanged.
pub(crate) fn visible(
    mut event: EventView,
    readable_type: impl Fn(&str) -> TypeVisibility,
) -> Option<EventView> {
    let visibility = match event.payload.get("documentType").and_then(Value::as_str) {
        Some(doc_type) => readable_type(doc_type),
        None => return Some(event),
    };
    match visibility {
        TypeVisibility::Hidden => None,
        TypeVisibility::Partial => {
            if let Some(payload) = event.payload.as_object_mut() {
                payload.remove("publishedHash");
            }
            Some(event)
        }
        TypeVisibility::Whole => Some(event),
    }
}

#[cfg(test)]
mod tests {
    use cms_core::Timestamp;
    use serde_json::json;

    use super::*;

    fn event(event_type: &str, payload: Value) -> EventView {
        EventView {
            id: "e1".into(),
            organization_id: Some("o1".into()),
            event_type: event_type.into(),
            payload,
            created_at: Timestamp::from_millis(0),
        }
    }

    fn rules(doc_type: &str) -> TypeVisibility {
        match doc_type {
            "secret" => TypeVisibility::Hidden,
            "note" => TypeVisibility::Partial,
            _ => TypeVisibility::Whole,
        }
    }

    #[test]
    fn events_about_a_hidden_type_are_left_out() {
        for t in ["document.created", "document.published", "document.deleted"] {
            let e = event(t, json!({"documentId": "d1", "documentType": "secret"}));
            assert!(visible(e, rules).is_none(), "{t}");
        }
    }

    #[test]
    fn a_partial_reader_gets_no_digest() {
        let payload = json!({"documentId": "d1", "documentType": "note", "publishedHash": "h"});
        let seen = visible(event("document.published", payload.clone()), rules).unwrap();
        assert_eq!(
            seen.payload,
            json!({"documentId": "d1", "documentType": "note"})
        );
        let whole = json!({"documentId": "d1", "documentType": "post", "publishedHash": "h"});
        let seen = visible(event("document.published", whole.clone()), rules).unwrap();
        assert_eq!(seen.payload, whole, "a whole reader gets the digest");
    }

    #[test]
    fn events_about_no_document_type_pass() {
        for (t, payload) in [
            ("asset.created", json!({"assetId": "a1"})),
            ("member.added", json!({"userId": "u1", "role": "editor"})),
            (
                "forms.submission.created",
                json!({"submissionId": "s1", "formId": "f1"}),
            ),
        ] {
            let seen = visible(event(t, payload.clone()), |_| TypeVisibility::Hidden).unwrap();
            assert_eq!(seen.payload, payload, "{t}");
        }
    }
}
