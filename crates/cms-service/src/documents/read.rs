//! Reads: one document, a page of a type (list and query), documents by id, back references,
//! the canonical row of a singleton; references resolved to the requested `depth`.

use std::collections::HashMap;

use cms_core::CoreCapability;
use cms_core::schema::Operation;
use cms_store::Tx;
use cms_store::documents::{DocumentRecord, ListSpec, Publication};
use cms_store::filter_sql::DataColumn;
use serde_json::{Map, Value};

use super::access::{self, ListRead};
use super::localization::Localization;
use super::records::new_record;
use super::search::{ListSearch, scored_view};
use super::validator::RevisionTag;
use super::{DocumentService, DocumentView, MAX_DEPTH, Perspective, ReadOptions};
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::paging::{MAX_BY_IDS, MAX_PAGE_SIZE, Pagination, page_or_default};

/// One document found by id, with what its body is built from.
pub(super) struct PointRead<'g> {
    pub(super) tx: Box<dyn Tx>,
    pub(super) orgs: Vec<String>,
    pub(super) record: DocumentRecord,
    pub(super) gate: access::Gate<'g>,
    pub(super) localization: Localization,
}

/// Where a document lives, as [`DocumentService::locate`] reveals it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentLocation {
    pub organization_id: String,
    pub doc_type: String,
}

/// A list or query request.
#[derive(Debug, Clone)]
pub struct ListRequest {
    pub doc_type: String,
    /// `Value::Null` for no filter.
    pub where_: Value,
    pub sort: Vec<String>,
    /// Which documents by their published copy (`status`); `None` for all.
    pub published: Option<Publication>,
    /// From 1; [`DEFAULT_PAGE`](crate::paging::DEFAULT_PAGE) when `None`.
    pub page: Option<i64>,
    /// 1 to [`MAX_PAGE_SIZE`]; [`DEFAULT_PAGE_SIZE`](crate::paging::DEFAULT_PAGE_SIZE) when
    /// `None`.
    pub page_size: Option<i64>,
    pub read: ReadOptions,
    /// Full-text search (CONTRACT.md section 14): words, `"quoted phrases"`, `-excluded`.
    /// Results carry `_meta.score`; without `sort` they come by relevance.
    pub search: Option<String>,
}

/// A page of documents.
#[derive(Debug, Clone)]
pub struct Page {
    pub data: Vec<DocumentView>,
    pub pagination: Pagination,
}

impl DocumentService<'_> {
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
        let (creator, read) = preview_reader(actor, id, read)?;
        let actor = creator.as_ref().unwrap_or(actor);
        let found = self.point_read(actor, id, &read).await?;
        self.view_of(actor, found, &read).await
    }

    /// [`Self::get`], with the document's [`RevisionTag`] when the stored row decides the body
    /// (no references resolved): the tag of exactly the row the body was built from.
    pub async fn get_tagged(
        &self,
        actor: &Actor,
        id: &str,
        read: ReadOptions,
    ) -> Result<(DocumentView, Option<RevisionTag>)> {
        let (creator, read) = preview_reader(actor, id, read)?;
        let actor = creator.as_ref().unwrap_or(actor);
        let found = self.point_read(actor, id, &read).await?;
        let tag = self.tag_of(actor, &found, &read);
        Ok((self.view_of(actor, found, &read).await?, tag))
    }

    /// The document `id` as a read of one document finds it, through every check of
    /// [`Self::get`]: capability, tenancy, perspective, the schema's read rule, the locale.
    pub(super) async fn point_read<'g>(
        &'g self,
        actor: &'g Actor,
        id: &str,
        read: &ReadOptions,
    ) -> Result<PointRead<'g>> {
        let orgs = self
            .delivered_organizations(actor, read.include_children)
            .await?;
        check_read_options(actor, read)?;
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
        let localization = self
            .localization_of(&mut *tx, &orgs[0], &record.doc_type, read.locale.as_deref())
            .await?;
        Ok(PointRead {
            tx,
            orgs,
            record,
            gate,
            localization,
        })
    }

    /// The body of a point read: fields stripped, localized, references resolved.
    async fn view_of(
        &self,
        actor: &Actor,
        found: PointRead<'_>,
        read: &ReadOptions,
    ) -> Result<DocumentView> {
        let PointRead {
            mut tx,
            orgs,
            record,
            gate,
            localization,
        } = found;
        let mut views = vec![gate.stripped(record)];
        self.show(&localization, &mut views, read.perspective);
        self.resolve(&mut *tx, &orgs, &mut views, read, &gate, &localization)
            .await?;
        deliver(actor, &mut views);
        Ok(views.remove(0))
    }

    /// A page of documents of one type: GET /api/documents and POST /api/documents/query.
    pub async fn list(&self, actor: &Actor, request: ListRequest) -> Result<Page> {
        let orgs = self
            .delivered_organizations(actor, request.read.include_children)
            .await?;
        let singleton = self.document_type(&request.doc_type)?;
        check_read_options(actor, &request.read)?;
        let (page, page_size) = page_or_default(request.page, request.page_size);
        if page < 1 || !(1..=MAX_PAGE_SIZE).contains(&page_size) {
            return Err(Error::bad_request(format!(
                "page is 1 or more and pageSize is 1 to {MAX_PAGE_SIZE}"
            )));
        }
        let gate = self.gate(actor);
        let list_read = gate.list_read(&request.doc_type);
        if list_read == ListRead::Refused {
            return Err(Error::Forbidden);
        }
        // A singleton list ignores its search, but a bad one is refused as on any type.
        if let (true, Some(raw)) = (singleton, &request.search) {
            let locale = self.inner.schemas.locales().default_locale().clone();
            self.list_search(&gate, &request.doc_type, raw, &locale)?;
        }
        if singleton {
            let Some(row) = self.delivered_singleton(actor, &request.doc_type).await? else {
                return Ok(Page {
                    data: Vec::new(),
                    pagination: Pagination::new(0, 1, page_size),
                });
            };
            gate.check(Operation::Read, &row)?;
            let mut views = vec![gate.stripped(row)];
            let mut tx = self.inner.store.read_for(&orgs[0]).await?;
            let localization = self
                .localization_of(
                    &mut *tx,
                    &orgs[0],
                    &request.doc_type,
                    request.read.locale.as_deref(),
                )
                .await?;
            self.show(&localization, &mut views, request.read.perspective);
            // A singleton list ignores filters (SPEC.md), the search with them; its one row
            // still says it was not ranked.
            if request.search.is_some() {
                views[0].meta.score = Some(0.0);
            }
            self.resolve(
                &mut *tx,
                &orgs,
                &mut views,
                &request.read,
                &gate,
                &localization,
            )
            .await?;
            deliver(actor, &mut views);
            return Ok(Page {
                pagination: Pagination::new(1, 1, page_size),
                data: views,
            });
        }
        // A page far past any data is a client error, not an arithmetic overflow.
        let offset = (page - 1)
            .checked_mul(page_size)
            .ok_or_else(|| Error::bad_request("page is too large"))?;
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let localization = self
            .localization_of(
                &mut *tx,
                &orgs[0],
                &request.doc_type,
                request.read.locale.as_deref(),
            )
            .await?;
        let fields = self
            .schemas()
            .fields(&request.doc_type)
            .expect("a declared document type")
            .in_locale(localization.query_locale());
        let search = match &request.search {
            Some(raw) => Some(self.list_search(
                &gate,
                &request.doc_type,
                raw,
                localization.query_locale(),
            )?),
            None => None,
        };
        let readable = gate.where_fields(&request.doc_type, fields);
        let (filter, sort) = access::parse_filter(&readable, &request.where_, &request.sort);
        let (column, published) = match (request.read.perspective, request.published) {
            // Draft-only documents have no published copy to show.
            (Perspective::Published, Some(Publication::DraftOnly)) => {
                return Ok(Page {
                    data: Vec::new(),
                    pagination: Pagination::new(0, page, page_size),
                });
            }
            // Whether a draft differs is the draft's to tell: a reader of the published copy
            // (the public one included) may not learn it.
            (Perspective::Published, Some(Publication::Changed)) => {
                return Err(Error::bad_request(
                    "`status=changed` compares the draft with the published copy: it needs the draft perspective",
                ));
            }
            (Perspective::Published, _) => (DataColumn::Published, Some(Publication::Published)),
            (Perspective::Draft, status) => (DataColumn::Draft, status),
        };
        let spec = ListSpec {
            organizations: &orgs,
            doc_type: &request.doc_type,
            column,
            published,
            filter: &filter,
            sort: &sort,
            limit: page_size,
            offset,
        };
        let search_spec = search.as_ref().map(ListSearch::spec);
        let (mut views, total) = match (list_read, search_spec) {
            (ListRead::PerDocument, search) => {
                self.list_policy_ruled(&mut *tx, &spec, search.as_ref(), &gate)
                    .await?
            }
            (_, Some(search)) => {
                let (found, total) = tx.search_documents(&spec, &search).await?;
                (found.into_iter().map(scored_view).collect(), total)
            }
            (_, None) => {
                let (records, total) = tx.list_documents(&spec).await?;
                (records.into_iter().map(DocumentView::from).collect(), total)
            }
        };
        views.iter_mut().for_each(|v| gate.strip(v));
        self.show(&localization, &mut views, request.read.perspective);
        self.resolve(
            &mut *tx,
            &orgs,
            &mut views,
            &request.read,
            &gate,
            &localization,
        )
        .await?;
        deliver(actor, &mut views);
        Ok(Page {
            data: views,
            pagination: Pagination::new(total, page, page_size),
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
            .delivered_organizations(actor, read.include_children)
            .await?;
        check_read_options(actor, &read)?;
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
        let localization = self
            .localization_in(
                &mut *tx,
                &orgs[0],
                self.any_localized(&views),
                read.locale.as_deref(),
            )
            .await?;
        self.show(&localization, &mut views, read.perspective);
        self.resolve(&mut *tx, &orgs, &mut views, &read, &gate, &localization)
            .await?;
        deliver(actor, &mut views);
        Ok(views)
    }

    /// Documents whose draft or published copy references `id`. An anonymous `public` reader
    /// reads the published side only: the target and the documents listed must be published,
    /// and they show their published copy.
    pub async fn back_references(
        &self,
        actor: &Actor,
        id: &str,
        include_children: bool,
    ) -> Result<Vec<DocumentView>> {
        let orgs = self
            .delivered_organizations(actor, include_children)
            .await?;
        let perspective = Perspective::default_for(actor);
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let target = tx
            .document(&orgs, id)
            .await?
            .filter(|t| perspective == Perspective::Draft || t.published_data.is_some())
            .ok_or_else(|| Error::not_found("document"))?;
        let gate = self.gate(actor);
        gate.check(Operation::Read, &target)?;
        let records = tx.referencing_documents(&orgs, id).await?;
        let mut views: Vec<DocumentView> = records
            .into_iter()
            .map(DocumentView::from)
            .filter(|v| v.data(perspective).is_some() && gate.may_read(v))
            .map(|mut v| {
                gate.strip(&mut v);
                v
            })
            .collect();
        let localization = self
            .localization_in(&mut *tx, &orgs[0], self.any_localized(&views), None)
            .await?;
        self.show(&localization, &mut views, perspective);
        deliver(actor, &mut views);
        Ok(views)
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
        let localization = self
            .localization(&row.organization_id, doc_type, None)
            .await?;
        let mut views = vec![gate.stripped(row)];
        self.show(&localization, &mut views, Perspective::Draft);
        Ok(views.remove(0))
    }

    /// The canonical row of a singleton type as a list shows it: created on first read for
    /// people, keys and plugins; an anonymous `public` reader writes nothing, and sees the row
    /// only once it is published (`None` otherwise: an empty list, as for any draft-only
    /// document in the published perspective).
    async fn delivered_singleton(
        &self,
        actor: &Actor,
        doc_type: &str,
    ) -> Result<Option<DocumentRecord>> {
        if !actor.is_public() {
            return self.singleton_row(actor, doc_type).await.map(Some);
        }
        let org = actor
            .organization_id
            .as_deref()
            .ok_or(Error::Unauthorized)?;
        let row = self
            .inner
            .store
            .read_for(org)
            .await?
            .singleton(org, doc_type)
            .await?;
        Ok(row.filter(|r| r.published_data.is_some()))
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
        // Only the row: opening a singleton is no edit, so it writes no version and no
        // `document.created` event (no webhook, no history entry). Its first save writes both
        // (docs/DECISIONS.md). An empty draft has no references; the field indexes get its row.
        tx.insert_document(&record).await?;
        self.index_new(&mut *tx, &[&record]).await?;
        tx.commit().await?;
        Ok(record)
    }

    /// Whether any of `views` is of a type with localized fields.
    fn any_localized(&self, views: &[DocumentView]) -> bool {
        views
            .iter()
            .any(|v| self.schemas().is_localized_type(&v.doc_type))
    }

    /// `views` in the request's locale (see [`Localization::show`]).
    pub(super) fn show(
        &self,
        localization: &Localization,
        views: &mut [DocumentView],
        perspective: Perspective,
    ) {
        for view in views {
            localization.show(self.schemas(), view, perspective);
        }
    }

    /// The organizations a read serving published content covers (get, list, by ids, back
    /// references): also for an anonymous `public` reader, who reads its own organization only.
    async fn delivered_organizations(
        &self,
        actor: &Actor,
        include_children: bool,
    ) -> Result<Vec<String>> {
        self.inner
            .deliverable_organizations(actor, CoreCapability::DocumentRead, include_children)
            .await
    }

    /// The organizations the actor reads: their own, plus its children when asked.
    pub(super) async fn readable_organizations(
        &self,
        actor: &Actor,
        include_children: bool,
    ) -> Result<Vec<String>> {
        self.inner
            .readable_organizations(actor, CoreCapability::DocumentRead, include_children)
            .await
    }
}

/// The depth asked for, and the perspective: an anonymous `public` reader reads published
/// copies only, so asking it for drafts is an access refusal (403, CONTRACT.md section 15).
fn check_read_options(actor: &Actor, read: &ReadOptions) -> Result<()> {
    if actor.is_public() && read.perspective == Perspective::Draft {
        return Err(Error::Forbidden);
    }
    if read.resolution_depth() > MAX_DEPTH {
        return Err(Error::bad_request(format!("depth is 0 to {MAX_DEPTH}")));
    }
    Ok(())
}

/// Who reads document `id`, and how: a preview token reads its one document as its creator, in
/// that document's organization only (CONTRACT.md section 15; any other id is 401); every
/// other actor reads as itself (`None`).
pub(super) fn preview_reader(
    actor: &Actor,
    id: &str,
    read: ReadOptions,
) -> Result<(Option<Actor>, ReadOptions)> {
    Ok(match actor.preview_reader(id)? {
        Some(creator) => (
            Some(creator),
            ReadOptions {
                include_children: false,
                ..read
            },
        ),
        None => (None, read),
    })
}

/// What an anonymous `public` reader is answered: the published copy and its hash, never the
/// draft (CONTRACT.md section 15). Everyone else gets the documents as they are.
fn deliver(actor: &Actor, views: &mut [DocumentView]) {
    if actor.is_public() {
        views.iter_mut().for_each(DocumentView::withhold_draft);
    }
}
