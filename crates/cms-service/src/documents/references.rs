//! References on the write side: the rows a copy's references become, the check that their
//! targets exist (one query per target kind, ids only), and the rule for deleting a document
//! others still reference (DECISIONS.md, "Deleting a referenced document").

use std::collections::HashSet;

use cms_core::Issue;
use cms_core::schema::{FoundReference, RefTarget};
use cms_store::Tx;
use cms_store::references::{ReferenceRecord, TargetKind};
use serde_json::Value;

use super::DocumentView;
use super::access::Gate;
use crate::error::{Error, Result};

/// The most referrer ids a refused delete lists (the count is always exact).
pub const MAX_LISTED_REFERRERS: usize = 100;

impl super::DocumentService<'_> {
    /// The rows of the references found in `data`, for the references side table.
    pub(super) fn reference_records(&self, doc_type: &str, data: &Value) -> Vec<ReferenceRecord> {
        self.schemas()
            .references(doc_type, data)
            .into_iter()
            .map(|r| ReferenceRecord {
                path: r.path,
                to_id: r.id,
                target: match r.target {
                    RefTarget::Document => "document",
                    RefTarget::Asset | RefTarget::Image => "asset",
                }
                .to_string(),
            })
            .collect()
    }

    /// An issue for every reference of `data` whose target is not a document (or asset) of
    /// `orgs`, or is an asset of the wrong kind (an image field's asset must be an image): one
    /// query per target kind, however many references the data holds.
    pub(super) async fn reference_issues(
        &self,
        tx: &mut dyn Tx,
        orgs: &[String],
        doc_type: &str,
        data: &Value,
    ) -> Result<Vec<Issue>> {
        let references = self.schemas().references(doc_type, data);
        let named = Named::of(&references);
        let found = Found::look_up(tx, orgs, named).await?;
        Ok(references
            .into_iter()
            .filter_map(|r| found.issue(r))
            .collect())
    }

    /// The delete rule: a document other documents of its organization reference, in their
    /// draft or published copy, is not deleted (409 with the count and the referrers the
    /// caller may read). Checked in the deleting unit of work, so the answer holds for the
    /// delete it guards.
    pub(super) async fn check_unreferenced(
        &self,
        tx: &mut dyn Tx,
        gate: &Gate<'_>,
        org: &str,
        id: &str,
    ) -> Result<()> {
        let (count, ids) = tx.referrers(org, id, MAX_LISTED_REFERRERS as i64).await?;
        if count == 0 {
            return Ok(());
        }
        let orgs = [org.to_string()];
        let mut readable: Vec<String> = tx
            .documents_by_ids(&orgs, &ids)
            .await?
            .into_iter()
            .map(DocumentView::from)
            .filter(|v| gate.may_read(v))
            .map(|v| v.id)
            .collect();
        readable.sort_unstable();
        Err(Error::DocumentReferenced {
            count,
            referrers: readable,
        })
    }
}

/// The distinct ids `references` name, by what they must be.
pub(super) struct Named {
    pub(super) documents: Vec<String>,
    /// Every asset named, images included: they must exist.
    assets: Vec<String>,
    /// The assets named where an image belongs: they must be images.
    images: Vec<String>,
}

impl Named {
    pub(super) fn of(references: &[FoundReference]) -> Named {
        let (mut documents, mut assets, mut images) = (Vec::new(), Vec::new(), Vec::new());
        for reference in references {
            match reference.target {
                RefTarget::Document => documents.push(reference.id.clone()),
                RefTarget::Asset => assets.push(reference.id.clone()),
                RefTarget::Image => {
                    assets.push(reference.id.clone());
                    images.push(reference.id.clone());
                }
            }
        }
        Named {
            documents: dedup(documents),
            assets: dedup(assets),
            images: dedup(images),
        }
    }
}

/// Which named targets exist, and which named images are images.
pub(super) struct Found {
    pub(super) documents: HashSet<String>,
    assets: HashSet<String>,
    images: HashSet<String>,
}

impl Found {
    /// One query per kind of target.
    pub(super) async fn look_up(tx: &mut dyn Tx, orgs: &[String], named: Named) -> Result<Found> {
        Ok(Found {
            documents: existing(tx, orgs, TargetKind::Document, named.documents).await?,
            assets: existing(tx, orgs, TargetKind::Asset, named.assets).await?,
            images: existing(tx, orgs, TargetKind::Image, named.images).await?,
        })
    }

    /// The issue of one reference, if its target is missing or of the wrong kind.
    pub(super) fn issue(&self, reference: FoundReference) -> Option<Issue> {
        let (exists, right_kind) = match reference.target {
            RefTarget::Document => (self.documents.contains(&reference.id), true),
            RefTarget::Asset => (self.assets.contains(&reference.id), true),
            RefTarget::Image => (
                self.assets.contains(&reference.id),
                self.images.contains(&reference.id),
            ),
        };
        match (exists, right_kind) {
            (false, _) => Some(missing_reference(reference)),
            (true, false) => Some(Issue::new(
                reference.path,
                "reference",
                format!("{}: the referenced asset is not an image", reference.label),
            )),
            (true, true) => None,
        }
    }
}

/// `ids` sorted, each once.
fn dedup(mut ids: Vec<String>) -> Vec<String> {
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Which of `ids` name a target of `kind` in `orgs` (one query, chunked by the store).
async fn existing(
    tx: &mut dyn Tx,
    orgs: &[String],
    kind: TargetKind,
    ids: Vec<String>,
) -> Result<HashSet<String>> {
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    Ok(tx
        .existing_targets(orgs, kind, &ids)
        .await?
        .into_iter()
        .collect())
}

fn missing_reference(reference: FoundReference) -> Issue {
    let what = match reference.target {
        RefTarget::Document => "document",
        RefTarget::Asset | RefTarget::Image => "asset",
    };
    let message = format!("{}: the referenced {what} does not exist", reference.label);
    Issue::new(reference.path, "reference", message)
}
