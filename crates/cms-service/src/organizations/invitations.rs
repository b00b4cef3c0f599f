//! Invitations (CONTRACT.md section 4): an address asked to join the active organization with
//! a role, by e-mail, for seven days. States: `pending`, `accepted`, `cancelled`, `expired` (a
//! pending invitation past its expiry reads as expired).
//!
//! An address has at most one pending invitation per organization: inviting it again while
//! one is live is a 409; an expired one is retired and replaced.
//!
//! Invitations are proven by their mailbox (CONTRACT.md section 13): each carries a random
//! secret that only the inviter's 201 answer and the e-mail hold (the row keeps its HMAC under
//! the auth secret). Joining needs that secret, or an address already verified: otherwise
//! whoever signs up first with an invited address would take the invited role.

use cms_core::{CoreCapability, Timestamp, new_id};
use cms_store::Tx;
use cms_store::invitations::InvitationRecord;
use serde::Serialize;

use super::ceiling::{assignable_capabilities, ensure_may_assign};
use super::members::role_name;
use super::{Organization, required, session_of};
use crate::Inner;
use crate::actor::Actor;
use crate::audit::{self, AuditAction, AuditTarget};
use crate::error::{Error, Result};
use crate::mail::{MailKind, MailMessage};
use crate::secret::{Purpose, random_token};

/// How long an invitation can be accepted.
const INVITATION_DAYS: i64 = 7;

const PENDING: &str = "pending";
const ACCEPTED: &str = "accepted";
const CANCELLED: &str = "cancelled";
const EXPIRED: &str = "expired";

/// An invitation as every door shows it (exactly the fields of CONTRACT.md section 4).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Invitation {
    pub id: String,
    pub email: String,
    pub role: String,
    /// `pending`, `accepted`, `cancelled` or `expired`.
    #[schema(pattern = "^(pending|accepted|cancelled|expired)$")]
    pub status: String,
    pub expires_at: Timestamp,
}

impl Invitation {
    fn from_record(r: InvitationRecord, now: Timestamp) -> Invitation {
        Invitation {
            status: status_at(&r, now).to_string(),
            id: r.id,
            email: r.email,
            role: r.role,
            expires_at: r.expires_at.into(),
        }
    }
}

/// An invitation just sent: the invitation and the link that accepts it, which carries the
/// secret. This answer and the e-mail are the only places the secret ever appears.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvitationSent {
    #[serde(flatten)]
    pub invitation: Invitation,
    /// `{publicUrl or the request's origin}/admin/accept-invitation?token=<secret>`.
    pub accept_url: String,
}

/// What the holder of an invitation's secret learns before accepting it (the admin's accept
/// page shows it): enough to decide, nothing about anyone else.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvitationPreview {
    pub id: String,
    pub organization_id: String,
    pub organization_name: String,
    /// The invited address: sign up or sign in with it.
    pub email: String,
    pub role: String,
    /// The name of the member who invited, so the page can say who asks; `null` when that
    /// account is gone.
    pub inviter_name: Option<String>,
    pub expires_at: Timestamp,
}

/// The random bytes of an invitation secret: 256 bits, base64url (43 characters).
const SECRET_BYTES: usize = 32;

/// The keyed hash an invitation secret is stored and looked up as.
fn token_hash(inner: &Inner, token: &str) -> String {
    inner.secret.hash_hex(Purpose::InvitationToken, token)
}

/// Whether `token` is the secret of `r`, compared in constant time. Invitations made before
/// secrets existed have none and match no token.
fn holds_secret(inner: &Inner, r: &InvitationRecord, token: Option<&str>) -> bool {
    match (token.filter(|t| !t.is_empty()), &r.token_hash) {
        (Some(token), Some(stored)) => {
            inner
                .secret
                .matches_hash_hex(Purpose::InvitationToken, token, stored)
        }
        _ => false,
    }
}

/// The state an invitation is in at `now`.
fn status_at(r: &InvitationRecord, now: Timestamp) -> &str {
    if r.status == PENDING && r.expires_at <= now.millis() {
        EXPIRED
    } else {
        &r.status
    }
}

pub struct InvitationService<'a> {
    inner: &'a Inner,
}

impl<'a> InvitationService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        InvitationService { inner }
    }

    /// The invitations of the active organization that were neither accepted nor cancelled,
    /// newest first; those past their expiry show as `expired`. Needs `member.invite`: the
    /// addresses are for the people who manage invitations.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<Invitation>> {
        let org = actor.require(CoreCapability::MemberInvite)?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.read_instance_wide().await?;
        let records = tx.pending_invitations(org).await?;
        Ok(records
            .into_iter()
            .map(|r| Invitation::from_record(r, now))
            .collect())
    }

    /// Invites an address to the active organization with a role (`member.invite`, under the
    /// role ceiling: only an owner invites an owner, and the role's capabilities must all be
    /// the caller's) and e-mails it the accept link. `link_base` is the origin the link starts
    /// with when the door knows better than the configured address (`server.publicUrl` unset:
    /// the request's own origin). When the e-mail cannot be sent the invitation is withdrawn
    /// and the answer is 503: nobody is left with an invitation they never received.
    pub async fn create(
        &self,
        actor: &Actor,
        email: Option<&str>,
        role: Option<&str>,
        link_base: Option<&str>,
    ) -> Result<InvitationSent> {
        actor.require_person()?;
        let org_id = actor.require(CoreCapability::MemberInvite)?.to_string();
        let email = super::required_email(email)?;
        let role = role_name(role)?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let capabilities = assignable_capabilities(self.inner, &mut *tx, &org_id, &role).await?;
        ensure_may_assign(&actor.grant, &role, &capabilities)?;
        if let Some(user) = tx.user_by_email(email.as_str()).await?
            && tx.member(&org_id, &user.id).await?.is_some()
        {
            return Err(Error::Conflict(
                "this address belongs to a member already".into(),
            ));
        }
        if let Some(existing) = tx.pending_invitation(&org_id, email.as_str()).await? {
            if existing.expires_at > now.millis() {
                return Err(Error::Conflict(
                    "this address has a pending invitation already: cancel it to send another"
                        .into(),
                ));
            }
            tx.finish_invitation(&existing.id, EXPIRED, now.millis())
                .await?;
        }
        let token = random_token(SECRET_BYTES);
        let record = InvitationRecord {
            id: new_id(),
            organization_id: org_id.clone(),
            email: email.as_str().to_string(),
            role: role.as_str().to_string(),
            status: PENDING.into(),
            invited_by: Some(actor.user.id.clone()),
            token_hash: Some(token_hash(self.inner, &token)),
            expires_at: now.plus_days(INVITATION_DAYS).millis(),
            created_at: now.millis(),
            updated_at: now.millis(),
        };
        tx.insert_invitation(&record).await?;
        tx.append_audit(&[audit::entry(
            actor,
            Some(&org_id),
            AuditAction::InvitationCreated,
            Some(AuditTarget::new("invitation", &record.id)),
            format!("{} as {}", record.email, record.role),
            now.millis(),
        )])
        .await?;
        let org_name = tx
            .organization_by_id(&org_id)
            .await?
            .map(|o| o.name)
            .unwrap_or_default();
        tx.commit().await?;

        let base = link_base.unwrap_or(&self.inner.settings.public_url);
        let accept_url = format!(
            "{}/admin/accept-invitation?token={token}",
            base.trim_end_matches('/')
        );
        // Sent after the commit, so the writer is never held while a mail server answers.
        let message = message(&record, &org_name, &actor.user.name, &accept_url);
        if self.inner.send_mail(&message).await.is_err() {
            let mut tx = self.inner.store.write_instance_wide().await?;
            tx.finish_invitation(&record.id, CANCELLED, now.millis())
                .await?;
            tx.append_audit(&[audit::entry(
                actor,
                Some(&org_id),
                AuditAction::InvitationCancelled,
                Some(AuditTarget::new("invitation", &record.id)),
                format!("{}: withdrawn, the e-mail could not be sent", record.email),
                now.millis(),
            )])
            .await?;
            tx.commit().await?;
            return Err(Error::Unavailable(
                "the invitation e-mail could not be sent, so the invitation was withdrawn: try again later".into(),
            ));
        }
        Ok(InvitationSent {
            invitation: Invitation::from_record(record, now),
            accept_url,
        })
    }

    /// The pending, unexpired invitation whose secret `token` is, for the page that accepts
    /// it. Needs no credential: without the secret it reveals nothing (404 for every other
    /// token, whatever the reason), and the secret is 256 random bits.
    pub async fn preview(&self, token: Option<&str>) -> Result<InvitationPreview> {
        let token = required(token, "token")?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.read_instance_wide().await?;
        let record = tx
            .invitation_by_token_hash(&token_hash(self.inner, token))
            .await?
            .filter(|r| status_at(r, now) == PENDING)
            .ok_or_else(|| Error::not_found("invitation"))?;
        let org = tx
            .organization_by_id(&record.organization_id)
            .await?
            .ok_or_else(|| Error::not_found("invitation"))?;
        let inviter_name = match &record.invited_by {
            Some(id) => tx.user_by_id(id).await?.map(|u| u.name),
            None => None,
        };
        Ok(InvitationPreview {
            id: record.id,
            organization_id: org.id,
            organization_name: org.name,
            email: record.email,
            role: record.role,
            inviter_name,
            expires_at: record.expires_at.into(),
        })
    }

    /// Cancels an invitation of the active organization (`member.invite`). Accepted and
    /// cancelled invitations are final (409).
    pub async fn cancel(&self, actor: &Actor, id: Option<&str>) -> Result<Invitation> {
        let org = actor.require(CoreCapability::MemberInvite)?;
        let id = required(id, "id")?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let record = tx
            .invitation(id)
            .await?
            .filter(|r| r.organization_id == org)
            .ok_or_else(|| Error::not_found("invitation"))?;
        if !tx.finish_invitation(id, CANCELLED, now.millis()).await? {
            return Err(Error::Conflict(format!(
                "the invitation is {} already",
                record.status
            )));
        }
        tx.append_audit(&[audit::entry(
            actor,
            Some(org),
            AuditAction::InvitationCancelled,
            Some(AuditTarget::new("invitation", id)),
            format!("{} as {}", record.email, record.role),
            now.millis(),
        )])
        .await?;
        tx.commit().await?;
        Ok(Invitation::from_record(
            InvitationRecord {
                status: CANCELLED.into(),
                ..record
            },
            now,
        ))
    }

    /// Accepts an invitation as the signed-in person it was sent to (sessions only), who
    /// proves the mailbox with the invitation's secret (`token`) or an address verified
    /// already (403 otherwise): they join with the invited role, their address counts as
    /// verified, and the organization becomes their session's active one. An invitation that
    /// is not pending any more (accepted, cancelled, expired) is a 409.
    pub async fn accept(
        &self,
        actor: &Actor,
        id: &str,
        token: Option<&str>,
    ) -> Result<Organization> {
        actor.require_person()?;
        let session = session_of(actor)?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let record = tx
            .invitation(id)
            .await?
            .ok_or_else(|| Error::not_found("invitation"))?;
        let user = tx
            .user_by_id(&actor.user.id)
            .await?
            .ok_or(Error::Unauthorized)?;
        if record.email != user.email {
            return Err(Error::NotPermitted(
                "this invitation was sent to another e-mail address".into(),
            ));
        }
        if !user.email_verified && !holds_secret(self.inner, &record, token) {
            return Err(Error::Forbidden);
        }
        let status = status_at(&record, now);
        if status != PENDING {
            return Err(Error::Conflict(format!("the invitation is {status}")));
        }
        if tx
            .member(&record.organization_id, &user.id)
            .await?
            .is_some()
        {
            return Err(Error::Conflict(
                "you are a member of this organization already".into(),
            ));
        }
        if !join(&mut *tx, &record, &user.id, now).await? {
            return Err(Error::Conflict(
                "the invitation can no longer be accepted (its role was deleted, or it was just used): ask for a new one".into(),
            ));
        }
        tx.set_active_organization(&session.id, Some(&record.organization_id), now.millis())
            .await?;
        let org = tx
            .organization_by_id(&record.organization_id)
            .await?
            .ok_or_else(|| Error::not_found("organization"))?;
        tx.commit().await?;
        Ok(Organization::from_record(org, Some(record.role)))
    }
}

/// The e-mail that carries the accept link (and so the secret).
fn message(r: &InvitationRecord, org_name: &str, inviter: &str, link: &str) -> MailMessage {
    let expires = Timestamp::from(r.expires_at).to_rfc3339();
    let text = format!(
        "{inviter} invited you to join {org_name} as {role}.\n\n\
         Accept the invitation: {link}\n\n\
         New here? The link lets you create your account with this address ({email}) and join \
         at once. Keep it to yourself: whoever holds it can accept the invitation.\n\
         The invitation expires at {expires}. If you did not expect it, ignore this message.\n",
        role = r.role,
        email = r.email,
    );
    MailMessage {
        kind: MailKind::Invitation,
        to: r.email.clone(),
        subject: format!("You are invited to {org_name}"),
        text,
        link: link.to_string(),
    }
}

/// Makes the user a member with the invited role (with `member.added`), marks the invitation
/// accepted and the user's address verified (the invitation reached it). `false` (and nothing written) when the
/// role was deleted since the invitation was sent, or another request finished the invitation
/// first.
async fn join(
    tx: &mut dyn Tx,
    invitation: &InvitationRecord,
    user_id: &str,
    now: Timestamp,
) -> Result<bool> {
    if tx
        .role(&invitation.organization_id, &invitation.role)
        .await?
        .is_none()
    {
        return Ok(false);
    }
    if !tx
        .finish_invitation(&invitation.id, ACCEPTED, now.millis())
        .await?
    {
        return Ok(false);
    }
    super::add_member(
        tx,
        &invitation.organization_id,
        user_id,
        &invitation.role,
        now,
    )
    .await?;
    tx.set_email_verified(user_id, now.millis()).await?;
    Ok(true)
}

/// Whether `email` holds an invitation that can still be accepted (the invite-only check).
pub(crate) async fn has_open_invitation(
    tx: &mut dyn Tx,
    email: &str,
    now: Timestamp,
) -> Result<bool> {
    Ok(!tx
        .open_invitations_for(email, now.millis())
        .await?
        .is_empty())
}

/// At a single sign-on that made an account for `email`, whose provider verified the address:
/// the new user joins the oldest invitation still open for it. Returns its organization.
pub(crate) async fn join_open_invitation(
    tx: &mut dyn Tx,
    user_id: &str,
    email: &str,
    now: Timestamp,
) -> Result<Option<String>> {
    for invitation in tx.open_invitations_for(email, now.millis()).await? {
        if join(tx, &invitation, user_id, now).await? {
            return Ok(Some(invitation.organization_id));
        }
    }
    Ok(None)
}

/// At sign-up: the new user joins the invitation whose secret `token` is, when it is pending,
/// unexpired and for their address. Returns its organization, to be made active; `None` (and
/// nothing joined) for any other token or none: the invitation then stays pending.
pub(crate) async fn join_by_token(
    inner: &Inner,
    tx: &mut dyn Tx,
    user_id: &str,
    email: &str,
    token: Option<&str>,
    now: Timestamp,
) -> Result<Option<String>> {
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let Some(invitation) = tx
        .invitation_by_token_hash(&token_hash(inner, token))
        .await?
        .filter(|r| r.email == email && status_at(r, now) == PENDING)
    else {
        return Ok(None);
    };
    Ok(join(tx, &invitation, user_id, now)
        .await?
        .then_some(invitation.organization_id))
}
