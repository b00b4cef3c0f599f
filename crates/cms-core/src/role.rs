//! Roles: organization roles (built-in and custom) and instance roles.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::capability::{Capability, CapabilitySet, CoreCapability};

/// The roles every organization has. They cannot be deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuiltInRole {
    Owner,
    Admin,
    Editor,
    Viewer,
    /// Anonymous readers: a request without credentials that names the organization
    /// (CONTRACT.md section 15). Never a person's role.
    Public,
}

/// The only capabilities the `public` role may hold: anonymous callers read, nothing more.
pub const PUBLIC_GRANTABLE: [CoreCapability; 2] =
    [CoreCapability::DocumentRead, CoreCapability::AssetRead];

impl BuiltInRole {
    /// In the order the roles are listed: people's roles from the most powerful down, then
    /// `public`.
    pub const ALL: [BuiltInRole; 5] = [
        BuiltInRole::Owner,
        BuiltInRole::Admin,
        BuiltInRole::Editor,
        BuiltInRole::Viewer,
        BuiltInRole::Public,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BuiltInRole::Owner => "owner",
            BuiltInRole::Admin => "admin",
            BuiltInRole::Editor => "editor",
            BuiltInRole::Viewer => "viewer",
            BuiltInRole::Public => "public",
        }
    }

    pub fn from_name(name: &str) -> Option<BuiltInRole> {
        BuiltInRole::ALL.into_iter().find(|r| r.name() == name)
    }

    pub fn description(self) -> &'static str {
        match self {
            BuiltInRole::Owner => "Full control of the organization, including its deletion",
            BuiltInRole::Admin => "Every core capability",
            BuiltInRole::Editor => "Writes and publishes content and manages assets",
            BuiltInRole::Viewer => "Reads content and assets",
            BuiltInRole::Public => {
                "Anonymous reads of published content by requests that name the organization"
            }
        }
    }

    /// Whether a member or an invitation may hold this role: `public` stands for anonymous
    /// callers, never for a person.
    pub fn is_for_people(self) -> bool {
        self != BuiltInRole::Public
    }

    /// Whether this role may be given `capability`: any declared one, except for `public`,
    /// which holds at most [`PUBLIC_GRANTABLE`].
    pub fn may_hold(self, capability: &Capability) -> bool {
        match (self, capability) {
            (BuiltInRole::Public, Capability::Core(c)) => PUBLIC_GRANTABLE.contains(c),
            (BuiltInRole::Public, Capability::Plugin(_)) => false,
            _ => true,
        }
    }

    /// The capabilities a role is created with (CONTRACT.md section 12). The owner's set is
    /// "everything declared", so it takes the plugin capabilities too; the others are seeded once
    /// with core capabilities only and never grow on their own.
    pub fn seed(self, every_declared: &CapabilitySet) -> CapabilitySet {
        match self {
            BuiltInRole::Owner => every_declared.clone(),
            BuiltInRole::Admin => CapabilitySet::all_core(),
            BuiltInRole::Editor => CapabilitySet::content_writer(),
            BuiltInRole::Viewer => CapabilitySet::content_reader(),
            // Nothing is public until an owner or admin says so.
            BuiltInRole::Public => CapabilitySet::empty(),
        }
    }
}

/// The name of an organization role: lowercase letters, digits, `_` and `-`, 1 to 64 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, utoipa::ToSchema)]
#[serde(transparent)]
#[schema(value_type = String, pattern = "^[a-z0-9_-]{1,64}$")]
pub struct RoleName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a role name is 1 to 64 characters of a-z, 0-9, `_` and `-`")]
pub struct InvalidRoleName;

impl FromStr for RoleName {
    type Err = InvalidRoleName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let ok = !s.is_empty()
            && s.len() <= 64
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if ok {
            Ok(RoleName(s.to_string()))
        } else {
            Err(InvalidRoleName)
        }
    }
}

impl RoleName {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn built_in(&self) -> Option<BuiltInRole> {
        BuiltInRole::from_name(&self.0)
    }
}

impl From<BuiltInRole> for RoleName {
    fn from(r: BuiltInRole) -> Self {
        RoleName(r.name().to_string())
    }
}

impl fmt::Display for RoleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A user's role on the whole instance, independent of any organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstanceRole {
    SuperAdmin,
    Admin,
    Editor,
    Viewer,
}

impl InstanceRole {
    pub fn as_str(self) -> &'static str {
        match self {
            InstanceRole::SuperAdmin => "super_admin",
            InstanceRole::Admin => "admin",
            InstanceRole::Editor => "editor",
            InstanceRole::Viewer => "viewer",
        }
    }

    pub fn parse(s: &str) -> Option<InstanceRole> {
        match s {
            "super_admin" => Some(InstanceRole::SuperAdmin),
            "admin" => Some(InstanceRole::Admin),
            "editor" => Some(InstanceRole::Editor),
            "viewer" => Some(InstanceRole::Viewer),
            _ => None,
        }
    }

    /// `super_admin` and `admin` hold every capability in every organization and count as
    /// `owner` when schema role lists are matched.
    pub fn is_instance_admin(self) -> bool {
        matches!(self, InstanceRole::SuperAdmin | InstanceRole::Admin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::CoreCapability;

    #[test]
    fn seeds_follow_the_contract() {
        let every = CapabilitySet::all_with(["forms.export".to_string()]);
        assert_eq!(BuiltInRole::Owner.seed(&every), every);
        assert_eq!(BuiltInRole::Admin.seed(&every), CapabilitySet::all_core());
        let editor = BuiltInRole::Editor.seed(&every);
        assert!(editor.has(CoreCapability::DocumentUnpublish));
        assert!(editor.has(CoreCapability::AssetDelete));
        assert!(!editor.has(CoreCapability::ApiKeyManage));
        assert_eq!(
            BuiltInRole::Viewer.seed(&every).to_strings(),
            vec!["document.read", "asset.read"]
        );
        assert!(BuiltInRole::Public.seed(&every).is_empty());
    }

    #[test]
    fn public_holds_reads_only_and_is_nobodys_role() {
        let public = BuiltInRole::from_name("public").unwrap();
        assert_eq!(public, BuiltInRole::Public);
        assert!(public.may_hold(&Capability::Core(CoreCapability::DocumentRead)));
        assert!(public.may_hold(&Capability::Core(CoreCapability::AssetRead)));
        assert!(!public.may_hold(&Capability::Core(CoreCapability::DocumentCreate)));
        assert!(!public.may_hold(&Capability::Plugin("forms.export".into())));
        assert!(!public.is_for_people());
        assert!(BuiltInRole::Viewer.is_for_people());
        assert!(BuiltInRole::Viewer.may_hold(&Capability::Core(CoreCapability::RoleManage)));
    }

    #[test]
    fn role_names_are_validated() {
        assert!("content-lead".parse::<RoleName>().is_ok());
        assert!("".parse::<RoleName>().is_err());
        assert!("Owner".parse::<RoleName>().is_err());
        assert_eq!(
            "owner".parse::<RoleName>().unwrap().built_in(),
            Some(BuiltInRole::Owner)
        );
    }
}
