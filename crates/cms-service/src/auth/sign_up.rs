//! Sign-up and the operator's user creation (SPEC.md Authentication points 11 and 12): the
//! first-admin policies, the invite-only rule, and the one path that makes a user.

use cms_core::{Email, FirstAdmin, InstanceRole, Timestamp, new_id};
use cms_store::users::UserRecord;
use cms_store::{StoreError, Tx};

use super::session::{Authenticated, ClientInfo};
use super::{AuthService, verification_mail};
use crate::actor::{User, email_taken, validate_new_user};
use crate::error::{Error, Result};
use crate::instance_settings::SignUpPolicy;
use crate::organizations;
use crate::password;
use crate::rate_limit::{Limited, RateLimitService};
use crate::secret::{Purpose, random_token};

/// The instance flag that records who claimed the first administrator account.
const FIRST_ADMIN_FLAG: &str = "firstAdmin";
/// Whether the instance's first administrator exists (the claim window is closed).
pub(crate) async fn first_admin_exists(tx: &mut dyn Tx) -> Result<bool> {
    Ok(tx.instance_flag(FIRST_ADMIN_FLAG).await?.is_some())
}

/// Closes the claim window without a sign-up: the instance got its people another way (an
/// import of some organizations). `by` says how, where a sign-up records its user's id.
pub(crate) async fn claim_first_admin(tx: &mut dyn Tx, by: &str, now: i64) -> Result<()> {
    tx.claim_instance_flag(FIRST_ADMIN_FLAG, by, now).await?;
    Ok(())
}

/// The instance value holding the hash of the current first-admin claim code.
const CLAIM_CODE_KEY: &str = "claimCodeHash";

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

impl AuthService<'_> {
    /// Whether the instance has no user yet, so its first page asks for the first account
    /// instead of a sign-in. Public, and nothing but this one bit: never a count.
    pub async fn setup_required(&self) -> Result<bool> {
        let mut tx = self.inner.store.read_instance_wide().await?;
        Ok(tx.count_users().await? == 0)
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
            let org = organizations::create_with_owner(
                tx,
                "Default",
                crate::DEFAULT_ORGANIZATION_SLUG,
                &user_id,
                every,
                now,
            )
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
}

fn log_first_admin(first: bool, user: &UserRecord) {
    if first {
        tracing::info!(user = %user.email, "first user signed up: instance super_admin and owner of Default");
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
