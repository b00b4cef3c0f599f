//! What saving a draft would report, without saving: the type and structure checks a save
//! refuses on, and the validation that says what would block publishing (the schema's rules,
//! reference targets, slugs).

use cms_core::schema::Operation;
use cms_core::{CoreCapability, Issue};
use cms_store::Tx;
use serde_json::{Map, Value};

use super::{DocumentService, Validation};
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::input::{find_nul, merge_fields};

impl DocumentService<'_> {
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

    /// Whether `doc_type` is a declared document type (and a singleton); 400 otherwise.
    pub(super) fn document_type(&self, doc_type: &str) -> Result<bool> {
        match self.schemas().get(doc_type) {
            Some(schema) if schema.is_document() => Ok(schema.singleton),
            _ => Err(Error::invalid(vec![Issue::new(
                "type",
                "unknown",
                format!("`{doc_type}` is not a document type"),
            )])),
        }
    }

    pub(super) fn check_structure(&self, doc_type: &str, data: &Value) -> Result<()> {
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
    pub(super) async fn validation(
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
    pub(super) async fn validation_with(
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

    /// Whether validating `data` reads the store: it names a reference target or a slug.
    pub(super) fn validation_reads_store(&self, doc_type: &str, data: &Value) -> bool {
        !self.schemas().references(doc_type, data).is_empty()
            || !self.slug_values(doc_type, data).is_empty()
    }

    /// The part of a publish's validation that must hold when it commits, read again in its
    /// write unit: reference targets still exist, slugs are still free (the read unit's
    /// answer may be stale by then).
    pub(super) async fn recheck_for_publish(
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
}
