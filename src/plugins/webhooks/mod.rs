//! The `webhooks` plugin (CONTRACT.md section 11).

pub mod delivery;
