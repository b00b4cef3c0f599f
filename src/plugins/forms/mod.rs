//! The `forms` plugin (CONTRACT.md section 11).

pub mod submission;
