//! Authentication: sign-up, sign-in, sign-out, sessions, and turning credentials into an
//! [`Actor`] (SPEC.md Authentication points 1 to 8, CONTRACT.md section 3).

pub(crate) mod password;
pub mod secret;
pub(crate) mod tokens;

pub(crate) use self::tokens::verification_mail;

use cms_core::Issues;
use cms_core::access::{self, Membership};
use cms_core::{
    Email, FirstAdmin, Grant, InstanceRole, KeyPermission, KeyScope, Password, Timestamp, new_id,
};
use cms_store::sessions::SessionRecord;
use cms_store::users::UserRecord;
use cms_store::{StoreError, Tx};
use serde::Serialize;

use self::secret::{Purpose, random_token};
use crate::actor::{Actor, Credential};
use crate::error::{Error, Result};
use crate::instance_settings::SignUpPolicy;
use crate::rate_limit::{Limited, RateLimitService};
use crate::{Inner, organizations};

/// The instance flag that records who claimed the first administrator account.
const FIRST_ADMIN_FLAG: &str = "firstAdmin";
/// The instance value holding the hash of the current first-admin claim code.
const CLAIM_CODE_KEY: &str = "claimCodeHash";
const DAY_MS: i64 = 86_400_000;

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

/// A sign-up request as received; the service validates every field.
#[derive(Debug, Default)]
pub struct SignUp {
    pub name: Option<String>,
    pub email: Option<String>,
    pub password: Option<String>,
    pub client: ClientInfo,
    /// The first-admin claim code, when the request carried one.
    pub claim_code: ClaimCode,
    /// The secret of an invitation's accept link: the one way a sign-up joins an
    /// organization (CONTRACT.md section 13).
    pub invitation_token: Option<String>,
}

/// How a sign-up presented the first-admin claim code. The door reads it from the header
/// `x-cms-bootstrap-code`, else the cookie `cms_bootstrap_code`; a code in the URL leaks into
/// logs and histories, so it is refused even when right.
#[derive(Default)]
pub enum ClaimCode {
    #[default]
    Absent,
    Presented(String),
    InUrl,
}

impl std::fmt::Debug for ClaimCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClaimCode::Absent => "Absent",
            ClaimCode::Presented(_) => "Presented(..)",
            ClaimCode::InUrl => "InUrl",
        })
    }
}

/// A user created by the operator (`cms user create`).
pub struct NewUser {
    pub name: Option<String>,
    pub email: Option<String>,
    pub password: Option<String>,
    /// `None`: only as the instance's first administrator. `Some(role)`: a further user with
    /// that instance role when the instance already has its administrator.
    pub additional: Option<InstanceRole>,
}

/// Which door creates an account.
#[derive(Clone, Copy)]
enum Door<'a> {
    /// The claim code and the invitation secret the sign-up carried.
    SignUp(&'a ClaimCode, Option<&'a str>),
    Operator(Option<InstanceRole>),
}

impl<'a> Door<'a> {
    fn sign_up(input: &'a SignUp) -> Self {
        Door::SignUp(&input.claim_code, input.invitation_token.as_deref())
    }
}

/// A validated new account, its password already hashed.
struct Account {
    name: String,
    email: Email,
    password_hash: String,
    email_verified: bool,
}

struct Created {
    user: UserRecord,
    first: bool,
    active_org: Option<String>,
}

/// A sign-in request as received.
#[derive(Debug, Default)]
pub struct SignIn {
    pub email: Option<String>,
    pub password: Option<String>,
    pub client: ClientInfo,
}

/// What the door knows about the client, recorded on the session.
#[derive(Debug, Default, Clone)]
pub struct ClientInfo {
    pub ip_address: Option<String>,
    pub user_agent: Option<String>,
}

/// A new session: the token for `Authorization: Bearer`, the signed value for the cookie.
#[derive(Debug)]
pub struct Authenticated {
    pub token: String,
    pub cookie_value: String,
    pub user: User,
    pub session: SessionView,
}

/// The outcome of a sign-up.
#[derive(Debug)]
pub enum SignedUp {
    /// Signed in at once: the new session.
    SignedIn(Authenticated),
    /// The address must be verified first (`auth.requireEmailVerification`): a link was sent,
    /// and no session exists until it is followed and the person signs in.
    VerificationRequired(User),
}

impl SignedUp {
    /// The new session, when the sign-up opened one.
    pub fn signed_in(self) -> Option<Authenticated> {
        match self {
            SignedUp::SignedIn(auth) => Some(auth),
            SignedUp::VerificationRequired(_) => None,
        }
    }
}

/// The credentials a request carried. The API key wins when present (SPEC.md point 1).
#[derive(Debug, Default)]
pub struct Credentials {
    pub api_key: Option<String>,
    pub bearer: Option<String>,
    pub cookie: Option<String>,
}

/// The actor behind a request, and whether its session was extended (the door then sends the
/// cookie again with a fresh lifetime).
#[derive(Debug)]
pub struct Resolved {
    pub actor: Actor,
    pub session_extended: bool,
}

pub struct AuthService<'a> {
    inner: &'a Inner,
}

impl<'a> AuthService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        AuthService { inner }
    }

    /// Sign-up, checked in the order of CONTRACT.md section 12 after the rate limit (429): body
    /// (400), policy (403), existing e-mail (422). While the instance has no first administrator
    /// the first-admin policy decides who may claim it; that account becomes instance
    /// `super_admin` and owner of the organization "Default". A later sign-up that carries an
    /// invitation's secret for its address joins that organization with the invited role (it
    /// becomes active, and the address counts as verified); while sign-up is invite-only an
    /// address without an open invitation is refused. When e-mail verification is required
    /// and the address is not verified, a link is sent and no session is opened.
    pub async fn sign_up(&self, input: SignUp) -> Result<SignedUp> {
        RateLimitService::new(self.inner)
            .hit(
                Limited::SignUp,
                input.client.ip_address.as_deref(),
                input.email.as_deref(),
            )
            .await?;
        let (name, email, password) =
            validate_new_user(&input.name, &input.email, &input.password)?;
        let now = self.inner.clock.now();
        let policy = {
            let mut tx = self.inner.store.read_instance_wide().await?;
            let policy = self.inner.sign_up_policy(&mut *tx).await?;
            if tx.instance_flag(FIRST_ADMIN_FLAG).await?.is_some() {
                if policy.invite_only
                    && !organizations::has_open_invitation(&mut *tx, email.as_str(), now).await?
                {
                    return Err(sign_up_closed());
                }
            } else {
                self.first_admin_gate(&mut *tx, &policy, &email, &input.claim_code)
                    .await?;
            }
            if tx.user_by_email(email.as_str()).await?.is_some() {
                return Err(email_taken());
            }
            policy
        };
        // Hash before taking the writer: the slow part must not hold the database.
        let password_hash = password::hash(password.expose().to_string()).await?;
        let mut tx = self.inner.store.write_instance_wide().await?;
        let account = Account {
            name,
            email,
            password_hash,
            email_verified: false,
        };
        let created = self
            .create_account(&mut *tx, account, Door::sign_up(&input), now)
            .await?;
        if policy.require_email_verification && !created.user.email_verified {
            let mail = verification_mail(
                self.inner,
                &mut *tx,
                &created.user.id,
                &created.user.email,
                now,
            )
            .await?;
            tx.commit().await?;
            log_first_admin(created.first, &created.user);
            // A failure is logged; signing in sends a new link.
            let _ = self.inner.send_mail(&mail).await;
            return Ok(SignedUp::VerificationRequired(User::from_record(
                created.user,
            )?));
        }
        let session = self
            .open_session(
                &mut *tx,
                &created.user.id,
                created.active_org,
                &input.client,
                now,
            )
            .await?;
        tx.commit().await?;
        log_first_admin(created.first, &created.user);
        Ok(SignedUp::SignedIn(
            self.authenticated(session, created.user)?,
        ))
    }

    /// Creates a user out of band (`cms user create`): the operator vouches for the person, so
    /// no sign-up policy applies and the address counts as verified. On an instance without a
    /// first administrator the user becomes it exactly as the first sign-up would; otherwise
    /// this is refused unless `additional` names the instance role of a further user.
    pub async fn create_user(&self, input: NewUser) -> Result<User> {
        let (name, email, password) =
            validate_new_user(&input.name, &input.email, &input.password)?;
        {
            let mut tx = self.inner.store.read().await?;
            if tx.instance_flag(FIRST_ADMIN_FLAG).await?.is_some() && input.additional.is_none() {
                return Err(already_provisioned());
            }
            if tx.user_by_email(email.as_str()).await?.is_some() {
                return Err(email_taken());
            }
        }
        let password_hash = password::hash(password.expose().to_string()).await?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let account = Account {
            name,
            email,
            password_hash,
            email_verified: true,
        };
        let created = self
            .create_account(&mut *tx, account, Door::Operator(input.additional), now)
            .await?;
        tx.commit().await?;
        User::from_record(created.user)
    }

    /// Under the `claimCode` policy, while the instance has no first administrator: a fresh
    /// claim code, whose hash replaces any earlier one (so only the newest printed code
    /// works). The caller prints it, once. `None` under any other policy or once claimed.
    pub async fn issue_claim_code(&self) -> Result<Option<String>> {
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let claimed = tx.instance_flag(FIRST_ADMIN_FLAG).await?.is_some();
        let policy = self.inner.sign_up_policy(&mut *tx).await?;
        if claimed || policy.first_admin != FirstAdmin::ClaimCode {
            return Ok(None);
        }
        let code = random_token(15);
        let hash = self.inner.secret.hash_hex(Purpose::ClaimCode, &code);
        tx.put_instance_value(CLAIM_CODE_KEY, &hash, now.millis())
            .await?;
        tx.commit().await?;
        Ok(Some(code))
    }

    /// The one path that makes a user, for sign-up and the operator alike. The first-admin
    /// flag decides, atomically, whether this is the instance's first administrator; that
    /// closes the claim window (the claim code is deleted) whichever door was used.
    async fn create_account(
        &self,
        tx: &mut dyn Tx,
        account: Account,
        door: Door<'_>,
        now: Timestamp,
    ) -> Result<Created> {
        let user_id = new_id();
        let first = tx
            .claim_instance_flag(FIRST_ADMIN_FLAG, &user_id, now.millis())
            .await?;
        let role = match door {
            _ if first => InstanceRole::SuperAdmin,
            Door::SignUp(..) => InstanceRole::Editor,
            Door::Operator(Some(role)) => role,
            Door::Operator(None) => return Err(already_provisioned()),
        };
        if let Door::SignUp(claim_code, _) = door {
            let policy = self.inner.sign_up_policy(tx).await?;
            if first {
                // Checked again inside the claim: a restart may have replaced the code since.
                self.first_admin_gate(tx, &policy, &account.email, claim_code)
                    .await?;
            } else if policy.invite_only
                && !organizations::has_open_invitation(tx, account.email.as_str(), now).await?
            {
                // Another sign-up claimed the instance, or the invitation was cancelled, between
                // the check before hashing and this write.
                return Err(sign_up_closed());
            }
        }
        if first {
            tx.delete_instance_value(CLAIM_CODE_KEY).await?;
        }
        let record = UserRecord {
            id: user_id.clone(),
            email: account.email.as_str().to_string(),
            name: account.name,
            password_hash: Some(account.password_hash),
            email_verified: account.email_verified,
            role: role.as_str().into(),
            image: None,
            created_at: now.millis(),
            updated_at: now.millis(),
        };
        match tx.insert_user(&record).await {
            Err(StoreError::Unique(_)) => return Err(email_taken()),
            other => other?,
        }
        let active_org = if first {
            let every = self.inner.capabilities.every();
            let org =
                organizations::create_with_owner(tx, "Default", "default", &user_id, every, now)
                    .await?;
            Some(org.id)
        } else if let Door::SignUp(_, token) = door {
            let (email, inner) = (account.email.as_str(), self.inner);
            organizations::join_by_token(inner, tx, &user_id, email, token, now).await?
        } else {
            None
        };
        // Joining an invitation proved the mailbox (the join marked the stored row already).
        let record = UserRecord {
            email_verified: record.email_verified || (active_org.is_some() && !first),
            ..record
        };
        Ok(Created {
            user: record,
            first,
            active_org,
        })
    }

    /// Whether a sign-up may claim an instance that has no first administrator yet (SPEC.md
    /// Authentication point 12). Refusals are business-rule 403s.
    async fn first_admin_gate(
        &self,
        tx: &mut dyn Tx,
        policy: &SignUpPolicy,
        email: &Email,
        claim_code: &ClaimCode,
    ) -> Result<()> {
        match policy.first_admin {
            FirstAdmin::Open => Ok(()),
            FirstAdmin::Allowlist if policy.first_admin_emails.contains(email) => Ok(()),
            FirstAdmin::Allowlist => Err(Error::NotPermitted(
                "this instance has no administrator yet, and this address may not become it"
                    .into(),
            )),
            FirstAdmin::None => Err(Error::NotPermitted(
                "this instance has no administrator yet: the operator creates the first one (cms user create)"
                    .into(),
            )),
            FirstAdmin::ClaimCode => match claim_code {
                ClaimCode::InUrl => Err(Error::NotPermitted(
                    "a claim code is never accepted in the URL: send it in the x-cms-bootstrap-code header"
                        .into(),
                )),
                ClaimCode::Absent => Err(Error::NotPermitted(
                    "this instance has no administrator yet: the first sign-up needs the claim code from the server log (header x-cms-bootstrap-code)"
                        .into(),
                )),
                ClaimCode::Presented(code) => {
                    let stored = tx.instance_flag(CLAIM_CODE_KEY).await?;
                    let valid = stored.is_some_and(|hash| {
                        self.inner
                            .secret
                            .matches_hash_hex(Purpose::ClaimCode, code, &hash)
                    });
                    if valid {
                        Ok(())
                    } else {
                        Err(Error::NotPermitted("the claim code is not valid".into()))
                    }
                }
            },
        }
    }

    /// Sign-in with e-mail and password. The session's active organization is the user's
    /// oldest membership.
    pub async fn sign_in(&self, input: SignIn) -> Result<Authenticated> {
        RateLimitService::new(self.inner)
            .hit(
                Limited::SignIn,
                input.client.ip_address.as_deref(),
                input.email.as_deref(),
            )
            .await?;
        let mut issues = Issues::new();
        let email = input.email.as_deref().unwrap_or_default();
        let password = input.password.clone().unwrap_or_default();
        if email.trim().is_empty() {
            issues.add("email", "required", "email is required");
        }
        if password.is_empty() {
            issues.add("password", "required", "password is required");
        }
        issues.finish(()).map_err(Error::invalid)?;

        let user = match Email::parse(email) {
            Some(e) => {
                self.inner
                    .store
                    .read()
                    .await?
                    .user_by_email(e.as_str())
                    .await?
            }
            None => None,
        };
        let stored_hash = user.as_ref().and_then(|u| u.password_hash.clone());
        if !password::verify(password, stored_hash).await? {
            return Err(Error::InvalidCredentials);
        }
        let user = user.ok_or(Error::InvalidCredentials)?;
        let now = self.inner.clock.now();
        // Only after the password proved who is asking, so this reveals nothing to others.
        let policy = {
            let mut tx = self.inner.store.read().await?;
            self.inner.sign_up_policy(&mut *tx).await?
        };
        if policy.require_email_verification && !user.email_verified {
            self.resend_verification(&user, now).await?;
            return Err(Error::NotPermitted(
                "verify your e-mail address first: a new link is on its way".into(),
            ));
        }
        let mut tx = self.inner.store.write_instance_wide().await?;
        let active_org = tx
            .memberships_of(&user.id)
            .await?
            .into_iter()
            .next()
            .map(|m| m.organization_id);
        let session = self
            .open_session(&mut *tx, &user.id, active_org, &input.client, now)
            .await?;
        tx.commit().await?;
        self.authenticated(session, user)
    }

    /// A fresh verification link for an unverified user who tried to sign in.
    async fn resend_verification(&self, user: &UserRecord, now: Timestamp) -> Result<()> {
        let mut tx = self.inner.store.write_instance_wide().await?;
        let mail = verification_mail(self.inner, &mut *tx, &user.id, &user.email, now).await?;
        tx.commit().await?;
        let _ = self.inner.send_mail(&mail).await;
        Ok(())
    }

    /// Deletes the caller's own account after checking their password (CONTRACT.md section 3):
    /// refused while they are the last owner of an organization; `user.deleted` is appended
    /// once per organization they belonged to, in the deleting transaction. Their sessions,
    /// memberships and API keys go with them. A session is required: a key cannot delete the
    /// person who made it.
    pub async fn delete_account(&self, actor: &Actor, password: Option<&str>) -> Result<()> {
        if !matches!(actor.credential, Credential::Session(_)) {
            return Err(Error::NotPermitted(
                "deleting an account needs a signed-in session".into(),
            ));
        }
        let Some(password) = password.filter(|p| !p.is_empty()) else {
            return Err(Error::invalid(vec![cms_core::Issue::new(
                "password",
                "required",
                "password is required",
            )]));
        };
        let stored = {
            let mut tx = self.inner.store.read().await?;
            tx.user_by_id(&actor.user.id).await?
        };
        let stored_hash = stored.and_then(|u| u.password_hash);
        if !password::verify(password.to_string(), stored_hash).await? {
            return Err(Error::InvalidCredentials);
        }
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let Some(user) = tx.user_by_id(&actor.user.id).await? else {
            return Err(Error::Unauthorized);
        };
        let memberships = tx.memberships_of(&user.id).await?;
        let owner = cms_core::BuiltInRole::Owner.name();
        for m in memberships.iter().filter(|m| m.role == owner) {
            // Under the organization's lock, like member demotion and removal, so two owners
            // leaving at once cannot leave it without one.
            tx.lock_organization(&m.organization_id).await?;
            if tx
                .count_members_with_role(&m.organization_id, owner)
                .await?
                <= 1
            {
                return Err(Error::Conflict(format!(
                    "you are the last owner of organization {}: make someone else owner first",
                    m.organization_id
                )));
            }
        }
        let payload = serde_json::json!({
            "userId": user.id,
            "email": user.email,
            "image": user.image,
        });
        for m in &memberships {
            let event = crate::events::event_record(
                Some(&m.organization_id),
                crate::events::USER_DELETED,
                payload.clone(),
                now,
            );
            tx.append_event(&event).await?;
        }
        tx.delete_user(&user.id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Revokes the session behind a session actor at once. A key actor has no session: nothing
    /// to revoke.
    pub async fn sign_out(&self, actor: &Actor) -> Result<()> {
        if let Credential::Session(session) = &actor.credential {
            let mut tx = self.inner.store.write_instance_wide().await?;
            tx.delete_session(&session.id).await?;
            tx.commit().await?;
        }
        Ok(())
    }

    /// The actor behind a request's credentials, or `None` when they prove nothing. An API key,
    /// when present, decides alone: a bad key does not fall back to the cookie.
    pub async fn authenticate(&self, credentials: &Credentials) -> Result<Option<Resolved>> {
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
        match token {
            Some(token) => self.actor_for_session(token).await,
            None => Ok(None),
        }
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
        let grant = self.grant(&found.user, found.member_role, found.role_capabilities)?;

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
        };
        let actor = Actor {
            user: User::from_record(found.user)?,
            organization_id: session.active_organization_id,
            grant,
            credential: Credential::Session(view),
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

    async fn open_session(
        &self,
        tx: &mut dyn Tx,
        user_id: &str,
        active_organization_id: Option<String>,
        client: &ClientInfo,
        now: Timestamp,
    ) -> Result<(SessionRecord, String)> {
        let token = random_token(32);
        let record = SessionRecord {
            id: new_id(),
            token_hash: self.inner.secret.hash_hex(Purpose::SessionToken, &token),
            user_id: user_id.to_string(),
            active_organization_id,
            expires_at: now
                .plus_days(self.inner.settings.session_lifetime_days)
                .millis(),
            ip_address: client.ip_address.clone(),
            user_agent: client
                .user_agent
                .as_ref()
                .map(|ua| ua.chars().take(512).collect()),
            created_at: now.millis(),
            updated_at: now.millis(),
        };
        tx.insert_session(&record).await?;
        Ok((record, token))
    }

    fn authenticated(
        &self,
        (session, token): (SessionRecord, String),
        user: UserRecord,
    ) -> Result<Authenticated> {
        Ok(Authenticated {
            cookie_value: self.inner.secret.sign(Purpose::CookieSignature, &token),
            token,
            session: SessionView::from(&session),
            user: User::from_record(user)?,
        })
    }
}

fn log_first_admin(first: bool, user: &UserRecord) {
    if first {
        tracing::info!(user = %user.email, "first user signed up: instance super_admin and owner of Default");
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

/// A required e-mail address, or a 400 naming what is wrong with it.
pub(crate) fn required_email(raw: Option<&str>) -> Result<Email> {
    let mut issues = Issues::new();
    check_email(&mut issues, organizations::required(raw, "email")?)
        .ok_or_else(|| Error::invalid(issues.into_vec()))
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
fn validate_new_user(
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

fn sign_up_closed() -> Error {
    Error::NotPermitted("sign-up is by invitation only".into())
}

fn already_provisioned() -> Error {
    Error::Conflict(
        "the instance already has its first administrator: pass --additional to add another user"
            .into(),
    )
}

pub(crate) fn email_taken() -> Error {
    Error::Unprocessable("an account with this e-mail already exists".into())
}
