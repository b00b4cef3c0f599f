//! Organizations (SPEC.md "Organization", CONTRACT.md section 4): listing the caller's,
//! creating (with the four built-in roles), switching the active one, reading, updating and
//! deleting; members and invitations in the submodules. Also the boot-time owner
//! reconciliation.
//!
//! The hierarchy has one level: a child's parent has no parent. Which credentials each
//! operation accepts is written on the operation; the rule of thumb is that what acts on a
//! person's own session (list, create, switch, accept, delete) needs a session, and what acts
//! inside one organization with a capability also accepts that organization's API keys.

mod ceiling;
mod invitations;
mod members;

use cms_core::access::{self, Membership};
use cms_core::{
    BuiltInRole, CapabilitySet, CoreCapability, Email, Grant, Issues, RoleName, Timestamp, new_id,
};
use cms_store::organizations::{MemberRecord, OrganizationRecord};
use cms_store::roles::RoleRecord;
use cms_store::{Json, StoreError, Tx};
use serde::Serialize;
use serde_json::Value;

pub use self::invitations::{Invitation, InvitationPreview, InvitationSent, InvitationService};
pub(crate) use self::invitations::{has_open_invitation, join_by_token, join_open_invitation};
pub use self::members::{Member, MemberService, NewMember};
use crate::Inner;
use crate::actor::{Actor, Credential, SessionView, check_email};
use crate::audit::{self, AuditAction, AuditTarget};
use crate::error::{Error, Result};
use crate::events::{MEMBER_ADDED, member_event};

const MAX_NAME_CHARS: usize = 100;
const MAX_SLUG_CHARS: usize = 64;

/// An organization as every door shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    pub id: String,
    pub name: String,
    pub slug: String,
    /// A JSON object of the organization's own.
    #[schema(value_type = Object)]
    pub metadata: Value,
    /// The parent organization; `null` for a top-level one.
    pub parent_id: Option<String>,
    /// The locales the organization narrows the instance's to (CONTRACT.md section 17);
    /// `null` for all of them.
    pub locales: Option<Vec<String>>,
    /// Members must sign in with a second factor to act here (CONTRACT.md section 20).
    pub require_two_factor: bool,
    /// The caller's role there; `null` for an instance administrator who is not a member.
    pub role: Option<String>,
    pub created_at: Timestamp,
}

impl Organization {
    fn from_record(r: OrganizationRecord, role: Option<String>) -> Organization {
        Organization {
            id: r.id,
            name: r.name,
            slug: r.slug,
            metadata: r.metadata.0,
            parent_id: r.parent_id,
            locales: r.locales.map(|l| l.0),
            require_two_factor: r.require_two_factor,
            role,
            created_at: r.created_at.into(),
        }
    }
}

/// A creation request as received.
#[derive(Debug, Default)]
pub struct NewOrganization {
    pub name: Option<String>,
    pub slug: Option<String>,
    /// A JSON object; absent means `{}`.
    pub metadata: Option<Value>,
    pub parent_id: Option<String>,
}

/// An update as received: at least one field.
#[derive(Debug, Default)]
pub struct OrganizationUpdate {
    pub name: Option<String>,
    pub slug: Option<String>,
    /// Replaces the stored metadata as a whole.
    pub metadata: Option<Value>,
    /// `Some(Some(tags))` narrows the instance's locales to `tags` (the default among them);
    /// `Some(None)` goes back to every locale.
    pub locales: Option<Option<Vec<String>>>,
    /// Turns the two-factor requirement on or off. Turning it on needs the caller's own
    /// two-factor sign-in on, so nobody locks themself out with it.
    pub require_two_factor: Option<bool>,
}

pub struct OrganizationService<'a> {
    inner: &'a Inner,
}

impl<'a> OrganizationService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        OrganizationService { inner }
    }

    /// The organizations the caller belongs to, with their role in each, oldest membership
    /// first. An API key (or a plugin actor) sees the one organization it is bound to.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<Organization>> {
        // Neither a preview token (its maker is no business of whoever holds the link) nor an
        // anonymous reader belongs anywhere.
        if actor.is_preview() || actor.is_public() {
            return Err(Error::Unauthorized);
        }
        let mut tx = self.inner.store.read_instance_wide().await?;
        if actor.is_api_key() || actor.plugin_id().is_some() {
            let Some(org_id) = actor.organization_id.as_deref() else {
                return Ok(Vec::new());
            };
            let role = tx.member(org_id, &actor.user.id).await?.map(|m| m.role);
            let org = tx.organization_by_id(org_id).await?;
            return Ok(org
                .map(|o| Organization::from_record(o, role))
                .into_iter()
                .collect());
        }
        let memberships = tx.organizations_of(&actor.user.id).await?;
        Ok(memberships
            .into_iter()
            .map(|m| Organization::from_record(m.organization, Some(m.member_role)))
            .collect())
    }

    /// Creates an organization whose owner is the caller (sessions only). With `parentId` the
    /// caller must be owner or admin of the parent, which must not be a child itself. The
    /// active organization does not change.
    pub async fn create(&self, actor: &Actor, input: NewOrganization) -> Result<Organization> {
        actor.require_person()?;
        session_of(actor)?;
        let mut issues = Issues::new();
        let name = check_name(&mut issues, input.name.as_deref(), true);
        let slug = check_slug(&mut issues, input.slug.as_deref(), true);
        let metadata = check_metadata(&mut issues, input.metadata.unwrap_or(json_object()));
        let parent_id = input.parent_id.filter(|p| !p.is_empty());
        let (name, slug, metadata) = match (name, slug, metadata) {
            (Some(name), Some(slug), Some(metadata)) if issues.is_empty() => (name, slug, metadata),
            _ => return Err(Error::invalid(issues.into_vec())),
        };

        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        if let Some(parent_id) = &parent_id {
            self.check_parent(&mut *tx, actor, parent_id).await?;
        }
        let record = OrganizationRecord {
            id: new_id(),
            name,
            slug,
            metadata: Json(metadata),
            parent_id,
            locales: None,
            require_two_factor: false,
            created_at: now.millis(),
            updated_at: now.millis(),
        };
        insert_with_owner(
            &mut *tx,
            &record,
            &actor.user.id,
            self.inner.capabilities.every(),
            now,
        )
        .await
        .map_err(|e| slug_taken(e, &record.slug))?;
        tx.commit().await?;
        Ok(Organization::from_record(
            record,
            Some(BuiltInRole::Owner.name().into()),
        ))
    }

    /// A parent must exist and be visible to the caller (400 otherwise, so nothing is learnt
    /// about organizations one does not belong to), be held as owner or admin (403), and have
    /// no parent itself (400: one level).
    async fn check_parent(&self, tx: &mut dyn Tx, actor: &Actor, parent_id: &str) -> Result<()> {
        let parent = tx.organization_by_id(parent_id).await?;
        let standing = match &parent {
            Some(_) => standing(self.inner, tx, actor, parent_id).await?,
            None => None,
        };
        let (Some(parent), Some(standing)) = (parent, standing) else {
            return Err(Error::invalid(vec![cms_core::Issue::new(
                "parentId",
                "notFound",
                "no organization with this id that you belong to",
            )]));
        };
        let role = standing.grant.role.name();
        if !matches!(role, Some("owner" | "admin")) {
            return Err(Error::NotPermitted(
                "creating a child organization needs the owner or admin role in the parent".into(),
            ));
        }
        if parent.parent_id.is_some() {
            return Err(Error::invalid(vec![cms_core::Issue::new(
                "parentId",
                "depth",
                "the parent is itself a child organization: the hierarchy has one level",
            )]));
        }
        Ok(())
    }

    /// Makes `organization_id` the active organization of the caller's session. Members may
    /// enter; instance super admins and admins may enter any organization; anyone else gets an
    /// access refusal, whether or not the organization exists.
    pub async fn switch(
        &self,
        actor: &Actor,
        organization_id: Option<&str>,
    ) -> Result<Organization> {
        let session = session_of(actor)?;
        let id = required(organization_id, "organizationId")?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let org = tx.organization_by_id(id).await?;
        let member = match &org {
            Some(_) => tx.member(id, &actor.user.id).await?,
            None => None,
        };
        let org = match org {
            Some(org) if member.is_some() || actor.instance_admin_session() => org,
            None if actor.instance_admin_session() => {
                return Err(Error::not_found("organization"));
            }
            _ => return Err(Error::Forbidden),
        };
        tx.set_active_organization(&session.id, Some(id), now.millis())
            .await?;
        tx.commit().await?;
        Ok(Organization::from_record(org, member.map(|m| m.role)))
    }

    /// An organization the caller belongs to (or any, for instance administrators; an API key
    /// reads its own). Anything else is 404: no existence oracle.
    pub async fn get(&self, actor: &Actor, id: &str) -> Result<Organization> {
        let mut tx = self.inner.store.read_instance_wide().await?;
        let (org, standing) = visible(self.inner, &mut *tx, actor, id).await?;
        Ok(Organization::from_record(org, standing.role))
    }

    /// Updates name, slug and/or metadata. Needs `org.settings` in that organization (the
    /// caller's role there, whichever organization is active; an API key only in its own).
    pub async fn update(
        &self,
        actor: &Actor,
        id: &str,
        input: OrganizationUpdate,
    ) -> Result<Organization> {
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let (mut org, standing) = visible(self.inner, &mut *tx, actor, id).await?;
        actor.check_two_factor_requirement(org.require_two_factor)?;
        if !standing.grant.capabilities.has(CoreCapability::OrgSettings) {
            return Err(Error::Forbidden);
        }
        if input.name.is_none()
            && input.slug.is_none()
            && input.metadata.is_none()
            && input.locales.is_none()
            && input.require_two_factor.is_none()
        {
            return Err(Error::bad_request(
                "send at least one of `name`, `slug`, `metadata`, `locales`, `requireTwoFactor`",
            ));
        }
        let changed: Vec<&str> = [
            ("name", input.name.is_some()),
            ("slug", input.slug.is_some()),
            ("metadata", input.metadata.is_some()),
            ("locales", input.locales.is_some()),
            ("requireTwoFactor", input.require_two_factor.is_some()),
        ]
        .into_iter()
        .filter_map(|(field, sent)| sent.then_some(field))
        .collect();
        let mut issues = Issues::new();
        let name = check_name(&mut issues, input.name.as_deref(), false);
        let slug = check_slug(&mut issues, input.slug.as_deref(), false);
        let metadata = input.metadata.and_then(|m| check_metadata(&mut issues, m));
        let locales = input
            .locales
            .map(|l| check_locales(&mut issues, self.inner.schemas.locales(), l));
        if input.require_two_factor == Some(true)
            && !org.require_two_factor
            && !session_of(actor).is_ok_and(|s| s.two_factor_enabled)
        {
            issues.add(
                "requireTwoFactor",
                "two_factor_off",
                "turn on two-factor sign-in for your own account before requiring it of everyone",
            );
        }
        issues.finish(()).map_err(Error::invalid)?;
        org.require_two_factor = input.require_two_factor.unwrap_or(org.require_two_factor);
        org.name = name.unwrap_or(org.name);
        org.slug = slug.unwrap_or(org.slug);
        org.metadata = metadata.map(Json).unwrap_or(org.metadata);
        if let Some(locales) = locales {
            org.locales = locales.map(Json);
        }
        org.updated_at = now.millis();
        tx.update_organization(&org)
            .await
            .map_err(|e: StoreError| slug_taken(e.into(), &org.slug))?;
        tx.append_audit(&[audit::entry(
            actor,
            Some(&org.id),
            AuditAction::OrganizationUpdated,
            Some(AuditTarget::new("organization", &org.id)),
            format!("changed {}", changed.join(", ")),
            now.millis(),
        )])
        .await?;
        tx.commit().await?;
        Ok(Organization::from_record(org, standing.role))
    }

    /// Deletes an organization with its documents, API keys, roles, members and invitations
    /// (sessions that had it active are left without one). Sessions only; the caller must be
    /// an owner of it or an instance super admin (a business refusal otherwise). An
    /// organization with children is kept (409): deleting it would take organizations the
    /// caller may not own with it.
    pub async fn delete(&self, actor: &Actor, id: &str) -> Result<()> {
        session_of(actor)?;
        let mut tx = self.inner.store.write_instance_wide().await?;
        let (org, standing) = visible(self.inner, &mut *tx, actor, id).await?;
        actor.check_two_factor_requirement(org.require_two_factor)?;
        let owner = standing.role.as_deref() == Some(BuiltInRole::Owner.name());
        if !owner && !actor.instance_super_admin_session() {
            return Err(Error::NotPermitted(
                "only an owner of the organization or an instance super admin may delete it".into(),
            ));
        }
        if !tx.child_organization_ids(id).await?.is_empty() {
            return Err(Error::Conflict(
                "the organization has child organizations: delete them first".into(),
            ));
        }
        // The rows go with the organization; the stored bytes of its assets go after the
        // commit, so a failed delete leaves every file in place.
        tx.act_for(id).await?;
        let objects = crate::assets::asset_ids(&mut *tx, id).await?;
        tx.delete_organization(id).await?;
        tx.commit().await?;
        tracing::info!(organization = %id, by = %actor.user.id, "organization deleted");
        crate::assets::remove_objects(self.inner, &objects).await;
        Ok(())
    }
}

/// The caller's standing in one organization.
pub(crate) struct Standing {
    /// Their role there as a member; `None` for an instance administrator who is not one.
    pub(crate) role: Option<String>,
    /// What they may do there.
    pub(crate) grant: Grant,
}

/// The caller's standing in `org_id`, or `None` when they have none there: not a member and
/// not an instance administrator, or an API key bound to another organization.
pub(crate) async fn standing(
    inner: &Inner,
    tx: &mut dyn Tx,
    actor: &Actor,
    org_id: &str,
) -> Result<Option<Standing>> {
    // A preview token has standing nowhere: it reads its one document only.
    if actor.is_preview() {
        return Err(Error::Unauthorized);
    }
    // An anonymous reader stands nowhere: organizations are for people, keys and plugins.
    if actor.is_public() {
        return Ok(None);
    }
    let member = tx.member(org_id, &actor.user.id).await?;
    // A key and a plugin act in their one organization only, whatever their grant.
    if let Credential::ApiKey { .. } | Credential::Plugin { .. } = actor.credential {
        return Ok(
            (actor.organization_id.as_deref() == Some(org_id)).then(|| Standing {
                role: member.map(|m| m.role),
                grant: actor.grant.clone(),
            }),
        );
    }
    if member.is_none() && !actor.instance_admin_session() {
        return Ok(None);
    }
    let membership = match &member {
        Some(m) => membership(inner, tx, org_id, &m.role).await?,
        None => None,
    };
    Ok(Some(Standing {
        grant: access::user_grant(
            actor.user.role,
            membership.as_ref(),
            inner.capabilities.every(),
        ),
        role: member.map(|m| m.role),
    }))
}

/// An organization the caller has standing in, with that standing; 404 otherwise.
async fn visible(
    inner: &Inner,
    tx: &mut dyn Tx,
    actor: &Actor,
    id: &str,
) -> Result<(OrganizationRecord, Standing)> {
    let not_found = || Error::not_found("organization");
    let org = tx.organization_by_id(id).await?.ok_or_else(not_found)?;
    let standing = standing(inner, tx, actor, id)
        .await?
        .ok_or_else(not_found)?;
    Ok((org, standing))
}

/// A member's role with its stored capabilities (declared ones only).
async fn membership(
    inner: &Inner,
    tx: &mut dyn Tx,
    org_id: &str,
    role: &str,
) -> Result<Option<Membership>> {
    let Ok(name) = role.parse::<RoleName>() else {
        return Ok(None);
    };
    let capabilities = tx
        .role(org_id, role)
        .await?
        .map(|r| r.capabilities.0)
        .unwrap_or_default()
        .iter()
        .filter_map(|c| inner.capabilities.parse(c))
        .collect();
    Ok(Some(Membership {
        role: name,
        capabilities,
    }))
}

/// The session behind a session actor; an API key or a plugin is refused (403 `{error}`)
/// where only a person's own session makes sense.
pub(crate) fn session_of(actor: &Actor) -> Result<&SessionView> {
    match &actor.credential {
        Credential::Session(session) => Ok(session),
        Credential::ApiKey { .. } | Credential::Plugin { .. } => Err(Error::Forbidden),
        Credential::Preview(_) | Credential::Public { .. } => Err(Error::Unauthorized),
    }
}

/// Whether a grant counts as the owner role (instance administrators do).
pub(crate) fn acts_as_owner(grant: &Grant) -> bool {
    grant.role.name() == Some(BuiltInRole::Owner.name())
}

/// A required string field, or a 400 naming it.
pub(crate) fn required<'v>(value: Option<&'v str>, field: &str) -> Result<&'v str> {
    value.filter(|v| !v.trim().is_empty()).ok_or_else(|| {
        Error::invalid(vec![cms_core::Issue::new(
            field,
            "required",
            format!("{field} is required"),
        )])
    })
}

/// A required e-mail address, or a 400 naming what is wrong with it.
pub(crate) fn required_email(raw: Option<&str>) -> Result<Email> {
    let mut issues = Issues::new();
    check_email(&mut issues, required(raw, "email")?)
        .ok_or_else(|| Error::invalid(issues.into_vec()))
}

fn json_object() -> Value {
    Value::Object(Default::default())
}

fn check_name(issues: &mut Issues, raw: Option<&str>, required: bool) -> Option<String> {
    let name = raw.map(str::trim).unwrap_or_default();
    if name.is_empty() {
        if required || raw.is_some() {
            issues.add("name", "required", "name is required");
        }
        None
    } else if name.chars().count() > MAX_NAME_CHARS {
        issues.add(
            "name",
            "maxLength",
            format!("name is at most {MAX_NAME_CHARS} characters"),
        );
        None
    } else if name.chars().any(char::is_control) {
        issues.add("name", "invalid", "name may not contain control characters");
        None
    } else {
        Some(name.to_string())
    }
}

/// Slugs are lowercase words of letters and digits joined by single hyphens: they go into
/// URLs and must be typed by people.
fn check_slug(issues: &mut Issues, raw: Option<&str>, required: bool) -> Option<String> {
    let Some(slug) = raw.filter(|s| !s.is_empty()) else {
        if required || raw.is_some() {
            issues.add("slug", "required", "slug is required");
        }
        return None;
    };
    let well_formed = slug.len() <= MAX_SLUG_CHARS
        && slug.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
    if well_formed {
        Some(slug.to_string())
    } else {
        issues.add(
            "slug",
            "pattern",
            format!(
                "a slug is 1 to {MAX_SLUG_CHARS} characters: lowercase letters and digits, words joined by single hyphens"
            ),
        );
        None
    }
}

/// An organization's choice of locales, spelled as configured; `None` keeps them all.
fn check_locales(
    issues: &mut Issues,
    instance: &cms_core::Locales,
    chosen: Option<Vec<String>>,
) -> Option<Vec<String>> {
    let tags = chosen?;
    match instance.narrowed(&tags) {
        Ok(narrowed) => Some(
            narrowed
                .available()
                .iter()
                .map(ToString::to_string)
                .collect(),
        ),
        Err(message) => {
            issues.add("locales", "locale", message);
            None
        }
    }
}

fn check_metadata(issues: &mut Issues, value: Value) -> Option<Value> {
    if !value.is_object() {
        issues.add("metadata", "type", "metadata is a JSON object");
        return None;
    }
    if let Some(issue) = crate::input::find_nul("metadata", &value) {
        issues.push(issue);
        return None;
    }
    Some(value)
}

/// A taken slug is a 409 that says so.
fn slug_taken(e: Error, slug: &str) -> Error {
    match e {
        Error::Conflict(_) => Error::Conflict(format!("the slug `{slug}` is taken")),
        other => other,
    }
}

/// Creates an organization with the four built-in roles and `owner_user_id` as its owner.
pub(crate) async fn create_with_owner(
    tx: &mut dyn Tx,
    name: &str,
    slug: &str,
    owner_user_id: &str,
    every_declared: &CapabilitySet,
    now: Timestamp,
) -> Result<OrganizationRecord> {
    let org = OrganizationRecord {
        id: new_id(),
        name: name.to_string(),
        slug: slug.to_string(),
        metadata: Json(json_object()),
        parent_id: None,
        locales: None,
        require_two_factor: false,
        created_at: now.millis(),
        updated_at: now.millis(),
    };
    insert_with_owner(tx, &org, owner_user_id, every_declared, now).await?;
    Ok(org)
}

/// Inserts `org` with its built-in roles (seeded per CONTRACT.md section 12) and its owner,
/// with `member.added` for the owner.
async fn insert_with_owner(
    tx: &mut dyn Tx,
    org: &OrganizationRecord,
    owner_user_id: &str,
    every_declared: &CapabilitySet,
    now: Timestamp,
) -> Result<()> {
    tx.insert_organization(org).await?;
    for role in BuiltInRole::ALL {
        tx.insert_role(&RoleRecord {
            id: new_id(),
            organization_id: org.id.clone(),
            name: role.name().to_string(),
            description: role.description().to_string(),
            capabilities: Json(role.seed(every_declared).to_strings()),
            is_built_in: true,
            created_at: now.millis(),
            updated_at: now.millis(),
        })
        .await?;
    }
    add_member(tx, &org.id, owner_user_id, BuiltInRole::Owner.name(), now).await
}

/// Makes `user_id` a member of `organization_id` with `role`, with its `member.added` event:
/// every way in (creating an organization, adding a member, an invitation, single sign-on).
/// Fails with a foreign-key error when the role does not exist there.
pub(crate) async fn add_member(
    tx: &mut dyn Tx,
    organization_id: &str,
    user_id: &str,
    role: &str,
    now: Timestamp,
) -> Result<()> {
    tx.insert_member(&MemberRecord {
        organization_id: organization_id.to_string(),
        user_id: user_id.to_string(),
        role: role.to_string(),
        created_at: now.millis(),
    })
    .await?;
    tx.append_event(&member_event(
        organization_id,
        MEMBER_ADDED,
        user_id,
        role,
        now,
    ))
    .await?;
    Ok(())
}

/// SPEC.md built-in role 1: `owner` holds every capability, including ones added since the
/// organization was created (an upgrade, a new plugin). Runs at every boot.
pub(crate) async fn reconcile_owner_roles(inner: &Inner) -> Result<()> {
    let mut tx = inner.store.write_instance_wide().await?;
    let every = inner.capabilities.every().to_strings();
    let updated = tx
        .reconcile_owner_roles(&every, inner.clock.now().millis())
        .await?;
    tx.commit().await?;
    tracing::debug!(organizations = updated, "owner roles reconciled");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_lowercase_words_joined_by_hyphens() {
        for good in ["acme", "acme-2", "a", "north-america-sales"] {
            let mut issues = Issues::new();
            assert_eq!(
                check_slug(&mut issues, Some(good), true).as_deref(),
                Some(good)
            );
            assert!(issues.is_empty(), "{good}");
        }
        for bad in [
            "Acme",
            "-acme",
            "acme-",
            "ac--me",
            "ac me",
            "acmé",
            &"a".repeat(65),
        ] {
            let mut issues = Issues::new();
            assert_eq!(check_slug(&mut issues, Some(bad), true), None, "{bad}");
            assert_eq!(issues.into_vec()[0].code, "pattern", "{bad}");
        }
        let mut issues = Issues::new();
        assert_eq!(check_slug(&mut issues, None, false), None);
        assert!(issues.is_empty(), "an update may leave the slug alone");
    }

    #[test]
    fn metadata_is_an_object_without_nul() {
        let mut issues = Issues::new();
        assert!(check_metadata(&mut issues, serde_json::json!({"plan": "pro"})).is_some());
        assert!(check_metadata(&mut issues, serde_json::json!([1])).is_none());
        assert!(check_metadata(&mut issues, serde_json::json!({"a": "x\u{0}"})).is_none());
        let codes: Vec<_> = issues.into_vec().into_iter().map(|i| i.code).collect();
        assert_eq!(codes, vec!["type", "invalid"]);
    }
}
