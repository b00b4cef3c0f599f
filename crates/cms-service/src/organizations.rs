//! Organizations: creation with their built-in roles, and the boot-time owner reconciliation.
//! (The organization endpoints come with the tenancy work; sign-up needs creation now.)

use cms_core::{BuiltInRole, CapabilitySet, Timestamp, new_id};
use cms_store::organizations::{MemberRecord, OrganizationRecord};
use cms_store::roles::RoleRecord;
use cms_store::{Json, Tx};

use crate::Inner;
use crate::error::Result;

/// Creates an organization with the four built-in roles and `owner_user_id` as its owner.
pub(crate) async fn create_with_owner(
    tx: &mut dyn Tx,
    name: &str,
    slug: &str,
    owner_user_id: &str,
    every_declared: &CapabilitySet,
    now: Timestamp,
) -> Result<OrganizationRecord> {
    let org = OrganizationRecord {
        id: new_id(),
        name: name.to_string(),
        slug: slug.to_string(),
        metadata: Json(serde_json::json!({})),
        parent_id: None,
        created_at: now.millis(),
        updated_at: now.millis(),
    };
    tx.insert_organization(&org).await?;
    for role in BuiltInRole::ALL {
        tx.insert_role(&RoleRecord {
            id: new_id(),
            organization_id: org.id.clone(),
            name: role.name().to_string(),
            description: role.description().to_string(),
            capabilities: Json(role.seed(every_declared).to_strings()),
            is_built_in: true,
            created_at: now.millis(),
            updated_at: now.millis(),
        })
        .await?;
    }
    tx.insert_member(&MemberRecord {
        organization_id: org.id.clone(),
        user_id: owner_user_id.to_string(),
        role: BuiltInRole::Owner.name().to_string(),
        created_at: now.millis(),
    })
    .await?;
    Ok(org)
}

/// SPEC.md built-in role 1: `owner` holds every capability, including ones added since the
/// organization was created (an upgrade, a new plugin). Runs at every boot.
pub(crate) async fn reconcile_owner_roles(inner: &Inner) -> Result<()> {
    let mut tx = inner.store.write().await?;
    let every = inner.capabilities.every().to_strings();
    let updated = tx
        .reconcile_owner_roles(&every, inner.clock.now().millis())
        .await?;
    tx.commit().await?;
    tracing::debug!(organizations = updated, "owner roles reconciled");
    Ok(())
}
