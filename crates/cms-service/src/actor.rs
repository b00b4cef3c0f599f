//! The actor: who is asking, in which organization, with what grant.
//!
//! An `Actor` is built by the auth service from checked credentials (a session or an API key),
//! or, for a plugin's own work, by the host's code through `Cms::plugin_actor`: holding one
//! means either the credentials were checked and the grant resolved, or the host itself vouches
//! for the work (SPEC.md Authentication point 8).
//!
//! The actor's parts live here too: the [`User`] and the [`SessionView`] as every door shows
//! them, and the checks of a user's name and e-mail address that sign-up, the account and
//! invitations share.

use cms_core::{
    Capability, CoreCapability, EffectiveRole, Email, Grant, InstanceRole, Issues, Timestamp,
};
use cms_store::sessions::SessionRecord;
use cms_store::users::UserRecord;
use serde::Serialize;

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
    /// No credentials, but the request named an organization (`x-cms-organization` or
    /// `?organization=`): an anonymous reader acting as that organization's built-in `public`
    /// role (CONTRACT.md section 15). Built only by `AuthService::authenticate`, and only when
    /// the role holds a capability. Its user is synthetic ([`PUBLIC_USER_PREFIX`] + the
    /// organization's id), never a person: it passes only the reads that serve published
    /// content ([`Actor::require_delivery`]); every other check refuses it as unauthenticated
    /// (401), as for a request without credentials.
    Public {
        organization_slug: String,
    },
}

/// The id prefix of a plugin actor's synthetic user: documents a plugin writes carry
/// `createdBy: "plugin:<id>"`.
pub const PLUGIN_USER_PREFIX: &str = "plugin:";

/// The id prefix of the `public` role's synthetic user (`public:<organization id>`).
pub const PUBLIC_USER_PREFIX: &str = "public:";

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
    /// refusals (403), never hints about what exists. An anonymous `public` reader is refused as
    /// unauthenticated (401) whatever it asks: only the reads that serve published content let
    /// it in, through [`Actor::require_delivery`].
    pub fn require(&self, capability: CoreCapability) -> Result<&str> {
        if self.is_public() {
            return Err(Error::Unauthorized);
        }
        match &self.organization_id {
            Some(org) if self.grant.capabilities.has(capability) => Ok(org),
            _ => Err(Error::Forbidden),
        }
    }

    /// [`Actor::require`] for the reads that serve published content to frontends (documents
    /// by id, lists, by ids, back references, asset records): the one check an anonymous
    /// `public` reader passes, when its role holds `capability` (401 otherwise, as for any
    /// request without credentials).
    pub fn require_delivery(&self, capability: CoreCapability) -> Result<&str> {
        if !self.is_public() {
            return self.require(capability);
        }
        match &self.organization_id {
            Some(org) if self.grant.capabilities.has(capability) => Ok(org),
            _ => Err(Error::Unauthorized),
        }
    }

    /// Whether this is an anonymous reader acting as an organization's `public` role.
    pub fn is_public(&self) -> bool {
        matches!(self.credential, Credential::Public { .. })
    }

    /// The active organization, when the actor holds every one of `capabilities` there (a
    /// plugin route's `requiredCapabilities`). An empty list asks only for membership: an
    /// active organization in which the actor has a role.
    pub fn require_all(&self, capabilities: &[Capability]) -> Result<&str> {
        // Anonymous readers are nobody's member: a gate asking for membership or capabilities
        // refuses them as it refuses a request without credentials.
        if self.is_public() {
            return Err(Error::Unauthorized);
        }
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
            Credential::ApiKey { .. } | Credential::Plugin { .. } | Credential::Public { .. } => {
                None
            }
        }
    }

    /// The door check of a GraphQL mutation (SPEC.md Authentication point 4): an API key that
    /// may write no document (a `read` key, or a capability list without a document write) is
    /// refused (403) before the operation runs. Sessions pass: each mutation's own capability
    /// check decides for them, as on REST. An anonymous `public` reader never mutates
    /// (CONTRACT.md section 15): 401, as without credentials.
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
            Credential::Public { .. } => Err(Error::Unauthorized),
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

    /// Refuses an actor that is not a person: operations bound to a user record (sessions,
    /// API keys, profile, preferences, memberships, invitations) have none to bind a plugin
    /// (403) or an anonymous reader (401, as without credentials) to.
    pub fn require_person(&self) -> Result<()> {
        match self.credential {
            Credential::Plugin { .. } => Err(Error::Forbidden),
            Credential::Public { .. } => Err(Error::Unauthorized),
            _ => Ok(()),
        }
    }
}

/// A user as every door shows it. Never carries the password hash.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: String,
    pub email: String,
    pub name: String,
    pub email_verified: bool,
    /// The instance role.
    pub role: InstanceRole,
    pub image: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl User {
    pub(crate) fn from_record(r: UserRecord) -> Result<User> {
        let role = InstanceRole::parse(&r.role)
            .ok_or_else(|| Error::Internal(format!("user {} has unknown role {}", r.id, r.role)))?;
        Ok(User {
            id: r.id,
            email: r.email,
            name: r.name,
            email_verified: r.email_verified,
            role,
            image: r.image,
            created_at: r.created_at.into(),
            updated_at: r.updated_at.into(),
        })
    }
}

/// A session as `get-session` shows it. Never carries the token.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    pub id: String,
    pub user_id: String,
    pub active_organization_id: Option<String>,
    pub expires_at: Timestamp,
    pub ip_address: Option<String>,
    pub user_agent: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl From<&SessionRecord> for SessionView {
    fn from(s: &SessionRecord) -> Self {
        SessionView {
            id: s.id.clone(),
            user_id: s.user_id.clone(),
            active_organization_id: s.active_organization_id.clone(),
            expires_at: s.expires_at.into(),
            ip_address: s.ip_address.clone(),
            user_agent: s.user_agent.clone(),
            created_at: s.created_at.into(),
            updated_at: s.updated_at.into(),
        }
    }
}

/// An e-mail address, or an issue at `email`.
pub(crate) fn check_email(issues: &mut Issues, raw: &str) -> Option<Email> {
    let parsed = Email::parse(raw);
    if parsed.is_none() {
        issues.add("email", "format", "email is not a valid e-mail address");
    }
    parsed
}

/// A person's name: trimmed, 1 to 100 characters, no control characters.
pub(crate) fn check_user_name(issues: &mut Issues, raw: &str) -> Option<String> {
    let name = raw.trim();
    if name.is_empty() {
        issues.add("name", "required", "name is required");
    } else if name.chars().count() > 100 {
        issues.add("name", "maxLength", "name is at most 100 characters");
    } else if name.chars().any(char::is_control) {
        issues.add("name", "invalid", "name may not contain control characters");
    } else {
        return Some(name.to_string());
    }
    None
}

pub(crate) fn email_taken() -> Error {
    Error::Unprocessable("an account with this e-mail already exists".into())
}
