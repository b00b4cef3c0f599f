//! Invitations to join an organization with a role (migration 0004).
//!
//! Only what the roles work needs today: writing an invitation. Whether a pending one keeps a
//! role from being deleted is asked through [`crate::roles::Roles`]. The invitation endpoints
//! add their reads and state changes here.

use async_trait::async_trait;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct InvitationRecord {
    pub id: String,
    pub organization_id: String,
    pub email: String,
    /// The name of a role of the organization (no foreign key: see the migration).
    pub role: String,
    /// `pending`, `accepted`, `cancelled` or `expired`.
    pub status: String,
    pub invited_by: Option<String>,
    pub expires_at: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

#[async_trait]
pub trait Invitations {
    /// Fails with [`crate::StoreError::Unique`] when the address already holds a pending
    /// invitation to the organization.
    async fn insert_invitation(&mut self, invitation: &InvitationRecord) -> Result<()>;
}

macro_rules! impl_invitations {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::invitations::Invitations for $tx {
            async fn insert_invitation(
                &mut self,
                i: &$crate::invitations::InvitationRecord,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO invitations (id, organization_id, email, role, status, invited_by, \
                     expires_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(&i.id)
                .bind(&i.organization_id)
                .bind(&i.email)
                .bind(&i.role)
                .bind(&i.status)
                .bind(&i.invited_by)
                .bind(i.expires_at)
                .bind(i.created_at)
                .bind(i.updated_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }
        }
    };
}
pub(crate) use impl_invitations;
