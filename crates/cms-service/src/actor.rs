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

use std::net::IpAddr;

use cms_core::{
    Capability, CoreCapability, EffectiveRole, Email, Grant, InstanceRole, Issues, Password,
    Timestamp,
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
    /// A preview link's token (CONTRACT.md section 15): it reads one document's draft as its
    /// creator sees it, and nothing else. The actor carrying it names no organization and holds
    /// no capability, so every operation refuses it (401, see [`Actor::require`]); only
    /// [`Actor::preview_reader`], asked by the read of that one document, unlocks the creator's
    /// grant kept here.
    Preview(PreviewCredential),
}

/// What a preview token proves: which document it reads, in which organization, with whose
/// grant (the creator's, resolved at this request, so a creator who lost access takes the
/// token's access with them).
#[derive(Debug, Clone)]
pub struct PreviewCredential {
    pub token_id: String,
    pub document_id: String,
    pub organization_id: String,
    creator_grant: Grant,
}

impl PreviewCredential {
    pub(crate) fn new(
        token_id: String,
        document_id: String,
        organization_id: String,
        creator_grant: Grant,
    ) -> Self {
        PreviewCredential {
            token_id,
            document_id,
            organization_id,
            creator_grant,
        }
    }
}

/// Whom an answer is for, as caches must treat it (CONTRACT.md section 15): an answer to
/// credentials is private to them, an answer to the `public` role may be shared by any cache,
/// and an answer to a preview token must not be stored at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Audience {
    /// A session, an API key, or a plugin's own work.
    Credentialed,
    /// Anonymous reads naming an organization, as its `public` role.
    Public,
    /// A preview link's token, reading one document's draft.
    Preview,
}

impl Audience {
    /// A stable name, for what is derived from the audience (entity tags).
    pub fn as_str(self) -> &'static str {
        match self {
            Audience::Credentialed => "credentialed",
            Audience::Public => "public",
            Audience::Preview => "preview",
        }
    }
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
    /// The address the request came from, as the door vouches for it: what the audit log
    /// records. `None` for work no request asked for (a plugin's, a scheduled job's).
    pub client_address: Option<IpAddr>,
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
            _ => Err(self.refusal()),
        }
    }

    /// How an operation refuses this actor: a preview token proves nothing outside its one
    /// read, an anonymous reader nothing outside published reads (401, CONTRACT.md section
    /// 15); anyone else is refused access (403).
    pub(crate) fn refusal(&self) -> Error {
        match &self.credential {
            Credential::Preview(_) | Credential::Public { .. } => Error::Unauthorized,
            Credential::Session(s) if s.two_factor_enrolment_required => {
                Error::NotPermitted(ENROL_FIRST.into())
            }
            _ => Error::Forbidden,
        }
    }

    /// Refuses a person acting on an organization that requires two-factor sign-in (`requires`)
    /// without having turned it on. API keys are machine credentials and pass; so does a
    /// plugin's own work.
    pub(crate) fn check_two_factor_requirement(&self, requires: bool) -> Result<()> {
        match &self.credential {
            Credential::Session(s) if requires && !s.two_factor_enabled => {
                Err(Error::NotPermitted(ENROL_FIRST.into()))
            }
            _ => Ok(()),
        }
    }

    /// The actor reading `document_id` for a preview token: the token's creator with their
    /// current grant in the document's organization. `Ok(None)` for every other credential
    /// (they read as themselves); 401 when the token is for another document. Only the read
    /// of one document asks for it, so the creator's grant serves that read and nothing else.
    pub fn preview_reader(&self, document_id: &str) -> Result<Option<Actor>> {
        let Credential::Preview(preview) = &self.credential else {
            return Ok(None);
        };
        if preview.document_id != document_id {
            return Err(Error::Unauthorized);
        }
        Ok(Some(Actor {
            user: self.user.clone(),
            organization_id: Some(preview.organization_id.clone()),
            grant: preview.creator_grant.clone(),
            credential: self.credential.clone(),
            client_address: self.client_address,
        }))
    }

    /// Whether this actor is a preview token's for `document_id`: the door's check, which
    /// [`Actor::preview_reader`] makes again, with the maker's grant, in the read itself.
    pub fn previews(&self, document_id: &str) -> bool {
        matches!(&self.credential, Credential::Preview(p) if p.document_id == document_id)
    }

    /// Whether this actor is a preview token's.
    pub fn is_preview(&self) -> bool {
        matches!(self.credential, Credential::Preview(_))
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
            Some(org) if self.grant.role != EffectiveRole::None && !self.is_preview() => org,
            _ => return Err(self.refusal()),
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
            Credential::ApiKey { .. }
            | Credential::Plugin { .. }
            | Credential::Preview(_)
            | Credential::Public { .. } => None,
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
            Credential::Preview(_) | Credential::Public { .. } => Err(Error::Unauthorized),
            _ => Ok(()),
        }
    }

    /// Whom answers to this actor are for. Every kind of credential is named here, so a new
    /// kind must say how caches treat what it reads.
    pub fn audience(&self) -> Audience {
        match self.credential {
            Credential::Session(_) | Credential::ApiKey { .. } | Credential::Plugin { .. } => {
                Audience::Credentialed
            }
            Credential::Preview(_) => Audience::Preview,
            Credential::Public { .. } => Audience::Public,
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
    /// (403), a preview token or an anonymous reader (401, as without credentials) to.
    pub fn require_person(&self) -> Result<()> {
        match self.credential {
            Credential::Plugin { .. } => Err(Error::Forbidden),
            Credential::Preview(_) | Credential::Public { .. } => Err(Error::Unauthorized),
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
    /// The person signs in with a second factor (CONTRACT.md section 20).
    pub two_factor_enabled: bool,
    /// The active organization requires two-factor sign-in and the person has not turned it
    /// on: nothing in that organization is allowed until they do.
    pub two_factor_enrolment_required: bool,
}

/// What a refusal says to a member of an organization that requires two-factor sign-in who has
/// not turned it on.
pub(crate) const ENROL_FIRST: &str =
    "this organization requires two-factor sign-in: turn it on for your account first";

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
            // A record alone does not say: the standing is resolved with the session at each
            // request (`auth/credentials.rs`). A view made here is of a session just opened,
            // which no refusal reads.
            two_factor_enabled: false,
            two_factor_enrolment_required: false,
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

/// The name, e-mail and password of a new user, each checked, every problem reported at once.
pub(crate) fn validate_new_user(
    name: &Option<String>,
    email: &Option<String>,
    password: &Option<String>,
) -> Result<(String, Email, Password)> {
    let mut issues = Issues::new();
    let name = check_user_name(&mut issues, name.as_deref().unwrap_or_default());
    let email = match email.as_deref() {
        None | Some("") => {
            issues.add("email", "required", "email is required");
            None
        }
        Some(raw) => check_email(&mut issues, raw),
    };
    let password = match password.as_deref() {
        None | Some("") => {
            issues.add("password", "required", "password is required");
            None
        }
        Some(raw) => {
            let parsed = Password::parse(raw);
            if parsed.is_none() {
                issues.add("password", "length", "password must be 8 to 128 characters");
            }
            parsed
        }
    };
    match (name, email, password) {
        (Some(name), Some(email), Some(password)) if issues.is_empty() => {
            Ok((name, email, password))
        }
        _ => Err(Error::invalid(issues.into_vec())),
    }
}

pub(crate) fn email_taken() -> Error {
    Error::Unprocessable("an account with this e-mail already exists".into())
}
