//! API key scopes: the coarse `permissions` and the fine `capabilities` allowlist.

use serde::{Deserialize, Serialize};

use crate::capability::CapabilitySet;

/// Every key starts with this, so a leaked key is recognisable by secret scanners, and a bearer
/// token can be told to be a key.
pub const KEY_PREFIX: &str = "cms_";

/// A coarse key permission (SPEC.md Authentication point 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum KeyPermission {
    Read,
    Write,
}

impl KeyPermission {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyPermission::Read => "read",
            KeyPermission::Write => "write",
        }
    }

    pub fn parse(s: &str) -> Option<KeyPermission> {
        match s {
            "read" => Some(KeyPermission::Read),
            "write" => Some(KeyPermission::Write),
            _ => None,
        }
    }

    /// `read` maps to the read capabilities; `write` adds every document capability and the
    /// asset writes, and implies read.
    pub fn capabilities(self) -> CapabilitySet {
        match self {
            KeyPermission::Read => CapabilitySet::content_reader(),
            KeyPermission::Write => CapabilitySet::content_writer(),
        }
    }
}

/// What a key asked for when it was created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyScope {
    /// Only `permissions` were given.
    Permissions(Vec<KeyPermission>),
    /// `capabilities` were given (with or without `permissions`): they alone decide
    /// (SPEC.md Authentication point 5). Implied reads were added on intake.
    Capabilities {
        permissions: Vec<KeyPermission>,
        capabilities: CapabilitySet,
    },
}

impl KeyScope {
    /// Builds the scope from a creation request. `None` when neither part grants anything.
    pub fn new(
        permissions: Vec<KeyPermission>,
        capabilities: Option<CapabilitySet>,
    ) -> Option<Self> {
        match capabilities {
            Some(caps) if !caps.is_empty() => Some(KeyScope::Capabilities {
                permissions,
                capabilities: caps.with_implied_reads(),
            }),
            _ if !permissions.is_empty() => Some(KeyScope::Permissions(permissions)),
            _ => None,
        }
    }

    pub fn permissions(&self) -> &[KeyPermission] {
        match self {
            KeyScope::Permissions(p) => p,
            KeyScope::Capabilities { permissions, .. } => permissions,
        }
    }

    /// The explicit allowlist, when the key has one.
    pub fn capability_list(&self) -> Option<&CapabilitySet> {
        match self {
            KeyScope::Permissions(_) => None,
            KeyScope::Capabilities { capabilities, .. } => Some(capabilities),
        }
    }

    /// What the key may do before it is clamped to its creator's role.
    pub fn requested(&self) -> CapabilitySet {
        match self {
            KeyScope::Capabilities { capabilities, .. } => capabilities.clone(),
            KeyScope::Permissions(perms) => perms.iter().fold(CapabilitySet::empty(), |acc, p| {
                let mut acc = acc;
                for c in p.capabilities().iter() {
                    acc.insert(c);
                }
                acc
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::{Capability, CoreCapability};

    #[test]
    fn read_maps_to_reads_and_write_adds_writes() {
        let read = KeyScope::new(vec![KeyPermission::Read], None)
            .unwrap()
            .requested();
        assert_eq!(read.to_strings(), vec!["document.read", "asset.read"]);
        let write = KeyScope::new(vec![KeyPermission::Write], None)
            .unwrap()
            .requested();
        assert!(write.has(CoreCapability::DocumentPublish));
        assert!(write.has(CoreCapability::AssetRead));
        assert!(!write.has(CoreCapability::ApiKeyManage));
    }

    #[test]
    fn capabilities_alone_decide_and_gain_implied_reads() {
        let caps: CapabilitySet = [Capability::Core(CoreCapability::DocumentCreate)]
            .into_iter()
            .collect();
        let scope = KeyScope::new(vec![KeyPermission::Write], Some(caps)).unwrap();
        assert_eq!(
            scope.requested().to_strings(),
            vec!["document.read", "document.create"]
        );
    }

    #[test]
    fn a_scope_must_grant_something() {
        assert_eq!(KeyScope::new(vec![], None), None);
        assert_eq!(KeyScope::new(vec![], Some(CapabilitySet::empty())), None);
    }
}
