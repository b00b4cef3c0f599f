//! The first-party plugins, enabled by default (`plugins.forms`, `plugins.webhooks`). They are
//! built with nothing but the public plugin API of [`crate::plugin`], like a host's own.

pub mod forms;
pub mod webhooks;
