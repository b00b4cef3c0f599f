//! Capability resolution: who may do what in the active organization (SPEC.md Authentication
//! points 1 to 8). The service layer loads the facts; this module decides.

use crate::api_key::KeyScope;
use crate::capability::CapabilitySet;
use crate::role::{BuiltInRole, InstanceRole, RoleName};

/// The role a caller is matched as against schema role lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EffectiveRole {
    /// An instance `super_admin` or `admin`, who counts as `owner` in every organization.
    InstanceAdmin,
    /// A member of the organization with this role.
    Member(RoleName),
    /// No role in the organization (or no active organization).
    None,
}

impl EffectiveRole {
    /// The role name that schema access lists are matched against.
    pub fn name(&self) -> Option<&str> {
        match self {
            EffectiveRole::InstanceAdmin => Some(BuiltInRole::Owner.name()),
            EffectiveRole::Member(r) => Some(r.as_str()),
            EffectiveRole::None => None,
        }
    }
}

/// The outcome of resolution: the caller's role and what they may do in the organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub role: EffectiveRole,
    pub capabilities: CapabilitySet,
}

/// A caller's membership in the active organization: the role and the role's capabilities as
/// stored.
#[derive(Debug, Clone)]
pub struct Membership {
    pub role: RoleName,
    pub capabilities: CapabilitySet,
}

/// What a signed-in user may do. `every_declared` is every core and plugin capability.
pub fn user_grant(
    instance_role: InstanceRole,
    membership: Option<&Membership>,
    every_declared: &CapabilitySet,
) -> Grant {
    if instance_role.is_instance_admin() {
        return Grant {
            role: EffectiveRole::InstanceAdmin,
            capabilities: every_declared.clone(),
        };
    }
    member_grant(membership, every_declared)
}

/// What a member may do by their role in the organization alone, whatever their instance
/// role: the grant an API key is clamped to. A key acts inside its organization with its
/// creator's role there (CONTRACT.md sections 12 and 13), so a super admin's key is bound by
/// the schema and field rules of that role, and stops working where its creator has none.
pub fn member_grant(membership: Option<&Membership>, every_declared: &CapabilitySet) -> Grant {
    match membership {
        // The owner holds everything by definition, whatever the stored row says.
        Some(m) if m.role.built_in() == Some(BuiltInRole::Owner) => Grant {
            role: EffectiveRole::Member(m.role.clone()),
            capabilities: every_declared.clone(),
        },
        Some(m) => Grant {
            role: EffectiveRole::Member(m.role.clone()),
            capabilities: m.capabilities.clone(),
        },
        None => Grant {
            role: EffectiveRole::None,
            capabilities: CapabilitySet::empty(),
        },
    }
}

/// What an API key may do: its requested scope clamped to its creator's current grant in the
/// key's organization. `None` when the creator no longer has any role there: such a key stops
/// working (CONTRACT.md section 12).
pub fn key_grant(scope: &KeyScope, creator: &Grant) -> Option<Grant> {
    if creator.role == EffectiveRole::None {
        return None;
    }
    Some(Grant {
        role: creator.role.clone(),
        capabilities: scope.requested().intersect(&creator.capabilities),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_key::KeyPermission;
    use crate::capability::{Capability, CoreCapability};

    fn member(role: BuiltInRole) -> Membership {
        Membership {
            role: role.into(),
            capabilities: role.seed(&CapabilitySet::all_core()),
        }
    }

    #[test]
    fn instance_admins_hold_everything_and_count_as_owner() {
        let every = CapabilitySet::all_with(["forms.export".into()]);
        for role in [InstanceRole::SuperAdmin, InstanceRole::Admin] {
            let g = user_grant(role, None, &every);
            assert_eq!(g.capabilities, every);
            assert_eq!(g.role.name(), Some("owner"));
        }
        let g = user_grant(InstanceRole::Editor, None, &every);
        assert!(g.capabilities.is_empty());
        assert_eq!(g.role.name(), None);
    }

    #[test]
    fn the_owner_holds_every_declared_capability_even_if_the_row_lags() {
        let every = CapabilitySet::all_with(["forms.export".into()]);
        let stale = Membership {
            role: BuiltInRole::Owner.into(),
            capabilities: CapabilitySet::all_core(),
        };
        let g = user_grant(InstanceRole::Editor, Some(&stale), &every);
        assert!(
            g.capabilities
                .contains(&Capability::Plugin("forms.export".into()))
        );
    }

    #[test]
    fn a_key_is_clamped_to_its_creators_current_role() {
        let every = CapabilitySet::all_core();
        let viewer = user_grant(
            InstanceRole::Editor,
            Some(&member(BuiltInRole::Viewer)),
            &every,
        );
        let scope = KeyScope::new(vec![KeyPermission::Write], None).unwrap();
        let g = key_grant(&scope, &viewer).unwrap();
        assert_eq!(
            g.capabilities.to_strings(),
            vec!["document.read", "asset.read"]
        );
        assert!(!g.capabilities.has(CoreCapability::DocumentCreate));
    }

    #[test]
    fn a_key_whose_creator_left_stops_working() {
        let every = CapabilitySet::all_core();
        let gone = user_grant(InstanceRole::Editor, None, &every);
        let scope = KeyScope::new(vec![KeyPermission::Read], None).unwrap();
        assert_eq!(key_grant(&scope, &gone), None);
    }

    #[test]
    fn a_super_admins_key_is_bound_by_the_creators_membership() {
        let every = CapabilitySet::all_core();
        let scope = KeyScope::new(vec![KeyPermission::Write], None).unwrap();
        let editor = member_grant(Some(&member(BuiltInRole::Editor)), &every);
        let key = key_grant(&scope, &editor).unwrap();
        assert_eq!(
            key.role,
            EffectiveRole::Member(BuiltInRole::Editor.name().parse().unwrap())
        );
        assert_ne!(key.role, EffectiveRole::InstanceAdmin);
        assert_eq!(key_grant(&scope, &member_grant(None, &every)), None);
    }
}
