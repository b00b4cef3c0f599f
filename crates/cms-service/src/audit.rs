//! The audit log (CONTRACT.md section 19): who did what, in which organization, when and from
//! which address. An entry is appended in the unit of work of the action it records, so it
//! exists exactly when the action took effect; the operations build theirs with [`entry`] (an
//! actor acting) or [`person_entry`] (a person proving who they are, before any actor exists).
//!
//! Entries name identifiers and a one-line summary, never content or secrets.

use std::net::IpAddr;

use cms_core::{CoreCapability, Timestamp, new_id};
use cms_store::audit::{AuditQuery, AuditRecord};
use serde::Serialize;

use crate::Inner;
use crate::actor::{Actor, Credential};
use crate::error::{Error, Result};
use crate::paging::{Pagination, page_or_default, page_window};
use crate::scope::Scope;

/// Declares [`AuditAction`] from one list of variants and the contract's names.
macro_rules! audit_actions {
    ($($variant:ident => $name:literal,)*) => {
        /// What an entry records. The names are the contract's.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum AuditAction {
            $($variant,)*
        }

        impl AuditAction {
            pub const ALL: &'static [AuditAction] = &[$(AuditAction::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(AuditAction::$variant => $name,)*
                }
            }
        }
    };
}

audit_actions! {
    SignIn => "auth.signIn",
    SignInFailed => "auth.signInFailed",
    SignOut => "auth.signOut",
    MemberRoleChanged => "member.roleChanged",
    MemberRemoved => "member.removed",
    InvitationCreated => "invitation.created",
    InvitationCancelled => "invitation.cancelled",
    ApiKeyCreated => "apiKey.created",
    ApiKeyDeleted => "apiKey.deleted",
    RoleCreated => "role.created",
    RoleUpdated => "role.updated",
    RoleDeleted => "role.deleted",
    OrganizationUpdated => "organization.updated",
    InstanceSettingsUpdated => "instanceSettings.updated",
    DocumentPublished => "document.published",
    DocumentUnpublished => "document.unpublished",
    DocumentDeleted => "document.deleted",
    DocumentRestored => "document.restored",
    ScheduleCreated => "schedule.created",
    ScheduleCancelled => "schedule.cancelled",
    PluginSettingsUpdated => "pluginSettings.updated",
    WebhookCreated => "webhook.created",
    WebhookUpdated => "webhook.updated",
    WebhookDeleted => "webhook.deleted",
}

impl AuditAction {
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|a| a.as_str() == name)
    }
}

/// What an action was done to.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AuditTarget {
    /// `document`, `user`, `role`, `apiKey`, `invitation`, `organization`, `schedule`,
    /// `plugin`, `webhook` or `instance`.
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

impl AuditTarget {
    pub(crate) fn new(kind: &str, id: impl Into<String>) -> Self {
        AuditTarget {
            kind: kind.to_string(),
            id: id.into(),
        }
    }
}

/// An entry of the log, as GET /api/audit shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub id: String,
    /// One of the contract's actions (`document.published`, `auth.signIn`, ...).
    pub action: String,
    /// The user's or the API key's id; `null` for the system.
    #[schema(required = true)]
    pub actor_id: Option<String>,
    /// `user`, `apiKey` or `system`.
    pub actor_type: String,
    /// `null` for what belongs to no organization (instance settings, a failed sign-in).
    #[schema(required = true)]
    pub organization_id: Option<String>,
    #[schema(required = true)]
    pub target: Option<AuditTarget>,
    #[schema(required = true)]
    pub ip_address: Option<String>,
    pub summary: String,
    pub created_at: Timestamp,
}

impl From<AuditRecord> for AuditEntry {
    fn from(r: AuditRecord) -> Self {
        let target = match (r.target_type, r.target_id) {
            (Some(kind), Some(id)) => Some(AuditTarget { kind, id }),
            _ => None,
        };
        AuditEntry {
            id: r.id,
            action: r.action,
            actor_id: r.actor_id,
            actor_type: r.actor_type,
            organization_id: r.organization_id,
            target,
            ip_address: r.ip_address,
            summary: r.summary,
            created_at: Timestamp::from_millis(r.created_at),
        }
    }
}

/// Who an entry names as its actor: whoever an [`Actor`] is, or the service itself. Kept by
/// the operations shared by several doors (a publish by a person, an API key or a schedule).
#[derive(Debug, Clone)]
pub(crate) struct Who {
    actor_type: &'static str,
    actor_id: Option<String>,
    address: Option<IpAddr>,
}

impl Who {
    pub(crate) fn of(actor: &Actor) -> Who {
        let (actor_type, actor_id) = match &actor.credential {
            Credential::Session(_) => ("user", Some(actor.user.id.clone())),
            Credential::ApiKey { key_id } => ("apiKey", Some(key_id.clone())),
            // A plugin's own work, and the reads that never reach an audited action.
            Credential::Plugin { .. } | Credential::Public { .. } | Credential::Preview(_) => {
                ("system", None)
            }
        };
        Who {
            actor_type,
            actor_id,
            address: actor.client_address,
        }
    }

    /// The service acting on its own (a schedule carried out by the worker).
    pub(crate) fn system() -> Who {
        Who {
            actor_type: "system",
            actor_id: None,
            address: None,
        }
    }

    /// The entry recording that this actor did `action` in `organization`.
    pub(crate) fn entry(
        &self,
        organization: Option<&str>,
        action: AuditAction,
        target: Option<AuditTarget>,
        summary: impl Into<String>,
        now: i64,
    ) -> AuditRecord {
        let (target_type, target_id) = match target {
            Some(t) => (Some(t.kind), Some(t.id)),
            None => (None, None),
        };
        AuditRecord {
            id: new_id(),
            organization_id: organization.map(str::to_string),
            action: action.as_str().to_string(),
            actor_type: self.actor_type.to_string(),
            actor_id: self.actor_id.clone(),
            target_type,
            target_id,
            ip_address: self.address.map(|a| a.to_string()),
            summary: summary.into(),
            created_at: now,
        }
    }
}

/// The entry recording that `actor` did `action` in `organization`.
pub(crate) fn entry(
    actor: &Actor,
    organization: Option<&str>,
    action: AuditAction,
    target: Option<AuditTarget>,
    summary: impl Into<String>,
    now: i64,
) -> AuditRecord {
    Who::of(actor).entry(organization, action, target, summary, now)
}

/// The entry recording that a person (`user_id`, or nobody known for a failed sign-in) did
/// `action`: signing in, before any actor exists. `ip_address` is the client's as the door
/// gave it.
pub(crate) fn person_entry(
    user_id: Option<&str>,
    organization: Option<&str>,
    action: AuditAction,
    ip_address: Option<&str>,
    summary: impl Into<String>,
    now: i64,
) -> AuditRecord {
    let who = Who {
        actor_type: "user",
        actor_id: user_id.map(str::to_string),
        address: ip_address.and_then(|a| a.parse().ok()),
    };
    let target = user_id.map(|id| AuditTarget::new("user", id));
    who.entry(organization, action, target, summary, now)
}

/// A request for a page of the log.
#[derive(Debug, Clone, Default)]
pub struct AuditListRequest {
    pub action: Option<AuditAction>,
    pub actor_id: Option<String>,
    pub from: Option<Timestamp>,
    pub to: Option<Timestamp>,
    pub page: Option<i64>,
    pub page_size: Option<i64>,
    pub scope: Scope,
}

/// Entries removed per statement by the daily retention: a long-neglected log is trimmed in
/// steps, none holding the table long.
const PRUNE_BATCH: i64 = 5_000;

/// Reading the log, and keeping it within its retention.
pub struct AuditService<'a> {
    inner: &'a Inner,
}

impl<'a> AuditService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        AuditService { inner }
    }

    /// A page of the active organization's entries (`org.settings`), or of the whole instance
    /// (`scope=all`, a signed-in instance super admin), newest first.
    pub async fn list(
        &self,
        actor: &Actor,
        request: AuditListRequest,
    ) -> Result<(Vec<AuditEntry>, Pagination)> {
        let organization = match request.scope {
            Scope::All if actor.instance_super_admin_session() => None,
            Scope::All => return Err(Error::Forbidden),
            Scope::Organization => Some(actor.require(CoreCapability::OrgSettings)?.to_string()),
        };
        let (page, page_size) = page_or_default(request.page, request.page_size);
        let (limit, offset) = page_window(page, page_size)?;
        let mut tx = match &organization {
            Some(org) => self.inner.store.read_for(org).await?,
            None => self.inner.store.read_instance_wide().await?,
        };
        let (rows, total) = tx
            .audit_entries(&AuditQuery {
                organization,
                action: request.action.map(|a| a.as_str().to_string()),
                actor_id: request.actor_id,
                from: request.from.map(Timestamp::millis),
                to: request.to.map(Timestamp::millis),
                limit,
                offset,
            })
            .await?;
        Ok((
            rows.into_iter().map(Into::into).collect(),
            Pagination::new(total, page, page_size),
        ))
    }

    /// Removes the entries older than `audit.retentionDays`, in batches. How many.
    pub(crate) async fn prune(&self) -> Result<u64> {
        let days = self.inner.settings.audit_retention_days;
        let before = self.inner.clock.now().plus_days(-days).millis();
        let mut removed = 0;
        loop {
            let mut tx = self.inner.store.write_instance_wide().await?;
            let done = tx.prune_audit(before, PRUNE_BATCH).await?;
            tx.commit().await?;
            removed += done;
            if done < PRUNE_BATCH as u64 {
                return Ok(removed);
            }
        }
    }

    /// The worker's daily retention: prunes once per day per instance, at the first tick of
    /// the day (instances sharing a database may each do it; the deletes are the same).
    pub(crate) async fn prune_daily(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        let day = self.inner.clock.now().millis().div_euclid(86_400_000);
        if self.inner.audit_prune_day.swap(day, Relaxed) == day {
            return;
        }
        match self.prune().await {
            Ok(0) => {}
            Ok(removed) => tracing::info!(removed, "audit entries past their retention removed"),
            Err(e) => {
                // Tried again at the next tick.
                self.inner.audit_prune_day.store(i64::MIN, Relaxed);
                tracing::warn!(error = %e, "audit entries past their retention not removed");
            }
        }
    }
}
