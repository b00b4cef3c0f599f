//! The members of the active organization: list, change a role, remove.
//!
//! Rules beyond the capabilities: the role ceiling (see [`super::ceiling`]); only an owner may
//! make someone owner or change or remove an owner (so an admin cannot unseat the people above
//! them), and the last owner can be neither demoted nor removed (409). The owner count is taken under the organization's row lock, so
//! two concurrent demotions cannot leave an organization without an owner.

use cms_core::access::EffectiveRole;
use cms_core::{BuiltInRole, CoreCapability, InstanceRole, Issue, RoleName, Timestamp, new_id};
use cms_store::organizations::MemberRecord;
use cms_store::users::UserRecord;
use cms_store::{StoreError, Tx};
use serde::Serialize;

use super::ceiling::{assignable_capabilities, ensure_may_assign, holds_all, role_capabilities};
use super::{acts_as_owner, required};
use crate::Inner;
use crate::actor::Actor;
use crate::audit::{self, AuditAction, AuditTarget};
use crate::error::{Error, Result};
use crate::events::{MEMBER_REMOVED, member_event};

/// A member as every door shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub user_id: String,
    pub email: String,
    pub name: String,
    pub role: String,
    /// When they joined.
    pub created_at: Timestamp,
}

/// A person to add with a password the admin chooses, for instances whose e-mail cannot reach
/// them (no mail transport): the name, address and password of a sign-up, and a role.
#[derive(Debug, Default)]
pub struct NewMember {
    pub name: Option<String>,
    pub email: Option<String>,
    pub password: Option<String>,
    pub role: Option<String>,
}

pub struct MemberService<'a> {
    inner: &'a Inner,
}

impl<'a> MemberService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        MemberService { inner }
    }

    /// The members of the active organization, oldest first. Any member may list them
    /// (CONTRACT.md section 12), as may an instance administrator who entered it.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<Member>> {
        // An anonymous reader holds the `public` role but is nobody's fellow member.
        if actor.is_public() {
            return Err(Error::Unauthorized);
        }
        let org = match (&actor.organization_id, &actor.grant.role) {
            (Some(org), role) if *role != EffectiveRole::None => org,
            _ => return Err(actor.refusal()),
        };
        let mut tx = self.inner.store.read_instance_wide().await?;
        let members = tx.members_of(org).await?;
        Ok(members
            .into_iter()
            .map(|m| Member {
                user_id: m.user_id,
                email: m.email,
                name: m.name,
                role: m.role,
                created_at: m.created_at.into(),
            })
            .collect())
    }

    /// Creates an account with a password and makes it a member of the active organization,
    /// with `member.added`. Held to the rules of an invitation (`member.invite`, under the role
    /// ceiling; only an owner makes an owner), because it grants the same thing. An address
    /// that has an account already is 409: that person chose their own password, so they are
    /// invited instead, never given a second one. The address is not verified: nobody proved
    /// the mailbox (CONTRACT.md section 13), and the instance role is a sign-up's.
    pub async fn create(&self, actor: &Actor, input: NewMember) -> Result<Member> {
        actor.require_person()?;
        let org = actor.require(CoreCapability::MemberInvite)?.to_string();
        let (name, email, password) =
            crate::actor::validate_new_user(&input.name, &input.email, &input.password)?;
        let role = role_name(input.role.as_deref())?;
        // The refusals that need no hashing come first, so a refused request costs nothing.
        {
            let mut tx = self.inner.store.read_instance_wide().await?;
            let capabilities = assignable_capabilities(self.inner, &mut *tx, &org, &role).await?;
            ensure_may_assign(&actor.grant, &role, &capabilities)?;
            if tx.user_by_email(email.as_str()).await?.is_some() {
                return Err(account_exists());
            }
        }
        let password_hash = crate::password::hash(password.expose().to_string()).await?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        tx.lock_organization(&org).await?;
        // Again inside the write: the role may have changed while the password was hashed.
        let capabilities = assignable_capabilities(self.inner, &mut *tx, &org, &role).await?;
        ensure_may_assign(&actor.grant, &role, &capabilities)?;
        let user = UserRecord {
            id: new_id(),
            email: email.as_str().to_string(),
            name,
            password_hash: Some(password_hash),
            email_verified: false,
            role: InstanceRole::Editor.as_str().into(),
            image: None,
            created_at: now.millis(),
            updated_at: now.millis(),
        };
        match tx.insert_user(&user).await {
            Err(StoreError::Unique(_)) => return Err(account_exists()),
            other => other?,
        }
        super::add_member(&mut *tx, &org, &user.id, role.as_str(), now).await?;
        tx.commit().await?;
        Ok(Member {
            user_id: user.id,
            email: user.email,
            name: user.name,
            role: role.as_str().to_string(),
            created_at: now,
        })
    }

    /// Gives a member another role of the organization (`member.changeRole`), under the role
    /// ceiling (CONTRACT.md section 13): the caller must hold every capability of the new role
    /// and of the member's current one (nobody unseats someone above them), only an owner
    /// makes someone owner or changes an owner's role, and nobody changes their own role except
    /// an owner stepping down while another owner remains. Takes effect on the member's next
    /// request, for their sessions and their API keys alike.
    pub async fn change_role(
        &self,
        actor: &Actor,
        user_id: Option<&str>,
        role: Option<&str>,
    ) -> Result<Member> {
        let org = actor.require(CoreCapability::MemberChangeRole)?;
        let user_id = required(user_id, "userId")?;
        let role = role_name(role)?;
        let mut tx = self.inner.store.write_instance_wide().await?;
        tx.lock_organization(org).await?;
        let new_capabilities = assignable_capabilities(self.inner, &mut *tx, org, &role).await?;
        let target = member_of(&mut *tx, org, user_id).await?;
        let owner = BuiltInRole::Owner.name();
        if user_id == actor.user.id && target.role != owner {
            // Changing one's own role is how a grant would climb past its ceiling.
            return Err(Error::Forbidden);
        }
        if target.role == owner && !acts_as_owner(&actor.grant) {
            return Err(Error::NotPermitted(
                "only an owner may make someone owner or change an owner's role".into(),
            ));
        }
        ensure_may_assign(&actor.grant, &role, &new_capabilities)?;
        if let Some(current) = role_capabilities(self.inner, &mut *tx, org, &target.role).await? {
            holds_all(&actor.grant, &current)?;
        }
        if target.role == owner && role.as_str() != owner {
            ensure_another_owner(&mut *tx, org).await?;
        }
        tx.update_member_role(org, user_id, role.as_str()).await?;
        let user = tx
            .user_by_id(user_id)
            .await?
            .ok_or_else(|| Error::not_found("member"))?;
        tx.append_audit(&[audit::entry(
            actor,
            Some(org),
            AuditAction::MemberRoleChanged,
            Some(AuditTarget::new("user", user_id)),
            format!("{}: {} → {}", user.email, target.role, role.as_str()),
            self.inner.clock.now().millis(),
        )])
        .await?;
        tx.commit().await?;
        Ok(Member {
            user_id: user.id,
            email: user.email,
            name: user.name,
            role: role.as_str().to_string(),
            created_at: target.created_at.into(),
        })
    }

    /// Removes a member (`member.remove`), with `member.removed`. Their API keys in the
    /// organization are deleted and their sessions that had it active are left without an
    /// active organization, so their access ends on their very next request.
    pub async fn remove(&self, actor: &Actor, user_id: Option<&str>) -> Result<()> {
        let org = actor.require(CoreCapability::MemberRemove)?;
        let user_id = required(user_id, "userId")?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        tx.lock_organization(org).await?;
        let target = member_of(&mut *tx, org, user_id).await?;
        if target.role == BuiltInRole::Owner.name() {
            if !acts_as_owner(&actor.grant) {
                return Err(Error::NotPermitted(
                    "only an owner may remove an owner".into(),
                ));
            }
            ensure_another_owner(&mut *tx, org).await?;
        }
        tx.delete_member(org, user_id).await?;
        tx.append_event(&member_event(
            org,
            MEMBER_REMOVED,
            user_id,
            &target.role,
            now,
        ))
        .await?;
        tx.delete_api_keys_of_member(org, user_id).await?;
        tx.clear_active_organization(user_id, org, now.millis())
            .await?;
        let email = tx.user_by_id(user_id).await?.map(|u| u.email);
        tx.append_audit(&[audit::entry(
            actor,
            Some(org),
            AuditAction::MemberRemoved,
            Some(AuditTarget::new("user", user_id)),
            format!(
                "{} (was {})",
                email.as_deref().unwrap_or(user_id),
                target.role
            ),
            now.millis(),
        )])
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// The role a member or an invitation is to hold. `public` is refused (400): it stands for
/// anonymous readers, never for a person (CONTRACT.md section 15).
pub(super) fn role_name(raw: Option<&str>) -> Result<RoleName> {
    let role = required(raw, "role")?
        .parse::<RoleName>()
        .map_err(|e| Error::invalid(vec![Issue::new("role", "pattern", e.to_string())]))?;
    if role.built_in().is_some_and(|r| !r.is_for_people()) {
        return Err(Error::invalid(vec![Issue::new(
            "role",
            "notAssignable",
            format!("`{role}` is the role of anonymous readers, not a person's role"),
        )]));
    }
    Ok(role)
}

fn account_exists() -> Error {
    Error::Conflict(
        "an account with this e-mail already exists: invite it instead, so its owner joins with their own password".into(),
    )
}

pub(super) fn no_such_role(role: &RoleName) -> Error {
    Error::invalid(vec![Issue::new(
        "role",
        "unknown",
        format!("the organization has no role `{role}`"),
    )])
}

async fn member_of(tx: &mut dyn Tx, org: &str, user_id: &str) -> Result<MemberRecord> {
    tx.member(org, user_id)
        .await?
        .ok_or_else(|| Error::not_found("member"))
}

/// 409 unless the organization has an owner besides the one about to go. Call under
/// [`Tx::lock_organization`].
async fn ensure_another_owner(tx: &mut dyn Tx, org: &str) -> Result<()> {
    if tx
        .count_members_with_role(org, BuiltInRole::Owner.name())
        .await?
        <= 1
    {
        return Err(Error::Conflict(
            "the organization's last owner cannot be demoted or removed: make someone else owner first".into(),
        ));
    }
    Ok(())
}
