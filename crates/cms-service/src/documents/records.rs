//! The rows a document is written as: a new document's record (checked and shaped as
//! [`DocumentService::create`] and [`DocumentService::import`] build it), its first versions
//! and events, a version, the built-in document events, and the copy names of the references
//! table.

use cms_core::schema::Operation;
use cms_core::{Issue, Timestamp, canonical, new_id};
use cms_store::Json;
use cms_store::documents::{DocumentRecord, NewDocumentRows};
use cms_store::events::EventRecord;
use cms_store::versions::VersionRecord;
use serde_json::Value;

use super::access::Gate;
use super::localization::Localization;
use super::{DocumentService, NewDocument};
use crate::error::Result;
use crate::events::{self, DOCUMENT_CREATED, DocumentPayload, PublishedPayload};

/// The copy names of the references side table.
pub(super) const DRAFT: &str = "draft";
pub(super) const PUBLISHED: &str = "published";

impl DocumentService<'_> {
    /// A new document's record as [`Self::create`] and [`Self::import`] build it before their
    /// unit of work: its localized values keyed by the request's locale, the type and
    /// structure checked, unwritable fields dropped, datetimes in their stored form, the access rules
    /// for creating (and publishing) applied, the published copy set in the same row when
    /// `publish` (a new document needs no separate publish step); with the schema's publish
    /// issues, which need no store.
    pub(super) fn prepare_new(
        &self,
        gate: &Gate<'_>,
        org: &str,
        input: NewDocument,
        localization: &Localization,
        by: Option<&str>,
        now: Timestamp,
    ) -> Result<(DocumentRecord, Vec<Issue>)> {
        let singleton = self.document_type(&input.doc_type)?;
        let data = localization.stored(self.schemas(), &input.doc_type, None, input.data);
        self.check_structure(&input.doc_type, &data)?;
        let mut data = data;
        // Unwritable fields go first, so a policy judges the data that would be stored.
        gate.keep_unwritable(&input.doc_type, &mut data, None);
        self.schemas().normalize(&input.doc_type, &mut data);
        gate.check_new(Operation::Create, &input.doc_type, &data)?;
        if input.publish {
            gate.check_new(Operation::Publish, &input.doc_type, &data)?;
        }
        let mut record = new_record(org, &input.doc_type, singleton, data, by, now);
        if input.publish {
            record.published_hash = Some(canonical::published_hash(&record.draft_data.0));
            record.published_data = Some(record.draft_data.clone());
            record.published_at = Some(now.millis());
        }
        let issues = self
            .schemas()
            .validate_for_publish(&record.doc_type, &record.draft_data.0);
        Ok((record, issues))
    }

    /// Every row of a new document, as [`Self::insert_new`] writes them, for a bulk insert.
    pub(super) fn new_rows(
        &self,
        doc: DocumentRecord,
        by: Option<&str>,
        now: Timestamp,
    ) -> NewDocumentRows {
        let (versions, events) = first_versions(&doc, by, now);
        let draft = self.reference_records(&doc.doc_type, &doc.draft_data.0);
        let published = match doc.published_hash {
            Some(_) => draft.clone(),
            None => Vec::new(),
        };
        let references = draft
            .into_iter()
            .map(|r| (DRAFT.to_string(), r))
            .chain(published.into_iter().map(|r| (PUBLISHED.to_string(), r)))
            .collect();
        NewDocumentRows {
            document: doc,
            versions,
            events,
            references,
        }
    }
}

pub(super) fn new_record(
    org: &str,
    doc_type: &str,
    singleton: bool,
    data: Value,
    by: Option<&str>,
    now: Timestamp,
) -> DocumentRecord {
    DocumentRecord {
        id: new_id(),
        organization_id: org.to_string(),
        doc_type: doc_type.to_string(),
        singleton,
        draft_data: Json(data),
        published_data: None,
        published_hash: None,
        revision: 1,
        created_by: by.map(str::to_string),
        updated_by: by.map(str::to_string),
        created_at: now.millis(),
        updated_at: now.millis(),
        published_at: None,
    }
}

/// The first versions of a new document (its draft, and its publish when it is born
/// published) and its events: `document.created`, then `document.published` when it is born
/// published. The created event's id is made first, so the log (in id order) has them in that
/// order.
pub(super) fn first_versions(
    doc: &DocumentRecord,
    by: Option<&str>,
    now: Timestamp,
) -> (Vec<VersionRecord>, Vec<EventRecord>) {
    let mut versions = vec![version_record(doc, 1, "draft", &doc.draft_data.0, by, now)];
    let mut events = vec![document_event(doc, DOCUMENT_CREATED, now)];
    if let Some(hash) = doc.published_hash.as_deref() {
        versions.push(version_record(
            doc,
            2,
            "publish",
            &doc.draft_data.0,
            by,
            now,
        ));
        events.push(published_event(doc, hash, now));
    }
    (versions, events)
}

/// A version of `doc` numbered `number` (0 when the store numbers it).
pub(super) fn version_record(
    doc: &DocumentRecord,
    number: i64,
    event_type: &str,
    data: &Value,
    by: Option<&str>,
    now: Timestamp,
) -> VersionRecord {
    VersionRecord {
        id: new_id(),
        document_id: doc.id.clone(),
        organization_id: doc.organization_id.clone(),
        version_number: number,
        event_type: event_type.to_string(),
        data: Json(data.clone()),
        created_by: by.map(str::to_string),
        created_by_name: None,
        created_at: now.millis(),
    }
}

/// A built-in document event but `document.published` (`document.created`, `.updated`,
/// `.unpublished`, `.deleted`; CONTRACT.md section 16), written in the unit of work of its
/// change.
pub(super) fn document_event(
    doc: &DocumentRecord,
    event_type: &str,
    now: Timestamp,
) -> EventRecord {
    let payload = DocumentPayload {
        document_id: doc.id.clone(),
        document_type: doc.doc_type.clone(),
    };
    events::document_event(&doc.organization_id, event_type, payload, now)
}

/// `document.published`, written in the publishing transaction (SPEC.md Delivery rule 1):
/// identifiers only, never the content.
pub(super) fn published_event(doc: &DocumentRecord, hash: &str, now: Timestamp) -> EventRecord {
    let payload = PublishedPayload {
        document_id: doc.id.clone(),
        document_type: doc.doc_type.clone(),
        published_hash: hash.to_string(),
    };
    events::published_event(&doc.organization_id, payload, now)
}
