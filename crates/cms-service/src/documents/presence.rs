//! Presence on the document editor (issue 30): who else has a document open. An open edit
//! page announces itself every few seconds (a heartbeat, [`DocumentService::touch_presence`])
//! and leaves when it closes; the people seen within [`PRESENCE_WINDOW_MILLIS`] are listed.
//!
//! The heartbeats are stored (`cms_store::presence`), not kept in memory, so every instance
//! serving one database lists the same people. Presence is a person in a browser: only a
//! session announces or reads it. Whoever may read the document (exactly as GET
//! /api/documents/{id} decides) may see who has it open.

use cms_core::schema::Operation;
use cms_core::{CoreCapability, Timestamp};
use cms_store::Tx;
use cms_store::presence::PresentRecord;
use serde::Serialize;

use super::DocumentService;
use crate::actor::{Actor, Credential};
use crate::error::{Error, Result};

/// How recently a person must have announced themselves to be listed: three heartbeats of the
/// admin (every 10 s), so one late or lost request does not make someone vanish.
pub const PRESENCE_WINDOW_MILLIS: i64 = 30_000;

/// Why an API key may not take part: a key is no one to show as present.
const KEYS_HAVE_NO_PRESENCE: &str =
    "presence is for people signed in to the admin: an API key has no one to show as present";

/// Someone else with the document open.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PresentPerson {
    pub user_id: String,
    pub name: String,
    pub email: String,
    /// The person's image URL; `null` when they have none.
    #[schema(required = true)]
    pub image: Option<String>,
    /// Their last heartbeat.
    pub seen_at: Timestamp,
}

impl DocumentService<'_> {
    /// PUT /api/documents/{id}/presence: the caller has the document open now. The other
    /// people seen on it within the window, by name.
    pub async fn touch_presence(&self, actor: &Actor, id: &str) -> Result<Vec<PresentPerson>> {
        let now = self.inner.clock.now();
        let (mut tx, org) = self.presence_unit(actor, id, true).await?;
        tx.touch_presence(&org, id, &actor.user.id, now.millis())
            .await?;
        let others = others_seen(&mut *tx, actor, &org, id, now).await?;
        tx.commit().await?;
        Ok(others)
    }

    /// GET /api/documents/{id}/presence: [`Self::touch_presence`]'s list, announcing nothing.
    pub async fn presence(&self, actor: &Actor, id: &str) -> Result<Vec<PresentPerson>> {
        let now = self.inner.clock.now();
        let (mut tx, org) = self.presence_unit(actor, id, false).await?;
        others_seen(&mut *tx, actor, &org, id, now).await
    }

    /// DELETE /api/documents/{id}/presence: the caller closed the document.
    pub async fn leave_presence(&self, actor: &Actor, id: &str) -> Result<()> {
        let (mut tx, org) = self.presence_unit(actor, id, true).await?;
        tx.leave_presence(&org, id, &actor.user.id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The one access decision of presence, and the unit it holds for: a session (an API key
    /// is refused with the reason, other credentials as everywhere else), `document.read` in
    /// the active organization, the document there (404 otherwise, as its GET answers) and
    /// the type's read rule.
    async fn presence_unit(
        &self,
        actor: &Actor,
        id: &str,
        write: bool,
    ) -> Result<(Box<dyn Tx>, String)> {
        match actor.credential {
            Credential::Session(_) => {}
            Credential::ApiKey { .. } => {
                return Err(Error::NotPermitted(KEYS_HAVE_NO_PRESENCE.into()));
            }
            _ => {
                // Refused as every operation bound to a person refuses them; a plugin's
                // synthetic user is no person either.
                actor.require_person()?;
                return Err(Error::Forbidden);
            }
        }
        let org = actor.require(CoreCapability::DocumentRead)?.to_string();
        let mut tx = if write {
            self.inner.store.write_for(&org).await?
        } else {
            self.inner.store.read_for(&org).await?
        };
        let record = self.owned(&mut *tx, &org, id).await?;
        self.gate(actor).check(Operation::Read, &record)?;
        Ok((tx, org))
    }
}

/// The people seen on the document within the window, the caller left out.
async fn others_seen(
    tx: &mut dyn Tx,
    actor: &Actor,
    org: &str,
    id: &str,
    now: Timestamp,
) -> Result<Vec<PresentPerson>> {
    let since = now.millis() - PRESENCE_WINDOW_MILLIS;
    let seen = tx.present_on(org, id, since).await?;
    Ok(seen
        .into_iter()
        .filter(|p| p.user_id != actor.user.id)
        .map(person)
        .collect())
}

fn person(record: PresentRecord) -> PresentPerson {
    PresentPerson {
        user_id: record.user_id,
        name: record.name,
        email: record.email,
        image: record.image,
        seen_at: Timestamp::from_millis(record.seen_at),
    }
}
