//! The role ceiling (CONTRACT.md section 13, "No one grants more than they hold"): a role may
//! be given (a member's new role, an invitation's role) only by someone who holds every
//! capability of that role; only an owner gives `owner`; nobody changes their own role except
//! an owner stepping down.
//!
//! Without it a member who may change roles could make themself (or a friend) `admin` or
//! `owner`, or hand out a custom role holding powers they were never given.

use cms_core::{BuiltInRole, CapabilitySet, Grant, RoleName};
use cms_store::Tx;

use super::acts_as_owner;
use super::members::no_such_role;
use crate::Inner;
use crate::error::{Error, Result};

/// The capabilities a role of the organization holds, as stored (declared ones only: a
/// capability of a plugin no longer installed grants nothing, so it limits nothing either).
/// `None` when the organization has no such role.
pub(super) async fn role_capabilities(
    inner: &Inner,
    tx: &mut dyn Tx,
    org: &str,
    role: &str,
) -> Result<Option<CapabilitySet>> {
    Ok(tx.role(org, role).await?.map(|record| {
        record
            .capabilities
            .0
            .iter()
            .filter_map(|c| inner.capabilities.parse(c))
            .collect()
    }))
}

/// [`role_capabilities`] of a role about to be given: one the organization lacks is a 400.
pub(super) async fn assignable_capabilities(
    inner: &Inner,
    tx: &mut dyn Tx,
    org: &str,
    role: &RoleName,
) -> Result<CapabilitySet> {
    role_capabilities(inner, tx, org, role.as_str())
        .await?
        .ok_or_else(|| no_such_role(role))
}

/// Whether `grant` may give `role`, which holds `capabilities`: only an owner gives `owner`
/// (a business refusal naming the rule, as before), and every other role needs each of its
/// capabilities in the grant (an access refusal).
pub(super) fn ensure_may_assign(
    grant: &Grant,
    role: &RoleName,
    capabilities: &CapabilitySet,
) -> Result<()> {
    if role.built_in() == Some(BuiltInRole::Owner) && !acts_as_owner(grant) {
        return Err(Error::NotPermitted(
            "only an owner may make someone owner".into(),
        ));
    }
    holds_all(grant, capabilities)
}

/// An access refusal unless `grant` holds every one of `capabilities`.
pub(super) fn holds_all(grant: &Grant, capabilities: &CapabilitySet) -> Result<()> {
    if capabilities.iter().all(|c| grant.capabilities.contains(&c)) {
        Ok(())
    } else {
        Err(Error::Forbidden)
    }
}

#[cfg(test)]
mod tests {
    use cms_core::CoreCapability;
    use cms_core::access::EffectiveRole;

    use super::*;

    fn grant(role: &str, caps: &[CoreCapability]) -> Grant {
        Grant {
            role: EffectiveRole::Member(role.parse().unwrap()),
            capabilities: caps.iter().copied().collect(),
        }
    }

    #[test]
    fn a_role_is_given_only_by_who_holds_all_of_it() {
        use CoreCapability::*;
        let manager = grant("manager", &[MemberChangeRole, DocumentRead]);
        let reader: RoleName = "reader".parse().unwrap();
        let keys: RoleName = "keys".parse().unwrap();
        assert!(
            ensure_may_assign(&manager, &reader, &[DocumentRead].into_iter().collect()).is_ok()
        );
        assert!(matches!(
            ensure_may_assign(&manager, &keys, &[ApiKeyManage].into_iter().collect()),
            Err(Error::Forbidden)
        ));
        let owner: RoleName = "owner".parse().unwrap();
        let admin = grant("admin", &[MemberChangeRole]);
        assert!(matches!(
            ensure_may_assign(&admin, &owner, &CapabilitySet::empty()),
            Err(Error::NotPermitted(_))
        ));
        let an_owner = grant("owner", &[MemberChangeRole]);
        assert!(ensure_may_assign(&an_owner, &owner, &CapabilitySet::empty()).is_ok());
    }
}
