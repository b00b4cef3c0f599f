//! Custom event types (SPEC.md "Events", Extension points: "Custom events"): a namespaced type
//! name paired with a payload schema, declared by the host application or a plugin at start,
//! and appended inside a unit of work after the payload was parsed against its schema.
//!
//! Decisions (docs/DECISIONS.md, Events):
//! - A name is namespaced like a job type (`vendor.thing.happened`: two or more dot-separated
//!   segments of letters, digits, `_` and `-`), is not a built-in type, and is declared once.
//! - A payload schema is a list of fields declared exactly like an object type's fields, checked
//!   against the registered schemas with the same checks (named object types and reference
//!   targets must exist); `indexed` and field `access` are refused, since a payload is never a
//!   document. A payload is validated with the full (publish-level) rules, so its issues look
//!   like a document's; reference fields are checked for shape, not for a target that exists.
//! - Every event consumer subscribes only to built-in or declared types: a subscription to an
//!   unknown type stops the start, since no event could ever reach it.
//! - Emitting needs an actor with an active organization and no particular capability: there is
//!   no door for it (GET /api/events stays read only); the plugin or host code that emits
//!   decides who may cause its events, as it decides what its routes do.

use std::collections::HashMap;

use cms_core::schema::{Field, SchemaError, Schemas, parse_fields};
use serde_json::Value;

use super::{
    ASSET_CREATED, ASSET_DELETED, ASSET_UPDATED, DOCUMENT_CREATED, DOCUMENT_DELETED,
    DOCUMENT_PUBLISHED, DOCUMENT_UNPUBLISHED, DOCUMENT_UPDATED, EventView, MEMBER_ADDED,
    MEMBER_REMOVED, USER_DELETED, event_record,
};
use crate::{Actor, Error, Inner, Result};

/// The event types the service itself appends. They cannot be declared again, nor emitted
/// through [`EventService::emit`].
pub const BUILT_IN_EVENT_TYPES: &[&str] = &[
    DOCUMENT_CREATED,
    DOCUMENT_UPDATED,
    DOCUMENT_DELETED,
    DOCUMENT_PUBLISHED,
    DOCUMENT_UNPUBLISHED,
    ASSET_CREATED,
    ASSET_UPDATED,
    ASSET_DELETED,
    MEMBER_ADDED,
    MEMBER_REMOVED,
    USER_DELETED,
];

/// A custom event type: its namespaced name and the fields of its payload, declared like an
/// object type's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDeclaration {
    pub name: String,
    pub payload: Vec<Field>,
}

impl EventDeclaration {
    pub fn new(name: impl Into<String>, payload: Vec<Field>) -> Self {
        EventDeclaration {
            name: name.into(),
            payload,
        }
    }

    /// A declaration whose payload fields are given as JSON, exactly as a schema's `fields`
    /// (`[{ "name": "formId", "type": "string", "required": true }]`); `[]` for no payload
    /// fields. Errors name the event and the field.
    pub fn from_json(name: &str, payload: &Value) -> Result<Self, SchemaError> {
        Ok(EventDeclaration::new(name, parse_fields(name, payload)?))
    }
}

/// One custom event to append with a change (`DocumentService::create_emitting`).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub event_type: String,
    pub payload: Value,
}

impl NewEvent {
    pub fn new(event_type: impl Into<String>, payload: Value) -> Self {
        NewEvent {
            event_type: event_type.into(),
            payload,
        }
    }
}

/// The declared custom event types, checked together with the schemas (and, by the registry of
/// consumers, every consumer's subscriptions against them).
#[derive(Debug, Default)]
pub(crate) struct EventTypes {
    declared: HashMap<String, Vec<Field>>,
}

impl EventTypes {
    /// Checks the declarations; the error says which event is wrong and why.
    pub(crate) fn new(
        declarations: Vec<EventDeclaration>,
        schemas: &Schemas,
    ) -> Result<EventTypes> {
        let mut declared = HashMap::new();
        for declaration in declarations {
            let name = declaration.name;
            if !namespaced(&name) {
                return Err(Error::bad_request(format!(
                    "event type `{name}`: the name must be namespaced, like \
                     `vendor.thing.happened` (dot-separated segments of letters, digits, _ and -)"
                )));
            }
            if BUILT_IN_EVENT_TYPES.contains(&name.as_str()) {
                return Err(Error::bad_request(format!(
                    "event type `{name}` is built in and cannot be declared"
                )));
            }
            if declared.contains_key(&name) {
                return Err(Error::bad_request(format!(
                    "event type `{name}` is declared twice"
                )));
            }
            schemas
                .check_fields(&name, &declaration.payload)
                .map_err(|e| {
                    let at = e
                        .field
                        .map(|f| format!(", field `{f}`"))
                        .unwrap_or_default();
                    Error::bad_request(format!("event type `{name}`{at}: {}", e.message))
                })?;
            declared.insert(name, declaration.payload);
        }
        Ok(EventTypes { declared })
    }

    /// Whether `event_type` is built in or declared: the only types a consumer may subscribe to.
    pub(crate) fn is_known(&self, event_type: &str) -> bool {
        BUILT_IN_EVENT_TYPES.contains(&event_type) || self.declared.contains_key(event_type)
    }

    /// Parses a payload against its type's declaration: 400 for a built-in or undeclared
    /// type, 400 with `issues` (paths are payload field names) for a payload that does not
    /// fit. Nothing is written by the caller until this passed.
    pub(crate) fn check(&self, schemas: &Schemas, event: &NewEvent) -> Result<()> {
        let name = &event.event_type;
        if BUILT_IN_EVENT_TYPES.contains(&name.as_str()) {
            return Err(Error::bad_request(format!(
                "`{name}` is a built-in event type: only the service appends it"
            )));
        }
        let Some(fields) = self.declared.get(name) else {
            return Err(Error::bad_request(format!(
                "`{name}` is not a declared event type"
            )));
        };
        let mut issues = schemas.validate_fields(fields, &event.payload);
        if issues.is_empty() {
            // PostgreSQL cannot store U+0000 in JSONB: refused alike on both engines.
            issues.extend(crate::input::find_nul("", &event.payload));
        }
        if issues.is_empty() {
            Ok(())
        } else {
            Err(Error::invalid(issues))
        }
    }
}

/// `vendor.thing`: dot-separated (two or more), non-empty segments of letters, digits, `_` and
/// `-`. Job types and event types share the rule.
pub fn namespaced(name: &str) -> bool {
    let segments: Vec<&str> = name.split('.').collect();
    segments.len() >= 2
        && segments.iter().all(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// Emitting custom events (`cms.events()`).
pub struct EventService<'a> {
    inner: &'a Inner,
}

impl<'a> EventService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        EventService { inner }
    }

    /// Appends a custom event, with its outbox row, in the actor's active organization. The
    /// type must be declared (built-in types are appended by the service alone: 400) and the
    /// payload is validated against its declaration first (400 with `issues`; nothing is
    /// appended). Any authenticated actor with an active organization may emit: no capability
    /// is required (see the module documentation).
    pub async fn emit(&self, actor: &Actor, event_type: &str, payload: Value) -> Result<EventView> {
        let org = actor.organization_id.as_deref().ok_or(Error::Forbidden)?;
        let event = NewEvent::new(event_type, payload);
        self.inner.event_types.check(&self.inner.schemas, &event)?;
        let record = event_record(
            Some(org),
            &event.event_type,
            event.payload,
            self.inner.clock.now(),
        );
        let mut tx = self.inner.store.write_for(org).await?;
        tx.append_event(&record).await?;
        tx.commit().await?;
        Ok(record.into())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schemas() -> Schemas {
        Schemas::new(
            cms_core::schema::parse_schemas(&json!([
                { "type": "document", "name": "form", "fields": [
                    { "name": "title", "type": "string" }
                ] }
            ]))
            .unwrap(),
        )
        .unwrap()
    }

    fn declared(name: &str) -> EventDeclaration {
        EventDeclaration::from_json(
            name,
            &json!([
                { "name": "submissionId", "type": "string", "required": true },
                { "name": "formId", "type": "string", "required": true }
            ]),
        )
        .unwrap()
    }

    fn start(declarations: Vec<EventDeclaration>) -> Result<EventTypes> {
        EventTypes::new(declarations, &schemas())
    }

    fn message(result: Result<EventTypes>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn names_are_namespaced() {
        for good in ["a.b", "forms.submission.created", "acme-co.x_y.z9"] {
            assert!(namespaced(good), "{good}");
        }
        for bad in ["", "published", "a.", ".a", "a..b", "a.b c", "a/b.c", "ä.b"] {
            assert!(!namespaced(bad), "{bad}");
        }
    }

    #[test]
    fn declarations_are_checked_at_start() {
        assert!(start(vec![declared("forms.submission.created")]).is_ok());
        assert_eq!(
            message(start(vec![declared("submitted")])),
            "event type `submitted`: the name must be namespaced, like `vendor.thing.happened` \
             (dot-separated segments of letters, digits, _ and -)"
        );
        assert_eq!(
            message(start(vec![declared("document.published")])),
            "event type `document.published` is built in and cannot be declared"
        );
        assert_eq!(
            message(start(vec![declared("acme.a.b"), declared("acme.a.b")])),
            "event type `acme.a.b` is declared twice"
        );
        let bad_payload = EventDeclaration::from_json(
            "acme.a.b",
            &json!([{ "name": "form", "type": "reference", "to": ["nope"] }]),
        )
        .unwrap();
        assert_eq!(
            message(start(vec![bad_payload])),
            "event type `acme.a.b`, field `form`: to: unknown document type \"nope\""
        );
        let parse_error = EventDeclaration::from_json("acme.a.b", &json!([{ "name": "x" }]))
            .unwrap_err()
            .to_string();
        assert!(
            parse_error.starts_with("schema \"acme.a.b\""),
            "{parse_error}"
        );
    }

    #[test]
    fn payloads_are_parsed_before_anything_is_written() {
        let schemas = schemas();
        let types = EventTypes::new(vec![declared("forms.submission.created")], &schemas).unwrap();
        let event = |t: &str, payload: Value| NewEvent::new(t, payload);
        let ok = json!({ "submissionId": "s1", "formId": "f1" });
        assert!(
            types
                .check(&schemas, &event("forms.submission.created", ok.clone()))
                .is_ok()
        );
        let Err(Error::BadRequest { issues, .. }) = types.check(
            &schemas,
            &event("forms.submission.created", json!({ "formId": 3, "x": 1 })),
        ) else {
            panic!("an invalid payload is a 400");
        };
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["x", "submissionId", "formId"]);
        let nul = json!({ "submissionId": "s\u{0}", "formId": "f1" });
        assert!(matches!(
            types.check(&schemas, &event("forms.submission.created", nul)),
            Err(Error::BadRequest { issues, .. }) if issues[0].path == "submissionId"
        ));
        for undeclared in ["acme.other.thing", "document.published"] {
            assert!(matches!(
                types.check(&schemas, &event(undeclared, ok.clone())),
                Err(Error::BadRequest { issues, .. }) if issues.is_empty()
            ));
        }
    }
}
