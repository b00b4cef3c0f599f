//! Presence on the document editor: who has a document open right now. Each open edit page
//! touches its row every few seconds (a heartbeat); readers list the rows touched recently.
//! Rows are seconds-old facts, so they are stored only to be shared by every instance on this
//! database, never exported, and swept when stale.

use async_trait::async_trait;

use crate::Result;

/// How old a row may grow before a touch in its organization deletes it: far past any window
/// a reader asks for, so the sweep never removes a row someone still lists.
pub const STALE_AFTER_MILLIS: i64 = 5 * 60 * 1000;

/// A person seen on a document, with what a reader shows of them.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PresentRecord {
    pub user_id: String,
    pub name: String,
    pub email: String,
    pub image: Option<String>,
    pub seen_at: i64,
}

#[async_trait]
pub trait Presence {
    /// Records that `user_id` has document `document_id` of the organization open at `now`
    /// (milliseconds), and deletes the organization's rows older than
    /// [`STALE_AFTER_MILLIS`] on the way: a page closed without saying so leaves no row for
    /// long.
    async fn touch_presence(
        &mut self,
        organization_id: &str,
        document_id: &str,
        user_id: &str,
        now: i64,
    ) -> Result<()>;

    /// Deletes the person's row on the document. `false` when there was none.
    async fn leave_presence(
        &mut self,
        organization_id: &str,
        document_id: &str,
        user_id: &str,
    ) -> Result<bool>;

    /// The people seen on the document at `since` (milliseconds) or later, by name.
    async fn present_on(
        &mut self,
        organization_id: &str,
        document_id: &str,
        since: i64,
    ) -> Result<Vec<PresentRecord>>;
}

macro_rules! impl_presence {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::presence::Presence for $tx {
            async fn touch_presence(
                &mut self,
                organization_id: &str,
                document_id: &str,
                user_id: &str,
                now: i64,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "DELETE FROM document_presence WHERE organization_id = $1 AND seen_at < $2",
                )
                .bind(organization_id)
                .bind(now - $crate::presence::STALE_AFTER_MILLIS)
                .execute(self.conn().await?)
                .await?;
                sqlx::query(
                    "INSERT INTO document_presence (organization_id, document_id, user_id, \
                     seen_at) VALUES ($1, $2, $3, $4) ON CONFLICT (document_id, user_id) \
                     DO UPDATE SET seen_at = excluded.seen_at",
                )
                .bind(organization_id)
                .bind(document_id)
                .bind(user_id)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn leave_presence(
                &mut self,
                organization_id: &str,
                document_id: &str,
                user_id: &str,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "DELETE FROM document_presence \
                     WHERE organization_id = $1 AND document_id = $2 AND user_id = $3",
                )
                .bind(organization_id)
                .bind(document_id)
                .bind(user_id)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn present_on(
                &mut self,
                organization_id: &str,
                document_id: &str,
                since: i64,
            ) -> $crate::Result<Vec<$crate::presence::PresentRecord>> {
                Ok(sqlx::query_as(
                    "SELECT p.user_id, u.name, u.email, u.image, p.seen_at \
                     FROM document_presence p JOIN users u ON u.id = p.user_id \
                     WHERE p.organization_id = $1 AND p.document_id = $2 AND p.seen_at >= $3 \
                     ORDER BY u.name, p.user_id",
                )
                .bind(organization_id)
                .bind(document_id)
                .bind(since)
                .fetch_all(self.conn().await?)
                .await?)
            }
        }
    };
}
pub(crate) use impl_presence;
