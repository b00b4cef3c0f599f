//! Documents: drafts and published copies, versions, references, singletons (SPEC.md
//! "Document", "States and transitions: Document", "Endpoints: Documents"; CONTRACT.md
//! sections 5 and 12).
//!
//! Every operation checks the actor's capability first, then reads and writes in one unit of
//! work: the document row, its version, its references and, on publish, its
//! `document.published` event commit together or not at all; `create_emitting` adds custom
//! events to that unit of work.

mod access;
mod references;
mod resolve;
mod schedules;
mod slugs;
mod view;

use std::collections::{HashMap, HashSet};

use cms_core::schema::{Operation, RefTarget, Schemas};
use cms_core::{CoreCapability, Issue, Timestamp, canonical, new_id};
use cms_store::documents::{DocumentRecord, ListSpec, NewDocumentRows};
use cms_store::events::EventRecord;
use cms_store::filter_sql::DataColumn;
use cms_store::references::TargetKind;
use cms_store::versions::VersionRecord;
use cms_store::{Json, Tx};
use serde_json::{Map, Value, json};

pub(crate) use access::AccessRules;
pub use access::{AccessPolicies, Policy, PolicyAuth, PolicyDocument};
use access::{Gate, ListRead};
pub use references::MAX_LISTED_REFERRERS;
pub use resolve::MAX_EXPANDED_NODES;
pub use schedules::{ScheduleAction, ScheduleView};
pub(crate) use schedules::{ScheduleStatus, schedule_follows_job};
use slugs::slug_taken;
pub use view::{DocumentView, Meta, Pagination, Perspective, Validation, VersionView};

use crate::Inner;
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::events::NewEvent;

/// The most ids one by-ids request may name.
pub const MAX_BY_IDS: usize = 100;
/// The deepest reference resolution.
pub const MAX_DEPTH: u8 = 5;
/// The largest page.
pub const MAX_PAGE_SIZE: i64 = 100;

/// A new document as received.
#[derive(Debug)]
pub struct NewDocument {
    pub doc_type: String,
    pub data: Value,
    pub publish: bool,
}

/// Where a document lives, as [`DocumentService::locate`] reveals it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentLocation {
    pub organization_id: String,
    pub doc_type: String,
}

/// A draft replacement as received.
#[derive(Debug)]
pub struct DraftUpdate {
    pub data: Value,
    pub publish: bool,
    pub expected_revision: Option<i64>,
}

/// How a read looks at documents.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    pub perspective: Perspective,
    /// Reference resolution depth, 0 to [`MAX_DEPTH`].
    pub depth: u8,
    /// Also read the children of the actor's organization.
    pub include_children: bool,
}

/// A list or query request.
#[derive(Debug, Clone)]
pub struct ListRequest {
    pub doc_type: String,
    /// `Value::Null` for no filter.
    pub where_: Value,
    pub sort: Vec<String>,
    /// `Some(false)`: draft-only documents; `Some(true)`: documents with published data.
    pub published: Option<bool>,
    pub page: i64,
    pub page_size: i64,
    pub read: ReadOptions,
}

/// A page of documents.
#[derive(Debug, Clone)]
pub struct Page {
    pub data: Vec<DocumentView>,
    pub pagination: Pagination,
}

pub struct DocumentService<'a> {
    inner: &'a Inner,
}

/// The copy names of the references side table.
const DRAFT: &str = "draft";
const PUBLISHED: &str = "published";

/// Whether `actor` may read every field of `doc_type`, and so may see digests of its data
/// (`publishedHash`, also in `document.published` events).
pub(crate) fn sees_whole_type(inner: &Inner, actor: &Actor, doc_type: &str) -> bool {
    access::Gate::new(&inner.access, actor).sees_whole(doc_type)
}

impl<'a> DocumentService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        DocumentService { inner }
    }

    fn schemas(&self) -> &Schemas {
        &self.inner.schemas
    }

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
        // Built before taking the (on SQLite, single) writer, which then only waits on I/O.
        let (record, schema_issues) = self.prepare_new(&gate, &org, input, by, now)?;
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
        for event in events {
            let event =
                crate::events::event_record(Some(&org), &event.event_type, event.payload, now);
            tx.append_event(&event).await?;
        }
        tx.commit().await?;
        Ok((gate.stripped(record), validation))
    }

    /// Creates many documents in the actor's organization in one unit of work, each with the
    /// checks, rows and events of [`Self::create`]: its versions, its references, the
    /// published copy and `document.published` when `publish` is set, the same validation
    /// (reference targets, slugs). The rows go to the store in a few multi-row statements per
    /// chunk of documents instead of round trips per document, and reference targets are
    /// looked up once per chunk of ids. For bulk loads from Rust (the scale bench seeds
    /// through it); no door exposes it.
    ///
    /// All or nothing: a document that [`Self::create`] would refuse (a structural error, an
    /// access refusal, a publish that does not validate) fails the whole import, its issues'
    /// paths prefixed with its index (`[3].title`), and nothing is written. A document may
    /// reference, and its published slug clashes with, the documents imported before it in the
    /// same call, as if they had been created one after the other. Singleton types cannot be
    /// imported (a 400): they have one row, which [`Self::create`] writes.
    pub async fn import(
        &self,
        actor: &Actor,
        inputs: Vec<NewDocument>,
    ) -> Result<Vec<(DocumentView, Validation)>> {
        let org = actor.require(CoreCapability::DocumentCreate)?.to_string();
        if inputs.iter().any(|i| i.publish) {
            actor.require(CoreCapability::DocumentPublish)?;
        }
        let gate = self.gate(actor);
        let now = self.inner.clock.now();
        let by = Some(actor.user.id.as_str());
        let mut prepared = Vec::with_capacity(inputs.len());
        for (i, input) in inputs.into_iter().enumerate() {
            let publish = input.publish;
            let (record, issues) = self
                .prepare_new(&gate, &org, input, by, now)
                .map_err(|e| at_index(i, e))?;
            if record.singleton {
                return Err(Error::bad_request(format!(
                    "[{i}]: `{}` is a singleton type: create its one document, it cannot be imported",
                    record.doc_type
                )));
            }
            prepared.push((record, publish, issues));
        }
        let orgs = vec![org.clone()];
        let mut tx = self.inner.store.write_for(&org).await?;
        // Every reference target named anywhere in the import, one query per kind. Documents
        // found, or imported earlier in this call; assets found.
        let named: Vec<_> = prepared
            .iter()
            .flat_map(|(r, _, _)| self.schemas().references(&r.doc_type, &r.draft_data.0))
            .collect();
        let (documents, assets) = references::split_by_kind(&named);
        let mut known_documents =
            references::existing(&mut *tx, &orgs, TargetKind::Document, documents).await?;
        let found_assets = references::existing(&mut *tx, &orgs, TargetKind::Asset, assets).await?;
        // (type, field, slug) published earlier in this import.
        let mut slugs: HashSet<(String, String, String)> = HashSet::new();
        let mut rows = Vec::with_capacity(prepared.len());
        let mut validations = Vec::with_capacity(prepared.len());
        for (i, (record, publish, mut errors)) in prepared.into_iter().enumerate() {
            let (doc_type, data) = (&record.doc_type, &record.draft_data.0);
            for reference in self.schemas().references(doc_type, data) {
                let exists = match reference.target {
                    RefTarget::Document => known_documents.contains(&reference.id),
                    RefTarget::Asset => found_assets.contains(&reference.id),
                };
                if !exists {
                    errors.push(references::missing_reference(reference));
                }
            }
            errors.extend(
                self.slug_clashes(&mut *tx, &orgs, doc_type, data, None)
                    .await?,
            );
            let own_slugs = self.slug_values(doc_type, data);
            for (field, slug) in &own_slugs {
                let key = (doc_type.clone(), field.clone(), slug.clone());
                if slugs.contains(&key) && !errors.iter().any(|e| &e.path == field) {
                    errors.push(slug_taken(field, slug));
                }
            }
            let validation = Validation {
                is_valid: errors.is_empty(),
                errors,
            };
            if publish && !validation.is_valid {
                return Err(at_index(i, Error::invalid(validation.errors)));
            }
            if publish {
                slugs.extend(
                    own_slugs
                        .into_iter()
                        .map(|(field, slug)| (doc_type.clone(), field, slug)),
                );
            }
            known_documents.insert(record.id.clone());
            rows.push(self.new_rows(record, by, now));
            validations.push(validation);
        }
        tx.insert_new_documents(&rows).await?;
        for row in &rows {
            self.prune(&mut *tx, &row.document.id, Some(row.versions.len() as i64))
                .await?;
        }
        tx.commit().await?;
        Ok(rows
            .into_iter()
            .zip(validations)
            .map(|(row, validation)| (gate.stripped(row.document), validation))
            .collect())
    }

    /// A new document's record as [`Self::create`] and [`Self::import`] build it before their
    /// unit of work: the type and structure checked, unwritable fields dropped, the access rules
    /// for creating (and publishing) applied, the published copy set in the same row when
    /// `publish` (a new document needs no separate publish step); with the schema's publish
    /// issues, which need no store.
    fn prepare_new(
        &self,
        gate: &Gate<'_>,
        org: &str,
        input: NewDocument,
        by: Option<&str>,
        now: Timestamp,
    ) -> Result<(DocumentRecord, Vec<Issue>)> {
        let singleton = self.document_type(&input.doc_type)?;
        self.check_structure(&input.doc_type, &input.data)?;
        let mut data = input.data;
        // Unwritable fields go first, so a policy judges the data that would be stored.
        gate.keep_unwritable(&input.doc_type, &mut data, None);
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

    /// Which organization owns the document `id`, and its type; `None` when no document has
    /// that id. The one lookup across organizations, and the one without an actor: for public
    /// plugin routes that receive a bare id (a form's). It reveals only the organization and
    /// the type; the caller then reads the document as an actor of that organization (a
    /// plugin actor, or a person's), through every access rule as usual.
    pub async fn locate(&self, id: &str) -> Result<Option<DocumentLocation>> {
        let found = self.inner.store.read().await?.locate_document(id).await?;
        Ok(found.map(|l| DocumentLocation {
            organization_id: l.organization_id,
            doc_type: l.doc_type,
        }))
    }

    /// One document, in the actor's organization (and its children when asked).
    pub async fn get(&self, actor: &Actor, id: &str, read: ReadOptions) -> Result<DocumentView> {
        let orgs = self
            .readable_organizations(actor, read.include_children)
            .await?;
        check_read_options(&read)?;
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let record = tx
            .document(&orgs, id)
            .await?
            .ok_or_else(|| Error::not_found("document"))?;
        if record.published_data.is_none() && read.perspective == Perspective::Published {
            return Err(Error::not_found("document"));
        }
        let gate = self.gate(actor);
        gate.check(Operation::Read, &record)?;
        let mut views = vec![gate.stripped(record)];
        self.resolve(&mut *tx, &orgs, &mut views, read, &gate)
            .await?;
        Ok(views.remove(0))
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
        let (read, validation) = {
            let mut tx = self.inner.store.read_for(&org).await?;
            let current = self.owned(&mut *tx, &org, id).await?;
            let data = self.checked_draft(&gate, &current, &input)?;
            let validation = self
                .validation(&mut *tx, &org, &current.doc_type, &data, Some(id))
                .await?;
            ((current, data), validation)
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
            let data = self.checked_draft(&gate, &current, &input)?;
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
            self.record_publish(&mut *tx, &updated, by, now).await?;
        }
        let stored = self.owned(&mut *tx, &org, id).await?;
        tx.commit().await?;
        Ok((gate.stripped(stored), validation))
    }

    /// The draft `input` would save over `current`: the access rules for updating (and
    /// publishing), the structure and the expected revision checked, unwritable fields kept.
    fn checked_draft(
        &self,
        gate: &Gate<'_>,
        current: &DocumentRecord,
        input: &DraftUpdate,
    ) -> Result<Value> {
        gate.check(Operation::Update, current)?;
        if input.publish {
            gate.check(Operation::Publish, current)?;
        }
        self.check_structure(&current.doc_type, &input.data)?;
        check_revision(input.expected_revision, current.revision)?;
        let mut data = input.data.clone();
        gate.keep_unwritable(&current.doc_type, &mut data, Some(&current.draft_data.0));
        Ok(data)
    }

    /// Whether validating `data` reads the store: it names a reference target or a slug.
    fn validation_reads_store(&self, doc_type: &str, data: &Value) -> bool {
        !self.schemas().references(doc_type, data).is_empty()
            || !self.slug_values(doc_type, data).is_empty()
    }

    /// The part of a publish's validation that must hold when it commits, read again in its
    /// write unit: reference targets still exist, slugs are still free (the read unit's
    /// answer may be stale by then).
    async fn recheck_for_publish(
        &self,
        tx: &mut dyn Tx,
        org: &str,
        doc_type: &str,
        data: &Value,
        except: Option<&str>,
    ) -> Result<()> {
        let validation = self
            .validation_with(tx, org, doc_type, data, except, Vec::new())
            .await?;
        match validation.is_valid {
            true => Ok(()),
            false => Err(Error::invalid(validation.errors)),
        }
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
        let org = actor.require(CoreCapability::DocumentPublish)?.to_string();
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_for(&org).await?;
        let current = self.owned(&mut *tx, &org, id).await?;
        let gate = self.gate(actor);
        gate.check(Operation::Publish, &current)?;
        check_revision(expected_revision, current.revision)?;
        let (validation, published) = self
            .publish_if_valid(&mut *tx, &current, Some(&actor.user.id), now)
            .await?;
        let Some(stored) = published else {
            return Err(Error::invalid(validation.errors));
        };
        tx.commit().await?;
        Ok(gate.stripped(stored))
    }

    /// Drops the published copy. Unpublishing a draft-only document changes nothing.
    pub async fn unpublish(
        &self,
        actor: &Actor,
        id: &str,
        expected_revision: Option<i64>,
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
        self.clear_published(&mut *tx, &current, Some(&actor.user.id), now)
            .await?;
        let stored = self.owned(&mut *tx, &org, id).await?;
        tx.commit().await?;
        Ok(gate.stripped(stored))
    }

    /// Versions of a document, newest first, with the total; a parent reads its children's with
    /// `include_children`, like every other read.
    pub async fn versions(
        &self,
        actor: &Actor,
        id: &str,
        limit: i64,
        offset: i64,
        include_children: bool,
    ) -> Result<(Vec<VersionView>, i64)> {
        let orgs = self.readable_organizations(actor, include_children).await?;
        if !(1..=MAX_PAGE_SIZE).contains(&limit) || offset < 0 {
            return Err(Error::bad_request(format!(
                "limit is 1 to {MAX_PAGE_SIZE} and offset is 0 or more"
            )));
        }
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let document = tx
            .document(&orgs, id)
            .await?
            .ok_or_else(|| Error::not_found("document"))?;
        let gate = self.gate(actor);
        gate.check(Operation::Read, &document)?;
        let versions = tx.versions(id, limit, offset).await?;
        let total = tx.count_versions(id).await?;
        let views = versions
            .into_iter()
            .map(|v| gate.stripped_version(&document.doc_type, v))
            .collect();
        Ok((views, total))
    }

    pub async fn version(
        &self,
        actor: &Actor,
        id: &str,
        number: i64,
        include_children: bool,
    ) -> Result<VersionView> {
        let orgs = self.readable_organizations(actor, include_children).await?;
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let document = tx
            .document(&orgs, id)
            .await?
            .ok_or_else(|| Error::not_found("document"))?;
        let gate = self.gate(actor);
        gate.check(Operation::Read, &document)?;
        let version = tx
            .version(id, number)
            .await?
            .ok_or_else(|| Error::not_found("version"))?;
        Ok(gate.stripped_version(&document.doc_type, version))
    }

    /// Writes a version's snapshot into the draft as a new draft version; the published copy
    /// is left as it is.
    pub async fn restore(
        &self,
        actor: &Actor,
        id: &str,
        number: i64,
        expected_revision: Option<i64>,
    ) -> Result<DocumentView> {
        let org = actor.require(CoreCapability::DocumentUpdate)?.to_string();
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_for(&org).await?;
        let current = self.owned(&mut *tx, &org, id).await?;
        let gate = self.gate(actor);
        gate.check(Operation::Update, &current)?;
        check_revision(expected_revision, current.revision)?;
        let version = tx
            .version(id, number)
            .await?
            .ok_or_else(|| Error::not_found("version"))?;
        // A restore is a write of the version's data: fields the caller may not update keep
        // their current value rather than the version's.
        let mut data = version.data.0;
        gate.keep_unwritable(&current.doc_type, &mut data, Some(&current.draft_data.0));
        self.write_draft(&mut *tx, &current, data, Some(&actor.user.id), now)
            .await?;
        let stored = self.owned(&mut *tx, &org, id).await?;
        tx.commit().await?;
        Ok(gate.stripped(stored))
    }

    /// A page of documents of one type: GET /api/documents and POST /api/documents/query.
    pub async fn list(&self, actor: &Actor, request: ListRequest) -> Result<Page> {
        let orgs = self
            .readable_organizations(actor, request.read.include_children)
            .await?;
        let singleton = self.document_type(&request.doc_type)?;
        check_read_options(&request.read)?;
        if request.page < 1 || !(1..=MAX_PAGE_SIZE).contains(&request.page_size) {
            return Err(Error::bad_request(format!(
                "page is 1 or more and pageSize is 1 to {MAX_PAGE_SIZE}"
            )));
        }
        let gate = self.gate(actor);
        let list_read = gate.list_read(&request.doc_type);
        if list_read == ListRead::Refused {
            return Err(Error::Forbidden);
        }
        if singleton {
            let row = self.singleton_row(actor, &request.doc_type).await?;
            gate.check(Operation::Read, &row)?;
            let mut views = vec![gate.stripped(row)];
            let mut tx = self.inner.store.read_for(&orgs[0]).await?;
            self.resolve(&mut *tx, &orgs, &mut views, request.read, &gate)
                .await?;
            return Ok(Page {
                pagination: Pagination::new(1, 1, request.page_size),
                data: views,
            });
        }
        // A page far past any data is a client error, not an arithmetic overflow.
        let offset = (request.page - 1)
            .checked_mul(request.page_size)
            .ok_or_else(|| Error::bad_request("page is too large"))?;
        let fields = self
            .schemas()
            .fields(&request.doc_type)
            .expect("a declared document type");
        let readable = gate.where_fields(&request.doc_type, fields);
        let (filter, sort) = access::parse_filter(&readable, &request.where_, &request.sort);
        let (column, published) = match (request.read.perspective, request.published) {
            // Draft-only documents have no published copy to show.
            (Perspective::Published, Some(false)) => {
                return Ok(Page {
                    data: Vec::new(),
                    pagination: Pagination::new(0, request.page, request.page_size),
                });
            }
            (Perspective::Published, _) => (DataColumn::Published, Some(true)),
            (Perspective::Draft, status) => (DataColumn::Draft, status),
        };
        let spec = ListSpec {
            organizations: &orgs,
            doc_type: &request.doc_type,
            column,
            published,
            filter: &filter,
            sort: &sort,
            limit: request.page_size,
            offset,
        };
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let (mut views, total) = match list_read {
            ListRead::PerDocument => self.list_policy_ruled(&mut *tx, &spec, &gate).await?,
            _ => {
                let (records, total) = tx.list_documents(&spec).await?;
                (records.into_iter().map(DocumentView::from).collect(), total)
            }
        };
        views.iter_mut().for_each(|v| gate.strip(v));
        self.resolve(&mut *tx, &orgs, &mut views, request.read, &gate)
            .await?;
        Ok(Page {
            data: views,
            pagination: Pagination::new(total, request.page, request.page_size),
        })
    }

    /// Documents by id, in request order; missing or invisible ids are left out.
    pub async fn by_ids(
        &self,
        actor: &Actor,
        ids: &[String],
        read: ReadOptions,
    ) -> Result<Vec<DocumentView>> {
        let orgs = self
            .readable_organizations(actor, read.include_children)
            .await?;
        check_read_options(&read)?;
        if ids.len() > MAX_BY_IDS {
            return Err(Error::bad_request(format!(
                "at most {MAX_BY_IDS} ids per request"
            )));
        }
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let found: HashMap<String, DocumentRecord> = tx
            .documents_by_ids(&orgs, ids)
            .await?
            .into_iter()
            .map(|d| (d.id.clone(), d))
            .collect();
        let gate = self.gate(actor);
        let mut views: Vec<DocumentView> = ids
            .iter()
            .filter_map(|id| found.get(id).cloned())
            .map(DocumentView::from)
            .filter(|v| v.data(read.perspective).is_some() && gate.may_read(v))
            .collect();
        views.iter_mut().for_each(|v| gate.strip(v));
        self.resolve(&mut *tx, &orgs, &mut views, read, &gate)
            .await?;
        Ok(views)
    }

    /// Documents whose draft or published copy references `id`.
    pub async fn back_references(
        &self,
        actor: &Actor,
        id: &str,
        include_children: bool,
    ) -> Result<Vec<DocumentView>> {
        let orgs = self.readable_organizations(actor, include_children).await?;
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let target = tx
            .document(&orgs, id)
            .await?
            .ok_or_else(|| Error::not_found("document"))?;
        let gate = self.gate(actor);
        gate.check(Operation::Read, &target)?;
        let records = tx.referencing_documents(&orgs, id).await?;
        Ok(records
            .into_iter()
            .map(DocumentView::from)
            .filter(|v| gate.may_read(v))
            .map(|mut v| {
                gate.strip(&mut v);
                v
            })
            .collect())
    }

    /// What saving `data` as a draft of `doc_type` would report, without saving: the
    /// structural issues a save refuses, or else what would block publishing.
    pub async fn validate(
        &self,
        actor: &Actor,
        doc_type: &str,
        data: &Value,
    ) -> Result<Validation> {
        let org = actor.require(CoreCapability::DocumentRead)?.to_string();
        self.document_type(doc_type)?;
        if let Err(Error::BadRequest { issues, .. }) = self.check_structure(doc_type, data) {
            return Ok(Validation {
                is_valid: false,
                errors: issues,
            });
        }
        let mut tx = self.inner.store.read_for(&org).await?;
        self.validation(&mut *tx, &org, doc_type, data, None).await
    }

    /// The draft of document `id` with `fields` merged in ([`merge_fields`]), when the actor
    /// could save it: a patch naming an undeclared field, a value of the wrong type, or a
    /// field the actor may not update is refused. Nothing is written.
    pub async fn check_patch(
        &self,
        actor: &Actor,
        id: &str,
        fields: &Map<String, Value>,
    ) -> Result<Value> {
        let org = actor.require(CoreCapability::DocumentUpdate)?.to_string();
        let mut tx = self.inner.store.read_for(&org).await?;
        let current = self.owned(&mut *tx, &org, id).await?;
        let gate = self.gate(actor);
        gate.check(Operation::Update, &current)?;
        let merged = merge_fields(&current.draft_data.0, fields);
        self.check_structure(&current.doc_type, &merged)?;
        let mut kept = merged.clone();
        gate.keep_unwritable(&current.doc_type, &mut kept, Some(&current.draft_data.0));
        let refused: Vec<&str> = fields
            .keys()
            .filter(|k| kept.get(k.as_str()) != merged.get(k.as_str()))
            .map(String::as_str)
            .collect();
        if !refused.is_empty() {
            return Err(Error::NotPermitted(format!(
                "you may not update {}",
                refused.join(", ")
            )));
        }
        Ok(merged)
    }

    /// The number of the newest version of document `id`, as the actor reads it; `None` when
    /// none is kept.
    pub async fn latest_version(&self, actor: &Actor, id: &str) -> Result<Option<i64>> {
        let (newest, _) = self.versions(actor, id, 1, 0, false).await?;
        Ok(newest.first().map(|v| v.version_number))
    }

    /// The canonical row of a singleton type as the actor reads it (created on first read).
    pub async fn singleton(&self, actor: &Actor, doc_type: &str) -> Result<DocumentView> {
        actor.require(CoreCapability::DocumentRead)?;
        if !self.document_type(doc_type)? {
            return Err(Error::bad_request(format!(
                "`{doc_type}` is not a singleton type"
            )));
        }
        let row = self.singleton_row(actor, doc_type).await?;
        let gate = self.gate(actor);
        gate.check(Operation::Read, &row)?;
        Ok(gate.stripped(row))
    }

    /// The canonical row of a singleton type, created on first read so reads never 404.
    async fn singleton_row(&self, actor: &Actor, doc_type: &str) -> Result<DocumentRecord> {
        let org = actor.organization_id.clone().ok_or(Error::Forbidden)?;
        if let Some(row) = self
            .inner
            .store
            .read_for(&org)
            .await?
            .singleton(&org, doc_type)
            .await?
        {
            return Ok(row);
        }
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_for(&org).await?;
        // Another request may have created it since the read.
        if let Some(row) = tx.singleton(&org, doc_type).await? {
            return Ok(row);
        }
        let record = new_record(
            &org,
            doc_type,
            true,
            Value::Object(Map::new()),
            Some(&actor.user.id),
            now,
        );
        self.insert_new(&mut *tx, &record, Some(&actor.user.id), now)
            .await?;
        tx.commit().await?;
        Ok(record)
    }

    /// The organizations the actor reads: their own, plus its children when asked.
    async fn readable_organizations(
        &self,
        actor: &Actor,
        include_children: bool,
    ) -> Result<Vec<String>> {
        self.inner
            .readable_organizations(actor, CoreCapability::DocumentRead, include_children)
            .await
    }

    /// Whether `doc_type` is a declared document type (and a singleton); 400 otherwise.
    fn document_type(&self, doc_type: &str) -> Result<bool> {
        match self.schemas().get(doc_type) {
            Some(schema) if schema.is_document() => Ok(schema.singleton),
            _ => Err(Error::invalid(vec![Issue::new(
                "type",
                "unknown",
                format!("`{doc_type}` is not a document type"),
            )])),
        }
    }

    fn check_structure(&self, doc_type: &str, data: &Value) -> Result<()> {
        let mut issues = self.schemas().check_structure(doc_type, data);
        if issues.is_empty() {
            issues.extend(find_nul("", data));
        }
        if issues.is_empty() {
            Ok(())
        } else {
            Err(Error::invalid(issues))
        }
    }

    /// Full validation: the schema's rules plus reference targets that must exist.
    async fn validation(
        &self,
        tx: &mut dyn Tx,
        org: &str,
        doc_type: &str,
        data: &Value,
        except: Option<&str>,
    ) -> Result<Validation> {
        let errors = self.schemas().validate_for_publish(doc_type, data);
        self.validation_with(tx, org, doc_type, data, except, errors)
            .await
    }

    /// [`Self::validation`] with the schema's rules already checked (`errors`), for a caller
    /// that checks them before opening its unit of work: what remains needs the store.
    async fn validation_with(
        &self,
        tx: &mut dyn Tx,
        org: &str,
        doc_type: &str,
        data: &Value,
        except: Option<&str>,
        mut errors: Vec<Issue>,
    ) -> Result<Validation> {
        let orgs = vec![org.to_string()];
        errors.extend(self.reference_issues(tx, &orgs, doc_type, data).await?);
        errors.extend(self.slug_clashes(tx, &orgs, doc_type, data, except).await?);
        Ok(Validation {
            is_valid: errors.is_empty(),
            errors,
        })
    }

    /// A document the actor's organization owns (writes never reach children); 404 otherwise.
    async fn owned(&self, tx: &mut dyn Tx, org: &str, id: &str) -> Result<DocumentRecord> {
        tx.document(&[org.to_string()], id)
            .await?
            .ok_or_else(|| Error::not_found("document"))
    }

    /// Replaces the draft guarded by the revision just read, then records the version and the
    /// references.
    async fn write_draft(
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
        Ok(())
    }

    /// Writes a new document with its first versions, its references and, when it is born
    /// published, its `document.published` event. A new document has no versions yet, so their
    /// numbers are known and the rows go to the store in one round trip.
    async fn insert_new(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        by: Option<&str>,
        now: Timestamp,
    ) -> Result<()> {
        let (versions, event) = first_versions(doc, by, now);
        tx.insert_new_document(doc, &versions, event.as_ref())
            .await?;
        let references = self.reference_records(&doc.doc_type, &doc.draft_data.0);
        tx.add_references(&doc.id, &doc.organization_id, DRAFT, &references)
            .await?;
        if doc.published_hash.is_some() {
            tx.add_references(&doc.id, &doc.organization_id, PUBLISHED, &references)
                .await?;
        }
        self.prune(tx, &doc.id, Some(versions.len() as i64)).await?;
        Ok(())
    }

    /// Every row of a new document, as [`Self::insert_new`] writes them, for a bulk insert.
    fn new_rows(&self, doc: DocumentRecord, by: Option<&str>, now: Timestamp) -> NewDocumentRows {
        let (versions, event) = first_versions(&doc, by, now);
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
            event,
            references,
        }
    }

    /// Validates the stored draft and, only when it is valid, publishes it. Every publish of an
    /// existing document (REST, a schedule) goes through here. With the validation, the
    /// document as now stored when it was published.
    async fn publish_if_valid(
        &self,
        tx: &mut dyn Tx,
        current: &DocumentRecord,
        by: Option<&str>,
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
            true => Some(self.record_publish(tx, current, by, now).await?),
            false => None,
        };
        Ok((validation, published))
    }

    /// Drops the published copy and its references; a draft-only document is left alone.
    async fn clear_published(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        by: Option<&str>,
        now: Timestamp,
    ) -> Result<()> {
        if doc.published_data.is_some() {
            tx.clear_published(&doc.id, by, now.millis()).await?;
            tx.replace_references(&doc.id, &doc.organization_id, PUBLISHED, &[])
                .await?;
        }
        Ok(())
    }

    /// Copies the draft to the published copy with its hash, version and references. Returns
    /// the document as it is now stored (the row `doc` was, with the published copy written).
    async fn record_publish(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        by: Option<&str>,
        now: Timestamp,
    ) -> Result<DocumentRecord> {
        let data = &doc.draft_data.0;
        let hash = canonical::published_hash(data);
        tx.set_published(&doc.id, data, &hash, by, now.millis())
            .await?;
        tx.append_event(&published_event(doc, &hash, now)).await?;
        let number = self
            .append_version(tx, doc, "publish", data, by, now)
            .await?;
        self.prune(tx, &doc.id, Some(number)).await?;
        let references = self.reference_records(&doc.doc_type, data);
        tx.replace_references(&doc.id, &doc.organization_id, PUBLISHED, &references)
            .await?;
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
    async fn prune(&self, tx: &mut dyn Tx, document_id: &str, written: Option<i64>) -> Result<()> {
        let keep = self.inner.settings.max_versions;
        if keep > 0 && written.is_none_or(|n| n > keep) {
            tx.prune_versions(document_id, keep).await?;
        }
        Ok(())
    }
}

/// The first string (or key) holding U+0000: PostgreSQL cannot store it in JSONB, so both
/// engines refuse it alike rather than one of them failing with a 500.
pub(crate) fn find_nul(path: &str, value: &Value) -> Option<Issue> {
    let nul = |path: &str| {
        Some(Issue::new(
            path,
            "invalid",
            "text may not contain the NUL character",
        ))
    };
    match value {
        Value::String(s) if s.contains('\0') => nul(path),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_nul(&format!("{path}[{i}]"), v)),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let child = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            if k.contains('\0') {
                nul(&child)
            } else {
                find_nul(&child, v)
            }
        }),
        _ => None,
    }
}

/// `fields` merged into a document's data, one level deep: each named top-level field takes
/// the given value, and `null` removes the field. The assistant's edits are partial (a model
/// names the fields it changes), unlike PUT, which replaces the draft.
pub fn merge_fields(data: &Value, fields: &Map<String, Value>) -> Value {
    let mut merged = data.as_object().cloned().unwrap_or_default();
    for (name, value) in fields {
        if value.is_null() {
            merged.remove(name);
        } else {
            merged.insert(name.clone(), value.clone());
        }
    }
    Value::Object(merged)
}

fn check_revision(expected: Option<i64>, current: i64) -> Result<()> {
    match expected {
        Some(expected) if expected != current => Err(Error::RevisionConflict { expected, current }),
        _ => Ok(()),
    }
}

fn check_read_options(read: &ReadOptions) -> Result<()> {
    if read.depth > MAX_DEPTH {
        return Err(Error::bad_request(format!("depth is 0 to {MAX_DEPTH}")));
    }
    Ok(())
}

fn new_record(
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
/// published) and its `document.published` event then.
fn first_versions(
    doc: &DocumentRecord,
    by: Option<&str>,
    now: Timestamp,
) -> (Vec<VersionRecord>, Option<EventRecord>) {
    let mut versions = vec![version_record(doc, 1, "draft", &doc.draft_data.0, by, now)];
    let event = doc.published_hash.as_deref().map(|hash| {
        versions.push(version_record(
            doc,
            2,
            "publish",
            &doc.draft_data.0,
            by,
            now,
        ));
        published_event(doc, hash, now)
    });
    (versions, event)
}

/// An error about the `index`th document of an import: issue paths become `[index].path`.
fn at_index(index: usize, error: Error) -> Error {
    match error {
        Error::BadRequest { issues, .. } if !issues.is_empty() => Error::invalid(
            issues
                .into_iter()
                .map(|mut issue| {
                    issue.path = format!("[{index}].{}", issue.path);
                    issue
                })
                .collect(),
        ),
        Error::BadRequest { message, .. } => Error::bad_request(format!("[{index}]: {message}")),
        other => other,
    }
}

/// `ids` sorted, each once.
pub(super) fn dedup(mut ids: Vec<String>) -> Vec<String> {
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// A version of `doc` numbered `number` (0 when the store numbers it).
fn version_record(
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

/// `document.published`, written in the publishing transaction (SPEC.md Delivery rule 1):
/// identifiers only, never the content.
fn published_event(doc: &DocumentRecord, hash: &str, now: Timestamp) -> EventRecord {
    let payload = json!({
        "documentId": doc.id,
        "documentType": doc.doc_type,
        "publishedHash": hash,
    });
    crate::events::event_record(
        Some(&doc.organization_id),
        crate::events::DOCUMENT_PUBLISHED,
        payload,
        now,
    )
}
