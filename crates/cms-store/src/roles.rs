//! Organization roles: named bundles of capabilities.

use async_trait::async_trait;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RoleRecord {
    pub id: String,
    pub organization_id: String,
    /// Unique within the organization.
    pub name: String,
    pub description: String,
    pub capabilities: Json<Vec<String>>,
    pub is_built_in: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What an anonymous request naming an organization by its slug acts with (CONTRACT.md section
/// 15), read in one query on the hot path: the organization and its `public` role's
/// capabilities (`None` if the organization has no such role).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PublicGrantRecord {
    pub organization_id: String,
    pub capabilities: Option<Json<Vec<String>>>,
}

pub(crate) const PUBLIC_GRANT_SQL: &str = "SELECT o.id AS organization_id, r.capabilities \
     FROM organizations o \
     LEFT JOIN roles r ON r.organization_id = o.id AND r.name = 'public' \
     WHERE o.slug = $1";

#[async_trait]
pub trait Roles {
    /// The organization with `slug` and its `public` role's capabilities; `None` when no
    /// organization has that slug. Needs an instance-wide unit (roles of any organization).
    async fn public_grant(&mut self, slug: &str) -> Result<Option<PublicGrantRecord>>;
    /// Fails with [`crate::StoreError::Unique`] when the name is taken in the organization.
    async fn insert_role(&mut self, role: &RoleRecord) -> Result<()>;
    async fn role(&mut self, organization_id: &str, name: &str) -> Result<Option<RoleRecord>>;
    /// Every role of an organization, built-in ones first, then by name.
    async fn roles(&mut self, organization_id: &str) -> Result<Vec<RoleRecord>>;
    /// Gives every organization's built-in `owner` role exactly these capabilities. Only roles
    /// whose capabilities differ are written (and their `updated_at` moved): a restart that
    /// changes nothing touches nothing. How many were written.
    async fn reconcile_owner_roles(&mut self, capabilities: &[String], now: i64) -> Result<u64>;
    /// Sets a role's description and capabilities; `None` when there is no such role.
    async fn update_role(
        &mut self,
        organization_id: &str,
        name: &str,
        description: &str,
        capabilities: &[String],
        now: i64,
    ) -> Result<Option<RoleRecord>>;
    /// `true` when the role existed. Fails with [`crate::StoreError::ForeignKey`] while a
    /// member holds it.
    async fn delete_role(&mut self, organization_id: &str, name: &str) -> Result<bool>;
    /// How many invitations of the organization name `role` and are still pending and
    /// unexpired at `now`: those keep the role from being deleted.
    async fn count_pending_invitations_with_role(
        &mut self,
        organization_id: &str,
        role: &str,
        now: i64,
    ) -> Result<i64>;
}

macro_rules! impl_roles {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::roles::Roles for $tx {
            async fn public_grant(
                &mut self,
                slug: &str,
            ) -> $crate::Result<Option<$crate::roles::PublicGrantRecord>> {
                if let Some(points) = self.point_reads() {
                    return points.public_grant(slug);
                }
                Ok(sqlx::query_as($crate::roles::PUBLIC_GRANT_SQL)
                    .bind(slug)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn insert_role(&mut self, r: &$crate::roles::RoleRecord) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO roles (id, organization_id, name, description, capabilities, is_built_in, \
                     created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(&r.id)
                .bind(&r.organization_id)
                .bind(&r.name)
                .bind(&r.description)
                .bind(&r.capabilities)
                .bind(r.is_built_in)
                .bind(r.created_at)
                .bind(r.updated_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn role(
                &mut self,
                organization_id: &str,
                name: &str,
            ) -> $crate::Result<Option<$crate::roles::RoleRecord>> {
                Ok(sqlx::query_as("SELECT * FROM roles WHERE organization_id = $1 AND name = $2")
                    .bind(organization_id)
                    .bind(name)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn roles(&mut self, organization_id: &str) -> $crate::Result<Vec<$crate::roles::RoleRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM roles WHERE organization_id = $1 ORDER BY is_built_in DESC, created_at, name",
                )
                .bind(organization_id)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn reconcile_owner_roles(&mut self, capabilities: &[String], now: i64) -> $crate::Result<u64> {
                let done = sqlx::query(
                    "UPDATE roles SET capabilities = $1, updated_at = $2 \
                     WHERE name = 'owner' AND is_built_in AND capabilities <> $1",
                )
                .bind(sqlx::types::Json(capabilities))
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected())
            }

            async fn update_role(
                &mut self,
                organization_id: &str,
                name: &str,
                description: &str,
                capabilities: &[String],
                now: i64,
            ) -> $crate::Result<Option<$crate::roles::RoleRecord>> {
                Ok(sqlx::query_as(
                    "UPDATE roles SET description = $3, capabilities = $4, updated_at = $5 \
                     WHERE organization_id = $1 AND name = $2 RETURNING *",
                )
                .bind(organization_id)
                .bind(name)
                .bind(description)
                .bind(sqlx::types::Json(capabilities))
                .bind(now)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn delete_role(&mut self, organization_id: &str, name: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM roles WHERE organization_id = $1 AND name = $2")
                    .bind(organization_id)
                    .bind(name)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn count_pending_invitations_with_role(
                &mut self,
                organization_id: &str,
                role: &str,
                now: i64,
            ) -> $crate::Result<i64> {
                Ok(sqlx::query_scalar(
                    "SELECT COUNT(*) FROM invitations WHERE organization_id = $1 AND role = $2 \
                     AND status = 'pending' AND expires_at > $3",
                )
                .bind(organization_id)
                .bind(role)
                .bind(now)
                .fetch_one(self.conn().await?)
                .await?)
            }
        }
    };
}
pub(crate) use impl_roles;
