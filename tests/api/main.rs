//! Black-box tests of the service through its HTTP API, on SQLite and PostgreSQL.
//! One test binary for the crate; each module is one concept.

mod support;

mod access_rules;
mod api_keys;
mod auth;
mod binary;
mod csrf;
mod documents;
mod first_admin;
mod health;
mod http_core;
mod instance_settings;
mod jobs;
mod rate_limit;
mod roles;
