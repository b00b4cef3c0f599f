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
    /// The locale tags the organization narrows the instance's to; `None` keeps them all.
    pub locales: Option<Json<Vec<String>>>,
    /// Members must sign in with a second factor to act here (CONTRACT.md section 20).
    pub require_two_factor: bool,
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

/// An organization a user belongs to, with the user's role there.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct MembershipRecord {
    #[sqlx(flatten)]
    pub organization: OrganizationRecord,
    pub member_role: String,
    /// When the user joined.
    pub joined_at: i64,
}

/// A member with the user's profile, as member lists show it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct MemberProfileRecord {
    pub user_id: String,
    pub email: String,
    pub name: String,
    pub role: String,
    pub created_at: i64,
}

#[async_trait]
pub trait Organizations {
    /// Fails with [`crate::StoreError::Unique`] when the slug is taken.
    async fn insert_organization(&mut self, org: &OrganizationRecord) -> Result<()>;
    async fn organization_by_id(&mut self, id: &str) -> Result<Option<OrganizationRecord>>;
    /// The organization whose id or else whose slug is `key` (an operator names either).
    async fn organization_by_id_or_slug(&mut self, key: &str)
    -> Result<Option<OrganizationRecord>>;
    /// Fails with [`crate::StoreError::ForeignKey`] when the role does not exist there.
    async fn insert_member(&mut self, member: &MemberRecord) -> Result<()>;
    async fn member(
        &mut self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<Option<MemberRecord>>;
    /// The organizations whose parent is `organization_id` (one level: children have none).
    async fn child_organization_ids(&mut self, organization_id: &str) -> Result<Vec<String>>;
    /// How many members of the organization hold `role`.
    async fn count_members_with_role(&mut self, organization_id: &str, role: &str) -> Result<i64>;
    /// The user's memberships, oldest first.
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
    /// Writes name, slug, metadata and `updated_at`. `true` when the organization exists.
    /// Fails with [`crate::StoreError::Unique`] when the slug is taken.
    async fn update_organization(&mut self, org: &OrganizationRecord) -> Result<bool>;
    /// Deletes the organization; its roles, members, API keys, invitations and documents go
    /// with it (foreign keys), and sessions that had it active are left without one.
    async fn delete_organization(&mut self, id: &str) -> Result<bool>;
    /// Takes the organization's row lock until the unit ends (a no-op on SQLite's single
    /// writer), so checks such as "is this the last owner" cannot race on PostgreSQL. `false`
    /// when the organization does not exist.
    async fn lock_organization(&mut self, id: &str) -> Result<bool>;
    /// The organizations the user belongs to with their role there, oldest membership first.
    async fn organizations_of(&mut self, user_id: &str) -> Result<Vec<MembershipRecord>>;
    /// The members of an organization with their profiles, oldest first.
    async fn members_of(&mut self, organization_id: &str) -> Result<Vec<MemberProfileRecord>>;
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
                    "INSERT INTO organizations (id, name, slug, metadata, parent_id, locales, created_at, updated_at, require_two_factor) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(&o.id)
                .bind(&o.name)
                .bind(&o.slug)
                .bind(&o.metadata)
                .bind(&o.parent_id)
                .bind(&o.locales)
                .bind(o.created_at)
                .bind(o.updated_at)
                .bind(o.require_two_factor)
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

            async fn organization_by_id_or_slug(
                &mut self,
                key: &str,
            ) -> $crate::Result<Option<$crate::organizations::OrganizationRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM organizations WHERE id = $1 OR slug = $1 \
                     ORDER BY CASE WHEN id = $1 THEN 0 ELSE 1 END LIMIT 1",
                )
                .bind(key)
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

            async fn update_organization(
                &mut self,
                o: &$crate::organizations::OrganizationRecord,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE organizations SET name = $2, slug = $3, metadata = $4, locales = $5, updated_at = $6, \
                     require_two_factor = $7 WHERE id = $1",
                )
                .bind(&o.id)
                .bind(&o.name)
                .bind(&o.slug)
                .bind(&o.metadata)
                .bind(&o.locales)
                .bind(o.updated_at)
                .bind(o.require_two_factor)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn delete_organization(&mut self, id: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM organizations WHERE id = $1")
                    .bind(id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn lock_organization(&mut self, id: &str) -> $crate::Result<bool> {
                let done = sqlx::query("UPDATE organizations SET updated_at = updated_at WHERE id = $1")
                    .bind(id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn organizations_of(
                &mut self,
                user_id: &str,
            ) -> $crate::Result<Vec<$crate::organizations::MembershipRecord>> {
                Ok(sqlx::query_as(
                    "SELECT o.*, m.role AS member_role, m.created_at AS joined_at \
                     FROM members m JOIN organizations o ON o.id = m.organization_id \
                     WHERE m.user_id = $1 ORDER BY m.created_at, o.id",
                )
                .bind(user_id)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn members_of(
                &mut self,
                organization_id: &str,
            ) -> $crate::Result<Vec<$crate::organizations::MemberProfileRecord>> {
                Ok(sqlx::query_as(
                    "SELECT m.user_id, u.email, u.name, m.role, m.created_at \
                     FROM members m JOIN users u ON u.id = m.user_id \
                     WHERE m.organization_id = $1 ORDER BY m.created_at, u.email",
                )
                .bind(organization_id)
                .fetch_all(self.conn().await?)
                .await?)
            }
        }
    };
}
pub(crate) use impl_organizations;
