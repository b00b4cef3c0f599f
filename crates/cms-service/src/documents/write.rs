//! Writes of existing and new documents: create, update, publish, unpublish, delete, and the
//! steps their units of work share (the guarded draft write, the publish, the version, its
//! pruning, the references and the search rows of the copy written; a delete takes the
//! document's references and search rows with it).
//!
//! Each step that changes a document appends its built-in event (CONTRACT.md section 16) in
//! the same unit of work: a new document `document.created` (`insert_new`), a draft write
//! `document.updated` (`write_draft`, also a restore's), a publish `document.published`
//! (`record_publish`), an unpublish `document.unpublished` (`clear_published`), a delete
//! `document.deleted`. Every door (REST, GraphQL, the assistant, plugins, the scheduler,
//! import) goes through these steps, so none emits an event of its own.

use cms_core::schema::{Operation, Undeclared};
use cms_core::{CoreCapability, Issue, Timestamp, canonical};
use cms_store::audit::AuditRecord;
use cms_store::documents::DocumentRecord;
use cms_store::{Json, Tx};
use serde_json::Value;

use super::access::Gate;
use super::localization::Localization;
use super::records::{
    DRAFT, PUBLISHED, document_event, first_versions, published_event, version_record,
};
use super::{DocumentService, DocumentView, NewDocument, Perspective, Validation};
use crate::actor::Actor;
use crate::audit::{AuditAction, AuditTarget, Who};
use crate::error::{Error, Result};
use crate::events::{DOCUMENT_DELETED, DOCUMENT_UNPUBLISHED, DOCUMENT_UPDATED, NewEvent};

/// A draft replacement as received.
#[derive(Debug)]
pub struct DraftUpdate {
    pub data: Value,
    pub publish: bool,
    pub expected_revision: Option<i64>,
    /// The locale `data`'s localized values are in: a tag (the other locales' values are
    /// kept), `*` (values keyed by locale, taken whole), `None` for the default locale.
    pub locale: Option<String>,
}

impl DocumentService<'_> {
    /// Creates a document in the actor's organization. A structurally wrong body is refused;
    /// an incomplete draft is saved and its `validation` says what would block publishing.
    pub async fn create(
        &self,
        actor: &Actor,
        input: NewDocument,
    ) -> Result<(DocumentView, Validation)> {
        self.create_emitting(actor, input, |_| Vec::new()).await
    }

    /// [`Self::create`], plus custom events appended in the same unit of work: the document,
    /// its versions, its references and every event with its outbox row commit together or
    /// not at all. `events` receives the new document's id. Each event's payload is parsed
    /// against its declaration before anything is written: an undeclared or built-in type, or
    /// an invalid payload, is a 400 (with `issues`) and leaves no document and no event.
    pub async fn create_emitting(
        &self,
        actor: &Actor,
        input: NewDocument,
        events: impl FnOnce(&str) -> Vec<NewEvent>,
    ) -> Result<(DocumentView, Validation)> {
        let org = actor.require(CoreCapability::DocumentCreate)?.to_string();
        if input.publish {
            actor.require(CoreCapability::DocumentPublish)?;
        }
        let gate = self.gate(actor);
        let now = self.inner.clock.now();
        let by = Some(actor.user.id.as_str());
        let publish = input.publish;
        let localization = self
            .localization(&org, &input.doc_type, input.locale.as_deref())
            .await?;
        // Built before taking the (on SQLite, single) writer, which then only waits on I/O.
        let (record, schema_issues) =
            self.prepare_new(&gate, &org, input, &localization, by, now)?;
        let events = events(&record.id);
        for event in &events {
            self.inner.event_types.check(self.schemas(), event)?;
        }
        let (doc_type, data) = (&record.doc_type, &record.draft_data.0);
        // A draft's validation reads (reference targets, slugs) run in a read unit, before the
        // writer. A publish reads them in its write unit, where what it validates must hold
        // when it commits (a read unit before would only repeat them), and data naming no
        // reference and no slug needs no read at all (no unit: a transaction on PostgreSQL).
        let reads_first = !publish && self.validation_reads_store(doc_type, data);
        // Validated already, or the schema's issues still to be completed in the write unit.
        let early: std::result::Result<Validation, Vec<Issue>> = if reads_first {
            let mut read = self.inner.store.read_for(&org).await?;
            Ok(self
                .validation_with(&mut *read, &org, doc_type, data, None, schema_issues)
                .await?)
        } else {
            Err(schema_issues)
        };
        let mut tx = self.inner.store.write_for(&org).await?;
        let validation = match early {
            Ok(validation) => validation,
            Err(issues) => {
                self.validation_with(&mut *tx, &org, doc_type, data, None, issues)
                    .await?
            }
        };
        if publish && !validation.is_valid {
            return Err(Error::invalid(validation.errors));
        }
        if record.singleton && tx.singleton(&org, doc_type).await?.is_some() {
            return Err(Error::Conflict(format!(
                "`{doc_type}` is a singleton and already exists: update it"
            )));
        }
        self.insert_new(&mut *tx, &record, by, now).await?;
        if publish {
            tx.append_audit(&[published_entry(&Who::of(actor), &record, now)])
                .await?;
        }
        for event in events {
            let event =
                crate::events::event_record(Some(&org), &event.event_type, event.payload, now);
            tx.append_event(&event).await?;
        }
        tx.commit().await?;
        Ok((self.shown(&gate, &localization, record), validation))
    }

    /// Replaces the draft (the revision grows by one), optionally publishing it; with what
    /// would block publishing the saved draft. The checks and the validation reads run in a
    /// read unit before the writer; the write unit repeats them only when the document moved
    /// on in between, or when publishing (what a publish validates must hold when it commits).
    pub async fn update(
        &self,
        actor: &Actor,
        id: &str,
        input: DraftUpdate,
    ) -> Result<(DocumentView, Validation)> {
        let org = actor.require(CoreCapability::DocumentUpdate)?.to_string();
        if input.publish {
            actor.require(CoreCapability::DocumentPublish)?;
        }
        let gate = self.gate(actor);
        let (read, validation, localization) = {
            let mut tx = self.inner.store.read_for(&org).await?;
            let current = self.owned(&mut *tx, &org, id).await?;
            let localization = self
                .localization_of(&mut *tx, &org, &current.doc_type, input.locale.as_deref())
                .await?;
            let data = self.checked_draft(&gate, &current, &input, &localization)?;
            let validation = self
                .validation(&mut *tx, &org, &current.doc_type, &data, Some(id))
                .await?;
            ((current, data), validation, localization)
        };
        if input.publish && !validation.is_valid {
            return Err(Error::invalid(validation.errors));
        }
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_for(&org).await?;
        let current = self.owned(&mut *tx, &org, id).await?;
        let (data, validation) = if current.revision == read.0.revision {
            if input.publish {
                self.recheck_for_publish(&mut *tx, &org, &current.doc_type, &read.1, Some(id))
                    .await?;
            }
            (read.1, validation)
        } else {
            // Another write landed since the read: judge what is stored now.
            let data = self.checked_draft(&gate, &current, &input, &localization)?;
            let validation = self
                .validation(&mut *tx, &org, &current.doc_type, &data, Some(id))
                .await?;
            if input.publish && !validation.is_valid {
                return Err(Error::invalid(validation.errors));
            }
            (data, validation)
        };
        let by = Some(actor.user.id.as_str());
        let updated = self.write_draft(&mut *tx, &current, data, by, now).await?;
        if input.publish {
            self.record_publish(&mut *tx, &updated, by, &Who::of(actor), now)
                .await?;
        }
        let stored = self.owned(&mut *tx, &org, id).await?;
        tx.commit().await?;
        Ok((self.shown(&gate, &localization, stored), validation))
    }

    /// The draft `input` would save over `current`: its localized values merged into the
    /// other locales' (see [`Localization::stored`]), the access rules for updating (and
    /// publishing), the structure and the expected revision checked, unwritable fields kept,
    /// datetimes in their stored form.
    fn checked_draft(
        &self,
        gate: &Gate<'_>,
        current: &DocumentRecord,
        input: &DraftUpdate,
        localization: &Localization,
    ) -> Result<Value> {
        gate.check(Operation::Update, current)?;
        if input.publish {
            gate.check(Operation::Publish, current)?;
        }
        // What is stored, as the schema now declares it: a save never carries a renamed
        // field's old key or a removed field along (CONTRACT.md section 19).
        let mut stored = current.draft_data.0.clone();
        self.schemas()
            .conform(&current.doc_type, &mut stored, Undeclared::Drop);
        let mut data = localization.stored(
            self.schemas(),
            &current.doc_type,
            Some(&stored),
            input.data.clone(),
        );
        self.check_structure(&current.doc_type, &data)?;
        check_revision(input.expected_revision, current.revision)?;
        gate.keep_unwritable(&current.doc_type, &mut data, Some(&stored));
        // The whole draft, kept values included: a write leaves no datetime in an older form.
        self.schemas().normalize(&current.doc_type, &mut data);
        Ok(data)
    }

    /// Deletes a document of the actor's organization. The canonical singleton row stays, and so
    /// does a document other documents of the organization still reference (409, nothing
    /// deleted: remove the references first; DECISIONS.md).
    pub async fn delete(&self, actor: &Actor, id: &str) -> Result<()> {
        let org = actor.require(CoreCapability::DocumentDelete)?.to_string();
        let mut tx = self.inner.store.write_for(&org).await?;
        let current = self.owned(&mut *tx, &org, id).await?;
        let gate = self.gate(actor);
        gate.check(Operation::Delete, &current)?;
        if current.singleton {
            return Err(Error::bad_request(
                "the canonical row of a singleton cannot be deleted",
            ));
        }
        self.check_unreferenced(&mut *tx, &gate, &org, id).await?;
        tx.delete_document(id).await?;
        let now = self.inner.clock.now();
        tx.append_event(&document_event(&current, DOCUMENT_DELETED, now))
            .await?;
        tx.append_audit(&[document_entry(
            &Who::of(actor),
            &current,
            AuditAction::DocumentDeleted,
            now,
        )])
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Publishes the current draft after validating it.
    pub async fn publish(
        &self,
        actor: &Actor,
        id: &str,
        expected_revision: Option<i64>,
    ) -> Result<DocumentView> {
        self.publish_in(actor, id, expected_revision, None).await
    }

    /// [`Self::publish`], the answer shown in `locale` (a tag, `*`, or `None` for the default
    /// locale; GraphQL's `locale` argument). Publishing publishes every locale whatever the
    /// answer shows; an unknown tag is refused before anything is published.
    pub async fn publish_in(
        &self,
        actor: &Actor,
        id: &str,
        expected_revision: Option<i64>,
        locale: Option<&str>,
    ) -> Result<DocumentView> {
        let org = actor.require(CoreCapability::DocumentPublish)?.to_string();
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_for(&org).await?;
        let current = self.owned(&mut *tx, &org, id).await?;
        let gate = self.gate(actor);
        gate.check(Operation::Publish, &current)?;
        check_revision(expected_revision, current.revision)?;
        let localization = self
            .localization_of(&mut *tx, &org, &current.doc_type, locale)
            .await?;
        let (validation, published) = self
            .publish_if_valid(
                &mut *tx,
                &current,
                Some(&actor.user.id),
                &Who::of(actor),
                now,
            )
            .await?;
        let Some(stored) = published else {
            return Err(Error::invalid(validation.errors));
        };
        tx.commit().await?;
        Ok(self.shown(&gate, &localization, stored))
    }

    /// Drops the published copy. Unpublishing a draft-only document changes nothing.
    pub async fn unpublish(
        &self,
        actor: &Actor,
        id: &str,
        expected_revision: Option<i64>,
    ) -> Result<DocumentView> {
        self.unpublish_in(actor, id, expected_revision, None).await
    }

    /// [`Self::unpublish`], the answer shown in `locale` (see [`Self::publish_in`]).
    pub async fn unpublish_in(
        &self,
        actor: &Actor,
        id: &str,
        expected_revision: Option<i64>,
        locale: Option<&str>,
    ) -> Result<DocumentView> {
        let org = actor
            .require(CoreCapability::DocumentUnpublish)?
            .to_string();
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_for(&org).await?;
        let current = self.owned(&mut *tx, &org, id).await?;
        let gate = self.gate(actor);
        gate.check(Operation::Unpublish, &current)?;
        check_revision(expected_revision, current.revision)?;
        let localization = self
            .localization_of(&mut *tx, &org, &current.doc_type, locale)
            .await?;
        let who = Who::of(actor);
        self.clear_published(&mut *tx, &current, Some(&actor.user.id), &who, now)
            .await?;
        let stored = self.owned(&mut *tx, &org, id).await?;
        tx.commit().await?;
        Ok(self.shown(&gate, &localization, stored))
    }

    /// A written document as its writer sees it: stripped of what they may not read, in the
    /// request's locale.
    pub(super) fn shown(
        &self,
        gate: &Gate<'_>,
        localization: &Localization,
        record: DocumentRecord,
    ) -> DocumentView {
        let mut view = gate.stripped(record);
        localization.show(self.schemas(), &mut view, Perspective::Draft);
        view
    }

    /// A document the actor's organization owns (writes never reach children); 404 otherwise.
    pub(super) async fn owned(
        &self,
        tx: &mut dyn Tx,
        org: &str,
        id: &str,
    ) -> Result<DocumentRecord> {
        tx.document(&[org.to_string()], id)
            .await?
            .ok_or_else(|| Error::not_found("document"))
    }

    /// Replaces the draft guarded by the revision just read, then records the version, the
    /// references and `document.updated`.
    pub(super) async fn write_draft(
        &self,
        tx: &mut dyn Tx,
        current: &DocumentRecord,
        data: Value,
        by: Option<&str>,
        now: Timestamp,
    ) -> Result<DocumentRecord> {
        if !tx
            .save_draft(&current.id, &data, current.revision, by, now.millis())
            .await?
        {
            let latest = self
                .owned(tx, &current.organization_id, &current.id)
                .await?;
            return Err(Error::RevisionConflict {
                expected: current.revision,
                current: latest.revision,
            });
        }
        let updated = DocumentRecord {
            draft_data: Json(data),
            revision: current.revision + 1,
            ..current.clone()
        };
        self.record_draft(tx, &updated, by, now).await?;
        tx.append_event(&document_event(&updated, DOCUMENT_UPDATED, now))
            .await?;
        Ok(updated)
    }

    /// The draft version and draft references of a freshly written draft.
    async fn record_draft(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        by: Option<&str>,
        now: Timestamp,
    ) -> Result<()> {
        let number = self
            .append_version(tx, doc, "draft", &doc.draft_data.0, by, now)
            .await?;
        // Numbers are never reused, so the newest is an upper bound on how many there are.
        self.prune(tx, &doc.id, Some(number)).await?;
        let references = self.reference_records(&doc.doc_type, &doc.draft_data.0);
        tx.replace_references(&doc.id, &doc.organization_id, DRAFT, &references)
            .await?;
        self.index_copy(tx, doc, DRAFT, Some(&doc.draft_data.0))
            .await?;
        Ok(())
    }

    /// Writes a new document with its first versions, its references and its events
    /// (`document.created`, then `document.published` when it is born published). A new
    /// document has no versions yet, so their numbers are known and the rows go to the store
    /// in one round trip.
    pub(super) async fn insert_new(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        by: Option<&str>,
        now: Timestamp,
    ) -> Result<()> {
        let (versions, events) = first_versions(doc, by, now);
        tx.insert_new_document(doc, &versions, &events).await?;
        let references = self.reference_records(&doc.doc_type, &doc.draft_data.0);
        tx.add_references(&doc.id, &doc.organization_id, DRAFT, &references)
            .await?;
        if doc.published_hash.is_some() {
            tx.add_references(&doc.id, &doc.organization_id, PUBLISHED, &references)
                .await?;
        }
        self.index_new(tx, &[doc]).await?;
        self.prune(tx, &doc.id, Some(versions.len() as i64)).await?;
        Ok(())
    }

    /// Validates the stored draft and, only when it is valid, publishes it. Every publish of an
    /// existing document (REST, a schedule) goes through here. With the validation, the
    /// document as now stored when it was published.
    pub(super) async fn publish_if_valid(
        &self,
        tx: &mut dyn Tx,
        current: &DocumentRecord,
        by: Option<&str>,
        who: &Who,
        now: Timestamp,
    ) -> Result<(Validation, Option<DocumentRecord>)> {
        let validation = self
            .validation(
                tx,
                &current.organization_id,
                &current.doc_type,
                &current.draft_data.0,
                Some(&current.id),
            )
            .await?;
        let published = match validation.is_valid {
            true => Some(self.record_publish(tx, current, by, who, now).await?),
            false => None,
        };
        Ok((validation, published))
    }

    /// Drops the published copy and its references, with `document.unpublished` and its audit
    /// entry (naming `who`); a draft-only document is left alone (nothing changed, so no event).
    pub(super) async fn clear_published(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        by: Option<&str>,
        who: &Who,
        now: Timestamp,
    ) -> Result<()> {
        if doc.published_data.is_some() {
            tx.clear_published(&doc.id, by, now.millis()).await?;
            tx.append_event(&document_event(doc, DOCUMENT_UNPUBLISHED, now))
                .await?;
            tx.append_audit(&[document_entry(
                who,
                doc,
                AuditAction::DocumentUnpublished,
                now,
            )])
            .await?;
            tx.replace_references(&doc.id, &doc.organization_id, PUBLISHED, &[])
                .await?;
            self.index_copy(tx, doc, PUBLISHED, None).await?;
        }
        Ok(())
    }

    /// Copies the draft to the published copy with its hash, version and references, with
    /// `document.published` and its audit entry (naming `who`). Returns the document as it is
    /// now stored (the row `doc` was, with the published copy written).
    async fn record_publish(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        by: Option<&str>,
        who: &Who,
        now: Timestamp,
    ) -> Result<DocumentRecord> {
        let data = &doc.draft_data.0;
        let hash = canonical::published_hash(data);
        tx.set_published(&doc.id, data, &hash, by, now.millis())
            .await?;
        tx.append_event(&published_event(doc, &hash, now)).await?;
        tx.append_audit(&[published_entry(who, doc, now)]).await?;
        let number = self
            .append_version(tx, doc, "publish", data, by, now)
            .await?;
        self.prune(tx, &doc.id, Some(number)).await?;
        let references = self.reference_records(&doc.doc_type, data);
        tx.replace_references(&doc.id, &doc.organization_id, PUBLISHED, &references)
            .await?;
        self.index_copy(tx, doc, PUBLISHED, Some(data)).await?;
        // What `set_published` wrote: the published copy, its hash and time, who and when.
        Ok(DocumentRecord {
            published_data: Some(doc.draft_data.clone()),
            published_hash: Some(hash),
            published_at: Some(now.millis()),
            updated_by: by.map(str::to_string),
            updated_at: now.millis(),
            ..doc.clone()
        })
    }

    async fn append_version(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        event_type: &str,
        data: &Value,
        by: Option<&str>,
        now: Timestamp,
    ) -> Result<i64> {
        Ok(tx
            .append_version(&version_record(doc, 0, event_type, data, by, now))
            .await?)
    }

    /// Deletes versions past `versioning.maxVersions`, in the same transaction as the write that
    /// added one; 0 keeps every version. `written` is how many versions the document has at
    /// most, when the caller knows it, to skip the delete when nothing can be over the limit.
    pub(super) async fn prune(
        &self,
        tx: &mut dyn Tx,
        document_id: &str,
        written: Option<i64>,
    ) -> Result<()> {
        let keep = self.inner.settings.max_versions;
        if keep > 0 && written.is_none_or(|n| n > keep) {
            tx.prune_versions(document_id, keep).await?;
        }
        Ok(())
    }
}

pub(super) fn check_revision(expected: Option<i64>, current: i64) -> Result<()> {
    match expected {
        Some(expected) if expected != current => Err(Error::RevisionConflict { expected, current }),
        _ => Ok(()),
    }
}

/// The audit entry of `action` on `doc`: its type as the summary, never its content.
pub(super) fn document_entry(
    who: &Who,
    doc: &DocumentRecord,
    action: AuditAction,
    now: Timestamp,
) -> AuditRecord {
    who.entry(
        Some(&doc.organization_id),
        action,
        Some(AuditTarget::new("document", &doc.id)),
        doc.doc_type.as_str(),
        now.millis(),
    )
}

fn published_entry(who: &Who, doc: &DocumentRecord, now: Timestamp) -> AuditRecord {
    document_entry(who, doc, AuditAction::DocumentPublished, now)
}
