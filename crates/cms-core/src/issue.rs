//! Validation problems, reported to clients as the `issues` array of an error envelope.

use serde::Serialize;

/// One problem with one input value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Issue {
    /// Where the problem is: `email`, `seo.description`, `tags[2]`.
    pub path: String,
    /// A stable machine-readable code: `required`, `type`, `minLength`, ...
    pub code: String,
    pub message: String,
}

impl Issue {
    pub fn new(
        path: impl Into<String>,
        code: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Issue {
            path: path.into(),
            code: code.into(),
            message: message.into(),
        }
    }
}

/// A collector of issues, so one pass over an input reports every problem at once.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Issues(Vec<Issue>);

impl Issues {
    pub fn new() -> Self {
        Issues(Vec::new())
    }

    pub fn push(&mut self, issue: Issue) {
        self.0.push(issue);
    }

    pub fn add(&mut self, path: &str, code: &str, message: impl Into<String>) {
        self.0.push(Issue::new(path, code, message));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_vec(self) -> Vec<Issue> {
        self.0
    }

    /// `Ok(value)` when no issue was collected, otherwise every issue.
    pub fn finish<T>(self, value: T) -> Result<T, Vec<Issue>> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self.0)
        }
    }
}
