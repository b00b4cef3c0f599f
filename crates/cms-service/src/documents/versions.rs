//! A document's versions: the list, one version, and restoring one into the draft.

use cms_core::CoreCapability;
use cms_core::schema::{Operation, Undeclared};

use super::write::check_revision;
use super::{DocumentService, DocumentView, VersionView};
use crate::actor::Actor;
use crate::audit::{AuditAction, AuditTarget, Who};
use crate::error::{Error, Result};
use crate::paging::{MAX_PAGE_SIZE, window_or_default};

impl DocumentService<'_> {
    /// Versions of a document, newest first, with the total; a parent reads its children's with
    /// `include_children`, like every other read. `limit` and `offset` left out are a page of
    /// [`DEFAULT_PAGE_SIZE`](crate::paging::DEFAULT_PAGE_SIZE) from the newest.
    pub async fn versions(
        &self,
        actor: &Actor,
        id: &str,
        limit: Option<i64>,
        offset: Option<i64>,
        include_children: bool,
    ) -> Result<(Vec<VersionView>, i64)> {
        let orgs = self.readable_organizations(actor, include_children).await?;
        let (limit, offset) = window_or_default(limit, offset);
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
        // Restored in the current schema's shape; what a removed field held stays in the
        // version.
        let mut data = version.data.0;
        let schemas = self.schemas();
        schemas.conform(&current.doc_type, &mut data, Undeclared::Drop);
        let mut stored = current.draft_data.0.clone();
        schemas.conform(&current.doc_type, &mut stored, Undeclared::Drop);
        gate.keep_unwritable(&current.doc_type, &mut data, Some(&stored));
        // A version saved before datetimes were stored in UTC comes back in the stored form.
        self.schemas().normalize(&current.doc_type, &mut data);
        self.write_draft(&mut *tx, &current, data, Some(&actor.user.id), now)
            .await?;
        tx.append_audit(&[Who::of(actor).entry(
            Some(&org),
            AuditAction::DocumentRestored,
            Some(AuditTarget::new("document", id)),
            format!("{} from version {number}", current.doc_type),
            now.millis(),
        )])
        .await?;
        let stored = self.owned(&mut *tx, &org, id).await?;
        let localization = self
            .localization_of(&mut *tx, &org, &stored.doc_type, None)
            .await?;
        tx.commit().await?;
        Ok(self.shown(&gate, &localization, stored))
    }

    /// The number of the newest version of document `id`, as the actor reads it; `None` when
    /// none is kept.
    pub async fn latest_version(&self, actor: &Actor, id: &str) -> Result<Option<i64>> {
        let (newest, _) = self.versions(actor, id, Some(1), Some(0), false).await?;
        Ok(newest.first().map(|v| v.version_number))
    }
}
