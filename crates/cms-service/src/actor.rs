//! The actor: who is asking, in which organization, with what grant.

use cms_core::{Capability, CoreCapability, EffectiveRole, Grant};

use crate::auth::{SessionView, User};
use crate::error::{Error, Result};

/// How the actor proved who they are.
#[derive(Debug, Clone)]
pub enum Credential {
    Session(SessionView),
    ApiKey { key_id: String },
}

/// An authenticated caller. Built only by the auth service, so holding one means the
/// credentials were checked and the grant resolved (SPEC.md Authentication point 8).
#[derive(Debug, Clone)]
pub struct Actor {
    pub user: User,
    /// The organization every read and write happens in; `None` for a signed-in user who
    /// belongs to none yet.
    pub organization_id: Option<String>,
    pub grant: Grant,
    pub credential: Credential,
}

impl Actor {
    /// The active organization, when the actor holds `capability` there. Refusals are access
    /// refusals (403), never hints about what exists.
    pub fn require(&self, capability: CoreCapability) -> Result<&str> {
        match &self.organization_id {
            Some(org) if self.grant.capabilities.has(capability) => Ok(org),
            _ => Err(Error::Forbidden),
        }
    }

    /// The active organization, when the actor holds every one of `capabilities` there (a
    /// plugin route's `requiredCapabilities`). An empty list asks only for membership: an
    /// active organization in which the actor has a role.
    pub fn require_all(&self, capabilities: &[Capability]) -> Result<&str> {
        let org = match &self.organization_id {
            Some(org) if self.grant.role != EffectiveRole::None => org,
            _ => return Err(Error::Forbidden),
        };
        if capabilities
            .iter()
            .all(|c| self.grant.capabilities.contains(c))
        {
            Ok(org)
        } else {
            Err(Error::Forbidden)
        }
    }

    pub fn is_api_key(&self) -> bool {
        matches!(self.credential, Credential::ApiKey { .. })
    }
}
