//! The domain of the content service: the values and rules every layer shares.
//!
//! Architecture invariant: this crate does no I/O. No database, no clock reads beyond what the
//! caller passes in, no network, no file system. Everything here is a pure function of its
//! inputs, so it is tested with fast unit tests.

pub mod access;
pub mod api_key;
pub mod asset;
pub mod canonical;
pub mod capability;
pub mod field_kind;
pub mod filter;
pub mod fold;
pub mod hex;
pub mod identity;
pub mod issue;
pub mod job;
pub mod locale;
pub mod plugin_settings;
pub mod redirect;
pub mod role;
pub mod schema;
pub mod search;
pub mod sign_up;
pub mod time;

pub use access::{EffectiveRole, Grant, Membership};
pub use api_key::{KeyPermission, KeyScope};
pub use capability::{
    Capability, CapabilityInfo, CapabilitySet, CoreCapability, RequiredCapabilities,
};
pub use field_kind::{FieldKind, FieldLookup};
pub use identity::{Email, Password};
pub use issue::{Issue, Issues};
pub use job::JobStatus;
pub use locale::{LocaleChoice, LocaleTag, Locales};
pub use role::{BuiltInRole, InstanceRole, PUBLIC_GRANTABLE, RoleName};
pub use schema::{Schema, SchemaError, Schemas};
pub use sign_up::FirstAdmin;
pub use time::Timestamp;

/// A fresh identifier: a UUIDv7 string, so ids sort by creation time.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
