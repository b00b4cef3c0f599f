//! Invitations: an address asked to join an organization with a role.

use async_trait::async_trait;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct InvitationRecord {
    pub id: String,
    pub organization_id: String,
    /// Lowercased, like user e-mails.
    pub email: String,
    /// The name of a role of the organization (no foreign key: see migration 0004).
    pub role: String,
    /// `pending`, `accepted`, `cancelled` or `expired`. A `pending` row past `expires_at` is
    /// expired whatever the column says.
    pub status: String,
    pub invited_by: Option<String>,
    /// A keyed hash of the secret sent in the invitation's e-mail; `None` for invitations made
    /// before secrets existed (they are accepted with a verified address only).
    pub token_hash: Option<String>,
    pub expires_at: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

#[async_trait]
pub trait Invitations {
    /// Fails with [`crate::StoreError::Unique`] when the address already has a pending
    /// invitation to the organization.
    async fn insert_invitation(&mut self, invitation: &InvitationRecord) -> Result<()>;
    async fn invitation(&mut self, id: &str) -> Result<Option<InvitationRecord>>;
    /// The invitation whose secret hashes to `token_hash`, in any state.
    async fn invitation_by_token_hash(
        &mut self,
        token_hash: &str,
    ) -> Result<Option<InvitationRecord>>;
    /// The invitation with status `pending` (expired or not) of an address to an organization.
    async fn pending_invitation(
        &mut self,
        organization_id: &str,
        email: &str,
    ) -> Result<Option<InvitationRecord>>;
    /// The invitations of an organization with status `pending` (expired ones included),
    /// newest first.
    async fn pending_invitations(&mut self, organization_id: &str)
    -> Result<Vec<InvitationRecord>>;
    /// The invitations of an address that can still be accepted at `now`, oldest first.
    async fn open_invitations_for(
        &mut self,
        email: &str,
        now: i64,
    ) -> Result<Vec<InvitationRecord>>;
    /// Moves a `pending` invitation to `status`. `false` when it is not pending (any more):
    /// of two concurrent acceptances or cancellations, one wins.
    async fn finish_invitation(&mut self, id: &str, status: &str, now: i64) -> Result<bool>;
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
                     token_hash, expires_at, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(&i.id)
                .bind(&i.organization_id)
                .bind(&i.email)
                .bind(&i.role)
                .bind(&i.status)
                .bind(&i.invited_by)
                .bind(&i.token_hash)
                .bind(i.expires_at)
                .bind(i.created_at)
                .bind(i.updated_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn invitation(
                &mut self,
                id: &str,
            ) -> $crate::Result<Option<$crate::invitations::InvitationRecord>> {
                Ok(sqlx::query_as("SELECT * FROM invitations WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn invitation_by_token_hash(
                &mut self,
                token_hash: &str,
            ) -> $crate::Result<Option<$crate::invitations::InvitationRecord>> {
                Ok(sqlx::query_as("SELECT * FROM invitations WHERE token_hash = $1")
                    .bind(token_hash)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn pending_invitation(
                &mut self,
                organization_id: &str,
                email: &str,
            ) -> $crate::Result<Option<$crate::invitations::InvitationRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM invitations WHERE organization_id = $1 AND email = $2 AND status = 'pending'",
                )
                .bind(organization_id)
                .bind(email)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn pending_invitations(
                &mut self,
                organization_id: &str,
            ) -> $crate::Result<Vec<$crate::invitations::InvitationRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM invitations WHERE organization_id = $1 AND status = 'pending' \
                     ORDER BY created_at DESC, id DESC",
                )
                .bind(organization_id)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn open_invitations_for(
                &mut self,
                email: &str,
                now: i64,
            ) -> $crate::Result<Vec<$crate::invitations::InvitationRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM invitations WHERE email = $1 AND status = 'pending' AND expires_at > $2 \
                     ORDER BY created_at, id",
                )
                .bind(email)
                .bind(now)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn finish_invitation(
                &mut self,
                id: &str,
                status: &str,
                now: i64,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE invitations SET status = $2, updated_at = $3 WHERE id = $1 AND status = 'pending'",
                )
                .bind(id)
                .bind(status)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }
        }
    };
}
pub(crate) use impl_invitations;
