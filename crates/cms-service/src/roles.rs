//! Organization roles: the built-in five (`public` for anonymous readers) and custom ones (SPEC.md "Role", "Built-in roles",
//! "Endpoints: Roles"). Sessions only: an API key is refused (Authentication point 6).
//!
//! A role edit is visible on the very next request: sessions and keys read their role's
//! capabilities with the credentials, in the one indexed query every request makes, so there is
//! no cache to wait for (well inside the spec's 30-second window).

use cms_core::{
    BuiltInRole, CapabilitySet, CoreCapability, Issues, PUBLIC_GRANTABLE, RoleName, Timestamp,
    new_id,
};
use cms_store::Json;
use cms_store::roles::RoleRecord;
use serde::Serialize;

use crate::Inner;
use crate::actor::Actor;
use crate::audit::{self, AuditAction, AuditTarget};
use crate::error::{Error, Result};

/// The longest description accepted.
const MAX_DESCRIPTION_CHARS: usize = 500;

/// A role as every door shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Role {
    pub id: String,
    pub organization_id: String,
    pub name: String,
    pub description: String,
    pub capabilities: Vec<String>,
    pub is_built_in: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl From<RoleRecord> for Role {
    fn from(r: RoleRecord) -> Self {
        Role {
            id: r.id,
            organization_id: r.organization_id,
            name: r.name,
            description: r.description,
            capabilities: r.capabilities.0,
            is_built_in: r.is_built_in,
            created_at: r.created_at.into(),
            updated_at: r.updated_at.into(),
        }
    }
}

/// A new custom role as received.
#[derive(Debug, Default)]
pub struct NewRole {
    pub name: Option<String>,
    pub description: Option<String>,
    pub capabilities: Option<Vec<String>>,
}

/// A role edit as received: at least one of the two.
#[derive(Debug, Default)]
pub struct RoleEdit {
    pub description: Option<String>,
    pub capabilities: Option<Vec<String>>,
}

pub struct RoleService<'a> {
    inner: &'a Inner,
}

impl<'a> RoleService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        RoleService { inner }
    }

    /// The roles of the active organization: the built-in ones from `owner` down, then the
    /// custom ones oldest first. Any member may list them.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<Role>> {
        let org = member_org(actor)?;
        let mut tx = self.inner.store.read_instance_wide().await?;
        let mut roles = tx.roles(org).await?;
        // A stable sort keeps the store's order (creation, then name) among custom roles.
        roles.sort_by_key(|r| {
            BuiltInRole::ALL
                .iter()
                .position(|b| r.is_built_in && b.name() == r.name)
                .unwrap_or(BuiltInRole::ALL.len())
        });
        Ok(roles.into_iter().map(Role::from).collect())
    }

    /// Creates a custom role (needs `role.manage`). Built-in names are taken in every
    /// organization, so they are refused like any taken name: 409.
    pub async fn create(&self, actor: &Actor, input: NewRole) -> Result<Role> {
        let org = managing_org(actor)?;
        let mut issues = Issues::new();
        let name = role_name(input.name.as_deref(), &mut issues);
        let description = description(input.description.as_deref(), &mut issues);
        let capabilities = self.capabilities(
            actor,
            None,
            input.capabilities.as_deref().unwrap_or_default(),
            &mut issues,
        );
        issues.finish(()).map_err(Error::invalid)?;
        let name = name.expect("a valid name when there are no issues");
        if name.built_in().is_some() {
            return Err(Error::Conflict(format!(
                "`{name}` is a built-in role name and is reserved"
            )));
        }
        let now = self.inner.clock.now().millis();
        let record = RoleRecord {
            id: new_id(),
            organization_id: org.to_string(),
            name: name.to_string(),
            description,
            capabilities: Json(capabilities.to_strings()),
            is_built_in: false,
            created_at: now,
            updated_at: now,
        };
        let mut tx = self.inner.store.write_instance_wide().await?;
        tx.insert_role(&record).await.map_err(|e| match e {
            cms_store::StoreError::Unique(_) => {
                Error::Conflict(format!("a role named `{name}` already exists"))
            }
            other => other.into(),
        })?;
        tx.append_audit(&[audit::entry(
            actor,
            Some(org),
            AuditAction::RoleCreated,
            Some(AuditTarget::new("role", &record.name)),
            format!("{}: {}", record.name, record.capabilities.0.join(", ")),
            now,
        )])
        .await?;
        tx.commit().await?;
        Ok(record.into())
    }

    /// Edits a role's description and/or capabilities (needs `role.manage`). The owner's
    /// capabilities are fixed: it always holds every capability.
    pub async fn update(&self, actor: &Actor, name: &str, edit: RoleEdit) -> Result<Role> {
        let org = managing_org(actor)?;
        if edit.description.is_none() && edit.capabilities.is_none() {
            return Err(Error::bad_request(
                "send `description` and/or `capabilities`",
            ));
        }
        let mut issues = Issues::new();
        let description = edit
            .description
            .as_deref()
            .map(|d| description(Some(d), &mut issues));
        let capabilities = edit
            .capabilities
            .as_deref()
            .map(|caps| self.capabilities(actor, BuiltInRole::from_name(name), caps, &mut issues));
        let mut tx = self.inner.store.write_instance_wide().await?;
        let current = tx
            .role(org, name)
            .await?
            .ok_or_else(|| Error::not_found("role"))?;
        if capabilities.is_some() && BuiltInRole::from_name(name) == Some(BuiltInRole::Owner) {
            return Err(Error::NotPermitted(
                "the capabilities of `owner` cannot be edited: it always holds every capability"
                    .into(),
            ));
        }
        issues.finish(()).map_err(Error::invalid)?;
        let description = description.unwrap_or(current.description);
        let capabilities = match capabilities {
            Some(set) => set.to_strings(),
            None => current.capabilities.0,
        };
        let now = self.inner.clock.now().millis();
        let updated = tx
            .update_role(org, name, &description, &capabilities, now)
            .await?
            .ok_or_else(|| Error::not_found("role"))?;
        tx.append_audit(&[audit::entry(
            actor,
            Some(org),
            AuditAction::RoleUpdated,
            Some(AuditTarget::new("role", name)),
            format!("{name}: {}", updated.capabilities.0.join(", ")),
            now,
        )])
        .await?;
        tx.commit().await?;
        Ok(updated.into())
    }

    /// Deletes a custom role (needs `role.manage`); 409 while a member holds it or a pending
    /// invitation names it.
    pub async fn delete(&self, actor: &Actor, name: &str) -> Result<Role> {
        let org = managing_org(actor)?;
        let mut tx = self.inner.store.write_instance_wide().await?;
        let role = tx
            .role(org, name)
            .await?
            .ok_or_else(|| Error::not_found("role"))?;
        if role.is_built_in || BuiltInRole::from_name(name).is_some() {
            return Err(Error::NotPermitted(format!(
                "`{name}` is a built-in role and cannot be deleted"
            )));
        }
        let now = self.inner.clock.now().millis();
        let members = tx.count_members_with_role(org, name).await?;
        let invitations = tx
            .count_pending_invitations_with_role(org, name, now)
            .await?;
        if members > 0 || invitations > 0 {
            return Err(Error::Conflict(format!(
                "`{name}` is still assigned to {members} member(s) and {invitations} pending invitation(s)"
            )));
        }
        tx.delete_role(org, name).await?;
        tx.append_audit(&[audit::entry(
            actor,
            Some(org),
            AuditAction::RoleDeleted,
            Some(AuditTarget::new("role", name)),
            name,
            now,
        )])
        .await?;
        tx.commit().await?;
        Ok(role.into())
    }

    /// The declared capabilities of `raw` for `built_in` (a custom role: `None`), with the
    /// reads their writes imply (SPEC.md capability rule 2). Unknown ones, ones the role may
    /// not hold (`public` reads only, CONTRACT.md section 15), and ones the caller does not
    /// hold (a role could otherwise hand out more than its author has), are issues naming them.
    fn capabilities(
        &self,
        actor: &Actor,
        built_in: Option<BuiltInRole>,
        raw: &[String],
        issues: &mut Issues,
    ) -> CapabilitySet {
        let mut set = CapabilitySet::empty();
        for (i, name) in raw.iter().enumerate() {
            let path = format!("capabilities[{i}]");
            match self.inner.capabilities.parse(name) {
                None => issues.add(
                    &path,
                    "options",
                    format!("`{name}` is not a declared capability"),
                ),
                Some(cap) if built_in.is_some_and(|role| !role.may_hold(&cap)) => issues.add(
                    &path,
                    "notAllowed",
                    format!(
                        "`{name}` cannot be given to `public`: anonymous readers may hold only {}",
                        PUBLIC_GRANTABLE
                            .map(|c| format!("`{}`", c.as_str()))
                            .join(" and ")
                    ),
                ),
                Some(cap) if !actor.grant.capabilities.contains(&cap) => {
                    issues.add(&path, "notHeld", format!("you do not hold `{name}`"))
                }
                Some(cap) => set.insert(cap),
            }
        }
        set.with_implied_reads()
    }
}

/// The active organization of a session that belongs to it (instance administrators count
/// as members everywhere). API keys and plugins are refused: role endpoints are for sessions
/// only.
fn member_org(actor: &Actor) -> Result<&str> {
    actor.require_person()?;
    if actor.is_api_key() || actor.grant.role.name().is_none() {
        return Err(Error::Forbidden);
    }
    actor.organization_id.as_deref().ok_or(Error::Forbidden)
}

/// [`member_org`], holding `role.manage`.
fn managing_org(actor: &Actor) -> Result<&str> {
    member_org(actor)?;
    actor.require(CoreCapability::RoleManage)
}

fn role_name(raw: Option<&str>, issues: &mut Issues) -> Option<RoleName> {
    match raw.map(str::trim) {
        None | Some("") => {
            issues.add("name", "required", "name is required");
            None
        }
        Some(name) => match name.parse::<RoleName>() {
            Ok(name) => Some(name),
            Err(e) => {
                issues.add("name", "invalid", e.to_string());
                None
            }
        },
    }
}

fn description(raw: Option<&str>, issues: &mut Issues) -> String {
    let text = raw.unwrap_or_default().trim().to_string();
    if text.chars().count() > MAX_DESCRIPTION_CHARS {
        issues.add(
            "description",
            "maxLength",
            format!("description is at most {MAX_DESCRIPTION_CHARS} characters"),
        );
    } else if text.chars().any(|c| c.is_control() && c != '\n') {
        issues.add(
            "description",
            "invalid",
            "description may not contain control characters",
        );
    }
    text
}
