//! Credential resolution: an API key, a bearer token, the session cookie or a preview token
//! turned into an [`Actor`] with its grant resolved (SPEC.md Authentication points 1 and 8,
//! CONTRACT.md section 15), sliding the session's lifetime on the way; and a request without
//! any of them that names an organization, turned into that organization's `public` reader
//! (CONTRACT.md section 15).

use std::net::IpAddr;

use cms_core::access::{self, EffectiveRole, Membership};
use cms_core::{BuiltInRole, CapabilitySet, Grant, InstanceRole, KeyPermission, KeyScope};
use cms_store::users::UserRecord;

use super::AuthService;
use crate::actor::{Actor, Credential, PUBLIC_USER_PREFIX, PreviewCredential, SessionView, User};
use crate::error::{Error, Result};
use crate::secret::Purpose;

const DAY_MS: i64 = 86_400_000;

/// The longest organization slug looked up: longer ones name no organization.
const MAX_SLUG_BYTES: usize = 64;

/// The credentials a request carried. The API key wins when present (SPEC.md point 1); a
/// preview token counts only when nothing else proves who is asking, and the organization
/// named only when nothing at all was sent (CONTRACT.md section 15).
#[derive(Debug, Default)]
pub struct Credentials {
    pub api_key: Option<String>,
    pub bearer: Option<String>,
    pub cookie: Option<String>,
    /// The organization a request without credentials names (`x-cms-organization`, or the
    /// `organization` query parameter), by slug: it then reads as that organization's
    /// `public` role. Ignored beside any credential.
    pub organization: Option<String>,
    /// The client's address as the door vouches for it: what anonymous reads are counted by.
    pub client_address: Option<IpAddr>,
    /// A preview link's token (`x-cms-preview` or the `preview` query parameter).
    pub preview: Option<String>,
}

/// The actor behind a request, and whether its session was extended (the door then sends the
/// cookie again with a fresh lifetime).
#[derive(Debug)]
pub struct Resolved {
    pub actor: Actor,
    pub session_extended: bool,
}

impl AuthService<'_> {
    /// The actor behind a request's credentials, or `None` when they prove nothing. An API key,
    /// when present, decides alone: a bad key does not fall back to the cookie.
    pub async fn authenticate(&self, credentials: &Credentials) -> Result<Option<Resolved>> {
        let mut resolved = self.resolve(credentials).await?;
        if let Some(resolved) = &mut resolved {
            resolved.actor.client_address = credentials.client_address;
        }
        Ok(resolved)
    }

    async fn resolve(&self, credentials: &Credentials) -> Result<Option<Resolved>> {
        if let Some(key) = &credentials.api_key {
            return Ok(self.actor_for_key(key).await?.map(|actor| Resolved {
                actor,
                session_extended: false,
            }));
        }
        let token = match (&credentials.bearer, &credentials.cookie) {
            (Some(bearer), _) => Some(bearer.as_str()),
            (None, Some(cookie)) => self.inner.secret.verify(Purpose::CookieSignature, cookie),
            (None, None) => None,
        };
        let session = match token {
            Some(token) => self.actor_for_session(token).await?,
            None => None,
        };
        if session.is_some() {
            return Ok(session);
        }
        let fresh = |actor: Option<Actor>| {
            actor.map(|actor| Resolved {
                actor,
                session_extended: false,
            })
        };
        // An API key may come as a bearer token too (CONTRACT.md section 21: MCP clients send
        // their credential so). Tried after the sessions, so a session token that happens to
        // start like a key is still a session token.
        if let Some(bearer) = &credentials.bearer
            && bearer.starts_with(cms_core::api_key::KEY_PREFIX)
        {
            return Ok(fresh(self.actor_for_key(bearer).await?));
        }
        // A bearer token decides alone, like a key; a cookie that proves no session (a stale
        // one the browser still sends) does not hide the preview token beside it, but it does
        // leave the request signed out rather than public.
        match (
            &credentials.preview,
            &credentials.cookie,
            &credentials.organization,
        ) {
            (Some(preview), _, _) if credentials.bearer.is_none() => {
                Ok(fresh(self.actor_for_preview(preview).await?))
            }
            (None, None, Some(slug)) if credentials.bearer.is_none() => Ok(fresh(
                self.actor_for_public(slug, credentials.client_address)
                    .await?,
            )),
            _ => Ok(None),
        }
    }

    /// One query: the token, its creator and the creator's current role in the document's
    /// organization. The actor names no organization and holds nothing: only the read of the
    /// token's document unlocks the creator's grant ([`Actor::preview_reader`]).
    async fn actor_for_preview(&self, token: &str) -> Result<Option<Actor>> {
        let hash = self.inner.secret.hash_hex(Purpose::PreviewToken, token);
        let now = self.inner.clock.now();
        let Some(found) = self
            .inner
            .store
            .read_instance_wide()
            .await?
            .preview_grant(&hash)
            .await?
        else {
            return Ok(None);
        };
        if found.expires_at <= now.millis() {
            return Ok(None);
        }
        // The creator as they would read it signed in, in the document's organization.
        let creator_grant = self.grant(&found.user, found.member_role, found.role_capabilities)?;
        Ok(Some(Actor {
            user: User::from_record(found.user)?,
            organization_id: None,
            grant: Grant {
                role: EffectiveRole::None,
                capabilities: CapabilitySet::empty(),
            },
            credential: Credential::Preview(PreviewCredential::new(
                found.token_id,
                found.document_id,
                found.organization_id,
                creator_grant,
            )),
            client_address: None,
        }))
    }

    /// One query on the hot path, as for a key: the organization by its slug and its `public`
    /// role's capabilities, after the read is counted against the client's limit. An unknown
    /// slug and a role without capabilities both leave the request anonymous (`None`), so the
    /// answer never tells whether an organization exists.
    async fn actor_for_public(
        &self,
        slug: &str,
        client_address: Option<IpAddr>,
    ) -> Result<Option<Actor>> {
        let now = self.inner.clock.now();
        self.inner.public_reads.hit(client_address, now.millis())?;
        if slug.is_empty()
            || slug.len() > MAX_SLUG_BYTES
            || !slug.bytes().all(|b| b.is_ascii_graphic())
        {
            return Ok(None);
        }
        let Some(found) = self
            .inner
            .store
            .read_instance_wide()
            .await?
            .public_grant(slug)
            .await?
        else {
            return Ok(None);
        };
        // Whatever the row says, `public` holds reads at most: a capability it may not hold
        // (written around the service) grants nothing.
        let capabilities: CapabilitySet = found
            .capabilities
            .map(|c| c.0)
            .unwrap_or_default()
            .iter()
            .filter_map(|c| self.inner.capabilities.parse(c))
            .filter(|c| BuiltInRole::Public.may_hold(c))
            .collect();
        if capabilities.is_empty() {
            return Ok(None);
        }
        Ok(Some(Actor {
            user: User {
                id: format!("{PUBLIC_USER_PREFIX}{}", found.organization_id),
                email: String::new(),
                name: BuiltInRole::Public.name().to_string(),
                email_verified: false,
                role: InstanceRole::Viewer,
                image: None,
                created_at: now,
                updated_at: now,
            },
            organization_id: Some(found.organization_id),
            grant: Grant {
                role: EffectiveRole::Member(BuiltInRole::Public.into()),
                capabilities,
            },
            credential: Credential::Public {
                organization_slug: slug.to_string(),
            },
            client_address,
        }))
    }

    /// One query on the hot path: the session, its user and the user's role.
    async fn actor_for_session(&self, token: &str) -> Result<Option<Resolved>> {
        let hash = self.inner.secret.hash_hex(Purpose::SessionToken, token);
        let now = self.inner.clock.now();
        let Some(found) = self
            .inner
            .store
            .read_instance_wide()
            .await?
            .session_grant(&hash)
            .await?
        else {
            return Ok(None);
        };
        let mut session = found.session;
        if session.expires_at <= now.millis() {
            return Ok(None);
        }
        let two_factor_enabled = found.two_factor_enabled_at.is_some();
        // An organization that requires a second factor grants nothing to a person without one
        // (CONTRACT.md section 20): every refusal then says to enrol first.
        let two_factor_enrolment_required =
            found.organization_requires_two_factor == Some(true) && !two_factor_enabled;
        let grant = if two_factor_enrolment_required {
            Grant {
                role: EffectiveRole::None,
                capabilities: CapabilitySet::empty(),
            }
        } else {
            self.grant(&found.user, found.member_role, found.role_capabilities)?
        };

        // Sliding lifetime, written at most once a day per session rather than on every request.
        let lifetime = self.inner.settings.session_lifetime_days * DAY_MS;
        let session_extended = session.expires_at - now.millis() < lifetime - DAY_MS;
        if session_extended {
            session.expires_at = now.millis() + lifetime;
            let mut tx = self.inner.store.write_instance_wide().await?;
            tx.extend_session(&session.session_id, session.expires_at, now.millis())
                .await?;
            tx.commit().await?;
        }
        let view = SessionView {
            id: session.session_id,
            user_id: found.user.id.clone(),
            active_organization_id: session.active_organization_id.clone(),
            expires_at: session.expires_at.into(),
            ip_address: session.ip_address,
            user_agent: session.user_agent,
            created_at: session.session_created_at.into(),
            updated_at: session.session_updated_at.into(),
            two_factor_enabled,
            two_factor_enrolment_required,
        };
        let actor = Actor {
            user: User::from_record(found.user)?,
            organization_id: session.active_organization_id,
            grant,
            credential: Credential::Session(view),
            client_address: None,
        };
        Ok(Some(Resolved {
            actor,
            session_extended,
        }))
    }

    /// One query on the hot path: the key, its creator and the creator's current role.
    async fn actor_for_key(&self, key: &str) -> Result<Option<Actor>> {
        let hash = self.inner.secret.hash_hex(Purpose::ApiKey, key);
        let now = self.inner.clock.now();
        let Some(found) = self
            .inner
            .store
            .read_instance_wide()
            .await?
            .key_grant(&hash)
            .await?
        else {
            return Ok(None);
        };
        if found.expires_at.is_some_and(|at| at <= now.millis()) {
            return Ok(None);
        }
        // The creator's role in the key's organization, never their instance role: a key acts
        // there with exactly its scope (CONTRACT.md section 13).
        let membership =
            self.membership(&found.user.id, found.member_role, found.role_capabilities)?;
        let creator_grant =
            access::member_grant(membership.as_ref(), self.inner.capabilities.every());
        let scope = self.key_scope(
            &found.permissions.0,
            found.capabilities.as_ref().map(|c| c.0.as_slice()),
        );
        let Some(grant) = access::key_grant(&scope, &creator_grant) else {
            return Ok(None);
        };
        Ok(Some(Actor {
            user: User::from_record(found.user)?,
            organization_id: Some(found.organization_id),
            grant,
            credential: Credential::ApiKey {
                key_id: found.key_id,
            },
            client_address: None,
        }))
    }

    /// What `user` may do, given their role (if any) in the organization at hand.
    fn grant(
        &self,
        user: &UserRecord,
        role: Option<String>,
        capabilities: Option<cms_store::Json<Vec<String>>>,
    ) -> Result<Grant> {
        let instance_role = InstanceRole::parse(&user.role).unwrap_or(InstanceRole::Viewer);
        let membership = self.membership(&user.id, role, capabilities)?;
        Ok(access::user_grant(
            instance_role,
            membership.as_ref(),
            self.inner.capabilities.every(),
        ))
    }

    /// A membership from a stored role name and that role's capabilities; `None` for no role.
    fn membership(
        &self,
        user_id: &str,
        role: Option<String>,
        capabilities: Option<cms_store::Json<Vec<String>>>,
    ) -> Result<Option<Membership>> {
        let Some(role) = role else { return Ok(None) };
        let role = role
            .parse()
            .map_err(|_| Error::Internal(format!("member {user_id} has an invalid role name")))?;
        let capabilities = capabilities.map(|c| c.0).unwrap_or_default();
        let capabilities = capabilities
            .iter()
            .filter_map(|c| self.inner.capabilities.parse(c))
            .collect();
        Ok(Some(Membership { role, capabilities }))
    }

    /// The scope a stored key was created with. Capabilities no longer declared (a plugin was
    /// removed) are dropped rather than failing the key.
    pub(crate) fn key_scope(
        &self,
        permissions: &[String],
        capabilities: Option<&[String]>,
    ) -> KeyScope {
        let permissions: Vec<KeyPermission> = permissions
            .iter()
            .filter_map(|p| KeyPermission::parse(p))
            .collect();
        match capabilities {
            Some(caps) => KeyScope::Capabilities {
                permissions,
                capabilities: caps
                    .iter()
                    .filter_map(|c| self.inner.capabilities.parse(c))
                    .collect(),
            },
            None => KeyScope::Permissions(permissions),
        }
    }
}
