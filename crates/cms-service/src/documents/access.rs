//! Schema and field access rules applied to documents (SPEC.md "Schema access rules",
//! Authentication point 8): after the capability check, the schema rule of the operation
//! (403 when it fails), then the field rules (reads strip fields, writes drop them).
//!
//! A schema operation is ruled by a role list from the schema or by a policy function a Rust
//! host application registered ([`AccessPolicies`]); an operation with neither falls back to the
//! capability check alone. Instance administrators bypass every rule. A type without any rule
//! has no entry in [`AccessRules`], so its documents pay one map lookup and nothing else.

use std::collections::HashMap;
use std::sync::Arc;

use cms_core::filter;
use cms_core::schema::{FieldRules, Operation, RoleList, Schemas, TypeFields, Undeclared};
use cms_core::{CapabilitySet, EffectiveRole, FieldKind, FieldLookup, InstanceRole};
use cms_store::documents::DocumentRecord;
use cms_store::versions::VersionRecord;
use serde_json::Value;

use super::view::{DocumentView, VersionView};
use crate::actor::Actor;
use crate::actor::User;
use crate::error::{Error, Result};

/// The caller, as a policy function sees it.
#[derive(Debug, Clone, Copy)]
pub struct PolicyAuth<'a> {
    pub user: &'a User,
    pub instance_role: InstanceRole,
    /// The effective role in the organization (instance administrators count as `owner`);
    /// an API key acts with its creator's current role.
    pub role: &'a EffectiveRole,
    pub capabilities: &'a CapabilitySet,
    pub organization_id: &'a str,
}

/// The document a policy function decides on: on create the incoming data (no id yet, created
/// by the caller), otherwise the stored document.
#[derive(Debug, Clone, Copy)]
pub struct PolicyDocument<'a> {
    pub id: Option<&'a str>,
    pub doc_type: &'a str,
    pub organization_id: &'a str,
    pub draft_data: &'a Value,
    pub published_data: Option<&'a Value>,
    pub created_by: Option<&'a str>,
}

impl<'a> PolicyDocument<'a> {
    fn stored(record: &'a DocumentRecord) -> Self {
        PolicyDocument {
            id: Some(&record.id),
            doc_type: &record.doc_type,
            organization_id: &record.organization_id,
            draft_data: &record.draft_data.0,
            published_data: record.published_data.as_ref().map(|d| &d.0),
            created_by: record.created_by.as_deref(),
        }
    }

    fn view(view: &'a DocumentView) -> Self {
        PolicyDocument {
            id: Some(&view.id),
            doc_type: &view.doc_type,
            organization_id: &view.organization_id,
            draft_data: &view.draft_data,
            published_data: view.published_data.as_ref(),
            created_by: view.created_by.as_deref(),
        }
    }
}

/// A policy function: `true` allows the operation.
pub type Policy = Arc<dyn Fn(&PolicyAuth<'_>, &PolicyDocument<'_>) -> bool + Send + Sync>;

/// The policy functions a host application registered, by document type and operation.
#[derive(Clone, Default)]
pub struct AccessPolicies {
    policies: HashMap<(String, Operation), Policy>,
}

impl AccessPolicies {
    /// Rules `operation` on documents of `doc_type` by `policy`. A later registration for the
    /// same pair replaces the earlier one.
    pub fn policy(
        mut self,
        doc_type: &str,
        operation: Operation,
        policy: impl Fn(&PolicyAuth<'_>, &PolicyDocument<'_>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.policies
            .insert((doc_type.to_string(), operation), Arc::new(policy));
        self
    }

    /// Whether these policies fit `schemas` (see [`AccessRules::new`]), so a host can refuse
    /// to start before anything is touched.
    pub fn validate(&self, schemas: &Schemas) -> Result<()> {
        AccessRules::new(schemas, self).map(|_| ())
    }
}

impl std::fmt::Debug for AccessPolicies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut keys: Vec<String> = self
            .policies
            .keys()
            .map(|(t, op)| format!("{t}.{}", op.as_str()))
            .collect();
        keys.sort();
        f.debug_struct("AccessPolicies")
            .field("policies", &keys)
            .finish()
    }
}

/// How one schema operation is ruled.
#[derive(Clone)]
enum Rule {
    Roles(RoleList),
    Policy(Policy),
}

/// The rules of one document type that has any.
#[derive(Clone, Default)]
struct TypeRules {
    operations: Vec<(Operation, Rule)>,
    fields: FieldRules,
}

impl TypeRules {
    fn rule(&self, operation: Operation) -> Option<&Rule> {
        self.operations
            .iter()
            .find(|(op, _)| *op == operation)
            .map(|(_, rule)| rule)
    }
}

/// Every document type's rules, built once at start.
#[derive(Clone, Default)]
pub(crate) struct AccessRules {
    types: HashMap<String, TypeRules>,
}

impl AccessRules {
    /// The schemas' role lists and field rules with the host's policies. A policy for a type
    /// that is not a document type, or for an operation the schema already rules with a role
    /// list, is refused: one rule per operation, so nobody has to guess which one wins.
    pub(crate) fn new(schemas: &Schemas, policies: &AccessPolicies) -> Result<AccessRules> {
        let mut types = HashMap::new();
        for schema in schemas.documents() {
            let rules = TypeRules {
                operations: schema
                    .access
                    .rules()
                    .map(|(op, list)| (op, Rule::Roles(list.clone())))
                    .collect(),
                fields: FieldRules::compile(schemas, &schema.fields),
            };
            types.insert(schema.name.clone(), rules);
        }
        for ((doc_type, operation), policy) in &policies.policies {
            let refuse = |why: &str| {
                Err(Error::bad_request(format!(
                    "access policy for `{doc_type}` {}: {why}",
                    operation.as_str()
                )))
            };
            let Some(rules) = types.get_mut(doc_type) else {
                return refuse("not a document type");
            };
            if rules.rule(*operation).is_some() {
                return refuse("the schema already rules this operation with a role list");
            }
            rules
                .operations
                .push((*operation, Rule::Policy(policy.clone())));
        }
        types.retain(|_, r| !r.operations.is_empty() || !r.fields.is_empty());
        Ok(AccessRules { types })
    }
}

/// The rules as they apply to one caller.
pub(crate) struct Gate<'a> {
    rules: &'a AccessRules,
    /// What stored data is shown as: the current schema's fields (CONTRACT.md section 19).
    schemas: &'a Schemas,
    actor: &'a Actor,
}

impl<'a> Gate<'a> {
    pub(crate) fn new(rules: &'a AccessRules, schemas: &'a Schemas, actor: &'a Actor) -> Self {
        Gate {
            rules,
            schemas,
            actor,
        }
    }

    /// The rules of `doc_type` for this caller; `None` when there are none or the caller is
    /// an instance administrator (SPEC.md: instance roles bypass schema and field rules).
    fn of(&self, doc_type: &str) -> Option<&'a TypeRules> {
        if self.actor.grant.role == EffectiveRole::InstanceAdmin {
            return None;
        }
        self.rules.types.get(doc_type)
    }

    fn role_allows(&self, roles: &RoleList) -> bool {
        roles.allows(self.actor.grant.role.name())
    }

    fn decide(&self, rule: &Rule, document: &PolicyDocument<'_>) -> bool {
        match rule {
            Rule::Roles(roles) => self.role_allows(roles),
            Rule::Policy(policy) => match &self.actor.organization_id {
                Some(organization_id) => policy(
                    &PolicyAuth {
                        user: &self.actor.user,
                        instance_role: self.actor.user.role,
                        role: &self.actor.grant.role,
                        capabilities: &self.actor.grant.capabilities,
                        organization_id,
                    },
                    document,
                ),
                None => false,
            },
        }
    }

    fn allows(&self, operation: Operation, document: &PolicyDocument<'_>) -> bool {
        match self.of(document.doc_type).and_then(|r| r.rule(operation)) {
            Some(rule) => self.decide(rule, document),
            None => true,
        }
    }

    /// The schema rule of `operation` on a stored document; 403 when it fails.
    pub(crate) fn check(&self, operation: Operation, record: &DocumentRecord) -> Result<()> {
        if self.allows(operation, &PolicyDocument::stored(record)) {
            Ok(())
        } else {
            Err(Error::Forbidden)
        }
    }

    /// The schema rule of `operation` on a document about to be created from `data`.
    pub(crate) fn check_new(
        &self,
        operation: Operation,
        doc_type: &str,
        data: &Value,
    ) -> Result<()> {
        let org = self.actor.organization_id.as_deref().unwrap_or_default();
        let document = PolicyDocument {
            id: None,
            doc_type,
            organization_id: org,
            draft_data: data,
            published_data: None,
            created_by: Some(&self.actor.user.id),
        };
        if self.allows(operation, &document) {
            Ok(())
        } else {
            Err(Error::Forbidden)
        }
    }

    /// Whether the caller may read this document (for reads that leave out what they may not
    /// see: by-ids, back-references, resolved references, policy-ruled lists).
    pub(crate) fn may_read(&self, view: &DocumentView) -> bool {
        self.allows(Operation::Read, &PolicyDocument::view(view))
    }

    /// How a list of `doc_type` is read: the whole type is refused (403), or every document is
    /// readable, or a read policy decides document by document.
    pub(crate) fn list_read(&self, doc_type: &str) -> ListRead {
        match self.of(doc_type).and_then(|r| r.rule(Operation::Read)) {
            None => ListRead::All,
            Some(Rule::Roles(roles)) if self.role_allows(roles) => ListRead::All,
            Some(Rule::Roles(_)) => ListRead::Refused,
            Some(Rule::Policy(_)) => ListRead::PerDocument,
        }
    }

    /// Removes the fields the caller may not read from both copies of a document, and the
    /// `publishedHash` when the type has any (it digests the unstripped published copy).
    pub(crate) fn strip(&self, view: &mut DocumentView) {
        // Shown as the schema now declares it: renamed keys under their new names, removed
        // fields left out (they stay stored, and in versions, until `cms migrate-content`).
        self.schemas
            .conform(&view.doc_type, &mut view.draft_data, Undeclared::Drop);
        if let Some(published) = &mut view.published_data {
            self.schemas
                .conform(&view.doc_type, published, Undeclared::Drop);
        }
        if let Some(rules) = self.field_rules(&view.doc_type) {
            rules.strip(&mut view.draft_data, &|r: &RoleList| self.role_allows(r));
            if let Some(published) = &mut view.published_data {
                rules.strip(published, &|r: &RoleList| self.role_allows(r));
            }
            if !self.sees_whole(&view.doc_type) {
                view.published_hash = None;
            }
        }
    }

    /// What the field rules of `doc_type` strip by for this caller: the role name the rules'
    /// role lists are checked against, or `None` when no field rule applies (the type has none,
    /// or the caller is an instance administrator). Two callers with the same answer see the
    /// same fields of every document of the type.
    pub(crate) fn field_view(&self, doc_type: &str) -> Option<&'a str> {
        self.field_rules(doc_type)?;
        Some(self.actor.grant.role.name().unwrap_or(""))
    }

    /// Whether the caller may read every field of `doc_type` (so may see digests of its data).
    pub(crate) fn sees_whole(&self, doc_type: &str) -> bool {
        self.field_rules(doc_type)
            .is_none_or(|rules| !rules.hides_from(&|r: &RoleList| self.role_allows(r)))
    }

    /// Document data of `doc_type` as the caller may see it: as the schema declares it, without
    /// the fields the caller may not read.
    pub(crate) fn strip_data(&self, doc_type: &str, data: &mut Value) {
        self.schemas.conform(doc_type, data, Undeclared::Drop);
        self.strip_fields(doc_type, data);
    }

    /// Removes the fields the caller may not read from data of `doc_type`.
    fn strip_fields(&self, doc_type: &str, data: &mut Value) {
        if let Some(rules) = self.field_rules(doc_type) {
            rules.strip(data, &|r: &RoleList| self.role_allows(r));
        }
    }

    /// A stored document as this caller may see it.
    pub(crate) fn stripped(&self, record: DocumentRecord) -> DocumentView {
        let mut view = DocumentView::from(record);
        self.strip(&mut view);
        view
    }

    /// A version of a document of `doc_type` as this caller may see it.
    pub(crate) fn stripped_version(&self, doc_type: &str, record: VersionRecord) -> VersionView {
        let mut view = VersionView::from(record);
        // A version records what was stored: renamed keys read under their new names, and the
        // values of removed fields stay readable there.
        self.schemas
            .conform(doc_type, &mut view.data, Undeclared::Keep);
        self.strip_fields(doc_type, &mut view.data);
        view
    }

    /// Drops the writes to fields the caller may not update: they keep their `stored` value
    /// (absent on create).
    pub(crate) fn keep_unwritable(
        &self,
        doc_type: &str,
        incoming: &mut Value,
        stored: Option<&Value>,
    ) {
        if let Some(rules) = self.field_rules(doc_type) {
            rules.keep_unwritable(incoming, stored, &|r: &RoleList| self.role_allows(r));
        }
    }

    fn field_rules(&self, doc_type: &str) -> Option<&'a FieldRules> {
        self.of(doc_type)
            .map(|r| &r.fields)
            .filter(|f| !f.is_empty())
    }

    /// The fields of `doc_type` as `where` and `sort` may name them: a field the caller may not
    /// read is as unknown as an undeclared one (CONTRACT.md section 5), so a filter on it
    /// matches nothing and a sort on it is ignored; neither can serve as an oracle.
    pub(crate) fn where_fields(&self, doc_type: &str, fields: TypeFields<'a>) -> Readable<'a, '_> {
        Readable {
            fields,
            hidden: self.field_rules(doc_type),
            gate: self,
        }
    }
}

/// See [`Gate::list_read`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListRead {
    Refused,
    All,
    PerDocument,
}

/// A [`FieldLookup`] that knows only the fields the caller may read.
pub(crate) struct Readable<'a, 'g> {
    fields: TypeFields<'a>,
    hidden: Option<&'a FieldRules>,
    gate: &'g Gate<'a>,
}

impl FieldLookup for Readable<'_, '_> {
    fn field_kind(&self, path: &[&str]) -> Option<FieldKind> {
        if let Some(rules) = self.hidden
            && !rules.readable(path, &|r: &RoleList| self.gate.role_allows(r))
        {
            return None;
        }
        self.fields.field_kind(path)
    }

    fn localized_at(&self, path: &[&str]) -> Option<(usize, cms_core::LocaleTag)> {
        self.fields.localized_at(path)
    }

    fn is_datetime(&self, path: &[&str]) -> bool {
        self.fields.is_datetime(path)
    }
}

/// Parses `where` and `sort` against what the caller may read.
pub(crate) fn parse_filter(
    lookup: &dyn FieldLookup,
    where_: &Value,
    sort: &[String],
) -> (filter::Filter, Vec<filter::SortKey>) {
    let parsed = match where_ {
        Value::Null => filter::Filter::All,
        clause => filter::parse(clause, lookup),
    };
    let specs: Vec<&str> = sort.iter().map(String::as_str).collect();
    (parsed, filter::parse_sort(&specs, lookup))
}

/// Documents read per round trip when a read policy has to see every match of a list.
const SCAN_CHUNK: i64 = 200;

impl<'s> super::DocumentService<'s> {
    /// The rules as they apply to `actor`.
    pub(crate) fn gate<'g>(&'g self, actor: &'g Actor) -> Gate<'g> {
        Gate::new(&self.inner.access, &self.inner.schemas, actor)
    }

    /// The document types `actor` may list: none without `document.read`; otherwise each type
    /// whose schema rule does not refuse them (a read policy lets them in and decides document
    /// by document). In registration order.
    pub fn readable_types(&self, actor: &Actor) -> Vec<String> {
        if actor
            .require(cms_core::CoreCapability::DocumentRead)
            .is_err()
        {
            return Vec::new();
        }
        let gate = self.gate(actor);
        self.schemas()
            .documents()
            .filter(|s| gate.list_read(&s.name) != ListRead::Refused)
            .map(|s| s.name.clone())
            .collect()
    }

    /// A page of a list whose type has a read policy: the policy decides per document, so the
    /// matches are read in order, chunk by chunk, and only those it allows are counted and
    /// paged. This costs a scan of every match, paid only by types with a read policy; `total`
    /// (counted once, here, as the scan goes) and the pages stay exact.
    pub(super) async fn list_policy_ruled(
        &self,
        tx: &mut dyn cms_store::Tx,
        spec: &cms_store::documents::ListSpec<'_>,
        search: Option<&cms_store::search::SearchSpec<'_>>,
        gate: &Gate<'_>,
    ) -> Result<(Vec<DocumentView>, i64)> {
        let mut page = Vec::new();
        let mut readable = 0i64;
        let mut offset = 0i64;
        loop {
            let chunk = cms_store::documents::ListSpec {
                limit: SCAN_CHUNK,
                offset,
                ..*spec
            };
            // The page alone: the policy counts what it allows, so the store's count of
            // every match would be thrown away, once per chunk.
            let views: Vec<DocumentView> = match search {
                Some(search) => tx
                    .search_documents_page(&chunk, search)
                    .await?
                    .into_iter()
                    .map(super::search::scored_view)
                    .collect(),
                None => tx
                    .list_documents_page(&chunk)
                    .await?
                    .into_iter()
                    .map(DocumentView::from)
                    .collect(),
            };
            let read = views.len() as i64;
            for view in views {
                if !gate.may_read(&view) {
                    continue;
                }
                if readable >= spec.offset && (page.len() as i64) < spec.limit {
                    page.push(view);
                }
                readable += 1;
            }
            if read < SCAN_CHUNK {
                return Ok((page, readable));
            }
            offset += SCAN_CHUNK;
        }
    }
}
