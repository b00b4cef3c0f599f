//! The actor: who is asking, in which organization, with what grant.
//!
//! An `Actor` is built by the auth service from checked credentials (a session or an API key),
//! or, for a plugin's own work, by the host's code through `Cms::plugin_actor`: holding one
//! means either the credentials were checked and the grant resolved, or the host itself vouches
//! for the work (SPEC.md Authentication point 8).

use cms_core::{Capability, CoreCapability, EffectiveRole, Grant, InstanceRole};

use crate::auth::{SessionView, User};
use crate::error::{Error, Result};

/// How the actor proved who they are.
#[derive(Debug, Clone)]
pub enum Credential {
    Session(SessionView),
    ApiKey {
        key_id: String,
    },
    /// No credentials: a plugin doing system work the host's code asked for (a public form
    /// submission stored into a type nobody may create by hand). Built only by
    /// `Cms::plugin_actor`; its user is synthetic ([`PLUGIN_USER_PREFIX`] + plugin id), so
    /// every operation bound to a person (sessions, API keys, profile, preferences,
    /// memberships, invitations, role management) refuses it with 403.
    Plugin {
        plugin_id: String,
    },
}

/// The id prefix of a plugin actor's synthetic user: documents a plugin writes carry
/// `createdBy: "plugin:<id>"`.
pub const PLUGIN_USER_PREFIX: &str = "plugin:";

/// An authenticated caller. Built by the auth service from checked credentials, or by the
/// host's own code for a plugin (`Cms::plugin_actor`); never from anything a request carries.
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

    /// Whether this is a signed-in instance `super_admin` acting through a session: the only
    /// caller holding instance-wide powers (`scope=all`, other organizations' jobs, instance
    /// settings, deleting any organization). An API key never does, whoever created it: a key
    /// acts inside its own organization with exactly its listed scope (CONTRACT.md section 13).
    pub fn instance_super_admin_session(&self) -> bool {
        self.session_role()
            .is_some_and(|r| r == InstanceRole::SuperAdmin)
    }

    /// Whether this is a signed-in instance administrator (`super_admin` or `admin`) acting
    /// through a session: who may enter and read any organization. Keys and plugin actors never
    /// are, whoever stands behind them.
    pub fn instance_admin_session(&self) -> bool {
        self.session_role()
            .is_some_and(InstanceRole::is_instance_admin)
    }

    /// The user's instance role, when proven by a session (a key or a plugin actor carries
    /// none of it).
    fn session_role(&self) -> Option<InstanceRole> {
        match self.credential {
            Credential::Session(_) => Some(self.user.role),
            Credential::ApiKey { .. } | Credential::Plugin { .. } => None,
        }
    }

    /// The door check of a GraphQL mutation (SPEC.md Authentication point 4): an API key that
    /// may write no document (a `read` key, or a capability list without a document write) is
    /// refused (403) before the operation runs. Sessions pass: each mutation's own capability
    /// check decides for them, as on REST.
    pub fn require_mutation_scope(&self) -> Result<()> {
        const WRITES: [CoreCapability; 5] = [
            CoreCapability::DocumentCreate,
            CoreCapability::DocumentUpdate,
            CoreCapability::DocumentDelete,
            CoreCapability::DocumentPublish,
            CoreCapability::DocumentUnpublish,
        ];
        match self.credential {
            Credential::ApiKey { .. }
                if !WRITES.iter().any(|c| self.grant.capabilities.has(*c)) =>
            {
                Err(Error::Forbidden)
            }
            _ => Ok(()),
        }
    }

    pub fn is_api_key(&self) -> bool {
        matches!(self.credential, Credential::ApiKey { .. })
    }

    /// The plugin a plugin actor works for.
    pub fn plugin_id(&self) -> Option<&str> {
        match &self.credential {
            Credential::Plugin { plugin_id } => Some(plugin_id),
            _ => None,
        }
    }

    /// Refuses (403) an actor that is not a person: operations bound to a user record
    /// (sessions, API keys, profile, preferences, memberships, invitations) have none to bind
    /// a plugin to.
    pub fn require_person(&self) -> Result<()> {
        match self.credential {
            Credential::Plugin { .. } => Err(Error::Forbidden),
            _ => Ok(()),
        }
    }
}
