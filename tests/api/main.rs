//! Black-box tests of the service through its HTTP API, on SQLite and PostgreSQL.
//! One test binary for the crate; each module is one concept.

mod people_support;
mod support;

mod access_rules;
mod account;
mod admin;
mod agent;
mod api_keys;
mod assets;
mod assets_s3;
mod auth;
mod binary;
mod browser;
mod crash;
mod csrf;
mod custom_events;
mod documents;
mod email;
mod example_host;
mod first_admin;
mod forms;
mod graphql;
mod hardening;
mod health;
mod http_core;
mod import;
mod instance_settings;
mod instances;
mod invitations;
mod job_leases;
mod jobs;
mod lifecycle;
mod localization;
mod members;
mod openapi;
mod organizations;
mod plugin_settings;
mod plugins;
mod rate_limit;
mod references;
mod roles;
mod s3;
mod security;
mod tenancy;
mod webhooks;
