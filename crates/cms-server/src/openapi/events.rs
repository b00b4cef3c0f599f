//! The events of the log, described per type (CONTRACT.md section 16): `EventView` is one of a
//! component per built-in event type, whose `type` is that type and whose `payload` is the
//! payload type the service writes for it (`cms_service::events::*Payload`), or the component
//! of custom events (any other type, its payload an object as declared by the plugin or host
//! that emits it).
//!
//! GET /api/events answers these, and so does anything else that serves `EventView`.

use cms_service::events::{
    ASSET_CREATED, ASSET_DELETED, ASSET_UPDATED, AssetPayload, BUILT_IN_EVENT_TYPES,
    DOCUMENT_CREATED, DOCUMENT_DELETED, DOCUMENT_PUBLISHED, DOCUMENT_UNPUBLISHED, DOCUMENT_UPDATED,
    DocumentPayload, MEMBER_ADDED, MEMBER_REMOVED, MemberPayload, PublishedPayload, USER_DELETED,
    UserDeletedPayload,
};
use utoipa::openapi::schema::{Object, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{Components, Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

/// The component every door's event answers name.
const EVENT: &str = "EventView";
/// The component of events of any type but the built-in ones.
const CUSTOM_EVENT: &str = "CustomEvent";

/// A built-in event type: the component of its payload and when it is emitted.
struct BuiltIn {
    event_type: &'static str,
    payload: String,
    emitted: &'static str,
}

/// Every built-in event type, with its payload and the operations that emit it.
fn built_in() -> Vec<BuiltIn> {
    let document = DocumentPayload::name().into_owned();
    let asset = AssetPayload::name().into_owned();
    let member = MemberPayload::name().into_owned();
    let entry = |event_type, payload: &String, emitted| BuiltIn {
        event_type,
        payload: payload.clone(),
        emitted,
    };
    vec![
        entry(
            DOCUMENT_CREATED,
            &document,
            "A document was created, by any door: POST /api/documents, GraphQL \
             `create<Type>`, the assistant's tools, `DocumentService::import` (one per document) \
             or a plugin; a singleton's document when it is first read. A create with \
             `publish: true` is followed by `document.published`.",
        ),
        entry(
            DOCUMENT_UPDATED,
            &document,
            "A document's draft changed: PUT /api/documents/{id}, GraphQL `update<Type>`, the \
             assistant's tools, restoring a version (also an undo of the assistant's change \
             set). A publish alone does not emit it.",
        ),
        BuiltIn {
            event_type: DOCUMENT_PUBLISHED,
            payload: PublishedPayload::name().into_owned(),
            emitted: "A document was published, by any path: REST, GraphQL, the assistant, a \
                      scheduled publish run by the worker, a create or update with \
                      `publish: true`.",
        },
        entry(
            DOCUMENT_UNPUBLISHED,
            &document,
            "A published document was unpublished: DELETE /api/documents/{id}/publish, GraphQL \
             `unpublish<Type>`, or a scheduled unpublish run by the worker. Unpublishing a \
             draft-only document changes nothing and emits nothing.",
        ),
        entry(
            DOCUMENT_DELETED,
            &document,
            "A document was deleted: DELETE /api/documents/{id} or GraphQL `delete<Type>`.",
        ),
        entry(
            ASSET_CREATED,
            &asset,
            "An asset was recorded: an upload (POST /api/assets, the assistant), a confirmed \
             direct upload, or the image asset of a video's poster.",
        ),
        entry(
            ASSET_UPDATED,
            &asset,
            "An asset's record changed: PATCH /api/assets/{id} (metadata), or a poster attached \
             to a video.",
        ),
        entry(
            ASSET_DELETED,
            &asset,
            "An asset was deleted: DELETE /api/assets/{id}, or one event per asset of DELETE \
             /api/assets/bulk.",
        ),
        entry(
            MEMBER_ADDED,
            &member,
            "Someone became a member of the organization: an invitation accepted (also at \
             sign-up), the owner of a new organization, the first user in the default \
             organization.",
        ),
        entry(
            MEMBER_REMOVED,
            &member,
            "A membership ended: a member removed, or a user deleting their account (then \
             followed by `user.deleted` in the same organization).",
        ),
        BuiltIn {
            event_type: USER_DELETED,
            payload: UserDeletedPayload::name().into_owned(),
            emitted: "A user deleted their account: one event per organization they belonged \
                      to.",
        },
    ]
}

/// `document.created` -> `DocumentCreatedEvent`.
fn component_name(event_type: &str) -> String {
    let mut name: String = event_type
        .split('.')
        .map(|segment| {
            let mut chars = segment.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect();
    name.push_str("Event");
    name
}

/// The payload components, and `EventView` as one of a component per event type. Left as it
/// is when `EventView` is not an object (nothing serves it).
pub(crate) fn describe(components: &mut Components) {
    let Some(RefOr::T(Schema::Object(event))) = components.schemas.get(EVENT).cloned() else {
        return;
    };
    for (name, schema) in [
        (DocumentPayload::name(), DocumentPayload::schema()),
        (PublishedPayload::name(), PublishedPayload::schema()),
        (AssetPayload::name(), AssetPayload::schema()),
        (MemberPayload::name(), MemberPayload::schema()),
        (UserDeletedPayload::name(), UserDeletedPayload::schema()),
    ] {
        components.schemas.insert(name.into_owned(), schema);
    }
    let mut one_of = OneOfBuilder::new().description(Some(
        "An event of the log. Its `type` says what happened and which payload it carries: \
         one component per built-in type, `CustomEvent` for the types plugins and the host \
         declare. A reader who may not read a document type does not get its events; one who \
         may not read every field of it gets `document.published` without `publishedHash`.",
    ));
    for built_in in built_in() {
        let name = component_name(built_in.event_type);
        let variant = variant(
            &event,
            built_in.event_type,
            Ref::from_schema_name(&built_in.payload).into(),
            built_in.emitted,
        );
        components.schemas.insert(name.clone(), variant.into());
        one_of = one_of.item(Ref::from_schema_name(name));
    }
    components
        .schemas
        .insert(CUSTOM_EVENT.to_string(), custom(&event).into());
    one_of = one_of.item(Ref::from_schema_name(CUSTOM_EVENT));
    components
        .schemas
        .insert(EVENT.to_string(), Schema::OneOf(one_of.build()).into());
}

/// The event of one built-in type: `EventView` whose `type` is `event_type` and whose
/// `payload` is `payload`.
fn variant(event: &Object, event_type: &str, payload: RefOr<Schema>, emitted: &str) -> Schema {
    let mut variant = event.clone();
    variant.description = Some(format!("`{event_type}`. {emitted}"));
    variant.properties.insert(
        "type".into(),
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some([event_type]))
            .into(),
    );
    variant.properties.insert("payload".into(), payload);
    Schema::Object(variant)
}

/// An event of a type declared by a plugin or the host: any type but the built-in ones
/// (a pattern refusing exactly those), its payload an object.
fn custom(event: &Object) -> Schema {
    let built_in: Vec<String> = BUILT_IN_EVENT_TYPES
        .iter()
        .map(|t| t.replace('.', r"\."))
        .collect();
    let mut custom = event.clone();
    custom.description = Some(
        "An event of a custom type (`vendor.thing.happened`), declared with its payload's \
         fields by a plugin or the host application; its payload is an object of those fields."
            .into(),
    );
    custom.properties.insert(
        "type".into(),
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(format!("^(?!(?:{})$)", built_in.join("|"))))
            .into(),
    );
    custom.properties.insert(
        "payload".into(),
        ObjectBuilder::new().schema_type(Type::Object).into(),
    );
    Schema::Object(custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_type_is_described_once() {
        let mut described: Vec<&str> = built_in().iter().map(|b| b.event_type).collect();
        described.sort_unstable();
        let mut types = BUILT_IN_EVENT_TYPES.to_vec();
        types.sort_unstable();
        assert_eq!(described, types);
    }

    #[test]
    fn components_are_named_after_the_type() {
        assert_eq!(component_name("document.created"), "DocumentCreatedEvent");
        assert_eq!(component_name("user.deleted"), "UserDeletedEvent");
    }
}
