//! Invitations (CONTRACT.md section 4): an address asked to join the active organization with
//! a role, by e-mail, for seven days. States: `pending`, `accepted`, `cancelled`, `expired` (a
//! pending invitation past its expiry reads as expired).
//!
//! An address has at most one pending invitation per organization: inviting it again while
//! one is live is a 409; an expired one is retired and replaced.

use cms_core::{BuiltInRole, CoreCapability, Timestamp, new_id};
use cms_store::Tx;
use cms_store::invitations::InvitationRecord;
use cms_store::organizations::MemberRecord;
use serde::Serialize;

use super::members::{no_such_role, role_name};
use super::{Organization, acts_as_owner, required, session_of};
use crate::Inner;
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::mail::{MailKind, MailMessage};

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

    /// Invites an address to the active organization with a role (`member.invite`; only an
    /// owner may invite an owner) and e-mails it the accept link. When the e-mail cannot be
    /// sent the invitation is withdrawn and the answer is 503: nobody is left with an
    /// invitation they never received.
    pub async fn create(
        &self,
        actor: &Actor,
        email: Option<&str>,
        role: Option<&str>,
    ) -> Result<Invitation> {
        actor.require_person()?;
        let org_id = actor.require(CoreCapability::MemberInvite)?.to_string();
        let email = crate::auth::required_email(email)?;
        let role = role_name(role)?;
        if role.built_in() == Some(BuiltInRole::Owner) && !acts_as_owner(&actor.grant) {
            return Err(Error::NotPermitted(
                "only an owner may invite an owner".into(),
            ));
        }
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        if tx.role(&org_id, role.as_str()).await?.is_none() {
            return Err(no_such_role(&role));
        }
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
        let record = InvitationRecord {
            id: new_id(),
            organization_id: org_id.clone(),
            email: email.as_str().to_string(),
            role: role.as_str().to_string(),
            status: PENDING.into(),
            invited_by: Some(actor.user.id.clone()),
            expires_at: now.plus_days(INVITATION_DAYS).millis(),
            created_at: now.millis(),
            updated_at: now.millis(),
        };
        tx.insert_invitation(&record).await?;
        let org_name = tx
            .organization_by_id(&org_id)
            .await?
            .map(|o| o.name)
            .unwrap_or_default();
        tx.commit().await?;

        // Sent after the commit, so the writer is never held while a mail server answers.
        let message = self.message(&record, &org_name, &actor.user.name);
        if self.inner.send_mail(&message).await.is_err() {
            let mut tx = self.inner.store.write_instance_wide().await?;
            tx.finish_invitation(&record.id, CANCELLED, now.millis())
                .await?;
            tx.commit().await?;
            return Err(Error::Unavailable(
                "the invitation e-mail could not be sent, so the invitation was withdrawn: try again later".into(),
            ));
        }
        Ok(Invitation::from_record(record, now))
    }

    fn message(&self, r: &InvitationRecord, org_name: &str, inviter: &str) -> MailMessage {
        let link = self
            .inner
            .link(&format!("/admin/accept-invitation/{}", r.id));
        let expires = Timestamp::from(r.expires_at).to_rfc3339();
        let text = format!(
            "{inviter} invited you to join {org_name} as {role}.\n\n\
             Accept the invitation: {link}\n\n\
             New here? Sign up with this address ({email}) and you join at once.\n\
             The invitation expires at {expires}. If you did not expect it, ignore this message.\n",
            role = r.role,
            email = r.email,
        );
        MailMessage {
            kind: MailKind::Invitation,
            to: r.email.clone(),
            subject: format!("You are invited to {org_name}"),
            text,
            link,
        }
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
        tx.commit().await?;
        Ok(Invitation::from_record(
            InvitationRecord {
                status: CANCELLED.into(),
                ..record
            },
            now,
        ))
    }

    /// Accepts an invitation as the signed-in person it was sent to (sessions only): they
    /// join with the invited role, and the organization becomes their session's active one.
    /// An invitation that is not pending any more (accepted, cancelled, expired) is a 409.
    pub async fn accept(&self, actor: &Actor, id: &str) -> Result<Organization> {
        actor.require_person()?;
        let session = session_of(actor)?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let record = tx
            .invitation(id)
            .await?
            .ok_or_else(|| Error::not_found("invitation"))?;
        if record.email != actor.user.email {
            return Err(Error::NotPermitted(
                "this invitation was sent to another e-mail address".into(),
            ));
        }
        let status = status_at(&record, now);
        if status != PENDING {
            return Err(Error::Conflict(format!("the invitation is {status}")));
        }
        if tx
            .member(&record.organization_id, &actor.user.id)
            .await?
            .is_some()
        {
            return Err(Error::Conflict(
                "you are a member of this organization already".into(),
            ));
        }
        if !join(&mut *tx, &record, &actor.user.id, now).await? {
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

/// Makes the user a member with the invited role and marks the invitation accepted. `false`
/// (and nothing written) when the role was deleted since the invitation was sent, or another
/// request finished the invitation first.
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
    tx.insert_member(&MemberRecord {
        organization_id: invitation.organization_id.clone(),
        user_id: user_id.to_string(),
        role: invitation.role.clone(),
        created_at: now.millis(),
    })
    .await?;
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

/// At sign-up: the new user joins every organization whose open invitation the address
/// holds, with the invited roles. Returns the organization of the newest invitation, to be
/// made active.
pub(crate) async fn join_open_invitations(
    tx: &mut dyn Tx,
    user_id: &str,
    email: &str,
    now: Timestamp,
) -> Result<Option<String>> {
    let mut newest = None;
    for invitation in tx.open_invitations_for(email, now.millis()).await? {
        if join(tx, &invitation, user_id, now).await? {
            newest = Some(invitation.organization_id);
        }
    }
    Ok(newest)
}
