//! The payloads of the built-in events (SPEC.md "Events", CONTRACT.md section 16) and the
//! events that carry them. Each payload is a type of its own: the one the service serializes
//! is the one the OpenAPI document describes (cms-server names each built-in type's payload).
//!
//! Payloads carry identifiers and intentional metadata only, never document content: a
//! consumer fetches what it needs.

use cms_core::Timestamp;
use cms_store::events::EventRecord;
use serde::Serialize;
use serde_json::Value;

use super::{DOCUMENT_PUBLISHED, USER_DELETED, event_record};

/// The payload of `document.created`, `document.updated`, `document.unpublished` and
/// `document.deleted`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocumentPayload {
    pub document_id: String,
    pub document_type: String,
}

/// The payload of `document.published`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PublishedPayload {
    pub document_id: String,
    pub document_type: String,
    /// The hash of the published data, as the document's `publishedHash`. Left out for a
    /// reader who may not read every field of the type (it digests the whole copy).
    #[schema(required = false)]
    pub published_hash: String,
}

/// The payload of `asset.created`, `asset.updated` and `asset.deleted`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssetPayload {
    pub asset_id: String,
}

/// The payload of `member.added` and `member.removed`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberPayload {
    pub user_id: String,
    /// The role the member was given (added) or held (removed).
    pub role: String,
}

/// The payload of `user.deleted`, one event per organization the user belonged to.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserDeletedPayload {
    pub user_id: String,
    pub email: String,
    /// The user's image URL; `null` when they had none.
    #[schema(required = true)]
    pub image: Option<String>,
}

/// A payload as the log stores it.
fn stored(payload: &impl Serialize) -> Value {
    // A struct of strings always serializes.
    serde_json::to_value(payload).expect("a built-in payload serializes")
}

/// `document.created`, `.updated`, `.unpublished` or `.deleted` (`event_type`) of a document
/// of `organization`.
pub(crate) fn document_event(
    organization: &str,
    event_type: &str,
    payload: DocumentPayload,
    now: Timestamp,
) -> EventRecord {
    event_record(Some(organization), event_type, stored(&payload), now)
}

/// `document.published` of a document of `organization`.
pub(crate) fn published_event(
    organization: &str,
    payload: PublishedPayload,
    now: Timestamp,
) -> EventRecord {
    event_record(
        Some(organization),
        DOCUMENT_PUBLISHED,
        stored(&payload),
        now,
    )
}

/// `asset.created`, `.updated` or `.deleted` (`event_type`) of an asset of `organization`.
pub(crate) fn asset_event(
    organization: &str,
    event_type: &str,
    asset_id: &str,
    now: Timestamp,
) -> EventRecord {
    let payload = AssetPayload {
        asset_id: asset_id.to_string(),
    };
    event_record(Some(organization), event_type, stored(&payload), now)
}

/// `member.added` or `member.removed` (`event_type`) of a membership of `organization`.
pub(crate) fn member_event(
    organization: &str,
    event_type: &str,
    user_id: &str,
    role: &str,
    now: Timestamp,
) -> EventRecord {
    let payload = MemberPayload {
        user_id: user_id.to_string(),
        role: role.to_string(),
    };
    event_record(Some(organization), event_type, stored(&payload), now)
}

/// `user.deleted` in one organization the user belonged to.
pub(crate) fn user_deleted_event(
    organization: &str,
    payload: &UserDeletedPayload,
    now: Timestamp,
) -> EventRecord {
    event_record(Some(organization), USER_DELETED, stored(payload), now)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::events::{ASSET_DELETED, DOCUMENT_CREATED, MEMBER_ADDED};

    #[test]
    fn payloads_are_stored_in_their_documented_shape() {
        let now = Timestamp::from_millis(7);
        let document = DocumentPayload {
            document_id: "d1".into(),
            document_type: "post".into(),
        };
        let e = document_event("o1", DOCUMENT_CREATED, document, now);
        assert_eq!(
            (e.organization_id.as_deref(), e.event_type.as_str()),
            (Some("o1"), DOCUMENT_CREATED)
        );
        assert_eq!(
            e.payload.0,
            json!({"documentId": "d1", "documentType": "post"})
        );
        let published = PublishedPayload {
            document_id: "d1".into(),
            document_type: "post".into(),
            published_hash: "h".into(),
        };
        assert_eq!(
            published_event("o1", published, now).payload.0,
            json!({"documentId": "d1", "documentType": "post", "publishedHash": "h"})
        );
        assert_eq!(
            asset_event("o1", ASSET_DELETED, "a1", now).payload.0,
            json!({"assetId": "a1"})
        );
        assert_eq!(
            member_event("o1", MEMBER_ADDED, "u1", "editor", now)
                .payload
                .0,
            json!({"userId": "u1", "role": "editor"})
        );
        let deleted = UserDeletedPayload {
            user_id: "u1".into(),
            email: "a@example.com".into(),
            image: None,
        };
        let e = user_deleted_event("o1", &deleted, now);
        assert_eq!(e.event_type, USER_DELETED);
        assert_eq!(
            e.payload.0,
            json!({"userId": "u1", "email": "a@example.com", "image": null})
        );
    }
}
