//! Full-text search (CONTRACT.md section 14): the search rows written with every write of a
//! document copy, what a list's `search` asks the store for, and the rebuild of a type's rows
//! when its searchable fields changed.
//!
//! Access: a search matches and scores only the searchable fields the caller may read (like
//! `where`, never an oracle): the store is given the readable paths alone.

use cms_core::FieldLookup;
use cms_core::search::{SearchQuery, SearchRow, searchable_paths};
use cms_store::Tx;
use cms_store::documents::DocumentRecord;
use cms_store::search::{ScoredDocument, SearchSpec};
use serde_json::Value;

use super::access::Gate;
use super::records::{DRAFT, PUBLISHED};
use super::{DocumentService, DocumentView};
use crate::error::{Error, Result};

/// A list's search, checked against the type and narrowed to what the caller may read.
pub(crate) struct ListSearch {
    pub query: SearchQuery,
    /// The readable searchable paths; empty when the caller may read none (nothing matches).
    pub paths: Vec<String>,
    pub locale: String,
}

impl ListSearch {
    pub(crate) fn spec(&self) -> SearchSpec<'_> {
        SearchSpec {
            query: &self.query,
            locale: &self.locale,
            paths: &self.paths,
        }
    }
}

/// A search result as a view, `_meta.score` set.
pub(crate) fn scored_view(scored: ScoredDocument) -> DocumentView {
    let mut view = DocumentView::from(scored.document);
    view.meta.score = Some(scored.score);
    view
}

/// What the search rows of a type are built from: a start that finds another signature stored
/// rebuilds them (see [`DocumentService::reindex_search`]). The version names the tokenizer
/// and the row layout: raise it when either changes.
pub fn search_signature(schemas: &cms_core::Schemas, doc_type: &str) -> String {
    const VERSION: u32 = 1;
    let paths = searchable_paths(schemas, doc_type);
    let localized = schemas.is_localized_type(doc_type);
    format!("v{VERSION};{};localized={localized}", paths.join(","))
}

impl DocumentService<'_> {
    /// Parses a list's `search` for `doc_type`: 400 when the type has no searchable field or
    /// the search is empty, only excludes, or is too long.
    pub(crate) fn list_search(
        &self,
        gate: &Gate<'_>,
        doc_type: &str,
        raw: &str,
        locale: &cms_core::LocaleTag,
    ) -> Result<ListSearch> {
        let declared = searchable_paths(self.schemas(), doc_type);
        if declared.is_empty() {
            return Err(Error::bad_request(format!(
                "`{doc_type}` has no searchable field: search needs a field with `searchable: true`"
            )));
        }
        let query = SearchQuery::parse(raw).map_err(|e| Error::bad_request(e.to_string()))?;
        let fields = self
            .schemas()
            .fields(doc_type)
            .expect("a declared document type");
        let readable = gate.where_fields(doc_type, fields);
        let paths = declared
            .into_iter()
            .filter(|path| {
                let segments: Vec<&str> = path.split('.').collect();
                readable.field_kind(&segments).is_some()
            })
            .collect();
        Ok(ListSearch {
            query,
            paths,
            locale: locale.to_string(),
        })
    }

    /// The search rows of `data`, a copy of a document of `doc_type`; `None` for a type
    /// without searchable fields (it has no rows to keep).
    fn search_rows(&self, doc_type: &str, data: &Value) -> Option<Vec<SearchRow>> {
        if searchable_paths(self.schemas(), doc_type).is_empty() {
            return None;
        }
        Some(self.schemas().search_rows(doc_type, data))
    }

    /// Rewrites the search rows of one copy of `doc` in the unit of work `tx`: `data` is the
    /// copy as now stored, `None` when it was dropped (unpublish).
    pub(super) async fn index_copy(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        copy: &str,
        data: Option<&Value>,
    ) -> Result<()> {
        let empty = Value::Null;
        let Some(rows) = self.search_rows(&doc.doc_type, data.unwrap_or(&empty)) else {
            return Ok(());
        };
        tx.replace_search_rows(&doc.id, &doc.organization_id, copy, &rows)
            .await?;
        Ok(())
    }

    /// Adds the search rows of new documents (no rows yet): their draft and, when born
    /// published, their published copy, in few statements.
    pub(super) async fn index_new(&self, tx: &mut dyn Tx, docs: &[&DocumentRecord]) -> Result<()> {
        let mut owned: Vec<(&DocumentRecord, &str, Vec<SearchRow>)> = Vec::new();
        for doc in docs {
            let Some(rows) = self.search_rows(&doc.doc_type, &doc.draft_data.0) else {
                continue;
            };
            if doc.published_data.is_some() {
                owned.push((doc, PUBLISHED, rows.clone()));
            }
            owned.push((doc, DRAFT, rows));
        }
        let rows: Vec<(&str, &str, &str, &SearchRow)> = owned
            .iter()
            .flat_map(|(doc, copy, rows)| {
                rows.iter()
                    .map(move |r| (doc.id.as_str(), doc.organization_id.as_str(), *copy, r))
            })
            .collect();
        if !rows.is_empty() {
            tx.add_search_rows(&rows).await?;
        }
        Ok(())
    }

    /// Rebuilds the search rows of every document of `doc_type` in every organization, one
    /// write unit per chunk of documents (each acting for the documents' organization), then
    /// records the type's signature. Reads and writes meanwhile keep their usual rows: a
    /// document written during the rebuild is indexed by its own write, and rebuilt again from
    /// what is stored, which is the same.
    pub async fn reindex_search(&self, doc_type: &str) -> Result<u64> {
        let organizations = self.organization_ids().await?;
        let mut done = 0u64;
        for org in organizations {
            let mut after: Option<String> = None;
            loop {
                let mut tx = self.inner.store.write_for(&org).await?;
                let docs = tx.documents_after(&org, doc_type, after.as_deref()).await?;
                for doc in &docs {
                    // Every copy is rewritten, to no rows when the type has no searchable
                    // field any more.
                    let schemas = self.schemas();
                    let draft = schemas.search_rows(doc_type, &doc.draft_data.0);
                    let published = match &doc.published_data {
                        Some(data) => schemas.search_rows(doc_type, &data.0),
                        None => Vec::new(),
                    };
                    for (copy, rows) in [(DRAFT, draft), (PUBLISHED, published)] {
                        tx.replace_search_rows(&doc.id, &doc.organization_id, copy, &rows)
                            .await?;
                    }
                }
                tx.commit().await?;
                done += docs.len() as u64;
                after = next_after(&docs);
                if after.is_none() {
                    break;
                }
            }
        }
        let mut tx = self.inner.store.write().await?;
        tx.set_search_signature(doc_type, &search_signature(self.schemas(), doc_type))
            .await?;
        tx.commit().await?;
        Ok(done)
    }

    /// Every organization's id: the walks over every document (a search rebuild, a content
    /// migration) visit each, acting for it.
    pub(super) async fn organization_ids(&self) -> Result<Vec<String>> {
        let mut tx = self.inner.store.read_instance_wide().await?;
        Ok(tx.all_organization_ids().await?)
    }

    /// The document types whose stored search signature differs from their schema's: those
    /// [`Self::reindex_search`] must rebuild (documents stored before a field became
    /// searchable, or before search existed, have no rows). A type that has no searchable
    /// field and never had any needs nothing.
    pub async fn stale_search_types(&self) -> Result<Vec<String>> {
        let mut tx = self.inner.store.read().await?;
        let mut stale = Vec::new();
        for schema in self.schemas().documents() {
            let wanted = search_signature(self.schemas(), &schema.name);
            let stored = tx.search_signature(&schema.name).await?;
            let searchable = !searchable_paths(self.schemas(), &schema.name).is_empty();
            if stored.as_deref() != Some(wanted.as_str()) && (searchable || stored.is_some()) {
                stale.push(schema.name.clone());
            }
        }
        Ok(stale)
    }
}

/// Where the walk over a type's documents goes on after the chunk `docs` (read by
/// `documents_after`): the last id of a full chunk, `None` after the last chunk.
pub(super) fn next_after(docs: &[DocumentRecord]) -> Option<String> {
    match docs.last() {
        Some(last) if docs.len() as i64 == cms_store::search::REINDEX_CHUNK => {
            Some(last.id.clone())
        }
        _ => None,
    }
}
