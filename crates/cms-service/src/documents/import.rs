//! [`DocumentService::import`]: many new documents in one unit of work, for bulk loads from
//! Rust.

use std::collections::HashSet;

use cms_core::CoreCapability;

use super::slugs::slug_taken;
use super::{DocumentService, DocumentView, NewDocument, Perspective, Validation, references};
use crate::actor::Actor;
use crate::error::{Error, Result};

impl DocumentService<'_> {
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
        let mut shown = Vec::with_capacity(inputs.len());
        // One read of the organization's locales serves every document (when they matter).
        let mut locales_read = self.inner.store.read_for(&org).await?;
        for (i, input) in inputs.into_iter().enumerate() {
            let publish = input.publish;
            let localization = self
                .localization_of(
                    &mut *locales_read,
                    &org,
                    &input.doc_type,
                    input.locale.as_deref(),
                )
                .await
                .map_err(|e| at_index(i, e))?;
            let (record, issues) = self
                .prepare_new(&gate, &org, input, &localization, by, now)
                .map_err(|e| at_index(i, e))?;
            shown.push(localization);
            if record.singleton {
                return Err(Error::bad_request(format!(
                    "[{i}]: `{}` is a singleton type: create its one document, it cannot be imported",
                    record.doc_type
                )));
            }
            prepared.push((record, publish, issues));
        }
        drop(locales_read);
        let orgs = vec![org.clone()];
        let mut tx = self.inner.store.write_for(&org).await?;
        // Every reference target named anywhere in the import, one query per kind. Documents
        // found, or imported earlier in this call; assets found.
        let named: Vec<_> = prepared
            .iter()
            .flat_map(|(r, _, _)| self.schemas().references(&r.doc_type, &r.draft_data.0))
            .collect();
        let mut found =
            references::Found::look_up(&mut *tx, &orgs, references::Named::of(&named)).await?;
        // (type, field, slug) published earlier in this import.
        let mut slugs: HashSet<(String, super::slugs::SlugValue)> = HashSet::new();
        let mut rows = Vec::with_capacity(prepared.len());
        let mut validations = Vec::with_capacity(prepared.len());
        for (i, (record, publish, mut errors)) in prepared.into_iter().enumerate() {
            let (doc_type, data) = (&record.doc_type, &record.draft_data.0);
            for reference in self.schemas().references(doc_type, data) {
                errors.extend(found.issue(reference));
            }
            errors.extend(
                self.slug_clashes(&mut *tx, &orgs, doc_type, data, None)
                    .await?,
            );
            let own_slugs = self.slug_values(doc_type, data);
            for slug in &own_slugs {
                let key = (doc_type.clone(), slug.clone());
                if slugs.contains(&key) && !errors.iter().any(|e| e.path == slug.path()) {
                    errors.push(slug_taken(&slug.path(), &slug.current));
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
                slugs.extend(own_slugs.into_iter().map(|slug| (doc_type.clone(), slug)));
            }
            found.documents.insert(record.id.clone());
            rows.push(self.new_rows(record, by, now));
            validations.push(validation);
        }
        tx.insert_new_documents(&rows).await?;
        let written: Vec<_> = rows.iter().map(|r| &r.document).collect();
        self.index_new(&mut *tx, &written).await?;
        for row in &rows {
            self.prune(&mut *tx, &row.document.id, Some(row.versions.len() as i64))
                .await?;
        }
        tx.commit().await?;
        Ok(rows
            .into_iter()
            .zip(validations)
            .zip(shown)
            .map(|((row, validation), localization)| {
                let mut view = gate.stripped(row.document);
                localization.show(self.schemas(), &mut view, Perspective::Draft);
                (view, validation)
            })
            .collect())
    }
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
