//! Black-box tests of the service through its HTTP API, on SQLite and PostgreSQL.
//! One test binary for the crate; each module is one concept.

mod people_support;
mod support;

mod account;
mod api_keys;
mod auth;
mod binary;
mod documents;
mod email;
mod health;
mod http_core;
mod invitations;
mod jobs;
mod lifecycle;
mod members;
mod organizations;
