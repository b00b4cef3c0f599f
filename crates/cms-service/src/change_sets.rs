//! Change sets: the audit trail of what the assistant changed, one per turn, and undo
//! (SPEC.md "AI assistant" point 4, CONTRACT.md section 8). The assistant (crate `cms-agent`)
//! records through [`Recorder`]; reading and undoing are [`ChangeSetService`]
//! (`cms.change_sets()`), with their access checks.

use cms_core::{CoreCapability, Timestamp, new_id};
use cms_store::Json;
use cms_store::change_sets::ChangeSetRecord;
use serde::{Deserialize, Serialize};

use crate::Cms;
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::paging::{Pagination, page_or_default};

/// One tool call that changed (or tried to change) something.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    pub tool: String,
    /// The document type; `null` for an asset upload or a plugin tool.
    pub collection: Option<String>,
    /// The document changed (the asset, for an upload); `null` when a create failed.
    pub document_id: Option<String>,
    pub success: bool,
    /// The document's newest version before the call; `null` for a create.
    pub version_before: Option<i64>,
    pub version_after: Option<i64>,
}

/// The door a change set's writes came through: one assistant turn, or one request of the MCP
/// server (CONTRACT.md section 21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChangeSetSource {
    Assistant,
    Mcp,
}

impl ChangeSetSource {
    fn as_str(self) -> &'static str {
        match self {
            ChangeSetSource::Assistant => "assistant",
            ChangeSetSource::Mcp => "mcp",
        }
    }

    /// The stored name; the column's check admits no other, and rows from before it are the
    /// assistant's.
    fn parse(stored: &str) -> ChangeSetSource {
        match stored {
            "mcp" => ChangeSetSource::Mcp,
            _ => ChangeSetSource::Assistant,
        }
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeSet {
    pub id: String,
    pub organization_id: String,
    pub user_id: String,
    pub created_at: Timestamp,
    pub operations: Vec<Operation>,
    pub undone_at: Option<Timestamp>,
    pub source: ChangeSetSource,
}

impl ChangeSet {
    fn from_record(r: ChangeSetRecord) -> ChangeSet {
        ChangeSet {
            operations: serde_json::from_value(r.operations.0).unwrap_or_else(|e| {
                tracing::error!(change_set = %r.id, error = %e, "unreadable change set operations");
                Vec::new()
            }),
            id: r.id,
            organization_id: r.organization_id,
            user_id: r.user_id,
            created_at: r.created_at.into(),
            undone_at: r.undone_at.map(Into::into),
            source: ChangeSetSource::parse(&r.source),
        }
    }
}

/// A page of change sets.
#[derive(Debug, Clone)]
pub struct ChangeSetPage {
    pub data: Vec<ChangeSet>,
    pub pagination: Pagination,
}

/// What an undo did, by document id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Undone {
    /// Documents whose draft was restored to their version before the turn.
    pub restored: Vec<String>,
    /// Documents with nothing to restore: created in the turn, an asset upload, a failed
    /// operation, or a version no longer kept.
    pub skipped: Vec<String>,
    /// Documents changed (or deleted) since the turn: left as they are.
    pub conflicts: Vec<String>,
}

/// Writes a change set (an assistant turn's, an MCP request's) as its operations resolve.
/// Recording is best effort: a failure is logged and never fails the edit it records (SPEC.md
/// "AI assistant" point 4).
pub struct Recorder {
    id: Option<String>,
    source: ChangeSetSource,
    operations: Vec<Operation>,
}

impl Recorder {
    /// The recorder of one turn or request through `source`, before its first change: no
    /// change set is written until then.
    pub fn new(source: ChangeSetSource) -> Recorder {
        Recorder {
            id: None,
            source,
            operations: Vec::new(),
        }
    }

    /// The change set's id, once the first operation was recorded.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Appends `operation`, done by `actor`, to the turn's change set in the actor's active
    /// organization (created with the first one); nothing without an active organization.
    pub async fn record(&mut self, cms: &Cms, actor: &Actor, operation: Operation) {
        let Some(org) = actor.organization_id.as_deref() else {
            return;
        };
        self.operations.push(operation);
        let operations = match serde_json::to_value(&self.operations) {
            Ok(v) => Json(v),
            Err(e) => {
                tracing::error!(error = %e, "change set not recorded");
                return;
            }
        };
        let written = async {
            let mut tx = cms.0.store.write_for(org).await?;
            match &self.id {
                Some(id) => {
                    tx.set_change_set_operations(org, id, &operations).await?;
                }
                None => {
                    let record = ChangeSetRecord {
                        id: new_id(),
                        organization_id: org.to_string(),
                        user_id: actor.user.id.clone(),
                        created_at: cms.0.clock.now().millis(),
                        operations,
                        undone_at: None,
                        source: self.source.as_str().to_string(),
                    };
                    tx.insert_change_set(&record).await?;
                    self.id = Some(record.id);
                }
            }
            tx.commit().await
        }
        .await;
        if let Err(e) = written {
            tracing::error!(error = %e, "change set not recorded");
        }
    }
}

pub struct ChangeSetService<'a> {
    cms: &'a Cms,
}

impl<'a> ChangeSetService<'a> {
    pub(crate) fn new(cms: &'a Cms) -> Self {
        ChangeSetService { cms }
    }

    /// The organization's change sets, newest first.
    /// `page` and `page_size` as the client gave them (the defaults in place of what it left
    /// out).
    pub async fn list(
        &self,
        actor: &Actor,
        page: Option<i64>,
        page_size: Option<i64>,
    ) -> Result<ChangeSetPage> {
        let org = actor.require(CoreCapability::DocumentRead)?;
        let (page, page_size) = page_or_default(page, page_size);
        let (limit, offset) = crate::paging::page_window(page, page_size)?;
        let mut tx = self.cms.0.store.read_for(org).await?;
        let (records, total) = tx.change_sets(org, limit, offset).await?;
        Ok(ChangeSetPage {
            data: records.into_iter().map(ChangeSet::from_record).collect(),
            pagination: Pagination::new(total, page, page_size),
        })
    }

    pub async fn get(&self, actor: &Actor, id: &str) -> Result<ChangeSet> {
        let org = actor.require(CoreCapability::DocumentRead)?;
        let mut tx = self.cms.0.store.read_for(org).await?;
        tx.change_set(org, id)
            .await?
            .map(ChangeSet::from_record)
            .ok_or_else(|| Error::not_found("change set"))
    }

    /// Restores each document the turn changed to its version before the turn, newest change
    /// first. A document created in the turn is skipped (it had no version before); one changed
    /// since the turn (its newest version is not the turn's last) is a conflict and is left
    /// alone, while the others go on. Each restore is an ordinary restore by the caller:
    /// every access rule holds, and it writes a new draft version. An undo happens once (409
    /// after that).
    pub async fn undo(&self, actor: &Actor, id: &str) -> Result<Undone> {
        let org = actor.require(CoreCapability::DocumentUpdate)?.to_string();
        let change_set = self.get(actor, id).await?;
        if change_set.undone_at.is_some() {
            return Err(Error::Conflict("this change set was undone already".into()));
        }
        let mut tx = self.cms.0.store.write_for(&org).await?;
        let now = self.cms.0.clock.now().millis();
        if !tx.mark_change_set_undone(&org, id, now).await? {
            return Err(Error::Conflict("this change set was undone already".into()));
        }
        tx.commit().await?;
        let mut undone = Undone::default();
        for plan in plans(&change_set.operations) {
            let outcome = self.undo_document(actor, &plan).await;
            match outcome {
                UndoOutcome::Restored => undone.restored.push(plan.document_id),
                UndoOutcome::Skipped => undone.skipped.push(plan.document_id),
                UndoOutcome::Conflict => undone.conflicts.push(plan.document_id),
            }
        }
        Ok(undone)
    }

    async fn undo_document(&self, actor: &Actor, plan: &Plan) -> UndoOutcome {
        let documents = self.cms.documents();
        let (Some(before), Some(after)) = (plan.version_before, plan.version_after) else {
            return UndoOutcome::Skipped;
        };
        let current = match documents
            .get(actor, &plan.document_id, Default::default())
            .await
        {
            Ok(d) => d,
            // Deleted since, or out of the caller's reach now.
            Err(_) => return UndoOutcome::Conflict,
        };
        match documents.latest_version(actor, &plan.document_id).await {
            Ok(Some(latest)) if latest == after => {}
            _ => return UndoOutcome::Conflict,
        }
        // Guarded by the revision just read: an edit landing in between is a conflict, never
        // overwritten.
        match documents
            .restore(
                actor,
                &plan.document_id,
                before,
                Some(current.meta.revision),
            )
            .await
        {
            Ok(_) => UndoOutcome::Restored,
            Err(Error::NotFound(_)) => UndoOutcome::Skipped,
            Err(Error::RevisionConflict { .. }) => UndoOutcome::Conflict,
            Err(e) => {
                tracing::warn!(document = %plan.document_id, error = %e, "undo: restore refused");
                UndoOutcome::Conflict
            }
        }
    }
}

enum UndoOutcome {
    Restored,
    Skipped,
    Conflict,
}

/// What undoing a turn does to one document: from the first version before its first change
/// in the turn, if its newest version is still the one after its last change.
#[derive(Debug, PartialEq)]
struct Plan {
    document_id: String,
    version_before: Option<i64>,
    version_after: Option<i64>,
}

/// One plan per document the turn touched, in the reverse order of their last change. A
/// document created in the turn keeps no version before (skipped); failed operations changed
/// nothing and count only when nothing else touched the document (skipped).
fn plans(operations: &[Operation]) -> Vec<Plan> {
    let mut plans: Vec<Plan> = Vec::new();
    let mut last_change: Vec<usize> = Vec::new();
    for (index, op) in operations.iter().enumerate() {
        let Some(id) = &op.document_id else { continue };
        if op.collection.is_none() {
            // Not a document (an asset upload, a plugin's change): nothing to restore.
            plans.push(Plan {
                document_id: id.clone(),
                version_before: None,
                version_after: None,
            });
            last_change.push(index);
            continue;
        }
        match plans.iter().position(|p| &p.document_id == id) {
            None => {
                let created = op.tool == "create_document";
                plans.push(Plan {
                    document_id: id.clone(),
                    version_before: if op.success && !created {
                        op.version_before
                    } else {
                        None
                    },
                    version_after: if op.success { op.version_after } else { None },
                });
                last_change.push(index);
            }
            Some(at) if op.success => {
                let plan = &mut plans[at];
                if plan.version_after.is_none() && plan.version_before.is_none() {
                    // Only failures (or the create) so far: a create stays unrestorable.
                    let created = operations[..index].iter().any(|o| {
                        o.tool == "create_document" && o.document_id.as_deref() == Some(id)
                    });
                    if !created {
                        plan.version_before = op.version_before;
                    }
                }
                plan.version_after = op.version_after;
                last_change[at] = index;
            }
            Some(_) => {}
        }
    }
    let mut order: Vec<usize> = (0..plans.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(last_change[i]));
    let mut slots: Vec<Option<Plan>> = plans.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(
        tool: &str,
        id: &str,
        success: bool,
        before: Option<i64>,
        after: Option<i64>,
    ) -> Operation {
        Operation {
            tool: tool.into(),
            collection: Some("post".into()),
            document_id: Some(id.into()),
            success,
            version_before: before,
            version_after: after,
        }
    }

    #[test]
    fn plans_span_each_documents_first_and_last_change_newest_first() {
        let plans = plans(&[
            op("update_document", "a", true, Some(3), Some(4)),
            op("create_document", "b", true, None, Some(1)),
            op("update_document", "a", true, Some(4), Some(5)),
            op("publish_document", "c", false, Some(2), Some(2)),
            op("update_document", "b", true, Some(1), Some(2)),
        ]);
        assert_eq!(
            plans,
            [
                Plan {
                    document_id: "b".into(),
                    version_before: None,
                    version_after: Some(2)
                },
                Plan {
                    document_id: "c".into(),
                    version_before: None,
                    version_after: None
                },
                Plan {
                    document_id: "a".into(),
                    version_before: Some(3),
                    version_after: Some(5)
                },
            ]
        );
    }

    #[test]
    fn a_failure_before_a_success_does_not_hide_the_version_before() {
        let plans = plans(&[
            op("update_document", "a", false, Some(3), Some(3)),
            op("update_document", "a", true, Some(3), Some(4)),
        ]);
        assert_eq!(
            plans,
            [Plan {
                document_id: "a".into(),
                version_before: Some(3),
                version_after: Some(4)
            }]
        );
    }
}
