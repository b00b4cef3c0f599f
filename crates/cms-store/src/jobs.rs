//! The job queue: due jobs are claimed under a lease, finished by the claim that holds the
//! lease, and reclaimable once a lease expires (a crashed worker).

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct JobRecord {
    pub id: String,
    pub organization_id: Option<String>,
    #[sqlx(rename = "type")]
    pub job_type: String,
    /// `pending`, `running`, `completed`, `failed`, `dead_letter` or `cancelled`.
    pub status: String,
    pub payload: Json<Value>,
    pub attempts: i64,
    pub max_attempts: i64,
    pub run_at: i64,
    pub locked_until: Option<i64>,
    pub last_error: Option<String>,
    pub idempotency_key: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub completed_at: Option<i64>,
}

impl JobRecord {
    /// A pending job due at `now`, for no organization and without an idempotency key; set
    /// those fields on the result where they apply.
    pub fn pending(
        id: String,
        job_type: &str,
        payload: Value,
        max_attempts: i64,
        now: i64,
    ) -> Self {
        JobRecord {
            id,
            organization_id: None,
            job_type: job_type.to_string(),
            status: cms_core::JobStatus::Pending.as_str().to_string(),
            payload: Json(payload),
            attempts: 0,
            max_attempts,
            run_at: now,
            locked_until: None,
            last_error: None,
            idempotency_key: None,
            created_at: now,
            updated_at: now,
            completed_at: None,
        }
    }
}

/// Which jobs a read wants. `organization: None` reads the whole instance.
#[derive(Debug, Clone, Default)]
pub struct JobQuery {
    pub organization: Option<String>,
    pub status: Option<String>,
    pub job_type: Option<String>,
    pub limit: i64,
    pub offset: i64,
}

/// How a claimed job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobOutcome {
    Completed,
    /// Back to `pending`, due at `run_at`.
    Retry {
        run_at: i64,
        error: String,
    },
    /// `failed`: not retryable.
    Failed {
        error: String,
    },
    /// `dead_letter`: its attempts are exhausted.
    DeadLettered {
        error: String,
    },
}

#[async_trait]
pub trait Jobs {
    /// `false` when a job with the same idempotency key exists: the duplicate is absorbed.
    async fn enqueue_job(&mut self, job: &JobRecord) -> Result<bool>;
    /// Enqueues many jobs in as few statements as the engines allow; returns how many were
    /// new (duplicates by idempotency key, within the batch too, are absorbed).
    async fn enqueue_jobs(&mut self, jobs: &[JobRecord]) -> Result<u64>;
    async fn job(&mut self, id: &str) -> Result<Option<JobRecord>>;
    /// Takes up to `limit` due jobs (pending and due, or running with an expired lease and
    /// attempts left), marks them running with `lease` as their lease and counts the attempt.
    /// On PostgreSQL, jobs another worker is claiming are skipped.
    async fn claim_jobs(&mut self, now: i64, lease: i64, limit: i64) -> Result<Vec<JobRecord>>;
    /// Dead-letters, with `error`, every job whose worker stopped during its last attempt:
    /// running, its lease expired, and its attempts (the abandoned one counted at its claim)
    /// at `max_attempts`. Returns them, so their side effects can follow.
    async fn dead_letter_abandoned(&mut self, now: i64, error: &str) -> Result<Vec<JobRecord>>;
    /// Ends a claimed job. `false` when the claim no longer holds it (its lease expired and
    /// another worker took it): nothing changed.
    async fn finish_job(
        &mut self,
        id: &str,
        lease: i64,
        outcome: &JobOutcome,
        now: i64,
    ) -> Result<bool>;
    /// Completes many jobs of one claim in one statement; returns how many it held.
    async fn complete_jobs(&mut self, ids: &[String], lease: i64, now: i64) -> Result<u64>;
    /// Moves a job from one of `from` to `pending`, due now, with its attempts reset when
    /// asked. `false` when the job is not in one of those states.
    async fn requeue_job(
        &mut self,
        id: &str,
        from: &[cms_core::JobStatus],
        reset_attempts: bool,
        now: i64,
    ) -> Result<bool>;
    /// `false` when the job is not pending.
    async fn cancel_job(&mut self, id: &str, now: i64) -> Result<bool>;
    async fn jobs(&mut self, query: &JobQuery) -> Result<(Vec<JobRecord>, i64)>;
    /// Jobs per status, and the run time of the oldest due pending job.
    async fn job_counts(
        &mut self,
        organization: Option<&str>,
        now: i64,
    ) -> Result<(Vec<(String, i64)>, Option<i64>)>;
    /// Jobs per status and type across the instance, as `(status, type, count)`, and the run
    /// time of the oldest due pending job (GET /metrics).
    async fn job_counts_by_type(
        &mut self,
        now: i64,
    ) -> Result<(Vec<(String, String, i64)>, Option<i64>)>;
}

macro_rules! impl_jobs {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::jobs::Jobs for $tx {
            async fn enqueue_job(&mut self, j: &$crate::jobs::JobRecord) -> $crate::Result<bool> {
                Ok($crate::jobs::Jobs::enqueue_jobs(self, std::slice::from_ref(j)).await? > 0)
            }

            async fn enqueue_jobs(&mut self, jobs: &[$crate::jobs::JobRecord]) -> $crate::Result<u64> {
                let mut inserted = 0;
                // Fourteen parameters a row keeps every statement below both engines' limits.
                for chunk in jobs.chunks(500) {
                    let mut sql = sqlx::QueryBuilder::new(
                        "INSERT INTO jobs (id, organization_id, type, status, payload, attempts, max_attempts, \
                         run_at, locked_until, last_error, idempotency_key, created_at, updated_at, completed_at) ",
                    );
                    sql.push_values(chunk, |mut row, j| {
                        row.push_bind(&j.id)
                            .push_bind(&j.organization_id)
                            .push_bind(&j.job_type)
                            .push_bind(&j.status)
                            .push_bind(&j.payload)
                            .push_bind(j.attempts)
                            .push_bind(j.max_attempts)
                            .push_bind(j.run_at)
                            .push_bind(j.locked_until)
                            .push_bind(&j.last_error)
                            .push_bind(&j.idempotency_key)
                            .push_bind(j.created_at)
                            .push_bind(j.updated_at)
                            .push_bind(j.completed_at);
                    });
                    sql.push(" ON CONFLICT (idempotency_key) DO NOTHING");
                    inserted += sql.build().execute(self.conn().await?).await?.rows_affected();
                }
                Ok(inserted)
            }

            async fn job(&mut self, id: &str) -> $crate::Result<Option<$crate::jobs::JobRecord>> {
                Ok(sqlx::query_as("SELECT * FROM jobs WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn claim_jobs(
                &mut self,
                now: i64,
                lease: i64,
                limit: i64,
            ) -> $crate::Result<Vec<$crate::jobs::JobRecord>> {
                let lock = match <$tx>::DIALECT {
                    $crate::Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
                    // The single writer already excludes every other worker.
                    $crate::Dialect::Sqlite => "",
                };
                // Two claims, each walking one partial index in order (`jobs_leased`, then
                // `jobs_due`) and stopping at the limit: one query over both conditions sorts
                // every due job on each claim, and a worker claims one job at a time. Expired
                // leases go first, so a steady flow of new jobs never starves a reclaim.
                let claim = |condition: &str| {
                    format!(
                        "UPDATE jobs SET status = 'running', attempts = attempts + 1, \
                         locked_until = $2, updated_at = $1 WHERE id IN (SELECT id FROM jobs \
                         WHERE {condition} LIMIT $3{lock}) RETURNING *"
                    )
                };
                let mut jobs: Vec<$crate::jobs::JobRecord> = Vec::new();
                for condition in [
                    "status = 'running' AND locked_until < $1 AND attempts < max_attempts \
                     ORDER BY locked_until, id",
                    "status = 'pending' AND run_at <= $1 ORDER BY run_at, id",
                ] {
                    let left = limit - jobs.len() as i64;
                    if left <= 0 {
                        break;
                    }
                    let claimed: Vec<$crate::jobs::JobRecord> =
                        sqlx::query_as(sqlx::AssertSqlSafe(claim(condition)))
                            .bind(now)
                            .bind(lease)
                            .bind(left)
                            .fetch_all(self.conn().await?)
                            .await?;
                    jobs.extend(claimed);
                }
                jobs.sort_by(|a, b| (a.run_at, &a.id).cmp(&(b.run_at, &b.id)));
                Ok(jobs)
            }

            async fn dead_letter_abandoned(
                &mut self,
                now: i64,
                error: &str,
            ) -> $crate::Result<Vec<$crate::jobs::JobRecord>> {
                // On PostgreSQL a row another worker is claiming is locked: this update waits
                // for it and then re-checks the condition, so a job is never both reclaimed
                // and dead-lettered.
                Ok(sqlx::query_as(
                    "UPDATE jobs SET status = 'dead_letter', last_error = $2, locked_until = NULL, \
                     updated_at = $1 WHERE status = 'running' AND locked_until < $1 \
                     AND attempts >= max_attempts RETURNING *",
                )
                .bind(now)
                .bind(error)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn finish_job(
                &mut self,
                id: &str,
                lease: i64,
                outcome: &$crate::jobs::JobOutcome,
                now: i64,
            ) -> $crate::Result<bool> {
                use $crate::jobs::JobOutcome;
                use cms_core::JobStatus;
                let (status, run_at, error, completed_at) = match outcome {
                    JobOutcome::Completed => (JobStatus::Completed, None, None, Some(now)),
                    JobOutcome::Retry { run_at, error } => {
                        (JobStatus::Pending, Some(*run_at), Some(error.as_str()), None)
                    }
                    JobOutcome::Failed { error } => (JobStatus::Failed, None, Some(error.as_str()), None),
                    JobOutcome::DeadLettered { error } => {
                        (JobStatus::DeadLetter, None, Some(error.as_str()), None)
                    }
                };
                let status = status.as_str();
                let done = sqlx::query(
                    "UPDATE jobs SET status = $3, run_at = COALESCE($4, run_at), last_error = $5, \
                     completed_at = $6, locked_until = NULL, updated_at = $7 \
                     WHERE id = $1 AND status = 'running' AND locked_until = $2",
                )
                .bind(id)
                .bind(lease)
                .bind(status)
                .bind(run_at)
                .bind(error)
                .bind(completed_at)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn complete_jobs(&mut self, ids: &[String], lease: i64, now: i64) -> $crate::Result<u64> {
                let mut completed = 0;
                for chunk in ids.chunks(500) {
                    let mut sql = sqlx::QueryBuilder::new(
                        "UPDATE jobs SET status = 'completed', last_error = NULL, locked_until = NULL, completed_at = ",
                    );
                    sql.push_bind(now)
                        .push(", updated_at = ")
                        .push_bind(now)
                        .push(" WHERE status = 'running' AND locked_until = ")
                        .push_bind(lease)
                        .push(" AND id IN (");
                    let mut list = sql.separated(", ");
                    for id in chunk {
                        list.push_bind(id.clone());
                    }
                    sql.push(")");
                    completed += sql.build().execute(self.conn().await?).await?.rows_affected();
                }
                Ok(completed)
            }

            async fn requeue_job(
                &mut self,
                id: &str,
                from: &[cms_core::JobStatus],
                reset_attempts: bool,
                now: i64,
            ) -> $crate::Result<bool> {
                let mut sql = sqlx::QueryBuilder::new(
                    "UPDATE jobs SET status = 'pending', locked_until = NULL, completed_at = NULL, run_at = ",
                );
                sql.push_bind(now).push(", updated_at = ").push_bind(now);
                if reset_attempts {
                    sql.push(", attempts = 0");
                }
                sql.push(" WHERE id = ").push_bind(id.to_string()).push(" AND status IN (");
                let mut list = sql.separated(", ");
                for status in from {
                    list.push_bind(status.as_str());
                }
                sql.push(")");
                Ok(sql.build().execute(self.conn().await?).await?.rows_affected() > 0)
            }

            async fn cancel_job(&mut self, id: &str, now: i64) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE jobs SET status = 'cancelled', updated_at = $2 WHERE id = $1 AND status = 'pending'",
                )
                .bind(id)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn jobs(
                &mut self,
                q: &$crate::jobs::JobQuery,
            ) -> $crate::Result<(Vec<$crate::jobs::JobRecord>, i64)> {
                let filter = |select: &str| {
                    let mut sql = sqlx::QueryBuilder::new(select);
                    sql.push(" WHERE 1 = 1");
                    if let Some(org) = &q.organization {
                        sql.push(" AND organization_id = ").push_bind(org.clone());
                    }
                    if let Some(status) = &q.status {
                        sql.push(" AND status = ").push_bind(status.clone());
                    }
                    if let Some(t) = &q.job_type {
                        sql.push(" AND type = ").push_bind(t.clone());
                    }
                    sql
                };
                let total: i64 = filter("SELECT COUNT(*) FROM jobs")
                    .build_query_scalar()
                    .fetch_one(self.conn().await?)
                    .await?;
                let mut page = filter("SELECT * FROM jobs");
                page.push(" ORDER BY created_at DESC, id DESC LIMIT ")
                    .push_bind(q.limit)
                    .push(" OFFSET ")
                    .push_bind(q.offset);
                let rows = page.build_query_as().fetch_all(self.conn().await?).await?;
                Ok((rows, total))
            }

            async fn job_counts(
                &mut self,
                organization: Option<&str>,
                now: i64,
            ) -> $crate::Result<(Vec<(String, i64)>, Option<i64>)> {
                let org_filter = |sql: &mut sqlx::QueryBuilder<_>| {
                    if let Some(org) = organization {
                        sql.push(" AND organization_id = ").push_bind(org.to_string());
                    }
                };
                let mut counts = sqlx::QueryBuilder::new("SELECT status, COUNT(*) FROM jobs WHERE 1 = 1");
                org_filter(&mut counts);
                counts.push(" GROUP BY status ORDER BY status");
                let counts: Vec<(String, i64)> = counts.build_query_as().fetch_all(self.conn().await?).await?;
                let mut oldest = sqlx::QueryBuilder::new("SELECT MIN(run_at) FROM jobs WHERE status = 'pending' AND run_at <= ");
                oldest.push_bind(now);
                org_filter(&mut oldest);
                let oldest: Option<i64> = oldest.build_query_scalar().fetch_one(self.conn().await?).await?;
                Ok((counts, oldest))
            }

            async fn job_counts_by_type(
                &mut self,
                now: i64,
            ) -> $crate::Result<(Vec<(String, String, i64)>, Option<i64>)> {
                let counts = sqlx::query_as(
                    "SELECT status, type, COUNT(*) FROM jobs GROUP BY status, type ORDER BY status, type",
                )
                .fetch_all(self.conn().await?)
                .await?;
                let oldest: Option<i64> = sqlx::query_scalar(
                    "SELECT MIN(run_at) FROM jobs WHERE status = 'pending' AND run_at <= $1",
                )
                .bind(now)
                .fetch_one(self.conn().await?)
                .await?;
                Ok((counts, oldest))
            }
        }
    };
}
pub(crate) use impl_jobs;
