//! Content migrations (CONTRACT.md section 19): stored documents rewritten to the current
//! schema (`cms migrate-content`), and the start-up report of data a schema change left
//! behind.
//!
//! A document is rewritten in the unit of its chunk (the chunk's rows held until it commits,
//! like a search rebuild): its draft and published copy conformed (renamed keys moved, removed
//! fields left out), a new version of the rewritten draft, and its references and search rows
//! from the rewritten data. What a removed field held stays in the version before (written
//! first when the newest version is not the stored draft). No event is emitted: what readers
//! see does not change, since reads already show the conformed data. A run that stops part way
//! leaves every finished chunk done, and running it again finds only the rest to change.

use std::collections::BTreeMap;

use cms_core::canonical;
use cms_core::schema::{Conformed, Undeclared};
use cms_store::Tx;
use cms_store::documents::DocumentRecord;
use serde::Serialize;
use serde_json::Value;

use super::DocumentService;
use super::records::{DRAFT, PUBLISHED, version_record};
use super::search::next_after;
use crate::error::Result;

/// One document `cms migrate-content` changed (or, in a dry run, would change).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigratedDocument {
    pub id: String,
    pub organization_id: String,
    #[serde(rename = "type")]
    pub doc_type: String,
    /// `old → new` of each key moved, by path.
    pub renamed: Vec<String>,
    /// Each key no field declares any more, dropped into the document's history.
    pub dropped: Vec<String>,
}

/// What a run did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentMigration {
    pub dry_run: bool,
    /// Documents read.
    pub scanned: u64,
    pub changed: Vec<MigratedDocument>,
}

/// Data a schema change left behind at one path of one type: what start-up warns about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub doc_type: String,
    pub path: String,
    /// `renamed` (still under the old key), `removed` (no field declares it) or `retyped` (a
    /// value the field's type does not take).
    pub kind: &'static str,
    pub documents: u64,
    /// Up to [`EXAMPLES`] of those documents' ids.
    pub examples: Vec<String>,
}

/// Documents named per leftover in the start-up warning.
pub const EXAMPLES: usize = 5;

impl DocumentService<'_> {
    /// Rewrites every stored document to the current schema, chunk by chunk, or with
    /// `dry_run` only says what it would change. `progress` hears the running count of
    /// documents read.
    pub async fn migrate_content(
        &self,
        dry_run: bool,
        mut progress: impl FnMut(u64),
    ) -> Result<ContentMigration> {
        let mut run = ContentMigration {
            dry_run,
            ..ContentMigration::default()
        };
        let organizations = self.organization_ids().await?;
        for schema in self.schemas().documents() {
            for org in &organizations {
                let mut after: Option<String> = None;
                loop {
                    let mut tx = self.inner.store.write_for(org).await?;
                    let docs = tx
                        .documents_after(org, &schema.name, after.as_deref())
                        .await?;
                    for doc in &docs {
                        if let Some(changed) = self.migrate_one(&mut *tx, doc, dry_run).await? {
                            run.changed.push(changed);
                        }
                    }
                    if !dry_run {
                        tx.commit().await?;
                    }
                    run.scanned += docs.len() as u64;
                    progress(run.scanned);
                    after = next_after(&docs);
                    if after.is_none() {
                        break;
                    }
                }
            }
        }
        Ok(run)
    }

    /// Conforms one document, writing it unless `dry_run`; `None` when it conforms already.
    async fn migrate_one(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        dry_run: bool,
    ) -> Result<Option<MigratedDocument>> {
        let schemas = self.schemas();
        let mut draft = doc.draft_data.0.clone();
        let draft_changes = schemas.conform(&doc.doc_type, &mut draft, Undeclared::Drop);
        let mut published = doc.published_data.as_ref().map(|p| p.0.clone());
        let published_changes = match &mut published {
            Some(data) => schemas.conform(&doc.doc_type, data, Undeclared::Drop),
            None => Conformed::default(),
        };
        if draft_changes.is_empty() && published_changes.is_empty() {
            return Ok(None);
        }
        if !dry_run {
            let published = published.filter(|_| !published_changes.is_empty());
            self.rewrite(tx, doc, &draft, published.as_ref()).await?;
        }
        let merged = |pick: fn(&Conformed) -> &Vec<String>| {
            let mut all: Vec<String> = pick(&draft_changes).clone();
            for path in pick(&published_changes) {
                if !all.contains(path) {
                    all.push(path.clone());
                }
            }
            all
        };
        Ok(Some(MigratedDocument {
            id: doc.id.clone(),
            organization_id: doc.organization_id.clone(),
            doc_type: doc.doc_type.clone(),
            renamed: merged(|c| &c.renamed),
            dropped: merged(|c| &c.dropped),
        }))
    }

    /// Writes the conformed copies of `doc` (`published`: the published copy, when it changed)
    /// with a version, references and search rows.
    async fn rewrite(
        &self,
        tx: &mut dyn Tx,
        doc: &DocumentRecord,
        draft: &Value,
        published: Option<&Value>,
    ) -> Result<()> {
        let now = self.inner.clock.now();
        // The stored draft stays reachable in the history: the newest version unless it is
        // something else (versions pruned, or none kept).
        let newest = match tx.versions(&doc.id, 1, 0).await?.pop() {
            Some(version) => version.data.0 != doc.draft_data.0,
            None => true,
        };
        if newest {
            let before = version_record(doc, 0, DRAFT, &doc.draft_data.0, None, now);
            tx.append_version(&before).await?;
        }
        let hash = published.map(canonical::published_hash);
        let copy = published.zip(hash.as_deref());
        if !tx
            .rewrite_document(&doc.id, draft, copy, doc.revision, now.millis())
            .await?
        {
            // Held since the chunk was read: no other write can have moved it.
            return Err(crate::Error::Conflict(format!(
                "document {} changed during the migration: run it again",
                doc.id
            )));
        }
        tx.append_version(&version_record(doc, 0, DRAFT, draft, None, now))
            .await?;
        self.prune(tx, &doc.id, None).await?;
        let references = self.reference_records(&doc.doc_type, draft);
        tx.replace_references(&doc.id, &doc.organization_id, DRAFT, &references)
            .await?;
        self.index_copy(tx, doc, DRAFT, Some(draft)).await?;
        if let Some(published) = published {
            let references = self.reference_records(&doc.doc_type, published);
            tx.replace_references(&doc.id, &doc.organization_id, PUBLISHED, &references)
                .await?;
            self.index_copy(tx, doc, PUBLISHED, Some(published)).await?;
        }
        Ok(())
    }

    /// What stored drafts of `doc_types` hold that their schema no longer declares as it is:
    /// keys under a renamed field's old name, keys of removed fields, and values a retyped
    /// field does not take. Read chunk by chunk; nothing is written.
    pub async fn leftovers(&self, doc_types: &[String]) -> Result<Vec<Leftover>> {
        let mut found: BTreeMap<(String, String, &'static str), Leftover> = BTreeMap::new();
        let mut note = |doc: &DocumentRecord, path: String, kind: &'static str| {
            let entry = found
                .entry((doc.doc_type.clone(), path.clone(), kind))
                .or_insert_with(|| Leftover {
                    doc_type: doc.doc_type.clone(),
                    path,
                    kind,
                    documents: 0,
                    examples: Vec::new(),
                });
            entry.documents += 1;
            if entry.examples.len() < EXAMPLES {
                entry.examples.push(doc.id.clone());
            }
        };
        let organizations = self.organization_ids().await?;
        for doc_type in doc_types {
            for org in &organizations {
                let mut after: Option<String> = None;
                loop {
                    let docs = {
                        let mut tx = self.inner.store.write_for(org).await?;
                        tx.documents_after(org, doc_type, after.as_deref()).await?
                    };
                    for doc in &docs {
                        let mut data = doc.draft_data.0.clone();
                        let changes = self
                            .schemas()
                            .conform(doc_type, &mut data, Undeclared::Keep);
                        for renamed in changes.renamed {
                            note(doc, renamed, "renamed");
                        }
                        for issue in self.schemas().check_structure(doc_type, &data) {
                            let kind = match issue.code.as_str() {
                                "unknown" => "removed",
                                "type" => "retyped",
                                _ => continue,
                            };
                            note(doc, issue.path.clone(), kind);
                        }
                    }
                    after = next_after(&docs);
                    if after.is_none() {
                        break;
                    }
                }
            }
        }
        Ok(found.into_values().collect())
    }
}
