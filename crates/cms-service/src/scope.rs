//! Whose records a read of the job queue or the event log covers (`scope=organization|all`):
//! both reads decide it alike, so the rule lives below both.

use cms_core::CoreCapability;

use crate::actor::Actor;
use crate::error::{Error, Result};

/// Whose jobs and events a read covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The actor's active organization.
    #[default]
    Organization,
    /// The whole instance: super admins only.
    All,
}

/// The organization a read covers (`None`: the whole instance). Reads need document.read in the
/// active organization; the whole instance needs a signed-in instance super admin (a key never
/// reads beyond its organization, whoever made it).
pub(crate) fn reading_scope(actor: &Actor, scope: Scope) -> Result<Option<String>> {
    match scope {
        Scope::All if actor.instance_super_admin_session() => Ok(None),
        Scope::All => Err(Error::Forbidden),
        Scope::Organization => Ok(Some(
            actor.require(CoreCapability::DocumentRead)?.to_string(),
        )),
    }
}
