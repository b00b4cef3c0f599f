//! Organizations and their members.

use async_trait::async_trait;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OrganizationRecord {
    pub id: String,
    pub name: String,
    /// Unique across the instance.
    pub slug: String,
    pub metadata: Json<serde_json::Value>,
    pub parent_id: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct MemberRecord {
    pub organization_id: String,
    pub user_id: String,
    /// The name of a role of the same organization.
    pub role: String,
    pub created_at: i64,
}

#[async_trait]
pub trait Organizations {
    /// Fails with [`crate::StoreError::Unique`] when the slug is taken.
    async fn insert_organization(&mut self, org: &OrganizationRecord) -> Result<()>;
    async fn organization_by_id(&mut self, id: &str) -> Result<Option<OrganizationRecord>>;
    /// Fails with [`crate::StoreError::ForeignKey`] when the role does not exist there.
    async fn insert_member(&mut self, member: &MemberRecord) -> Result<()>;
    async fn member(
        &mut self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<Option<MemberRecord>>;
    /// The organizations whose parent is `organization_id` (one level: children have none).
    async fn child_organization_ids(&mut self, organization_id: &str) -> Result<Vec<String>>;
    /// The user's memberships, oldest first.
    /// How many members of the organization hold `role`.
    async fn count_members_with_role(&mut self, organization_id: &str, role: &str) -> Result<i64>;
    async fn memberships_of(&mut self, user_id: &str) -> Result<Vec<MemberRecord>>;
    /// `true` when the member existed. Fails with [`crate::StoreError::ForeignKey`] when the
    /// role does not exist in the organization.
    async fn update_member_role(
        &mut self,
        organization_id: &str,
        user_id: &str,
        role: &str,
    ) -> Result<bool>;
    /// `true` when the member existed.
    async fn delete_member(&mut self, organization_id: &str, user_id: &str) -> Result<bool>;
}

macro_rules! impl_organizations {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::organizations::Organizations for $tx {
            async fn insert_organization(
                &mut self,
                o: &$crate::organizations::OrganizationRecord,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO organizations (id, name, slug, metadata, parent_id, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(&o.id)
                .bind(&o.name)
                .bind(&o.slug)
                .bind(&o.metadata)
                .bind(&o.parent_id)
                .bind(o.created_at)
                .bind(o.updated_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn organization_by_id(
                &mut self,
                id: &str,
            ) -> $crate::Result<Option<$crate::organizations::OrganizationRecord>> {
                Ok(sqlx::query_as("SELECT * FROM organizations WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn insert_member(&mut self, m: &$crate::organizations::MemberRecord) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO members (organization_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)",
                )
                .bind(&m.organization_id)
                .bind(&m.user_id)
                .bind(&m.role)
                .bind(m.created_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn member(
                &mut self,
                organization_id: &str,
                user_id: &str,
            ) -> $crate::Result<Option<$crate::organizations::MemberRecord>> {
                Ok(sqlx::query_as("SELECT * FROM members WHERE organization_id = $1 AND user_id = $2")
                    .bind(organization_id)
                    .bind(user_id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn child_organization_ids(&mut self, organization_id: &str) -> $crate::Result<Vec<String>> {
                Ok(sqlx::query_scalar("SELECT id FROM organizations WHERE parent_id = $1 ORDER BY id")
                    .bind(organization_id)
                    .fetch_all(self.conn().await?)
                    .await?)
            }

            async fn count_members_with_role(
                &mut self,
                organization_id: &str,
                role: &str,
            ) -> $crate::Result<i64> {
                Ok(sqlx::query_scalar(
                    "SELECT COUNT(*) FROM members WHERE organization_id = $1 AND role = $2",
                )
                .bind(organization_id)
                .bind(role)
                .fetch_one(self.conn().await?)
                .await?)
            }

            async fn memberships_of(
                &mut self,
                user_id: &str,
            ) -> $crate::Result<Vec<$crate::organizations::MemberRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM members WHERE user_id = $1 ORDER BY created_at, organization_id",
                )
                .bind(user_id)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn update_member_role(
                &mut self,
                organization_id: &str,
                user_id: &str,
                role: &str,
            ) -> $crate::Result<bool> {
                let done = sqlx::query("UPDATE members SET role = $3 WHERE organization_id = $1 AND user_id = $2")
                    .bind(organization_id)
                    .bind(user_id)
                    .bind(role)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn delete_member(&mut self, organization_id: &str, user_id: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM members WHERE organization_id = $1 AND user_id = $2")
                    .bind(organization_id)
                    .bind(user_id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }
        }
    };
}
pub(crate) use impl_organizations;
