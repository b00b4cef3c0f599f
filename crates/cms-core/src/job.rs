//! Job states (CONTRACT.md section 7).

/// Where a job is in its life. Stored as [`JobStatus::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobStatus {
    /// Waiting for its run time, or for a worker.
    Pending,
    /// Claimed by a worker under a lease.
    Running,
    Completed,
    /// Not retryable: nothing can run it (no handler for its type).
    Failed,
    /// Its attempts are exhausted.
    DeadLetter,
    Cancelled,
}

impl JobStatus {
    /// Every status, in the order reports list them.
    pub const ALL: [JobStatus; 6] = [
        JobStatus::Pending,
        JobStatus::Running,
        JobStatus::Completed,
        JobStatus::Failed,
        JobStatus::DeadLetter,
        JobStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "pending",
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::DeadLetter => "dead_letter",
            JobStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<JobStatus> {
        JobStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
    }
}

/// A string, one of [`JobStatus::ALL`] by its stored name.
impl utoipa::PartialSchema for JobStatus {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(JobStatus::ALL.map(JobStatus::as_str)))
            .into()
    }
}

impl utoipa::ToSchema for JobStatus {}

#[cfg(test)]
mod tests {
    use super::JobStatus;

    #[test]
    fn statuses_round_trip_through_their_stored_names() {
        for status in JobStatus::ALL {
            assert_eq!(JobStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(JobStatus::parse("dead-letter"), None);
    }
}
